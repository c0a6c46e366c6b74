'use strict';
// The runtime's storage: one NativeStore per SQLite file, and `RuntimeStore`, the facet of one
// runtime name that converts between JS values and the rows of docs/cloudflare-compat.md §6. The
// handle and the pass reach the store only through a facet, so the name and the conversions live
// in one place.

const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { NativeStore } = require('../native.js');
const {
  toStored, parseForStorage, stableStringify, stringifyForStorage, logsForStorage, MAX_DURABLE_VALUE_BYTES,
} = require('./durable.js');

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
  #store;
  #name;

  constructor(store, name) {
    this.#store = store;
    this.#name = name;
  }

  begin(code, connectorNames, maxExecutions) {
    const id = newExecutionId();
    this.#store.begin(this.#name, id, code, JSON.stringify(connectorNames), maxExecutions);
    return id;
  }

  resume(id) {
    return this.#store.resume(this.#name, id);
  }

  decide(id, seq, connector, method, args, requiresApproval, ephemeral) {
    const stored = toStored(`Arguments to ${connector}.${method}`, args);
    const recorded = stored.text === undefined ? undefined : stableStringify(parseForStorage(stored.text));
    const decision = this.#store.decide(this.#name, id, {
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
    this.#store.recordResult(this.#name, id, seq, stored.text ?? undefined, stored.error);
  }

  /** False when the run was no longer running (rejected or expired during the pass). */
  complete(id, result, logs) {
    const stored = toStored('The final result', result);
    const text = stored.error === undefined
      ? stored.text
      : stringifyForStorage(`[codemode: result omitted from the audit trail — ${stored.error}]`);
    return this.#store.complete(this.#name, id, text === null ? undefined : text, logsForStorage(logs) ?? undefined);
  }

  /** False when the run was no longer running. */
  fail(id, error, logs) {
    return this.#store.fail(this.#name, id, String(error).slice(0, MAX_DURABLE_VALUE_BYTES), logsForStorage(logs) ?? undefined);
  }

  /** False when the action at `seq` was no longer pending. */
  reject(id, seq) {
    return this.#store.reject(this.#name, id, seq);
  }

  /** The applied actions that can be reverted, newest first, as log entries. */
  actionsToRevert(id) {
    return this.#store.actionsToRevert(this.#name, id).map(toEntry);
  }

  markReverted(id, seq) {
    this.#store.markReverted(this.#name, id, seq);
  }

  markRolledBack(id) {
    this.#store.markRolledBack(this.#name, id);
  }

  /** The ids of the runs it expired. */
  expirePaused(maxAgeMs) {
    return this.#store.expirePaused(this.#name, maxAgeMs);
  }

  getExecution(id) {
    const row = this.#store.getExecution(this.#name, id);
    return row === null || row === undefined ? undefined : toExecution(row);
  }

  listExecutions(limit) {
    return this.#store.listExecutions(this.#name, limit).map(toExecution);
  }

  /** The status the run had when deleted; null or undefined when there was none. */
  deleteExecution(id) {
    return this.#store.deleteExecution(this.#name, id);
  }

  pruneExecutions(keep) {
    return this.#store.pruneExecutions(this.#name, keep);
  }

  listPending(id) {
    return this.#store.listPending(this.#name, id).map(toPending);
  }

  snippets() {
    return this.#store.snippets(this.#name).map(toSnippet);
  }

  snippet(name) {
    return this.snippets().find((s) => s.name === name);
  }

  /**
   * Saves (or replaces) the snippet `name` with an execution's code and connectors; throws the
   * durable-value message when the input schema cannot be stored. Returns the saved snippet.
   */
  saveSnippet(name, { description, code, inputSchema, connectors }) {
    const schema = toStored('The snippet input schema', inputSchema);
    if (schema.error !== undefined) throw new Error(schema.error);
    const row = {
      name,
      description: description ?? '',
      code,
      savedAt: Date.now(),
      inputSchema: schema.text === null ? undefined : schema.text,
      connectors: connectors === undefined ? undefined : JSON.stringify(connectors),
    };
    this.#store.saveSnippet(this.#name, row);
    return toSnippet(row);
  }

  deleteSnippet(name) {
    return this.#store.deleteSnippet(this.#name, name);
  }
}

module.exports = { storeAt, RuntimeStore };
