'use strict';
// The runtime's storage: one NativeStore per SQLite file or PostgreSQL database, and
// `RuntimeStore`, the facet of one runtime name that converts between JS values and the rows of
// docs/cloudflare-compat.md §6. The handle and the pass reach the store only through a facet, so
// the name and the conversions live in one place.

const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { NativeStore } = require('../native.js');
const {
  toStored, parseForStorage, stableStringify, stringifyForStorage, logsForStorage, MAX_DURABLE_VALUE_BYTES,
} = require('./durable.js');
const { invalidArgument, fromNative } = require('../errors.js');

// One NativeStore per place in this process while any runtime uses it: per SQLite file (and
// durability; SQLite connections are per file, and the store serializes its own access) or per
// PostgreSQL URL and settings (one bounded pool of connections, however many runtimes use it).
// Held weakly: a store no runtime uses any more is collected, and its threads and connections
// end. Every operation of a NativeStore runs on one of its own threads and returns a promise: a
// file or row another process holds locked, or a database far away, never stalls this event loop.
const stores = new Map();

function shared(key, open) {
  let store = stores.get(key)?.deref();
  if (store === undefined) {
    store = opened(open);
    stores.set(key, new WeakRef(store));
    forget.register(store, key);
  }
  return store;
}
const forget = new FinalizationRegistry((key) => {
  if (stores.get(key)?.deref() === undefined) stores.delete(key);
});

// A NativeStore made by `open`, its refusal (bad settings) a CodemodeExecutorError.
function opened(open) {
  try {
    return open();
  } catch (error) {
    throw fromNative(error);
  }
}

// The store's operations with their faults as CodemodeExecutorErrors: the native side rejects
// with an Error carrying the stable `code` (ERR_STORE, ERR_STORE_UNAVAILABLE, ...), and callers
// of the runtime see one error class for every fault, as they do from the executor.
function coded(native) {
  return new Proxy(native, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args) => {
        let result;
        try {
          result = value.apply(target, args);
        } catch (error) {
          throw fromNative(error);
        }
        return result instanceof Promise ? result.catch((error) => { throw fromNative(error); }) : result;
      };
    },
  });
}

/** A SQLite file's store: `':memory:'` is private to the caller, any other path is shared. */
function storeAt(file, durability = 'normal') {
  if (file === ':memory:') return opened(() => new NativeStore(':memory:', { durability }));
  return shared(`file:${durability}:${path.resolve(file)}`, () => new NativeStore(path.resolve(file), { durability }));
}

/**
 * A PostgreSQL database's store: `{ url, maxConnections?, connectTimeoutMs?,
 * statementTimeoutMs?, schema?, ca? }` (settings are checked, with their ranges, by the native side).
 * Nothing connects until the first operation.
 */
function storeOn({ url, ...settings }) {
  const key = `postgres:${JSON.stringify([url, settings.maxConnections, settings.connectTimeoutMs, settings.statementTimeoutMs, settings.schema, settings.ca])}`;
  return shared(key, () => new NativeStore(url, settings));
}

// Who holds a run while a pass of this process runs it: host, pid and a random part (a later
// process that gets the same pid, as in a restarted container, is a different owner).
const HOST = os.hostname();
const OWNER = `${HOST}/${process.pid}/${randomUUID()}`;

/**
 * Whether the owner of a lease is known to be dead: a process of this host that no longer
 * exists, or an earlier process that had this process's pid. An owner on another host is
 * never known dead (its lease must lapse).
 */
function ownerIsDead(owner) {
  if (typeof owner !== 'string' || owner === OWNER) return false;
  const [host, pidText] = owner.split('/');
  const pid = Number(pidText);
  if (host !== HOST || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

function newExecutionId() {
  return `exec_${String(Date.now()).padStart(16, '0')}_${randomUUID()}`;
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
  // Why the last rollback could not revert it (only while its effect is or may be in force).
  if (row.revertError !== null && row.revertError !== undefined) entry.revertError = row.revertError;
  return entry;
}

// A call a rollback could not revert, as rollback() and the execution's record name it.
function leftInForceItem(entry, error) {
  const item = { seq: entry.seq, connector: entry.connector, method: entry.method, error };
  if (entry.state !== 'applied') item.inDoubt = true;
  return item;
}

// What the rollbacks of a run left in force, newest first (the order rollback tries them):
// entries still applied, executing or in doubt whose revert failed.
const IN_FORCE = new Set(['applied', 'executing', 'in_doubt']);
function leftInForce(log) {
  const left = [];
  for (let i = log.length - 1; i >= 0; i--) {
    const entry = log[i];
    if (entry !== undefined && entry.revertError !== undefined && IN_FORCE.has(entry.state)) left.push(leftInForceItem(entry, entry.revertError));
  }
  return left;
}

function toExecution(row) {
  const log = [];
  for (const entry of row.log) log[entry.seq] = toEntry(entry);
  const left = leftInForce(log);
  const execution = {
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
    owner: row.owner ?? undefined,
    leaseUntil: row.leaseUntil ?? undefined,
    idempotencyKey: row.idempotencyKey ?? undefined,
  };
  // Present only when a rollback left something in force (the status stays the contract's).
  if (left.length > 0) execution.leftInForce = left;
  return execution;
}

// A gated run's first log entry: its program, awaiting approval before it starts.
const PROGRAM_GATE = { connector: 'codemode', method: 'program' };
const isProgramGate = (entry) => entry !== undefined && entry.seq === 0 && entry.connector === PROGRAM_GATE.connector && entry.method === PROGRAM_GATE.method;

function toPending(row) {
  const args = parseForStorage(row.args);
  const pending = { executionId: row.executionId, seq: row.seq, connector: row.connector, method: row.method, args };
  // The program itself, before anything of it ran (createCodemodeRuntime({ approveProgram })).
  // A call keeps Cloudflare's shape (no `kind`).
  if (isProgramGate(row)) return { kind: 'program', ...pending, code: args && args.code };
  // A call in doubt: its pass ended before recording it. approve({ executionId, seq })
  // retries it; markDone({ executionId, seq, result }) records that it did take effect.
  if (row.inDoubt) pending.inDoubt = true;
  return pending;
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
  #store;
  #name;

  constructor(store, name) {
    this.#store = coded(store);
    this.#name = name;
  }

  #lease(leaseMs) {
    return { owner: OWNER, until: Date.now() + leaseMs };
  }

  /**
   * Starts a run held by this process for `leaseMs`: `{ id, existing: false }`, or, when an
   * execution already has `idempotencyKey`, `{ id: <that one>, existing: true }` (an orphaned
   * one is first ended as interrupted). With `gated`, the run is paused before its first
   * statement, its program the pending action at seq 0 (written in the same transaction).
   */
  async begin(code, connectorNames, maxExecutions, leaseMs, idempotencyKey, gated) {
    const id = newExecutionId();
    let gate;
    if (gated === true) {
      // As decide() will store and compare the pass's { code } at seq 0.
      const stored = toStored(`Arguments to ${PROGRAM_GATE.connector}.${PROGRAM_GATE.method}`, { code });
      if (stored.error !== undefined) throw invalidArgument(stored.error);
      gate = { args: stored.text, argsStable: stableStringify(parseForStorage(stored.text)) };
    }
    const existing = await this.#store.begin(this.#name, id, code, JSON.stringify(connectorNames), maxExecutions, this.#lease(leaseMs), idempotencyKey ?? undefined, gate);
    return existing === null || existing === undefined ? { id, existing: false } : { id: existing, existing: true };
  }

  /** `{ kind: 'resumed' | 'missing' | 'not_paused' | 'leased' | 'stale', status?, waiting? }`. */
  async resume(id, leaseMs, seq) {
    return this.#store.resume(this.#name, id, this.#lease(leaseMs), seq ?? undefined);
  }

  async renew(id, leaseMs) {
    return this.#store.renew(this.#name, id, this.#lease(leaseMs));
  }

  async release(id) {
    return this.#store.release(this.#name, id, OWNER);
  }

  async claim(id, leaseMs) {
    return this.#store.claim(this.#name, id, this.#lease(leaseMs));
  }

  /** Running executions: `{ id, owner?, leaseUntil?, idempotencyKey? }`, oldest first. */
  async running() {
    return this.#store.running(this.#name);
  }

  /**
   * If the run's holder is a dead process (see ownerIsDead), clears its lease so the run can
   * be resumed, rejected or recovered now. True when it did.
   */
  async clearDeadOwner(id, owner) {
    return ownerIsDead(owner) && this.#store.release(this.#name, id, owner);
  }

  /**
   * Whether a live pass holds `run` (an execution, or a row of `running()`) now. A holder
   * known to be dead is cleared first, so its run counts as not held.
   */
  async heldByLivePass(run) {
    const leased = run.leaseUntil !== undefined && run.leaseUntil !== null && run.leaseUntil >= Date.now();
    return leased && !(await this.clearDeadOwner(run.id, run.owner));
  }

  /** A person's word that the call in doubt at `seq` took effect, with `result`. */
  async markDone(id, seq, result) {
    const stored = toStored(`The result given for step ${seq}`, result);
    if (stored.error !== undefined) throw invalidArgument(stored.error);
    return this.#store.markDone(this.#name, id, seq, stored.text ?? undefined);
  }

  /** Whether this process holds the run now. */
  holds(execution) {
    return execution !== undefined && execution.owner === OWNER;
  }

  async decide(id, seq, connector, method, args, requiresApproval, ephemeral, idempotent) {
    const stored = toStored(`Arguments to ${connector}.${method}`, args);
    // The arguments as the log holds them (binary becomes its bytes, a Map an object, ...):
    // compared with what an earlier pass recorded, form for form, so a value the storage codec
    // reshapes is not taken for a different argument.
    const recorded = stored.text === undefined ? undefined : stableStringify(parseForStorage(stored.text));
    const decision = await this.#store.decide(this.#name, id, OWNER, {
      seq,
      connector,
      method,
      args: stored.text ?? undefined,
      argsError: stored.error,
      argsStable: stored.text === undefined ? stableStringify(args) : recorded,
      recordedStable: recorded,
      requiresApproval,
      ephemeral,
      idempotent: idempotent === true,
    });
    // `delivery`: the recorded result's place in the order results reach the program, and
    // when it was recorded (a replay, or a read re-executed on every pass).
    const delivery = decision.delivery ?? undefined;
    if (decision.kind === 'replay') return { kind: 'replay', result: parseForStorage(decision.result), delivery };
    return { kind: decision.kind, seq, delivery };
  }

  /** The result's place in the delivery order ({ ordinal, at }), or undefined when nothing was recorded. */
  async recordResult(id, seq, connector, method, result) {
    const stored = toStored(`The result of ${connector}.${method}`, result);
    return (await this.#store.recordResult(this.#name, id, seq, stored.text ?? undefined, stored.error)) ?? undefined;
  }

  /**
   * What a pass needs to replay the run as earlier passes saw it: the places in the delivery
   * order earlier passes recorded (program gate aside), the clock the program starts at (when
   * the run began, or its program was approved), and the run's random seed. Undefined when
   * there is no such run.
   */
  async replayPlan(id) {
    const plan = await this.#store.replayPlan(this.#name, id);
    if (plan === null || plan === undefined) return undefined;
    return { places: plan.places, start: plan.start, seed: plan.seed ?? undefined };
  }


  /** False when the run was no longer running (rejected or expired during the pass). */
  async complete(id, result, logs) {
    const stored = toStored('The final result', result);
    const text = stored.error === undefined
      ? stored.text
      : stringifyForStorage(`[codemode: result omitted from the audit trail — ${stored.error}]`);
    return this.#store.complete(this.#name, id, OWNER, text === null ? undefined : text, logsForStorage(logs) ?? undefined);
  }

  /** False when the run was no longer running. */
  async fail(id, error, logs) {
    return this.#store.fail(this.#name, id, OWNER, String(error).slice(0, MAX_DURABLE_VALUE_BYTES), logsForStorage(logs) ?? undefined);
  }

  /** `'rejected'`, `'not_pending'` (no longer waiting) or `'leased'` (its pass is ending). */
  async reject(id, seq) {
    return this.#store.reject(this.#name, id, seq);
  }

  /** The actions whose effect is or may be in force (applied, executing or in doubt), newest first. */
  async actionsToRevert(id) {
    return (await this.#store.actionsToRevert(this.#name, id)).map(toEntry);
  }

  async markReverted(id, seq) {
    await this.#store.markReverted(this.#name, id, seq);
  }

  /** A rollback could not revert the entry at `seq`: `error` says why (the entry keeps its state). */
  async markRevertFailed(id, seq, error) {
    return this.#store.markRevertFailed(this.#name, id, seq, String(error));
  }

  async markRolledBack(id) {
    await this.#store.markRolledBack(this.#name, id);
  }

  /** The ids of the runs it expired. */
  async expirePaused(maxAgeMs) {
    return this.#store.expirePaused(this.#name, maxAgeMs);
  }

  async getExecution(id) {
    const row = await this.#store.getExecution(this.#name, id);
    return row === null || row === undefined ? undefined : toExecution(row);
  }

  async listExecutions(limit) {
    return (await this.#store.listExecutions(this.#name, limit)).map(toExecution);
  }

  /** The status the run had when deleted; null or undefined when there was none. */
  async deleteExecution(id) {
    return this.#store.deleteExecution(this.#name, id);
  }

  async pruneExecutions(keep) {
    return this.#store.pruneExecutions(this.#name, keep);
  }

  async listPending(id) {
    return (await this.#store.listPending(this.#name, id)).map(toPending);
  }

  async snippets() {
    return (await this.#store.snippets(this.#name)).map(toSnippet);
  }

  async snippet(name) {
    return (await this.snippets()).find((s) => s.name === name);
  }

  /**
   * Saves (or replaces) the snippet `name` with an execution's code and connectors; throws the
   * durable-value message when the input schema cannot be stored. Returns the saved snippet.
   */
  async saveSnippet(name, { description, code, inputSchema, connectors }) {
    const schema = toStored('The snippet input schema', inputSchema);
    if (schema.error !== undefined) throw invalidArgument(schema.error);
    const row = {
      name,
      description: description ?? '',
      code,
      savedAt: Date.now(),
      inputSchema: schema.text === null ? undefined : schema.text,
      connectors: connectors === undefined ? undefined : JSON.stringify(connectors),
    };
    await this.#store.saveSnippet(this.#name, row);
    return toSnippet(row);
  }

  async deleteSnippet(name) {
    return this.#store.deleteSnippet(this.#name, name);
  }
}

module.exports = { storeAt, storeOn, RuntimeStore, ownerIsDead, leftInForceItem, OWNER, PROGRAM_GATE, isProgramGate };
