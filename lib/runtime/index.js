'use strict';
// The durable Code Mode runtime (docs/cloudflare-compat.md §6–§11) for Node: Cloudflare keeps it in a Durable Object,
// this keeps it in a SQLite file (src/store via NativeStore). Nothing per run lives in memory:
// every operation addresses an execution id, so any process over the same file can resume,
// approve, reject or roll back any run.

const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { NativeStore, durableConstants } = require('../../binding.js');
const { normalizeCode } = require('../cloudflare/normalize.js');
const { runCode } = require('../cloudflare/run-code.js');
const { searchConnectors, describeTarget } = require('./search.js');
const { buildDescription, codeInputSchema, toModelOutput } = require('./model-tool.js');
const {
  toStored, parseForStorage, stableStringify, stringifyForStorage, logsForStorage, tooLargeMessage,
  messageOf, MAX_DURABLE_VALUE_BYTES,
} = require('./durable.js');

const DEFAULT_RUNTIME_NAME = 'default';
const DEFAULT_MAX_EXECUTIONS = 50;
const DEFAULT_PAUSED_TTL_MS = 86_400_000;
const DEFAULT_PATH = path.join('.codemode', 'runtime.db');
// The step connector's name comes from the store (src/store), the control markers from the
// codec both sides load.
const { stepConnector: STEP_CONNECTOR } = durableConstants();
const { CONTROL_KEY, PAUSE_MARKER: PAUSE_SENTINEL } = require('../cloudflare/codec.js');
const NAME_PATTERN = /^[a-zA-Z0-9_.-]+$/;

// In the sandbox: `codemode.step(name, fn)` records fn's value once and replays it afterwards.
const STEP_PRELUDE = `
codemode.step = async (name, fn) => {
  const decision = await codemode.__stepDecide(name);
  if (decision.kind === "replay") return decision.result;
  if (decision.kind !== "execute") throw new Error("${PAUSE_SENTINEL}");
  const value = await fn();
  await codemode.__stepRecord(decision.seq, value, String(name));
  return value;
};`;

// One NativeStore per file in this process (SQLite connections are per file; the store
// serializes its own access).
const stores = new Map();
function storeAt(file) {
  if (file === ':memory:') return new NativeStore(':memory:');
  const resolved = path.resolve(file);
  let store = stores.get(resolved);
  if (store === undefined) {
    store = new NativeStore(resolved);
    stores.set(resolved, store);
  }
  return store;
}

function validateConnectorNames(connectors) {
  const seen = new Set();
  for (const connector of connectors) {
    const name = connector.name();
    if (name === 'codemode') throw new Error('Connector name "codemode" is reserved for the codemode platform SDK.');
    if (seen.has(name)) {
      throw new Error(`Duplicate connector name "${name}" — each connector needs a unique namespace (pass a distinct \`name\` option).`);
    }
    seen.add(name);
  }
}

function newExecutionId() {
  return `exec_${String(Date.now()).padStart(16, '0')}_${randomUUID()}`;
}

function missingConnectors(required, available) {
  return (required || []).filter((name) => !available.has(name));
}

function requiresMessage(subject, missing) {
  return `${subject} requires connector(s) ${missing.map((m) => `"${m}"`).join(', ')} that are not configured on this runtime.`;
}

// ---- Rows → the shapes of docs/cloudflare-compat.md §6 -------------------------------------------------------------

function toEntry(row) {
  const entry = {
    seq: row.seq,
    connector: row.connector,
    method: row.method,
    args: parseForStorage(row.args),
    result: parseForStorage(row.result),
    requiresApproval: row.requiresApproval,
    ephemeral: row.ephemeral ? true : undefined,
    state: row.state,
  };
  return entry;
}

function toExecution(row) {
  const log = [];
  for (const entry of row.log) log[entry.seq] = toEntry(entry);
  return {
    id: row.id,
    code: row.code,
    status: row.status,
    log,
    result: parseForStorage(row.result),
    error: row.error === null || row.error === undefined ? undefined : row.error,
    logs: row.logs ? JSON.parse(row.logs) : undefined,
    connectors: row.connectors ? JSON.parse(row.connectors) : undefined,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function toPending(row) {
  return { executionId: row.executionId, seq: row.seq, connector: row.connector, method: row.method, args: parseForStorage(row.args) };
}

function toSnippet(row) {
  return {
    name: row.name,
    description: row.description,
    code: row.code,
    savedAt: row.savedAt,
    inputSchema: parseForStorage(row.inputSchema),
    connectors: row.connectors ? JSON.parse(row.connectors) : undefined,
  };
}

// ---- The store, with JS values ----------------------------------------------------------------

// The runtime facet of one name: every operation of §6.5 over the shared NativeStore.
class RuntimeStore {
  constructor(store, name) {
    this.store = store;
    this.name = name;
  }

  begin(code, connectorNames, maxExecutions) {
    const id = newExecutionId();
    this.store.begin(this.name, id, code, JSON.stringify(connectorNames), maxExecutions);
    return id;
  }

  resume(id) {
    return this.store.resume(this.name, id);
  }

  decide(id, seq, connector, method, args, requiresApproval, ephemeral) {
    const stored = toStored(`Arguments to ${connector}.${method}`, args);
    const recorded = stored.text === undefined ? undefined : stableStringify(parseForStorage(stored.text));
    const decision = this.store.decide(this.name, id, {
      seq,
      connector,
      method,
      args: stored.text ?? undefined,
      argsError: stored.error,
      argsStable: stableStringify(args),
      recordedStable: recorded,
      requiresApproval,
      ephemeral,
    });
    if (decision.kind === 'replay') return { kind: 'replay', result: parseForStorage(decision.result) };
    return { kind: decision.kind, seq };
  }

  recordResult(id, seq, connector, method, result) {
    const stored = toStored(`The result of ${connector}.${method}`, result);
    this.store.recordResult(this.name, id, seq, stored.text ?? undefined, stored.error);
  }

  /** False when the run was no longer running (rejected or expired during the pass). */
  complete(id, result, logs) {
    const stored = toStored('The final result', result);
    const text = stored.error === undefined
      ? stored.text
      : stringifyForStorage(`[codemode: result omitted from the audit trail — ${stored.error}]`);
    return this.store.complete(this.name, id, text === null ? undefined : text, logsForStorage(logs) ?? undefined);
  }

  /** False when the run was no longer running. */
  fail(id, error, logs) {
    return this.store.fail(this.name, id, String(error).slice(0, MAX_DURABLE_VALUE_BYTES), logsForStorage(logs) ?? undefined);
  }

  getExecution(id) {
    const row = this.store.getExecution(this.name, id);
    return row === null || row === undefined ? undefined : toExecution(row);
  }

  listExecutions(limit) {
    return this.store.listExecutions(this.name, limit).map(toExecution);
  }

  listPending(id) {
    return this.store.listPending(this.name, id).map(toPending);
  }

  snippets() {
    return this.store.snippets(this.name).map(toSnippet);
  }

  snippet(name) {
    return this.snippets().find((s) => s.name === name);
  }
}

// ---- One pass (§6.7) -------------------------------------------------------------------------

async function loadSetup(connectors) {
  const connectorsByName = new Map();
  const descriptions = [];
  const annotations = new Map();
  for (const connector of connectors) {
    const name = connector.name();
    const description = await connector.describe();
    connectorsByName.set(name, connector);
    descriptions.push(description);
    for (const [method, annotation] of Object.entries(description.annotations || {})) {
      annotations.set(`${name}.${method}`, annotation);
    }
  }
  return { connectorsByName, descriptions, annotations };
}

async function eachConnector(connectors, hook) {
  await Promise.all([...connectors].map(async (connector) => {
    try {
      await hook(connector);
    } catch {
      // Hooks never turn a finished run into a failure.
    }
  }));
}

function withGlobalsHint(message, setup) {
  if (!/\bis not defined\b/.test(message)) return message;
  return `${message} (the only globals available in the sandbox are: ${[...setup.connectorsByName.keys(), 'codemode'].join(', ')})`;
}

// Connector bindings for one pass: each call takes the next seq, asks the store, and runs,
// replays or pauses. A binding never rejects: failures become the error marker.
function connectorBindings(setup, facet, id, cursor) {
  return setup.descriptions.map((description) => ({
    name: description.name,
    binding: {
      callTool: async (method, args) => {
        try {
          const seq = cursor.next();
          const annotation = setup.annotations.get(`${description.name}.${method}`) || {};
          const decision = facet.decide(id, seq, description.name, method, args, annotation.requiresApproval === true, annotation.replay === 'reexecute');
          if (decision.kind === 'replay') return decision.result;
          if (decision.kind === 'pause') return { [CONTROL_KEY]: 'pause' };
          const connector = setup.connectorsByName.get(description.name);
          const result = await connector.executeTool(method, args, { executionId: id });
          facet.recordResult(id, seq, description.name, method, result);
          return result;
        } catch (error) {
          console.error(`codemode: ${description.name}.${method} failed (execution ${id})`, error);
          return { [CONTROL_KEY]: 'error', message: messageOf(error) };
        }
      },
    },
  }));
}

function platformProvider(setup, bindings, facet, executor, id, cursor) {
  const provider = {
    name: 'codemode',
    prelude: STEP_PRELUDE,
    fns: {
      search: async (query) => searchConnectors(String(query), setup.descriptions, facet.snippets()),
      describe: async (target) => describeTarget(String(target), setup.descriptions, facet.snippets()),
      run: async (...args) => {
        const name = String(args[0]);
        const snippet = facet.snippet(name);
        if (snippet === undefined) return { error: `Snippet "${args[0]}" not found.` };
        const missing = missingConnectors(snippet.connectors, new Set(setup.connectorsByName.keys()));
        if (missing.length > 0) return { error: requiresMessage(`Snippet "${args[0]}"`, missing) };
        const code = `async () => {\n  const snippet = (${normalizeCode(snippet.code)});\n  return await snippet(${JSON.stringify(args[1])});\n}`;
        const output = await runCode({ code, executor, providers: [provider], connectors: bindings });
        return output.result;
      },
      __stepDecide: async (name) => facet.decide(id, cursor.next(), STEP_CONNECTOR, String(name), undefined, false, false),
      __stepRecord: async (seq, value, name) => {
        facet.recordResult(id, Number(seq), STEP_CONNECTOR, String(name), value);
        return true;
      },
    },
  };
  return provider;
}

async function applyTransform(transformResult, result) {
  if (typeof transformResult !== 'function') return result;
  try {
    return await transformResult(result);
  } catch (error) {
    console.warn('codemode: transformResult threw; returning the raw result.', error);
    return result;
  }
}

async function runPass(id, code, setup, facet, executor, transformResult) {
  let n = 0;
  const cursor = { next: () => n++ };
  const bindings = connectorBindings(setup, facet, id, cursor);
  const provider = platformProvider(setup, bindings, facet, executor, id, cursor);
  const connectors = [...setup.connectorsByName.values()];
  let ended = false;
  const endPass = async (status) => {
    ended = true;
    await eachConnector(connectors, (c) => c.onPassEnd(id, status));
    if (status !== 'paused') await eachConnector(connectors, (c) => c.disposeExecution(id, status));
  };
  try {
    let output;
    let threw;
    try {
      output = await runCode({ code, executor, providers: [provider], connectors: bindings });
    } catch (error) {
      threw = error;
    }
    // The stored status is the source of truth, not what the program threw.
    const execution = facet.getExecution(id);
    const calls = execution && execution.log;
    if (execution && execution.status === 'paused') {
      await endPass('paused');
      return { status: 'paused', executionId: id, pending: facet.listPending(id), calls };
    }
    if (execution && execution.status === 'error') {
      await endPass('error');
      return { status: 'error', executionId: id, error: execution.error ?? 'Codemode execution failed', calls };
    }
    // A run rejected or expired while this pass was under way keeps that outcome.
    const endedElsewhere = () => {
      const now = facet.getExecution(id);
      return { status: 'error', executionId: id, error: (now && now.error) ?? 'Codemode execution failed', calls };
    };
    if (threw !== undefined) {
      const message = withGlobalsHint(messageOf(threw), setup);
      const failed = facet.fail(id, message);
      await endPass('error');
      return failed ? { status: 'error', executionId: id, error: message, calls } : endedElsewhere();
    }
    const result = output && output.result;
    if (!facet.complete(id, result, output && output.logs)) {
      await endPass('error');
      return endedElsewhere();
    }
    await endPass('completed');
    return { status: 'completed', executionId: id, result: await applyTransform(transformResult, result), logs: output && output.logs, calls };
  } finally {
    if (!ended) await endPass('error');
  }
}

// ---- The handle (§6.9) -------------------------------------------------------------------------

class CodemodeRuntimeHandle {
  #connectors;
  #executor;
  #name;
  #file;
  #maxExecutions;
  #transformResult;
  #facet;
  #setup;
  #defaultTool;

  constructor(options) {
    this.#connectors = options.connectors;
    this.#executor = options.executor;
    this.#name = options.name;
    this.#file = options.path;
    this.#maxExecutions = options.maxExecutions;
    this.#transformResult = options.transformResult;
  }

  // The store, opened on first use (an invalid name is reported then, as Cloudflare does).
  #store() {
    if (this.#facet === undefined) {
      if (typeof this.#name !== 'string' || !NAME_PATTERN.test(this.#name)) {
        throw new Error(`Invalid codemode runtime name "${this.#name}" — use letters, digits, "_", "-" or "."`);
      }
      this.#facet = new RuntimeStore(storeAt(this.#file), this.#name);
    }
    return this.#facet;
  }

  // Connector descriptions, loaded once per handle.
  #cachedSetup() {
    if (this.#setup === undefined) {
      this.#setup = loadSetup(this.#connectors);
      this.#setup.catch(() => { this.#setup = undefined; });
    }
    return this.#setup;
  }

  /** The AI SDK tool: `{ description, inputSchema, execute, toModelOutput }` (docs/cloudflare-compat.md §9). */
  tool(options) {
    options = options || {};
    const facet = this.#store();
    let setup;
    // Loaded once per tool object; a failed load is not kept (a long-lived Node process would
    // otherwise be stuck with one transient describe() failure).
    const getSetup = () => {
      if (setup === undefined) {
        setup = loadSetup(this.#connectors);
        setup.catch(() => { setup = undefined; });
      }
      return setup;
    };
    return {
      description: buildDescription(this.#connectors, options.description, options.connectorHints),
      inputSchema: codeInputSchema,
      execute: async (input) => this.#execute(facet, input && input.code, getSetup),
      toModelOutput: ({ output } = {}) => toModelOutput(output),
    };
  }

  async #execute(facet, code, getSetup) {
    if (typeof code === 'string' && code.length > MAX_DURABLE_VALUE_BYTES) {
      return { status: 'error', executionId: '', error: tooLargeMessage('The execution code', code.length) };
    }
    const setup = await getSetup();
    const id = facet.begin(code, [...setup.connectorsByName.keys()], this.#maxExecutions);
    return runPass(id, code, setup, facet, this.#executor, this.#transformResult);
  }

  /** Runs code as a new durable execution (the default tool's execute). */
  execute({ code } = {}) {
    if (typeof code !== 'string') return Promise.reject(new TypeError('execute({ code }): code must be a string'));
    this.#defaultTool ??= this.tool();
    return this.#defaultTool.execute({ code });
  }

  async search(query) {
    const setup = await this.#cachedSetup();
    return searchConnectors(query, setup.descriptions, this.#store().snippets());
  }

  async describe(target) {
    const setup = await this.#cachedSetup();
    return describeTarget(target, setup.descriptions, this.#store().snippets());
  }

  async pending(executionId) {
    return this.#store().listPending(executionId);
  }

  /** Approves the paused run's pending action(s) and runs the next pass (replaying the rest). */
  async approve({ executionId } = {}) {
    executionId = String(executionId);
    const facet = this.#store();
    const setup = await loadSetup(this.#connectors);
    const existing = facet.getExecution(executionId);
    if (existing !== undefined) {
      const missing = missingConnectors(existing.connectors, new Set(setup.connectorsByName.keys()));
      if (missing.length > 0) {
        return { status: 'error', executionId, error: requiresMessage(`Execution "${executionId}"`, missing) };
      }
    }
    if (!facet.resume(executionId)) {
      const now = facet.getExecution(executionId);
      const error = now === undefined
        ? `No execution "${executionId}" to resume.`
        : `Execution "${executionId}" is not paused (status: ${now.status}); only a paused run can be approved.`;
      return { status: 'error', executionId, error };
    }
    const execution = facet.getExecution(executionId);
    return runPass(executionId, execution.code, setup, facet, this.#executor, this.#transformResult);
  }

  /** Rejects the pending action at `seq`; false when it was no longer pending. */
  async reject({ seq, executionId } = {}) {
    const rejected = this.#store().store.reject(this.#name, String(executionId), Number(seq));
    if (rejected) await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rejected'));
    return rejected;
  }

  /** Reverts the run's applied actions, newest first; throws after trying all if any failed. */
  async rollback({ executionId } = {}) {
    const facet = this.#store();
    const byName = new Map(this.#connectors.map((c) => [c.name(), c]));
    const entries = facet.store.actionsToRevert(this.#name, executionId).map(toEntry);
    let reverted = 0;
    const failures = [];
    for (const entry of entries) {
      const connector = byName.get(entry.connector);
      if (connector === undefined) continue;
      try {
        if (await connector.revertAction(entry.method, entry.args, entry.result, { executionId })) {
          facet.store.markReverted(this.#name, executionId, entry.seq);
          reverted++;
        }
      } catch (error) {
        failures.push(`${entry.connector}.${entry.method}: ${messageOf(error)}`);
      }
    }
    if (reverted > 0) {
      facet.store.markRolledBack(this.#name, executionId);
      await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rolled_back'));
    }
    if (failures.length > 0) {
      throw new Error(`Rollback reverted ${reverted} action(s) but ${failures.length} failed: ${failures.join('; ')}`);
    }
  }

  /** Expires paused (and stale running) runs older than `maxAgeMs`; returns their ids. */
  async expirePaused({ maxAgeMs = DEFAULT_PAUSED_TTL_MS } = {}) {
    const expired = this.#store().store.expirePaused(this.#name, maxAgeMs);
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
    const status = this.#store().store.deleteExecution(this.#name, executionId);
    if (status === 'paused' || status === 'running') {
      await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rejected'));
    }
    return status !== null && status !== undefined;
  }

  async pruneExecutions(keep = DEFAULT_MAX_EXECUTIONS) {
    return this.#store().store.pruneExecutions(this.#name, keep);
  }

  /** Saves the execution's code as a snippet (replacing one of the same name). */
  async saveSnippet(name, { executionId, description, inputSchema } = {}) {
    const facet = this.#store();
    const execution = facet.getExecution(executionId);
    if (execution === undefined) throw new Error(`No execution "${executionId}" to save from`);
    const schema = toStored('The snippet input schema', inputSchema);
    if (schema.error !== undefined) throw new Error(schema.error);
    const snippet = {
      name,
      description: description ?? '',
      code: execution.code,
      savedAt: Date.now(),
      inputSchema: schema.text === null ? undefined : schema.text,
      connectors: execution.connectors === undefined ? undefined : JSON.stringify(execution.connectors),
    };
    facet.store.saveSnippet(this.#name, snippet);
    return toSnippet(snippet);
  }

  async snippets() {
    return this.#store().snippets();
  }

  async deleteSnippet(name) {
    return this.#store().store.deleteSnippet(this.#name, name);
  }
}

/**
 * createCodemodeRuntime({ executor, connectors, name?, path?, maxExecutions?, transformResult? }):
 * the durable runtime over a SQLite file (`path`, default `.codemode/runtime.db` under the
 * working directory; `':memory:'` for a private one). `name` partitions the file.
 */
function createCodemodeRuntime(options = {}) {
  const connectors = Array.isArray(options.connectors) ? options.connectors : [];
  validateConnectorNames(connectors);
  if (options.executor === undefined || options.executor === null || typeof options.executor.execute !== 'function') {
    throw new TypeError('createCodemodeRuntime: options.executor must implement execute(code, providers, options)');
  }
  return new CodemodeRuntimeHandle({
    connectors,
    executor: options.executor,
    name: options.name === undefined ? DEFAULT_RUNTIME_NAME : options.name,
    path: options.path === undefined ? DEFAULT_PATH : options.path,
    maxExecutions: options.maxExecutions === undefined ? DEFAULT_MAX_EXECUTIONS : options.maxExecutions,
    transformResult: options.transformResult,
  });
}

module.exports = {
  createCodemodeRuntime,
  CodemodeRuntimeHandle,
  DEFAULT_MAX_EXECUTIONS,
  DEFAULT_PAUSED_TTL_MS,
  MAX_DURABLE_VALUE_BYTES,
};
