'use strict';
// IsolateExecutor: the public executor. Two forms share one native pool:
// - the native form, execute({ code, providers: [{ name, tools }], dispatch, ... }), where tool
//   calls reach `dispatch` as JSON text (src/api, DESIGN.md);
// - the Cloudflare form, execute(code, providersOrFns, options?), the drop-in for
//   DynamicWorkerExecutor (lib/cloudflare.js builds its namespaces and dispatch).
// This file validates options, hands one job per execution to the pool, answers the program's
// tool calls, and shapes the native report.

const { NativeExecutor } = require('../index.js');
const { CODES, CodemodeExecutorError, invalidArgument, fromNative } = require('./errors.js');
const { providerNameProblem } = require('./names.js');
const cloudflare = require('./cloudflare.js');
const { OUTBOUND, checkOutbound, handleOutbound, bodyBudget } = require('./outbound.js');

const LIMIT_OPTIONS = [
  'maxArgsBytes', 'maxReplyBytes', 'maxResultBytes', 'maxLogLines', 'maxLogBytes',
  'maxToolCalls', 'maxCodeBytes',
];

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkInteger(name, value, min, max) {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`${name} must be an integer between ${min} and ${max} (got ${String(value)})`);
  }
  return value;
}

function checkTimeout(value) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 86_400_000) {
    throw invalidArgument(`timeout must be a number of milliseconds between 1 and 86400000 (got ${String(value)})`);
  }
  return value;
}

function nativeOptions(options) {
  if (options === undefined || options === null) return {};
  if (!isPlainObject(options)) throw invalidArgument('IsolateExecutor options must be an object');
  const limits = options.limits === undefined ? {} : options.limits;
  if (!isPlainObject(limits)) throw invalidArgument('options.limits must be an object');
  const out = {
    workers: checkInteger('workers', options.workers, 1, 256),
    maxQueue: checkInteger('maxQueue', options.maxQueue, 1, 10_000_000),
    timeout: checkTimeout(options.timeout),
    memoryLimitMb: checkInteger('memoryLimitMb', options.memoryLimitMb, 16, 16384),
  };
  for (const name of LIMIT_OPTIONS) {
    out[name] = checkInteger(`limits.${name}`, limits[name], 1, 0xffffffff);
  }
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

// The native form's providers: [{ name, tools }] → run-config namespaces.
function nativeNamespaces(providers) {
  if (providers === undefined) return [];
  if (!Array.isArray(providers)) throw invalidArgument('providers must be an array of { name, tools }');
  const seen = new Set();
  const list = [];
  for (const provider of providers) {
    if (!isPlainObject(provider)) throw invalidArgument('each provider must be an object { name, tools }');
    const problem = providerNameProblem(provider.name);
    if (problem) throw invalidArgument(problem);
    if (seen.has(provider.name)) throw invalidArgument(`Duplicate provider name "${provider.name}"`);
    seen.add(provider.name);
    const tools = provider.tools === undefined ? [] : provider.tools;
    if (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string')) {
      throw invalidArgument(`provider "${provider.name}": tools must be an array of strings`);
    }
    list.push({ name: provider.name, kind: 'provider', tools });
  }
  return list;
}

function errorReply(error) {
  const message = error instanceof Error ? error.message : String(error);
  return JSON.stringify({ error: message });
}

class IsolateExecutor {
  #native;
  #disposed = false;
  #outbound;
  #modules;

  /**
   * @param {object} [options] workers, maxQueue, timeout (ms, default 60 000), memoryLimitMb
   *   (default 128), limits { maxArgsBytes, ... }, and the Cloudflare options globalOutbound
   *   (null: no network) and modules.
   */
  constructor(options) {
    const opts = nativeOptions(options);
    this.#outbound = checkOutbound(options && options.globalOutbound);
    this.#modules = cloudflare.checkModules(options && options.modules);
    try {
      this.#native = new NativeExecutor(opts);
    } catch (error) {
      throw fromNative(error);
    }
  }

  /**
   * Cloudflare form: execute(code, providers | fns, options?) → { result, error?, logs }.
   * Native form: execute({ code, providers, dispatch, timeout?, memoryLimitMb? })
   *   → { result, error?, logs, timing, stats }.
   */
  execute(codeOrRequest, providersOrFns, options) {
    try {
      if (typeof codeOrRequest === 'string') {
        return cloudflare.execute(this.#runner(), codeOrRequest, providersOrFns, options);
      }
      return this.#executeNative(codeOrRequest);
    } catch (error) {
      return Promise.reject(fromNative(error));
    }
  }

  // Runs one job: `namespaces` and `resultMode` go to the sandbox, tool calls go to `dispatch`
  // (provider, tool, argsJson) → reply text or a promise of it. Resolves with the native report.
  // `outbound` (a handler, or null for no network) defaults to the executor's globalOutbound.
  #run({ code, namespaces, resultMode, dispatch, timeout, memoryLimitMb, faultInjection, outbound }) {
    if (this.#disposed) {
      throw new CodemodeExecutorError(CODES.DISPOSED, 'The executor has been disposed');
    }
    const native = this.#native;
    const handler = outbound === undefined ? this.#outbound : outbound;
    const budget = handler === null ? 0 : bodyBudget(native.limits.maxReplyBytes);
    const answer = (provider, tool, argsJson) => (provider === OUTBOUND
      ? handleOutbound(handler, argsJson, budget)
      : dispatch(provider, tool, argsJson));
    const onToolCall = (runId, callId, provider, tool, argsJson) => {
      const send = (reply) => {
        if (typeof reply !== 'string') {
          reply = errorReply(new Error(`dispatch for ${provider}.${tool} must return a JSON string (got ${typeof reply})`));
        }
        native.reply(runId, callId, reply);
      };
      let reply;
      try {
        reply = answer(provider, tool, argsJson);
      } catch (error) {
        send(errorReply(error));
        return;
      }
      if (reply !== null && typeof reply === 'object' && typeof reply.then === 'function') {
        Promise.resolve(reply).then(send, (error) => send(errorReply(error)));
      } else {
        send(reply);
      }
    };
    const request = {
      code,
      runConfigJson: JSON.stringify({ resultMode, namespaces, outbound: handler !== null, modules: this.#modules }),
      timeout: checkTimeout(timeout),
      memoryLimitMb: checkInteger('memoryLimitMb', memoryLimitMb, 16, 16384),
      faultInjection,
    };
    return native.execute(request, onToolCall).then((report) => {
      if (report.faultCode !== undefined && report.faultCode !== null) {
        throw new CodemodeExecutorError(report.faultCode, report.faultMessage);
      }
      return report;
    });
  }

  #runner() {
    return (job) => this.#run(job);
  }

  #executeNative(request) {
    if (!isPlainObject(request)) throw invalidArgument('execute() takes a request object { code, providers, dispatch } or (code, providers, options)');
    const { code, dispatch } = request;
    if (typeof code !== 'string') throw invalidArgument('request.code must be a string');
    const namespaces = nativeNamespaces(request.providers);
    if (dispatch !== undefined && typeof dispatch !== 'function') {
      throw invalidArgument('request.dispatch must be a function (provider, tool, argsJson) => string');
    }
    const answer = dispatch === undefined
      ? (provider, tool) => errorReply(new Error(`No dispatch function: cannot call ${provider}.${tool}`))
      : dispatch;
    return this.#run({
      code,
      namespaces,
      resultMode: 'json',
      dispatch: answer,
      timeout: request.timeout,
      memoryLimitMb: request.memoryLimitMb,
      faultInjection: typeof request.__faultInjection === 'string' ? request.__faultInjection : undefined,
      outbound: request.outbound === undefined ? undefined : checkOutbound(request.outbound, 'request.outbound'),
    }).then(shapeNativeReport);
  }

  /** The effective bounds: the defaults with this executor's options applied. */
  get limits() {
    return { ...this.#native.limits };
  }

  /** Counters of the pool: workers, busy, queued, completed, lost, abandoned, replaced. */
  stats() {
    const s = this.#native.stats();
    return { ...s };
  }

  /**
   * Stops the pool. Queued runs reject with ERR_DISPOSED; runs already started finish within
   * their own timeout. Later execute() calls reject with ERR_DISPOSED.
   */
  dispose() {
    this.#disposed = true;
    return this.#native.dispose();
  }
}

function shapeNativeReport(report) {
  const out = {
    result: report.resultJson === undefined || report.resultJson === null ? undefined : JSON.parse(report.resultJson),
  };
  if (report.error !== undefined && report.error !== null) out.error = report.error;
  out.logs = report.logs;
  out.timing = { queuedMs: report.queuedMs, runMs: report.runMs, totalMs: report.totalMs };
  out.stats = { toolCalls: report.toolCalls, heapUsedBytes: report.heapUsedBytes };
  return out;
}

module.exports = { IsolateExecutor };
