'use strict';
// The durable Code Mode runtime (docs/cloudflare-compat.md §6–§11) for Node: Cloudflare keeps it in a Durable Object,
// this keeps it in a SQLite file or a PostgreSQL database (src/store via NativeStore). Nothing
// per run lives in memory: every operation addresses an execution id, so any process over the
// same store can resume, approve, reject or roll back any run.
//
// The parts: store.js (the store, a SQLite file or a PostgreSQL database, and the facet of one runtime name, the handle's only way
// to it), pass.js (one pass over an execution, and connector setup); this file is the handle.

const path = require('node:path');
const { checkOptionNames, withRenamedOptions } = require('../option-names.js');
const { CODES, CodemodeExecutorError, invalidArgument } = require('../errors.js');
const {
  buildDescription, codeInputSchema, toModelOutput, approvalsOption, withAiSdkApprovals,
} = require('./model-tool.js');
const { tooLargeMessage, MAX_DURABLE_VALUE_BYTES } = require('./durable.js');
const { messageOf } = require('../util.js');
const { storeAt, storeOn, RuntimeStore, leftInForceItem, isProgramGate } = require('./store.js');
const {
  SetupCache, loadSetup, eachConnector, runPass, callContext, missingConnectors, requiresMessage,
} = require('./pass.js');
const { searchConnectors, describeWithPackages } = require('./search.js');
const { EXECUTION_ID, checkOnEvent, emitTo } = require('../events.js');
const { PACKAGE_VERSIONS, DESCRIBE_PACKAGE, INSTALLED_PACKAGES, installedPackages } = require('../packages.js');
const { READS_PROGRAMS } = require('../cloudflare/normalize.js');

const DEFAULT_RUNTIME_NAME = 'default';
const DEFAULT_MAX_EXECUTIONS = 50;
const DEFAULT_PAUSED_TTL_MS = 86_400_000;
const DEFAULT_PATH = path.join('.codemode', 'runtime.db');
// How long a pass holds its run without renewing (it renews every third of this while it runs).
// A process that dies leaves its runs orphaned this long at most (at once on the same host,
// where a dead pid is seen).
const DEFAULT_LEASE_MS = 30_000;
// How long approve() and reject() wait for the pass that paused a run to finish ending.
const HELD_WAIT_MS = 2_000;
const NAME_PATTERN = /^[a-zA-Z0-9_.-]+$/;

function validateConnectorNames(connectors) {
  const seen = new Set();
  for (const [at, connector] of connectors.entries()) {
    if (connector === null || typeof connector !== 'object' || typeof connector.name !== 'function') {
      throw invalidArgument(`createCodemodeRuntime: connectors[${at}] must be a CodemodeConnector (it has no name() method)`);
    }
    const name = connector.name();
    if (name === 'codemode') throw invalidArgument('Connector name "codemode" is reserved for the codemode platform SDK.');
    if (seen.has(name)) {
      throw invalidArgument(`Duplicate connector name "${name}" — each connector needs a unique namespace (pass a distinct \`name\` option).`);
    }
    seen.add(name);
  }
}

// ---- The handle (§6.9) -------------------------------------------------------------------------

class CodemodeRuntimeHandle {
  #connectors;
  #executor;
  #name;
  #openStore; // () => the NativeStore (a SQLite file is opened, and created, on first use)
  #maxExecutions;
  #transformResult;
  #facet;
  #setup; // search() and describe(): connectors' describe() once per handle (§6.9)
  #executeSetup; // execute(): connectors' describe() once for all its runs, as one tool object's
  #leaseMs;
  #approveProgram;
  #recoverTimer;
  #onEvent;

  constructor(options) {
    this.#connectors = options.connectors;
    this.#executor = options.executor;
    this.#name = options.name;
    this.#openStore = options.openStore;
    this.#maxExecutions = options.maxExecutions;
    this.#transformResult = options.transformResult;
    this.#leaseMs = options.leaseMs;
    this.#approveProgram = options.approveProgram;
    this.#onEvent = options.onEvent;
    this.#setup = new SetupCache(this.#connectors);
    // A negative or fractional count would reach the store at the first run and prune by it.
  if (options.maxExecutions !== undefined && (!Number.isSafeInteger(options.maxExecutions) || options.maxExecutions < 0)) {
    throw invalidArgument(`createCodemodeRuntime: maxExecutions must be an integer of at least 0 (got ${options.maxExecutions})`);
  }
  if (options.recoverEveryMs !== undefined) {
      this.#recoverTimer = setInterval(() => {
        this.recover().catch((error) => console.error('codemode: recover() failed', error));
      }, options.recoverEveryMs);
      this.#recoverTimer.unref();
    }
  }

  // Delivers one of the runtime's events (lib/events.js) to its onEvent.
  #emit(event) {
    if (this.#onEvent !== undefined) emitTo([this.#onEvent], { at: Date.now(), ...event });
  }

  // The executor as a pass of `executionId` sees it: each run names its execution (in its
  // events and its span, linking the passes of one run) and reports to the runtime's onEvent.
  #executorFor(executionId) {
    const executor = this.#executor;
    const onEvent = this.#onEvent;
    return {
      execute(code, providers, options) {
        return executor.execute(code, providers, { ...options, onEvent, [EXECUTION_ID]: executionId });
      },
      get [READS_PROGRAMS]() {
        return executor[READS_PROGRAMS];
      },
      [PACKAGE_VERSIONS](code) {
        return typeof executor[PACKAGE_VERSIONS] === 'function' ? executor[PACKAGE_VERSIONS](code) : {};
      },
      [DESCRIBE_PACKAGE](specifier) {
        return typeof executor[DESCRIBE_PACKAGE] === 'function' ? executor[DESCRIBE_PACKAGE](specifier) : Promise.resolve(null);
      },
      [INSTALLED_PACKAGES]() {
        return installedPackages(executor);
      },
    };
  }

  // Runs passes over the run (pass.js) and tells onEvent how the last one left it.
  async #runPass(executionId, code, setup, facet, execution) {
    const outcome = await runPass(executionId, code, setup, facet, this.#executorFor(executionId), this.#passOptions(execution));
    this.#passEnded(outcome);
    return outcome;
  }

  #passEnded(outcome) {
    if (this.#onEvent === undefined) return;
    const executionId = outcome.executionId;
    if (outcome.status === 'paused') this.#emit({ type: 'execution.paused', executionId, pending: pendingSummary(outcome.pending) });
    else if (outcome.status === 'completed') this.#emit({ type: 'execution.completed', executionId });
    else this.#emit({ type: 'execution.failed', executionId, error: outcome.error });
  }

  // `gated`: the run's log starts with its program awaiting approval (see #gates).
  #passOptions(execution) {
    const gated = execution !== undefined && isProgramGate(execution.log[0]);
    return { leaseMs: this.#leaseMs, transformResult: this.#transformResult, gated };
  }

  // Whether a new run's program waits for a person before it runs (`approveProgram`: true, or
  // a function of { code, connectors } deciding per run). A function that throws gates it.
  async #gates(code, connectors) {
    const rule = this.#approveProgram;
    if (rule === undefined || rule === false) return false;
    if (rule === true) return true;
    try {
      return (await rule({ code, connectors: [...connectors] })) !== false;
    } catch (error) {
      console.error('codemode: approveProgram threw; the program waits for approval', error);
      return true;
    }
  }

  /** Stops the periodic recovery of `recoverEveryMs` (the store stays usable). */
  close() {
    clearInterval(this.#recoverTimer);
    this.#recoverTimer = undefined;
  }

  /** `using runtime = createCodemodeRuntime(...)`: `close()` when the scope ends. */
  [Symbol.dispose]() {
    this.close();
  }

  /** `await using runtime = ...`: the same, for scopes that await. */
  [Symbol.asyncDispose]() {
    this.close();
    return Promise.resolve();
  }

  // The store, opened on first use (an invalid name is reported then, as Cloudflare does).
  #store() {
    if (this.#facet === undefined) {
      if (typeof this.#name !== 'string' || !NAME_PATTERN.test(this.#name)) {
        throw invalidArgument(`Invalid codemode runtime name "${this.#name}" — use letters, digits, "_", "-" or "."`);
      }
      this.#facet = new RuntimeStore(this.#openStore(), this.#name);
    }
    return this.#facet;
  }

  /** The AI SDK tool: `{ description, inputSchema, execute, toModelOutput }` (docs/cloudflare-compat.md §9). */
  tool(options) {
    options = options || {};
    const approvals = approvalsOption(options);
    const facet = this.#store();
    // Loaded once per tool object (§6.8), by the same policy as the handle's.
    const setup = new SetupCache(this.#connectors);
    const tool = {
      description: buildDescription(this.#connectors, options.description, options.connectorHints, approvals, installedPackages(this.#executor)),
      inputSchema: codeInputSchema,
      execute: async (input) => this.#execute(facet, input && input.code, setup),
      toModelOutput: ({ output } = {}) => toModelOutput(output),
    };
    // `approvals: 'ai-sdk'`: the AI SDK's own approval requests instead of `{ status: 'paused' }`
    // (model-tool.js, ai-approvals.js); its runs are keyed by the tool call's id.
    if (approvals !== 'ai-sdk') return tool;
    return withAiSdkApprovals(tool, this, (code, key) => this.#execute(facet, code, setup, key), options);
  }

  async #execute(facet, code, setupCache, idempotencyKey) {
    if (typeof code === 'string' && code.length > MAX_DURABLE_VALUE_BYTES) {
      return { status: 'error', executionId: '', error: tooLargeMessage('The execution code', code.length) };
    }
    const setup = await setupCache.get();
    if (idempotencyKey !== undefined) await this.#clearDeadKeyHolder(facet, idempotencyKey);
    const connectorNames = [...setup.connectorsByName.keys()];
    const gated = await this.#gates(code, connectorNames);
    const begun = await facet.begin(code, connectorNames, this.#maxExecutions, this.#leaseMs, idempotencyKey, gated);
    if (begun.existing) return recordedOutcome(facet, begun.id);
    // Begun paused on its program: nothing of it runs before an approval.
    if (gated) {
      const paused = { status: 'paused', executionId: begun.id, pending: await facet.listPending(begun.id) };
      this.#passEnded(paused);
      return paused;
    }
    return this.#runPass(begun.id, code, setup, facet);
  }

  // A keyed run whose holder died on this host is orphaned now, so the retry that names its
  // key is answered as interrupted at once instead of after the lease lapses.
  async #clearDeadKeyHolder(facet, key) {
    for (const run of await facet.running()) {
      if (run.idempotencyKey === key && run.owner !== undefined && run.owner !== null) await facet.clearDeadOwner(run.id, run.owner);
    }
  }

  /**
   * Runs code as a new durable execution (as a tool object's execute does). With `idempotencyKey`,
   * a second call with the same key starts nothing: it answers the recorded outcome of the
   * first (`replayed: true`), or `inProgress: true` while it has not ended.
   */
  execute({ code, idempotencyKey } = {}) {
    if (typeof code !== 'string') return Promise.reject(invalidArgument('execute({ code }): code must be a string'));
    if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > 1024)) {
      return Promise.reject(invalidArgument('execute({ idempotencyKey }): the key must be a non-empty string of at most 1024 characters'));
    }
    const facet = this.#store();
    this.#executeSetup ??= new SetupCache(this.#connectors);
    return this.#execute(facet, code, this.#executeSetup, idempotencyKey);
  }

  async search(query) {
    const setup = await this.#setup.get();
    return searchConnectors(query, setup.descriptions, await this.#store().snippets(), installedPackages(this.#executor));
  }

  async describe(target) {
    const setup = await this.#setup.get();
    return describeWithPackages(target, setup.descriptions, await this.#store().snippets(), this.#executor);
  }

  async pending(executionId) {
    return this.#store().listPending(executionId);
  }

  /**
   * Approves the paused run's pending action(s) and runs the next pass (replaying the rest).
   * With `seq`, only if that is the action awaiting approval now (Cloudflare's form without it
   * approves whatever waits when the call lands, which races with a run that moved on). A
   * call in doubt is retried.
   */
  async approve({ executionId, seq } = {}) {
    executionId = String(executionId);
    const facet = this.#store();
    // Fresh setup, not a SetupCache: the contract (§6.9 approve, step 1) and Cloudflare's
    // resumeCodemode load the descriptions per approval. An approval can come long after the
    // pass that paused, and its replay follows what the connectors describe now (annotations
    // such as requiresApproval included), not what this handle saw earlier.
    const setup = await loadSetup(this.#connectors);
    // Read once: the connectors it needs before resuming, and its code (fixed at begin) after.
    const execution = await facet.getExecution(executionId);
    if (execution === undefined) {
      return { status: 'error', executionId, error: `No execution "${executionId}" to resume.` };
    }
    const missing = missingConnectors(execution.connectors, new Set(setup.connectorsByName.keys()));
    if (missing.length > 0) {
      return { status: 'error', executionId, error: requiresMessage(`Execution "${executionId}"`, missing) };
    }
    const resumed = await this.#whenUnheld(facet, executionId, () => facet.resume(executionId, this.#leaseMs, seq === undefined ? undefined : Number(seq)));
    if (resumed.kind !== 'resumed') {
      return { status: 'error', executionId, error: await refusal(facet, executionId, resumed, seq) };
    }
    const approved = { type: 'execution.approved', executionId };
    if (seq !== undefined) approved.seq = Number(seq);
    this.#emit(approved);
    return this.#runPass(executionId, execution.code, setup, facet, execution);
  }

  // Runs `attempt` (a store operation answering `leased` while the pass that paused the run
  // still holds it) until it answers otherwise: for HELD_WAIT_MS, or at once if the holder is a
  // dead process (its lease is cleared).
  async #whenUnheld(facet, executionId, attempt) {
    const until = Date.now() + HELD_WAIT_MS;
    for (;;) {
      const outcome = await attempt();
      const kind = typeof outcome === 'string' ? outcome : outcome.kind;
      if (kind !== 'leased') return outcome;
      const now = await facet.getExecution(executionId);
      if (now !== undefined && await facet.clearDeadOwner(executionId, now.owner)) continue;
      if (Date.now() >= until) return outcome;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Rejects the pending action at `seq`; false when it was no longer pending. */
  async reject({ seq, executionId } = {}) {
    const facet = this.#store();
    const id = String(executionId);
    const outcome = await this.#whenUnheld(facet, id, () => facet.reject(id, Number(seq)));
    const rejected = outcome === 'rejected';
    if (rejected) this.#emit({ type: 'execution.rejected', executionId: id, seq: Number(seq) });
    if (rejected) await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rejected'));
    return rejected;
  }

  /**
   * Records that the call in doubt at `seq` did take effect, with `result` (as the tool would
   * have returned it); the run stays paused, and approve() continues it, replaying that
   * result. False when that call is not in doubt.
   */
  async markDone({ executionId, seq, result } = {}) {
    return this.#store().markDone(String(executionId), Number(seq), result);
  }

  /**
   * Reverts the run's actions whose effect is or may be in force, newest first: applied ones,
   * and calls in doubt (their revert gets `ctx.resultUnknown: true` and no result). Every revert
   * is tried; the run is marked rolled back when at least one was reverted (the contract's
   * rule), and what could not be reverted (a failed revert, a call in doubt whose tool has no
   * revert) is data: recorded on its entry, listed in the execution's `leftInForce`, and in the
   * answer. Resolves `{ reverted, leftInForce: [], calls }`; throws after trying all when
   * something failed, naming each, with `reverted`, `leftInForce` and `calls` on the error.
   * `calls` names the fate of every call it found in force, newest first: `reverted`,
   * `no_revert` (its tool has no revert: its effect stays) or `revert_failed` (with `error`).
   * A run that a pass holds is refused.
   */
  async rollback({ executionId } = {}) {
    const facet = this.#store();
    const execution = await facet.getExecution(executionId);
    if (execution !== undefined && await facet.heldByLivePass(execution)) {
      throw new CodemodeExecutorError(CODES.ROLLBACK_INCOMPLETE, `Execution "${executionId}" is held by a pass in progress; roll it back once that pass has ended.`);
    }
    const byName = new Map(this.#connectors.map((c) => [c.name(), c]));
    const entries = await facet.actionsToRevert(executionId);
    let reverted = 0;
    const failures = [];
    const leftInForce = [];
    // Every call found in force, with its fate (the program's own gate is not a call).
    const calls = [];
    const fate = (entry, what, error) => {
      if (isProgramGate(entry)) return;
      const call = { seq: entry.seq, connector: entry.connector, method: entry.method, fate: what };
      if (error !== undefined) call.error = error;
      if (entry.state !== 'applied') call.inDoubt = true;
      calls.push(call);
    };
    const failed = (entry, message, error) => {
      failures.push(message);
      leftInForce.push(leftInForceItem(entry, error));
    };
    for (const entry of entries) {
      const inDoubt = entry.state !== 'applied';
      const connector = byName.get(entry.connector);
      if (connector === undefined) {
        fate(entry, 'revert_failed', 'its connector is not configured here');
        if (inDoubt) failed(entry, `${entry.connector}.${entry.method} (step ${entry.seq}, in doubt): its connector is not configured here`, 'its connector is not configured here');
        continue;
      }
      const ctx = callContext(executionId, entry.seq);
      if (inDoubt) ctx.resultUnknown = true;
      try {
        if (await connector.revertAction(entry.method, entry.args, inDoubt ? undefined : entry.result, ctx)) {
          await facet.markReverted(executionId, entry.seq);
          reverted++;
          fate(entry, 'reverted');
        } else {
          fate(entry, 'no_revert');
          if (inDoubt) failed(entry, `${entry.connector}.${entry.method} (step ${entry.seq}, in doubt): it has no revert, and its effect may be in force`, 'it has no revert, and its effect may be in force');
        }
      } catch (error) {
        fate(entry, 'revert_failed', messageOf(error));
        failed(entry, `${entry.connector}.${entry.method}: ${messageOf(error)}`, messageOf(error));
      }
    }
    // Recorded on the entries, so the execution's record says what stays in force.
    for (const item of leftInForce) await facet.markRevertFailed(executionId, item.seq, item.error);
    if (reverted > 0) {
      await facet.markRolledBack(executionId);
      await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rolled_back'));
    }
    if (failures.length > 0) {
      const error = new CodemodeExecutorError(CODES.ROLLBACK_INCOMPLETE, `Rollback reverted ${reverted} action(s) but ${failures.length} failed: ${failures.join('; ')}`);
      error.reverted = reverted;
      error.leftInForce = leftInForce;
      error.calls = calls;
      this.#emit({ type: 'execution.rolledBack', executionId: String(executionId), reverted, leftInForce: leftInForce.length, error: error.message });
      throw error;
    }
    this.#emit({ type: 'execution.rolledBack', executionId: String(executionId), reverted, leftInForce: 0 });
    return { reverted, leftInForce, calls };
  }

  /**
   * Takes up the runs that no live process holds (their pass died: its lease lapsed, or its
   * process is gone from this host) and runs each again from its log; calls left in doubt are
   * retried when their tool is idempotent, otherwise the run pauses for a person (pending()
   * lists them with `inDoubt: true`). Resolves with one outcome per run taken up. A run whose
   * connectors are not all configured here is left for a process that has them.
   */
  async recover() {
    const facet = this.#store();
    const setup = await loadSetup(this.#connectors);
    const names = new Set(setup.connectorsByName.keys());
    const outcomes = [];
    for (const run of await facet.running()) {
      if (await facet.heldByLivePass(run)) continue;
      const execution = await facet.getExecution(run.id);
      if (execution === undefined || missingConnectors(execution.connectors, names).length > 0) continue;
      if (!(await facet.claim(run.id, this.#leaseMs))) continue; // another process took it first
      outcomes.push(await this.#runPass(run.id, execution.code, setup, facet, execution));
    }
    return outcomes;
  }

  /**
   * Expires paused runs and orphaned running ones not updated for `maxAgeMs`; returns their
   * ids. A run that a live pass holds is never expired.
   */
  async expirePaused({ maxAgeMs = DEFAULT_PAUSED_TTL_MS } = {}) {
    const expired = await this.#store().expirePaused(maxAgeMs);
    for (const id of expired) await eachConnector(this.#connectors, (c) => c.disposeExecution(id, 'rejected'));
    return expired;
  }

  async executions(limit) {
    return this.#store().listExecutions(limit);
  }

  async execution(executionId) {
    return this.#store().getExecution(executionId);
  }

  async deleteExecution(executionId) {
    const status = await this.#store().deleteExecution(executionId);
    if (status === 'paused' || status === 'running') {
      await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rejected'));
    }
    return status !== null && status !== undefined;
  }

  async pruneExecutions(keep = DEFAULT_MAX_EXECUTIONS) {
    return this.#store().pruneExecutions(keep);
  }

  /** Saves the execution's code as a snippet (replacing one of the same name). */
  async saveSnippet(name, { executionId, description, inputSchema } = {}) {
    const facet = this.#store();
    const execution = await facet.getExecution(executionId);
    if (execution === undefined) throw invalidArgument(`No execution "${executionId}" to save from`);
    return facet.saveSnippet(name, { description, code: execution.code, inputSchema, connectors: execution.connectors });
  }

  async snippets() {
    return this.#store().snippets();
  }

  async deleteSnippet(name) {
    return this.#store().deleteSnippet(name);
  }
}

// The answer to a keyed execute whose key names an existing run: its recorded outcome.
async function recordedOutcome(facet, id) {
  const execution = await facet.getExecution(id);
  if (execution === undefined) return { status: 'error', executionId: id, error: `No execution "${id}"` };
  const calls = execution.log;
  switch (execution.status) {
    case 'completed':
      return { status: 'completed', executionId: id, result: execution.result, logs: execution.logs, calls, replayed: true };
    case 'paused':
      return { status: 'paused', executionId: id, pending: await facet.listPending(id), calls, inProgress: true };
    case 'running':
      return { status: 'running', executionId: id, calls, inProgress: true };
    default:
      return { status: 'error', executionId: id, error: execution.error ?? `Execution ended: ${execution.status}`, calls, replayed: true };
  }
}

// What awaits approval, as an event tells it (no arguments: they can be large).
function pendingSummary(pending) {
  return (pending || []).map((p) => {
    const item = { seq: p.seq };
    if (p.connector !== undefined) item.connector = p.connector;
    if (p.method !== undefined) item.method = p.method;
    if (p.kind !== undefined) item.kind = p.kind;
    if (p.inDoubt) item.inDoubt = true;
    return item;
  });
}

// Why an approval was refused, naming what waits now.
async function refusal(facet, executionId, resumed, seq) {
  switch (resumed.kind) {
    case 'missing':
      return `No execution "${executionId}" to resume.`;
    case 'not_paused':
      return `Execution "${executionId}" is not paused (status: ${resumed.status}); only a paused run can be approved.`;
    case 'leased':
      return `Execution "${executionId}" is still held by the pass that paused it; try again in a moment.`;
    default: {
      const waiting = (await facet.listPending(executionId)).map((p) => `${p.connector}.${p.method} (seq ${p.seq}${p.inDoubt ? ', in doubt' : ''})`);
      const now = waiting.length === 0 ? 'nothing awaits approval now' : `awaiting now: ${waiting.join(', ')}`;
      const what = waiting.length > 1 ? '; approve without seq to approve them all' : '';
      return `Execution "${executionId}" has no single action ${seq} awaiting approval: ${now}${what}.`;
    }
  }
}

/**
 * createCodemodeRuntime({ executor, connectors, name?, path? | store?, maxExecutions?, transformResult? }):
 * the durable runtime over a SQLite file (`path`, default `.codemode/runtime.db` under the
 * working directory; `':memory:'` for a private one) or a PostgreSQL database (`store`, a
 * `postgres://` URL or `{ url, ...settings }`, for hosts on several machines). `name`
 * partitions the store.
 */
// The options createCodemodeRuntime reads; Cloudflare's `ctx` (the Durable Object's state, which
// `path` or `store` replaces here) is accepted and ignored so that code written for Workers passes it.
const RUNTIME_OPTIONS = ['executor', 'connectors', 'name', 'path', 'store', 'maxExecutions', 'transformResult', 'leaseMs', 'recoverEveryMs', 'durability', 'approveProgram', 'onEvent'];
// Options renamed (every millisecond option ends in Ms): the old name still works, with a warning
// once per process, and giving both is refused.
const RENAMED_RUNTIME_OPTIONS = { recoverEvery: 'recoverEveryMs' };
const CLOUDFLARE_ONLY_RUNTIME_OPTIONS = ['ctx'];
// A PostgreSQL store's settings (ranges and defaults: src/store/postgres.rs PgSettings).
const POSTGRES_STORE_OPTIONS = ['url', 'maxConnections', 'connectTimeoutMs', 'statementTimeoutMs', 'schema', 'ca'];
const POSTGRES_URL = /^postgres(ql)?:\/\//;

// `store` as `{ url, ...settings }`, checked; the settings' values are checked natively.
function postgresStoreSpec(store) {
  const spec = typeof store === 'string' ? { url: store } : store;
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw invalidArgument('createCodemodeRuntime: store must be a postgres:// URL or { url, maxConnections?, connectTimeoutMs?, statementTimeoutMs?, schema?, ca? }');
  }
  checkOptionNames(spec, POSTGRES_STORE_OPTIONS, 'createCodemodeRuntime store options', invalidArgument);
  if (typeof spec.url !== 'string' || !POSTGRES_URL.test(spec.url)) {
    throw invalidArgument(`createCodemodeRuntime: store must name a PostgreSQL database with a postgres:// or postgresql:// URL (got ${JSON.stringify(typeof spec.url === 'string' ? spec.url.replace(/\/\/[^@/]*@/, '//…@') : spec.url)}); a SQLite file is given as path`);
  }
  return spec;
}

// Where the runtime keeps its state: a function that opens it. A PostgreSQL store is made now,
// so that bad settings throw here (it connects to nothing until its first operation); a SQLite
// file is opened, and created, on first use.
function storeOpener(options) {
  if (options.store !== undefined) {
    for (const sqliteOnly of ['path', 'durability']) {
      if (options[sqliteOnly] !== undefined) {
        throw invalidArgument(`createCodemodeRuntime: ${sqliteOnly} applies to a SQLite file and cannot be given with store (a PostgreSQL database)`);
      }
    }
    const store = storeOn(postgresStoreSpec(options.store));
    return () => store;
  }
  const durability = options.durability === undefined ? 'normal' : options.durability;
  if (durability !== 'normal' && durability !== 'full') {
    throw invalidArgument(`createCodemodeRuntime: durability must be "normal" or "full" (got ${JSON.stringify(durability)})`);
  }
  const file = options.path === undefined ? DEFAULT_PATH : options.path;
  return () => storeAt(file, durability);
}

function createCodemodeRuntime(options = {}) {
  // A misspelt option (`stor`, `maxExecution`) would otherwise silently keep its default.
  options = withRenamedOptions(options, RENAMED_RUNTIME_OPTIONS, 'createCodemodeRuntime', invalidArgument);
  checkOptionNames(options, RUNTIME_OPTIONS, 'createCodemodeRuntime options', invalidArgument, CLOUDFLARE_ONLY_RUNTIME_OPTIONS);
  const connectors = Array.isArray(options.connectors) ? options.connectors : [];
  validateConnectorNames(connectors);
  if (options.executor === undefined || options.executor === null || typeof options.executor.execute !== 'function') {
    throw invalidArgument('createCodemodeRuntime: options.executor must implement execute(code, providers, options)');
  }
  const leaseMs = options.leaseMs === undefined ? DEFAULT_LEASE_MS : options.leaseMs;
  if (!Number.isInteger(leaseMs) || leaseMs < 100 || leaseMs > 3_600_000) {
    throw invalidArgument(`createCodemodeRuntime: leaseMs must be an integer between 100 and 3600000 (got ${leaseMs})`);
  }
  if (options.recoverEveryMs !== undefined && (!Number.isInteger(options.recoverEveryMs) || options.recoverEveryMs < 100)) {
    throw invalidArgument(`createCodemodeRuntime: recoverEveryMs must be an integer of at least 100 ms (got ${options.recoverEveryMs})`);
  }
  const approveProgram = options.approveProgram;
  if (approveProgram !== undefined && typeof approveProgram !== 'boolean' && typeof approveProgram !== 'function') {
    throw invalidArgument('createCodemodeRuntime: approveProgram must be true, false or a function of { code, connectors }');
  }
  const onEvent = checkOnEvent(options.onEvent, 'createCodemodeRuntime: onEvent');
  return new CodemodeRuntimeHandle({
    onEvent,
    approveProgram,
    leaseMs,
    openStore: storeOpener(options),
    recoverEveryMs: options.recoverEveryMs,
    connectors,
    executor: options.executor,
    name: options.name === undefined ? DEFAULT_RUNTIME_NAME : options.name,
    maxExecutions: options.maxExecutions === undefined ? DEFAULT_MAX_EXECUTIONS : options.maxExecutions,
    transformResult: options.transformResult,
  });
}

module.exports = {
  createCodemodeRuntime,
  CodemodeRuntimeHandle,
  DEFAULT_MAX_EXECUTIONS,
  DEFAULT_PAUSED_TTL_MS,
  DEFAULT_LEASE_MS,
  MAX_DURABLE_VALUE_BYTES,
};
