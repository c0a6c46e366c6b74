'use strict';
// IsolateExecutor: the public executor. Two forms share one native pool:
// - the native form, execute({ code, providers: [{ name, tools }], dispatch, ... }), where tool
//   calls reach `dispatch` as JSON text (src/api; docs/internals/javascript.md);
// - the Cloudflare form, execute(code, providersOrFns, options?), the drop-in for
//   DynamicWorkerExecutor (lib/cloudflare/execute.js builds its namespaces and dispatch).
// This file validates options, hands one job per execution to the pool, answers the program's
// tool calls, and shapes the native report.

const { NativeExecutor, boundTable, notStartedReport } = require('../native.js');
const { engineCommand } = require('./engine-command.js');
const { checkOptionNames, warnRenamed } = require('../option-names.js');
const { messageOf, isPlainObject } = require('../util.js');
const { CODES, CodemodeExecutorError, invalidArgument, fromNative } = require('../errors.js');
const { providerNameProblem } = require('../cloudflare/names.js');
const cloudflare = require('../cloudflare/execute.js');
const { READS_PROGRAMS } = require('../cloudflare/normalize.js');
const { unwrapProgram } = require('../program-text.js');
const { OUTBOUND, checkOutbound, handleOutbound, bodyBudget } = require('./outbound.js');
const { checkSecrets, mergeSecrets, RunSecrets } = require('./secrets.js');
const { Packages, PackageError, checkPackages, PACKAGE_VERSIONS, DESCRIBE_PACKAGE, INSTALLED_PACKAGES } = require('../packages.js');
const { RunObserver, checkOnEvent, levelOf } = require('../events.js');

// The bounds come from one table in Rust (src/limits.rs BOUNDS): their names, where each is
// given, and their ranges. This file checks only shapes; ranges are checked natively, once.
const BOUNDS = boundTable();
const TOP_BOUNDS = BOUNDS.filter((b) => b.place === 'top').map((b) => b.name);
const LIMIT_OPTIONS = BOUNDS.filter((b) => b.place === 'limits').map((b) => b.name);

// The options of `new IsolateExecutor(options)` besides the bounds, and Cloudflare's
// DynamicWorkerExecutor options that have no meaning on Node (accepted and ignored, so code
// written for Cloudflare passes them unchanged): `loader` (the Worker Loader binding; the pool
// replaces it) and `bindings` (env bindings the harness never exposes to programs).
const EXECUTOR_OPTIONS = [...TOP_BOUNDS, 'limits', 'isolation', 'globalOutbound', 'modules', 'typescript', 'secrets', 'packages', 'packagesFrom', 'onEvent', 'tracing'];
const CLOUDFLARE_ONLY_OPTIONS = ['loader', 'bindings'];
// The native form's request (its bounds: the table's per-run rows a request may set), and a
// retained handle's execute options.
const RUN_BOUNDS = BOUNDS.filter((b) => b.scope === 'run' && b.place !== 'derived').map((b) => b.name);
const REQUEST_OPTIONS = ['code', 'params', 'providers', 'dispatch', 'outbound', 'secrets', ...RUN_BOUNDS, 'retainHandles', 'signal', 'onLog', 'onEvent', '__faultInjection'];
const HANDLE_OPTIONS = ['params', 'timeout', 'signal', 'onLog', 'onEvent'];

// The per-run bounds a request sets, by name (RUN_BOUNDS, from the native bounds table; the
// native side checks their ranges): a per-run bound added to that table needs nothing here.
function runBounds(request) {
  const bounds = {};
  for (const name of RUN_BOUNDS) {
    const value = checkNumber(name, request[name]);
    if (value !== undefined) bounds[name] = value;
  }
  return bounds;
}

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
    // The Cloudflare form's shape, passed to the native form, would be accepted with no tools
    // and then fail at every call: said at once instead.
    if (provider.fns !== undefined) {
      throw invalidArgument(`provider "${provider.name}": fns belongs to the Cloudflare form, execute(code, [{ name, fns }]); the native form takes { name, tools: [tool names] } and answers calls in dispatch`);
    }
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

// `replay`: { seed (hex, 16 to 128 digits), start (ms since the epoch) }: the program's clock
// starts at `start` and moves only as replies carrying a time reach it, and its randomness comes
// from `seed` (src/sandbox/bootstrap.js), so every pass of a durable run sees the same values.
function checkReplay(replay, name) {
  if (replay === undefined) return undefined;
  const ok = replay !== null && typeof replay === 'object' && typeof replay.seed === 'string' &&
    /^[0-9a-f]{16,128}$/i.test(replay.seed) && Number.isFinite(replay.start) && replay.start >= 0;
  if (!ok) throw invalidArgument(`${name} must be { seed: a hex string of 16 to 128 digits, start: ms since the epoch }`);
  return { seed: replay.seed, start: replay.start };
}

// The call id that marks a console line on the tool-call callback (src/api/tool_sink.rs
// LOG_LINE): `(runId, LOG_LINE, '', '', line)`. Lines share the calls' queue, so they arrive in
// the order the program made them.
const LOG_LINE = 0xffffffff;

function errorReply(error) {
  return JSON.stringify({ error: messageOf(error) });
}

class IsolateExecutor {
  #native;
  #maxReplyBytes;
  // Runs accepted and not yet settled, by run id: `{ observer, onLine }`, its RunObserver
  // (lib/events.js; undefined when nothing watches it) and its live-log callback. A tool call
  // of any other run is dropped when it reaches this thread: once execute() has settled, none
  // of its calls may reach dispatch (calls already queued for this thread when the run ended
  // would otherwise still arrive; so would lines, which the report's logs delivered).
  #liveRuns = new Map();
  #disposed = false;
  #outbound;
  #modules;
  #typescript;
  #secrets;
  #packages = null;
  #onEvent;
  #tracing;
  #isolation;

  /**
   * @param {object} [options] workers, maxQueue, timeout (ms, default 60 000), memoryLimitMb
   *   (default 128), limits { maxArgsBytes, ... }, and the Cloudflare options globalOutbound
   *   (null: no network) and modules.
   */
  constructor(options) {
    const opts = nativeOptions(options);
    this.#outbound = checkOutbound(options && options.globalOutbound);
    this.#modules = cloudflare.checkModules(options && options.modules);
    this.#secrets = checkSecrets(options && options.secrets);
    const typescript = options && options.typescript;
    if (typescript !== undefined && typeof typescript !== 'boolean') {
      throw invalidArgument(`typescript must be a boolean (got ${typeof typescript})`);
    }
    this.#typescript = typescript !== false;
    this.#onEvent = checkOnEvent(options && options.onEvent, 'options.onEvent');
    const tracing = options && options.tracing;
    if (tracing !== undefined && typeof tracing !== 'boolean') {
      throw invalidArgument(`tracing must be a boolean (got ${typeof tracing})`);
    }
    this.#tracing = tracing !== false;
    try {
      this.#native = new NativeExecutor(opts);
      this.#maxReplyBytes = this.#native.limits.maxReplyBytes;
      const packages = checkPackages(options && options.packages, options && options.packagesFrom);
      if (packages !== null) this.#packages = new Packages(packages, () => this.#native.limits);
      this.#isolation = this.#native.isolation;
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
  // `secrets` (a Map, or null): the run's secrets (secrets.js), whose values are also redacted
  // from every reply.
  // `onSecrets` (optional) is told the run's RunSecrets (see RUN_SECRETS in lib/cloudflare/execute.js).
  #toolCallback(dispatch, handler, secrets, onSecrets) {
    const native = this.#native;
    const budget = handler === null ? 0 : bodyBudget(this.#maxReplyBytes);
    // Always made, so that a placeholder naming no secret of the run is refused by name.
    const runSecrets = new RunSecrets(secrets === null ? new Map() : secrets);
    if (typeof onSecrets === 'function') onSecrets(runSecrets);
    const answer = (provider, tool, argsJson) => (provider === OUTBOUND
      ? handleOutbound(handler, argsJson, budget, runSecrets)
      : dispatch(provider, tool, argsJson));
    const live = this.#liveRuns;
    return (runId, callId, provider, tool, argsJson) => {
      const run = live.get(runId);
      if (run === undefined) return;
      if (callId === LOG_LINE) {
        if (run.onLine !== undefined) run.onLine(runId, argsJson);
        return;
      }
      // What watches the run (events, a span per call): the observer's `tool.started` follows
      // the dispatch call and its `tool.ended` the reply, so a handler never delays a tool.
      const observer = run.observer;
      const call = observer === undefined ? undefined : observer.toolCall(callId, provider, tool, argsJson);
      const send = (reply, thrown) => {
        if (typeof reply !== 'string') {
          thrown = new Error(`dispatch for ${provider}.${tool} must return a JSON string (got ${typeof reply})`);
          reply = errorReply(thrown);
        }
        // Redacted before anything sees it: the program, and the run's events and spans.
        const redacted = runSecrets.redactReply(reply);
        native.reply(runId, callId, redacted);
        if (call !== undefined) observer.toolEnded(call, redacted, thrown === undefined ? undefined : runSecrets.redactValue(thrown));
      };
      let reply;
      try {
        reply = call === undefined ? answer(provider, tool, argsJson) : observer.invoke(call, answer, provider, tool, argsJson);
      } catch (error) {
        if (call !== undefined) observer.toolStarted(call);
        send(errorReply(error), error);
        return;
      }
      if (call !== undefined) observer.toolStarted(call);
      if (reply !== null && typeof reply === 'object' && typeof reply.then === 'function') {
        Promise.resolve(reply).then(send, (error) => send(errorReply(error), error));
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
  // With an `observer` that has handlers, each line is also a `log` event.
  #logCallback(onLog, observer) {
    const events = observer !== undefined && observer.hasHandlers ? observer : undefined;
    if (onLog === undefined && events === undefined) return undefined;
    let delivered = 0;
    let finished = false;
    const deliver = (runId, line) => {
      delivered += 1;
      if (events !== undefined) events.log(line);
      if (onLog === undefined) return;
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
  #run({ code, params, statements, namespaces, resultMode, dispatch, bounds, faultInjection, outbound, retain, signal, onLog, onEvent, executionId, replay, secrets = null, onSecrets }) {
    this.#checkOpen();
    const handler = outbound === undefined ? this.#outbound : outbound;
    const onToolCall = this.#toolCallback(dispatch, handler, mergeSecrets(this.#secrets, secrets), onSecrets);
    const observe = () => this.#observer(onEvent, resultMode === 'json' ? 'native' : 'cloudflare', executionId);
    // Checked first, before the source is copied into the native layer or anything is built
    // for the run (in the Cloudflare form, also before normalizeCode parses it: see
    // #sourceBreach()).
    const breach = this.#sourceBreach(code);
    if (breach !== undefined) return Promise.resolve({ report: unstarted(observe(), breach), onToolCall });
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
      runConfigJson: undefined,
      // The run's own bounds by name (the per-run rows of the bounds table: runBounds()).
      bounds,
      faultInjection,
      retain: retain === true,
    };
    const native = this.#native;
    const start = (modules) => {
      request.runConfigJson = JSON.stringify({ resultMode, namespaces, outbound: handler !== null, modules, replay });
      return runWithSignal(native, signal, () => this.#start(observe(), onLog, signal, (onLine) => native.execute(request, onToolCall, onLine))).then((report) => ({ report, onToolCall }));
    };
    if (this.#packages === null) return start(this.#modules);
    // The allowed packages the program imports, bundled (or from the cache) before it starts.
    return this.#packages.modulesFor(request.code, this.#modules).then(({ modules }) => {
      this.#checkOpen();
      const all = { ...modules, ...this.#modules };
      return start(Object.keys(all).length > 0 ? all : undefined);
    }, (error) => {
      if (!(error instanceof PackageError)) throw error;
      return { report: unstarted(observe(), error.message, error.bound), onToolCall };
    }).catch((error) => { throw fromNative(error); });
  }

  // The RunObserver of a run about to start (lib/events.js), or undefined when neither an
  // onEvent nor a recording tracer watches it. Made where execute() was called, so its span's
  // parent is the context active there.
  #observer(onEvent, form, executionId) {
    return RunObserver.for({
      executorOnEvent: this.#onEvent, onEvent, tracing: this.#tracing, form, executionId, isolation: this.#isolation,
    });
  }

  // Starts a run with `submit(onLine)` (the native execute or executeInHandle) and tracks it.
  #start(observer, onLog, signal, submit) {
    const onLine = this.#logCallback(onLog, observer);
    let pending;
    try {
      pending = submit(onLine);
    } catch (error) {
      if (observer !== undefined) {
        observer.queued(undefined);
        observer.failed(error);
      }
      throw error;
    }
    return this.#tracked(pending, onLine, observer, signal);
  }

  // Marks a run live until its promise settles (see #liveRuns). With `onLine`, the run's last
  // console lines reach onLog before the promise settles; with `observer`, its last events.
  #tracked(pending, onLine, observer, signal) {
    const live = this.#liveRuns;
    const runId = pending.runId;
    live.set(runId, { observer, onLine });
    if (observer !== undefined) observer.queued(runId);
    const tracked = pending.then((report) => {
      live.delete(runId);
      if (onLine !== undefined) onLine.finish(runId, report);
      if (observer !== undefined) observer.ended(report, signal !== undefined && signal.aborted);
      return report;
    }, (error) => {
      live.delete(runId);
      if (observer !== undefined) observer.failed(error);
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
  [RUN_IN_HANDLE](handleId, code, { timeout, signal, params, onLog, onEvent }, onToolCall) {
    this.#checkOpen();
    const native = this.#native;
    const observe = () => this.#observer(onEvent, 'native', undefined);
    const breach = this.#sourceBreach(code);
    if (breach !== undefined) return Promise.resolve(shapeNativeReport(unstarted(observe(), breach)));
    const request = {
      handleId,
      code: unwrapProgram(code),
      paramsJson: params,
      typescript: this.#typescript,
      timeout: checkNumber('timeout', timeout),
    };
    return runWithSignal(native, signal, () => this.#start(observe(), onLog, signal, (onLine) => native.executeInHandle(request, onToolCall, onLine))).then(shapeNativeReport);
  }

  // The installed versions of the allowed packages a program imports (lib/packages.js).
  [PACKAGE_VERSIONS](code) {
    return this.#packages === null ? {} : this.#packages.versionsFor(unwrapProgram(code), this.#modules);
  }

  // The allowed packages that are installed, with their versions (lib/packages.js).
  [INSTALLED_PACKAGES]() {
    return this.#packages === null ? [] : this.#packages.installed();
  }

  // describe() for an allowed package's specifier (lib/packages.js), null for anything else.
  [DESCRIBE_PACKAGE](specifier) {
    return this.#packages === null ? Promise.resolve(null) : this.#packages.describe(specifier);
  }

  [DISPOSE_HANDLE](handleId) {
    return this.#disposed ? false : this.#native.disposeHandle(handleId);
  }

  #runner() {
    return (job) => this.#run({
      ...job,
      params: paramsJson(job.params, 'options.params'),
      onLog: checkOnLog(job.onLog, 'options.onLog'),
      replay: checkReplay(job.replay, 'options.replay'),
      secrets: checkSecrets(job.secrets, 'options.secrets'),
      onEvent: checkOnEvent(job.onEvent, 'options.onEvent'),
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
      onEvent: checkOnEvent(request.onEvent, 'request.onEvent'),
      namespaces,
      resultMode: 'json',
      dispatch: answer,
      bounds: runBounds(request),
      faultInjection: typeof request.__faultInjection === 'string' ? request.__faultInjection : undefined,
      outbound: request.outbound === undefined ? undefined : checkOutbound(request.outbound, 'request.outbound'),
      secrets: checkSecrets(request.secrets, 'request.secrets'),
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

  /**
   * Every bound in force, flat: the defaults with this executor's options applied (top-level
   * options and the `limits` option's message bounds alike, derived ones included), and the
   * isolation mode.
   */
  get bounds() {
    const native = this.#native.limits;
    const out = {};
    for (const { name } of BOUNDS) out[name] = native[name];
    out.isolation = this.#native.isolation;
    return out;
  }

  /**
   * The old name of `bounds`, renamed because the `limits` option takes only the message bounds
   * while this holds every bound; kept, with a warning once per process.
   */
  get limits() {
    warnRenamed('executor.limits', 'executor.bounds');
    return this.bounds;
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
        onEvent: checkOnEvent(given.onEvent, 'options.onEvent'),
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

// The report of a run refused before it started: a bound (`maxCodeBytes`, a package bound), or
// an import the host cannot serve (bound null: the program's own error). The native side builds
// it from the report of a run refused in the runner (`notStartedReport`, src/api/report.rs), so
// nothing here copies the native report's keys.
function notStarted(error, bound = 'maxCodeBytes') {
  return notStartedReport(error, bound ?? undefined);
}

// The report of a run refused for its source size, told to its observer (queued, then ended).
function unstarted(observer, breach, bound) {
  const report = notStarted(breach, bound);
  if (observer !== undefined) {
    observer.queued(undefined);
    observer.ended(report, false);
  }
  return report;
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

// REQUEST_OPTIONS (the per-run bounds) and notStarted (a refused run's report) come from the
// native side: exported for __test__/executor/surface.test.js, which checks them against it.
// The option lists are also read by scripts/reference.js, which writes docs/reference/ from
// them; lib/index.js exports none of these.
module.exports = {
  IsolateExecutor, ExecutionHandle, REQUEST_OPTIONS, notStarted,
  EXECUTOR_OPTIONS, CLOUDFLARE_ONLY_OPTIONS, HANDLE_OPTIONS,
};
