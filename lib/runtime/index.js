'use strict';
// The durable Code Mode runtime (docs/cloudflare-compat.md §6–§11) for Node: Cloudflare keeps it in a Durable Object,
// this keeps it in a SQLite file (src/store via NativeStore). Nothing per run lives in memory:
// every operation addresses an execution id, so any process over the same file can resume,
// approve, reject or roll back any run.
//
// The parts: store.js (the SQLite store and the facet of one runtime name, the handle's only way
// to it), pass.js (one pass over an execution, and connector setup); this file is the handle.

const path = require('node:path');
const { checkOptionNames } = require('../option-names.js');
const { invalidArgument } = require('../executor/errors.js');
const { buildDescription, codeInputSchema, toModelOutput } = require('./model-tool.js');
const { tooLargeMessage, MAX_DURABLE_VALUE_BYTES } = require('./durable.js');
const { messageOf } = require('../util.js');
const { storeAt, RuntimeStore } = require('./store.js');
const {
  SetupCache, loadSetup, eachConnector, runPass, missingConnectors, requiresMessage,
} = require('./pass.js');
const { searchConnectors, describeTarget } = require('./search.js');

const DEFAULT_RUNTIME_NAME = 'default';
const DEFAULT_MAX_EXECUTIONS = 50;
const DEFAULT_PAUSED_TTL_MS = 86_400_000;
const DEFAULT_PATH = path.join('.codemode', 'runtime.db');
const NAME_PATTERN = /^[a-zA-Z0-9_.-]+$/;

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

// ---- The handle (§6.9) -------------------------------------------------------------------------

class CodemodeRuntimeHandle {
  #connectors;
  #executor;
  #name;
  #file;
  #maxExecutions;
  #transformResult;
  #facet;
  #setup; // search() and describe(): connectors' describe() once per handle (§6.9)
  #defaultTool;

  constructor(options) {
    this.#connectors = options.connectors;
    this.#executor = options.executor;
    this.#name = options.name;
    this.#file = options.path;
    this.#maxExecutions = options.maxExecutions;
    this.#transformResult = options.transformResult;
    this.#setup = new SetupCache(this.#connectors);
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

  /** The AI SDK tool: `{ description, inputSchema, execute, toModelOutput }` (docs/cloudflare-compat.md §9). */
  tool(options) {
    options = options || {};
    const facet = this.#store();
    // Loaded once per tool object (§6.8), by the same policy as the handle's.
    const setup = new SetupCache(this.#connectors);
    return {
      description: buildDescription(this.#connectors, options.description, options.connectorHints),
      inputSchema: codeInputSchema,
      execute: async (input) => this.#execute(facet, input && input.code, setup),
      toModelOutput: ({ output } = {}) => toModelOutput(output),
    };
  }

  async #execute(facet, code, setupCache) {
    if (typeof code === 'string' && code.length > MAX_DURABLE_VALUE_BYTES) {
      return { status: 'error', executionId: '', error: tooLargeMessage('The execution code', code.length) };
    }
    const setup = await setupCache.get();
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
    const setup = await this.#setup.get();
    return searchConnectors(query, setup.descriptions, this.#store().snippets());
  }

  async describe(target) {
    const setup = await this.#setup.get();
    return describeTarget(target, setup.descriptions, this.#store().snippets());
  }

  async pending(executionId) {
    return this.#store().listPending(executionId);
  }

  /** Approves the paused run's pending action(s) and runs the next pass (replaying the rest). */
  async approve({ executionId } = {}) {
    executionId = String(executionId);
    const facet = this.#store();
    // Fresh setup, not a SetupCache: the contract (§6.9 approve, step 1) and Cloudflare's
    // resumeCodemode load the descriptions per approval. An approval can come long after the
    // pass that paused, and its replay follows what the connectors describe now (annotations
    // such as requiresApproval included), not what this handle saw earlier.
    const setup = await loadSetup(this.#connectors);
    // Read once: the connectors it needs before resuming, and its code (fixed at begin) after.
    const execution = facet.getExecution(executionId);
    if (execution === undefined) {
      return { status: 'error', executionId, error: `No execution "${executionId}" to resume.` };
    }
    const missing = missingConnectors(execution.connectors, new Set(setup.connectorsByName.keys()));
    if (missing.length > 0) {
      return { status: 'error', executionId, error: requiresMessage(`Execution "${executionId}"`, missing) };
    }
    if (!facet.resume(executionId)) {
      // Re-read: the status that made resume fail may be newer than `execution` (a racing
      // reject, approve or expiry in another process).
      const now = facet.getExecution(executionId);
      const error = now === undefined
        ? `No execution "${executionId}" to resume.`
        : `Execution "${executionId}" is not paused (status: ${now.status}); only a paused run can be approved.`;
      return { status: 'error', executionId, error };
    }
    return runPass(executionId, execution.code, setup, facet, this.#executor, this.#transformResult);
  }

  /** Rejects the pending action at `seq`; false when it was no longer pending. */
  async reject({ seq, executionId } = {}) {
    const rejected = this.#store().reject(String(executionId), Number(seq));
    if (rejected) await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rejected'));
    return rejected;
  }

  /** Reverts the run's applied actions, newest first; throws after trying all if any failed. */
  async rollback({ executionId } = {}) {
    const facet = this.#store();
    const byName = new Map(this.#connectors.map((c) => [c.name(), c]));
    const entries = facet.actionsToRevert(executionId);
    let reverted = 0;
    const failures = [];
    for (const entry of entries) {
      const connector = byName.get(entry.connector);
      if (connector === undefined) continue;
      try {
        if (await connector.revertAction(entry.method, entry.args, entry.result, { executionId })) {
          facet.markReverted(executionId, entry.seq);
          reverted++;
        }
      } catch (error) {
        failures.push(`${entry.connector}.${entry.method}: ${messageOf(error)}`);
      }
    }
    if (reverted > 0) {
      facet.markRolledBack(executionId);
      await eachConnector(this.#connectors, (c) => c.disposeExecution(executionId, 'rolled_back'));
    }
    if (failures.length > 0) {
      throw new Error(`Rollback reverted ${reverted} action(s) but ${failures.length} failed: ${failures.join('; ')}`);
    }
  }

  /** Expires paused (and stale running) runs older than `maxAgeMs`; returns their ids. */
  async expirePaused({ maxAgeMs = DEFAULT_PAUSED_TTL_MS } = {}) {
    const expired = this.#store().expirePaused(maxAgeMs);
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
    const status = this.#store().deleteExecution(executionId);
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
    const execution = facet.getExecution(executionId);
    if (execution === undefined) throw new Error(`No execution "${executionId}" to save from`);
    return facet.saveSnippet(name, { description, code: execution.code, inputSchema, connectors: execution.connectors });
  }

  async snippets() {
    return this.#store().snippets();
  }

  async deleteSnippet(name) {
    return this.#store().deleteSnippet(name);
  }
}

/**
 * createCodemodeRuntime({ executor, connectors, name?, path?, maxExecutions?, transformResult? }):
 * the durable runtime over a SQLite file (`path`, default `.codemode/runtime.db` under the
 * working directory; `':memory:'` for a private one). `name` partitions the file.
 */
// The options createCodemodeRuntime reads; Cloudflare's `ctx` (the Durable Object's state, which
// `path` replaces here) is accepted and ignored so that code written for Workers passes it.
const RUNTIME_OPTIONS = ['executor', 'connectors', 'name', 'path', 'maxExecutions', 'transformResult'];
const CLOUDFLARE_ONLY_RUNTIME_OPTIONS = ['ctx'];

function createCodemodeRuntime(options = {}) {
  // A misspelt option (`stor`, `maxExecution`) would otherwise silently keep its default.
  checkOptionNames(options, RUNTIME_OPTIONS, 'createCodemodeRuntime options', invalidArgument, CLOUDFLARE_ONLY_RUNTIME_OPTIONS);
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
