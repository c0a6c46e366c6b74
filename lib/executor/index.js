'use strict';
// IsolateExecutor: the public executor. Two forms share one native pool:
// - the native form, execute({ code, providers: [{ name, tools }], dispatch, ... }), where tool
//   calls reach `dispatch` as JSON text (src/api, DESIGN.md);
// - the Cloudflare form, execute(code, providersOrFns, options?), the drop-in for
//   DynamicWorkerExecutor (lib/cloudflare/execute.js builds its namespaces and dispatch).
// This file validates options, hands one job per execution to the pool, answers the program's
// tool calls, and shapes the native report.

const { NativeExecutor, boundTable } = require('../native.js');
const { engineCommand } = require('./engine-command.js');
const { checkOptionNames } = require('../option-names.js');
const { messageOf, isPlainObject } = require('../util.js');
const { CODES, CodemodeExecutorError, invalidArgument, fromNative } = require('../errors.js');
const { providerNameProblem } = require('../cloudflare/names.js');
const cloudflare = require('../cloudflare/execute.js');
const { READS_PROGRAMS } = require('../cloudflare/normalize.js');
const { unwrapProgram } = require('../program-text.js');
const { OUTBOUND, checkOutbound, handleOutbound, bodyBudget } = require('./outbound.js');

// The bounds come from one table in Rust (src/limits.rs BOUNDS): their names, where each is
// given, and their ranges. This file checks only shapes; ranges are checked natively, once.
const BOUNDS = boundTable();
const TOP_BOUNDS = BOUNDS.filter((b) => b.place === 'top').map((b) => b.name);
const LIMIT_OPTIONS = BOUNDS.filter((b) => b.place === 'limits').map((b) => b.name);

// The options of `new IsolateExecutor(options)` besides the bounds, and Cloudflare's
// DynamicWorkerExecutor options that have no meaning on Node (accepted and ignored, so code
// written for Cloudflare passes them unchanged): `loader` (the Worker Loader binding; the pool
// replaces it) and `bindings` (env bindings the harness never exposes to programs).
const EXECUTOR_OPTIONS = [...TOP_BOUNDS, 'limits', 'isolation', 'globalOutbound', 'modules', 'typescript'];
const CLOUDFLARE_ONLY_OPTIONS = ['loader', 'bindings'];
// The native form's request, and a retained handle's execute options.
const REQUEST_OPTIONS = ['code', 'params', 'providers', 'dispatch', 'outbound', 'timeout', 'memoryLimitMb', 'retainHandles', 'signal', 'onLog', '__faultInjection'];
const HANDLE_OPTIONS = ['params', 'timeout', 'signal', 'onLog'];

// A bound's value must be a number; whether it is in range is the native layer's call.
function checkNumber(label, value) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number') {
    throw invalidArgument(`${label} must be a number (got ${typeof value} ${String(value)})`);
  }
  return value;
}

// The isolation used when the options do not say: 'process', unless the environment variable
// CODEMODE_EXECUTOR_ISOLATION names the other one (the test suite runs once per mode with it).
function defaultIsolation() {
  const fromEnv = process.env.CODEMODE_EXECUTOR_ISOLATION;
  return fromEnv === 'thread' || fromEnv === 'process' ? fromEnv : 'process';
}

// Methods an ExecutionHandle calls on its executor (not part of the public surface).
const RUN_IN_HANDLE = Symbol('runInHandle');
const DISPOSE_HANDLE = Symbol('disposeHandle');


function nativeOptions(options) {
  if (options === undefined || options === null) options = {};
  if (!isPlainObject(options)) throw invalidArgument('IsolateExecutor options must be an object');
  const limits = options.limits === undefined ? {} : options.limits;
  if (!isPlainObject(limits)) throw invalidArgument('options.limits must be an object');
  // A misspelt or misplaced option would otherwise be dropped in silence and the default kept.
  // Cloudflare's own options that mean nothing here (CLOUDFLARE_ONLY_OPTIONS) are accepted.
  for (const name of Object.keys(limits)) {
    if (!LIMIT_OPTIONS.includes(name)) {
      throw invalidArgument(`options.limits has no bound named ${name} (known: ${LIMIT_OPTIONS.join(', ')})`);
    }
  }
  for (const name of LIMIT_OPTIONS) {
    if (Object.hasOwn(options, name)) {
      throw invalidArgument(`${name} is a bound of options.limits: pass { limits: { ${name} } }`);
    }
  }
  checkOptionNames(options, EXECUTOR_OPTIONS, 'IsolateExecutor options', invalidArgument, CLOUDFLARE_ONLY_OPTIONS);
  const bounds = {};
  for (const name of TOP_BOUNDS) {
    if (options[name] !== undefined) bounds[name] = checkNumber(name, options[name]);
  }
  for (const name of LIMIT_OPTIONS) {
    if (limits[name] !== undefined) bounds[name] = checkNumber(`limits.${name}`, limits[name]);
  }
  const isolation = options.isolation === undefined ? defaultIsolation() : options.isolation;
  if (isolation !== 'process' && isolation !== 'thread') {
    throw invalidArgument(`isolation must be 'process' or 'thread' (got ${String(isolation)})`);
  }
  if (isolation === 'thread') return { bounds, isolation };
  return { bounds, isolation, engineCommand: engineCommand(), loopReads: loopReads() };
}

// 'process' isolation: whether the host's event loop reads the engines' output itself (a frame
// then wakes this thread directly, not a reader thread that wakes it). Only Node runs libuv;
// CODEMODE_ENGINE_READER=thread leaves all reading to the reader threads (for comparisons).
function loopReads() {
  const onNode = !process.versions.bun && typeof globalThis.Deno !== 'object';
  return onNode && process.env.CODEMODE_ENGINE_READER !== 'thread';
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

// `params` as the JSON text the entry function's argument is parsed from (undefined: called
// with no argument). Only JSON data crosses into the isolate, as with tool arguments, and
// JSON.stringify alone would quietly drop or change what is not (a function or symbol in an
// object vanishes, in an array becomes null; NaN becomes null; a Map becomes {}): such a value,
// at any depth, is refused before the program starts. An object's property that is undefined
// is left out, as JSON leaves it out: the program reads undefined there all the same.
function paramsJson(params, name) {
  if (params === undefined) return undefined;
  let json;
  try {
    json = JSON.stringify(params, function strictParams(key, value) {
      const problem = notJsonData(value, Array.isArray(this));
      if (problem !== undefined) throw new TypeError(`${problem}${key === '' ? '' : ` at ${JSON.stringify(key)}`}`);
      return value;
    });
  } catch (error) {
    throw invalidArgument(`${name} must be JSON data: ${messageOf(error)}`);
  }
  if (json === undefined) throw invalidArgument(`${name} must be JSON data (got ${typeof params})`);
  return json;
}

// Why `value` (already through its toJSON) is not JSON data, or undefined when it is.
// `inArray`: an undefined element would become null.
function notJsonData(value, inArray) {
  switch (typeof value) {
    case 'function': case 'symbol': case 'bigint':
      return `a ${typeof value} is not JSON data`;
    case 'number':
      return Number.isFinite(value) ? undefined : `${value} is not JSON data`;
    case 'undefined':
      return inArray ? 'undefined in an array is not JSON data' : undefined;
    case 'object': {
      if (value === null || Array.isArray(value)) return undefined;
      const proto = Object.getPrototypeOf(value);
      if (proto === null || proto === Object.prototype) return undefined;
      // Boxed primitives are what JSON.stringify unwraps itself.
      if (value instanceof String || value instanceof Number || value instanceof Boolean) return undefined;
      const kind = (value.constructor && value.constructor.name) || 'object';
      return `a ${kind} is not JSON data (pass a plain object, an array or a value with toJSON)`;
    }
    default:
      return undefined;
  }
}

function checkOnLog(onLog, name) {
  if (onLog !== undefined && typeof onLog !== 'function') {
    throw invalidArgument(`${name} must be a function (line, { level, runId }) => void`);
  }
  return onLog;
}

// The level of a captured console line, from the prefix the sandbox gives it.
function levelOf(line) {
  if (line.startsWith('[warn] ')) return 'warn';
  if (line.startsWith('[error] ')) return 'error';
  return 'log';
}

function errorReply(error) {
  return JSON.stringify({ error: messageOf(error) });
}

class IsolateExecutor {
  #native;
  #maxReplyBytes;
  // Runs accepted and not yet settled, by run id. A tool call of any other run is dropped when
  // it reaches this thread: once execute() has settled, none of its calls may reach dispatch
  // (calls already queued for this thread when the run ended would otherwise still arrive).
  #liveRuns = new Set();
  #disposed = false;
  #outbound;
  #modules;
  #typescript;

  /**
   * @param {object} [options] workers, maxQueue, timeout (ms, default 60 000), memoryLimitMb
   *   (default 128), limits { maxArgsBytes, ... }, and the Cloudflare options globalOutbound
   *   (null: no network) and modules.
   */
  constructor(options) {
    const opts = nativeOptions(options);
    this.#outbound = checkOutbound(options && options.globalOutbound);
    this.#modules = cloudflare.checkModules(options && options.modules);
    const typescript = options && options.typescript;
    if (typescript !== undefined && typeof typescript !== 'boolean') {
      throw invalidArgument(`typescript must be a boolean (got ${typeof typescript})`);
    }
    this.#typescript = typescript !== false;
    try {
      this.#native = new NativeExecutor(opts);
      this.#maxReplyBytes = this.#native.limits.maxReplyBytes;
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
        return cloudflare.execute(this.#runner(), codeOrRequest, providersOrFns, options, this.#sourceBreach(codeOrRequest));
      }
      return this.#executeNative(codeOrRequest);
    } catch (error) {
      return Promise.reject(fromNative(error));
    }
  }

  // The callback that answers a run's tool calls: `dispatch` (provider, tool, argsJson) → reply
  // text or a promise of it, and the outbound handler (null: no network) for fetch().
  #toolCallback(dispatch, handler) {
    const native = this.#native;
    const budget = handler === null ? 0 : bodyBudget(this.#maxReplyBytes);
    const answer = (provider, tool, argsJson) => (provider === OUTBOUND
      ? handleOutbound(handler, argsJson, budget)
      : dispatch(provider, tool, argsJson));
    const live = this.#liveRuns;
    return (runId, callId, provider, tool, argsJson) => {
      if (!live.has(runId)) return;
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
  }

  // The live-log callback of a run: each console line as it happens, while the run is live.
  // What onLog throws is dropped (it must not end the run or the host); a slow onLog only
  // delays its own later lines, which queue on this thread (at most the run's log bounds).
  // Every line reaches onLog once, in order, before the run's promise settles: lines still
  // on their way when the report arrives are delivered from the report's logs (`finish`).
  #logCallback(onLog) {
    if (onLog === undefined) return undefined;
    let delivered = 0;
    let finished = false;
    const deliver = (runId, line) => {
      delivered += 1;
      try {
        onLog(line, { level: levelOf(line), runId });
      } catch {
        // ignored: see above
      }
    };
    const onLine = (runId, line) => {
      if (!finished) deliver(runId, line);
    };
    onLine.finish = (runId, report) => {
      const logs = Array.isArray(report.logs) ? report.logs : [];
      for (let i = delivered; i < logs.length; i++) deliver(runId, logs[i]);
      finished = true;
    };
    return onLine;
  }

  #checkOpen() {
    if (this.#disposed) {
      throw new CodemodeExecutorError(CODES.DISPOSED, 'The executor has been disposed');
    }
  }

  // Runs one job: `namespaces` and `resultMode` go to the sandbox, tool calls go to `dispatch`.
  // Resolves with the native report. `outbound` (a handler, or null for no network) defaults to
  // the executor's globalOutbound. With `retain`, the report carries a handle id and
  // `onToolCall` is returned with it for the handle's later runs.
  #run({ code, params, statements, namespaces, resultMode, dispatch, timeout, memoryLimitMb, faultInjection, outbound, retain, signal, onLog }) {
    this.#checkOpen();
    const handler = outbound === undefined ? this.#outbound : outbound;
    const onToolCall = this.#toolCallback(dispatch, handler);
    // Checked first, before the source is copied into the native layer or anything is built
    // for the run (in the Cloudflare form, also before normalizeCode parses it: see
    // #sourceBreach()).
    const breach = this.#sourceBreach(code);
    if (breach !== undefined) return Promise.resolve({ report: notStarted(breach), onToolCall });
    const request = {
      code: statements === undefined ? unwrapProgram(code) : code,
      paramsJson: params,
      typescript: this.#typescript,
      // The native form (statements undefined) reads a function body as one too, when the
      // text is neither an expression nor a module: what models answer with most often after
      // a function. The Cloudflare form says what normalizeCode made of its text.
      statements: statements !== false,
      // Help in messages about what the sandbox lacks: the native form (the Cloudflare form
      // keeps Cloudflare's texts).
      explain: resultMode === 'json',
      runConfigJson: JSON.stringify({ resultMode, namespaces, outbound: handler !== null, modules: this.#modules }),
      timeout: checkNumber('timeout', timeout),
      memoryLimitMb: checkNumber('memoryLimitMb', memoryLimitMb),
      faultInjection,
      retain: retain === true,
    };
    const native = this.#native;
    const onLine = this.#logCallback(onLog);
    return runWithSignal(native, signal, () => this.#tracked(native.execute(request, onToolCall, onLine), onLine)).then((report) => ({ report, onToolCall }));
  }

  // Marks a run live until its promise settles (see #liveRuns). With `onLine`, the run's last
  // console lines reach onLog before the promise settles.
  #tracked(pending, onLine) {
    const live = this.#liveRuns;
    const runId = pending.runId;
    live.add(runId);
    const tracked = pending.then((report) => {
      live.delete(runId);
      if (onLine !== undefined) onLine.finish(runId, report);
      return report;
    }, (error) => {
      live.delete(runId);
      throw error;
    });
    tracked.runId = runId;
    return tracked;
  }

  // The maxCodeBytes breach message for `code`, or undefined when it fits: measured without
  // copying or parsing it (the Cloudflare form asks before normalizeCode parses the source).
  #sourceBreach(code) {
    if (typeof code !== 'string') return undefined;
    const breach = this.#native.codeSizeBreach(Buffer.byteLength(code, 'utf8'));
    return breach === null ? undefined : breach;
  }

  // A further run in a retained isolate (see ExecutionHandle).
  [RUN_IN_HANDLE](handleId, code, { timeout, signal, params, onLog }, onToolCall) {
    this.#checkOpen();
    const native = this.#native;
    const breach = this.#sourceBreach(code);
    if (breach !== undefined) return Promise.resolve(shapeNativeReport(notStarted(breach)));
    const request = {
      handleId,
      code: unwrapProgram(code),
      paramsJson: params,
      typescript: this.#typescript,
      timeout: checkNumber('timeout', timeout),
    };
    const onLine = this.#logCallback(onLog);
    return runWithSignal(native, signal, () => this.#tracked(native.executeInHandle(request, onToolCall, onLine), onLine)).then(shapeNativeReport);
  }

  [DISPOSE_HANDLE](handleId) {
    return this.#disposed ? false : this.#native.disposeHandle(handleId);
  }

  #runner() {
    return (job) => this.#run({
      ...job,
      params: paramsJson(job.params, 'options.params'),
      onLog: checkOnLog(job.onLog, 'options.onLog'),
    }).then(({ report }) => report);
  }

  #executeNative(request) {
    if (!isPlainObject(request)) throw invalidArgument('execute() takes a request object { code, providers, dispatch } or (code, providers, options)');
    checkOptionNames(request, REQUEST_OPTIONS, 'execute() request', invalidArgument);
    const { code, dispatch } = request;
    if (typeof code !== 'string') throw invalidArgument('request.code must be a string');
    const namespaces = nativeNamespaces(request.providers);
    if (request.retainHandles !== undefined && typeof request.retainHandles !== 'boolean') {
      throw invalidArgument('request.retainHandles must be a boolean');
    }
    if (dispatch !== undefined && typeof dispatch !== 'function') {
      throw invalidArgument('request.dispatch must be a function (provider, tool, argsJson) => string');
    }
    const answer = dispatch === undefined
      ? (provider, tool) => errorReply(new Error(`No dispatch function: cannot call ${provider}.${tool}`))
      : dispatch;
    return this.#run({
      code,
      params: paramsJson(request.params, 'request.params'),
      onLog: checkOnLog(request.onLog, 'request.onLog'),
      namespaces,
      resultMode: 'json',
      dispatch: answer,
      timeout: request.timeout,
      memoryLimitMb: request.memoryLimitMb,
      faultInjection: typeof request.__faultInjection === 'string' ? request.__faultInjection : undefined,
      outbound: request.outbound === undefined ? undefined : checkOutbound(request.outbound, 'request.outbound'),
      retain: request.retainHandles === true,
      signal: checkSignal(request.signal, 'request.signal'),
    }).then(({ report, onToolCall }) => {
      const out = shapeNativeReport(report);
      if (request.retainHandles === true && typeof report.handleId === 'number') {
        out.handle = new ExecutionHandle(this, report.handleId, onToolCall);
      }
      return out;
    });
  }

  /** The effective bounds: the defaults with this executor's options applied. */
  get limits() {
    const native = this.#native.limits;
    const out = {};
    for (const { name } of BOUNDS) out[name] = native[name];
    out.isolation = this.#native.isolation;
    return out;
  }

  /**
   * Counters: workers, busy, queued, completed, lost, abandoned, replaced, retained, isolation,
   * and in 'process' isolation processes, enginesStarted, enginesLost, enginesRetired,
   * engineFrames, engineFramesOnLoop, crashLoop.
   */
  stats() {
    const s = this.#native.stats();
    const out = { ...s };
    if (out.crashLoop === null || out.crashLoop === undefined) delete out.crashLoop;
    if (s.isolation === 'process') out.enginePids = this.#native.enginePids();
    return out;
  }

  /**
   * Stops the pool. Queued runs reject with ERR_DISPOSED; runs already started finish within
   * their own timeout. Later execute() calls reject with ERR_DISPOSED.
   */
  dispose() {
    this.#disposed = true;
    return this.#native.dispose();
  }

  // runCode hands this executor program text as written (lib/cloudflare/normalize.js).
  get [READS_PROGRAMS]() {
    return true;
  }

  /** `await using executor = new IsolateExecutor()`: disposed when the scope ends. */
  [Symbol.asyncDispose]() {
    return this.dispose();
  }
}

/** The error text of a run cancelled through its AbortSignal (what the run itself records). */
const ABORTED = 'Execution aborted';

function checkSignal(signal, name) {
  if (signal === undefined) return undefined;
  if (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean' ||
    typeof signal.addEventListener !== 'function' || typeof signal.removeEventListener !== 'function') {
    throw invalidArgument(`${name} must be an AbortSignal`);
  }
  return signal;
}

function abortReason(signal) {
  return signal.reason !== undefined ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

// Starts a run unless `signal` is already aborted; an abort while it is queued or running
// cancels it in the pool (it ends at once, its isolate discarded) and rejects with the signal's
// reason, as fetch() does.
function runWithSignal(native, signal, start) {
  if (signal === undefined) return settle(start());
  if (signal.aborted) return Promise.reject(abortReason(signal));
  const pending = start();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      native.cancel(pending.runId, ABORTED);
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const done = () => signal.removeEventListener('abort', onAbort);
    settle(pending).then((report) => { done(); resolve(report); }, (error) => { done(); reject(error); });
  });
}

// Native reports carry machinery faults as data; they become rejections with a stable code.
function settle(promise) {
  return promise.then((report) => {
    if (report.faultCode !== undefined && report.faultCode !== null) {
      throw new CodemodeExecutorError(report.faultCode, report.faultMessage);
    }
    return report;
  });
}

/**
 * A retained execution (`execute({ ..., retainHandles: true })`): its isolate stays alive, so
 * further code runs in the same global scope with the same providers and dispatch. Closed by
 * dispose(), by idling longer than `retainedIdleMs`, or when one of its runs is ended by a bound
 * (timeout, memory); a closed handle rejects with ERR_HANDLE_CLOSED.
 */
class ExecutionHandle {
  #executor;
  #onToolCall;
  #closed = false;

  constructor(executor, id, onToolCall) {
    this.#executor = executor;
    this.#onToolCall = onToolCall;
    this.id = id;
  }

  /** Runs `code` (an async function expression) in this isolate. */
  execute(code, options) {
    try {
      if (typeof code !== 'string') throw invalidArgument('handle.execute(code): code must be a string');
      if (options !== undefined && !isPlainObject(options)) throw invalidArgument('handle.execute options must be an object');
      if (options !== undefined) checkOptionNames(options, HANDLE_OPTIONS, 'handle.execute options', invalidArgument);
      if (this.#closed) {
        throw new CodemodeExecutorError(CODES.HANDLE_CLOSED, `The execution handle ${this.id} is closed (disposed)`);
      }
      const given = options === undefined ? {} : options;
      const run = {
        timeout: given.timeout,
        signal: checkSignal(given.signal, 'options.signal'),
        params: paramsJson(given.params, 'options.params'),
        onLog: checkOnLog(given.onLog, 'options.onLog'),
      };
      return this.#executor[RUN_IN_HANDLE](this.id, code, run, this.#onToolCall);
    } catch (error) {
      return Promise.reject(fromNative(error));
    }
  }

  /** Drops the isolate. Resolves true if it was still alive. */
  dispose() {
    if (this.#closed) return Promise.resolve(false);
    this.#closed = true;
    try {
      return Promise.resolve(this.#executor[DISPOSE_HANDLE](this.id));
    } catch (error) {
      return Promise.reject(fromNative(error));
    }
  }

  /** `await using handle = out.handle`: the isolate is dropped when the scope ends. */
  [Symbol.asyncDispose]() {
    return this.dispose().then(() => undefined);
  }

  /** `using handle = out.handle`: dropping the isolate is synchronous underneath. */
  [Symbol.dispose]() {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#executor[DISPOSE_HANDLE](this.id);
    } catch {
      // already gone with its executor
    }
  }
}

// The report of a run refused for its source size before the native layer saw it (a breached
// bound is the program's outcome, not a fault): the native report of the same breach
// (NativeReport, src/api/report.rs), key for key and value for value, as
// __test__/executor/surface.test.js checks: no resultJson, every phase at zero.
const PHASES = ['queue', 'isolate', 'compile', 'run', 'toolWait'];
function notStarted(error) {
  return {
    logs: [], queuedMs: 0, runMs: 0, totalMs: 0, toolCalls: 0, heapUsedBytes: 0,
    phases: PHASES.map((name) => ({ name, durationMs: 0 })), cpuMs: 0, codeCacheHit: false,
    error, errorKind: 'bound', errorBound: 'maxCodeBytes',
  };
}

function shapeNativeReport(report) {
  const out = {
    result: report.resultJson === undefined || report.resultJson === null ? undefined : JSON.parse(report.resultJson),
  };
  if (report.error !== undefined && report.error !== null) {
    out.error = report.error;
    // What ended the run, as data: a host need not read the message to tell a timeout from a
    // program error.
    out.errorKind = report.errorKind;
    if (report.errorBound !== undefined && report.errorBound !== null) out.errorBound = report.errorBound;
  }
  out.logs = report.logs;
  out.timing = { queuedMs: report.queuedMs, runMs: report.runMs, totalMs: report.totalMs, phases: report.phases };
  out.stats = { toolCalls: report.toolCalls, heapUsedBytes: report.heapUsedBytes, cpuMs: report.cpuMs, codeCacheHit: report.codeCacheHit };
  return out;
}

// REQUEST_OPTIONS and notStarted copy native tables (the per-run bounds, NativeReport):
// exported for __test__/executor/surface.test.js, which pins them; lib/index.js exports neither.
module.exports = { IsolateExecutor, ExecutionHandle, REQUEST_OPTIONS, notStarted };
