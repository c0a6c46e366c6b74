'use strict';
// IsolateExecutor: the public executor. It validates what the user passes, hands one job per
// execution to the native pool, answers the program's tool calls through `dispatch`, and shapes
// the native report into the result users read.

const { NativeExecutor } = require('../index.js');
const { CODES, CodemodeExecutorError, invalidArgument, fromNative } = require('./errors.js');
const { providerNameProblem } = require('./names.js');

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

function providersJson(providers) {
  if (providers === undefined) return '[]';
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
    list.push({ name: provider.name, tools });
  }
  return JSON.stringify(list);
}

function errorReply(error) {
  const message = error instanceof Error ? error.message : String(error);
  return JSON.stringify({ error: message });
}

class IsolateExecutor {
  #native;
  #disposed = false;

  constructor(options) {
    const opts = nativeOptions(options);
    try {
      this.#native = new NativeExecutor(opts);
    } catch (error) {
      throw fromNative(error);
    }
  }

  /**
   * Native form: one request, tool calls answered by `dispatch(provider, tool, argsJson)` with a
   * JSON string `{"result": ...}` or `{"error": "message"}` (or a promise of one).
   */
  execute(request) {
    try {
      return this.#executeNative(request);
    } catch (error) {
      return Promise.reject(fromNative(error));
    }
  }

  #executeNative(request) {
    if (this.#disposed) {
      throw new CodemodeExecutorError(CODES.DISPOSED, 'The executor has been disposed');
    }
    if (!isPlainObject(request)) throw invalidArgument('execute() takes a request object { code, providers, dispatch }');
    const { code, dispatch } = request;
    if (typeof code !== 'string') throw invalidArgument('request.code must be a string');
    const providers = providersJson(request.providers);
    if (dispatch !== undefined && typeof dispatch !== 'function') {
      throw invalidArgument('request.dispatch must be a function (provider, tool, argsJson) => string');
    }
    const native = this.#native;
    const onToolCall = (runId, callId, provider, tool, argsJson) => {
      const send = (reply) => {
        if (typeof reply !== 'string') {
          reply = errorReply(new Error(`dispatch for ${provider}.${tool} must return a JSON string (got ${typeof reply})`));
        }
        native.reply(runId, callId, reply);
      };
      if (dispatch === undefined) {
        send(errorReply(new Error(`No dispatch function: cannot call ${provider}.${tool}`)));
        return;
      }
      let reply;
      try {
        reply = dispatch(provider, tool, argsJson);
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
    const nativeRequest = {
      code,
      providersJson: providers,
      timeout: checkTimeout(request.timeout),
      memoryLimitMb: checkInteger('memoryLimitMb', request.memoryLimitMb, 16, 16384),
      faultInjection: typeof request.__faultInjection === 'string' ? request.__faultInjection : undefined,
    };
    return native.execute(nativeRequest, onToolCall).then(shapeReport);
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

function shapeReport(report) {
  if (report.faultCode !== undefined && report.faultCode !== null) {
    throw new CodemodeExecutorError(report.faultCode, report.faultMessage);
  }
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
