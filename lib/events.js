'use strict';
// What a host can watch of its runs: the events `onEvent` receives (their shapes are defined
// here, once, and typed in lib/index.d.ts as `CodemodeEvent`), and the OpenTelemetry spans of
// lib/otel.js. One RunObserver per run follows it from execute() to its report; a run nothing
// watches gets none, and costs nothing more.
//
// Delivery: each event reaches every handler of its run (the executor's `onEvent`, then the
// execution's), synchronously on the host's thread, in the order things happened, and all of a
// run's events before its promise settles. A tool call's `tool.started` is delivered right
// after its dispatch was called and its `tool.ended` right after the reply went back to the
// program, so a handler never delays the program's tools. What a handler throws, or a promise
// it returns rejects with, is dropped. A run's events are bounded by its own bounds: three run
// events, two per tool call (maxToolCalls) and one per console line (maxLogLines).

const { messageOf } = require('./util.js');
const otel = require('./otel.js');

/** The option under which the durable runtime names the execution a pass belongs to. */
const EXECUTION_ID = Symbol('codemode.executionId');

/** The event kinds, as `event.type`. */
const EVENT_TYPES = Object.freeze([
  'run.queued', 'run.started', 'run.ended', 'tool.started', 'tool.ended', 'log',
  'execution.paused', 'execution.approved', 'execution.rejected', 'execution.rolledBack',
  'execution.completed', 'execution.failed',
]);

// A reply that carries an error, in the native form (`{"error": ...}`, also the Cloudflare
// transport codec's) or from a connector (the clone codec's control marker); a pause is a
// durable run's call awaiting approval.
const ERROR_REPLY = '{"error":';
const CONNECTOR_ERROR = '{"__codemode_control__":"error"';
const CONNECTOR_PAUSE = '{"__codemode_control__":"pause"';

function replyError(reply) {
  if (reply.startsWith(ERROR_REPLY)) {
    try {
      return String(JSON.parse(reply).error);
    } catch {
      return 'error';
    }
  }
  if (reply.startsWith(CONNECTOR_ERROR)) {
    try {
      return String(JSON.parse(reply).message);
    } catch {
      return 'error';
    }
  }
  return undefined;
}

const UNANSWERED = 'The run ended before this call was answered';

function bytes(text) {
  return typeof text === 'string' ? Buffer.byteLength(text, 'utf8') : 0;
}

function checkOnEvent(onEvent, name) {
  if (onEvent !== undefined && typeof onEvent !== 'function') {
    const { invalidArgument } = require('./errors.js');
    throw invalidArgument(`${name} must be a function (event) => void`);
  }
  return onEvent;
}

/** Calls `handler(event)`, dropping what it throws or rejects with. */
function deliver(handler, event) {
  try {
    const out = handler(event);
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') out.then(undefined, ignore);
  } catch {
    // dropped: a handler never changes a run
  }
}

function ignore() {}

/** Delivers `event` to each of `handlers` (undefined entries skipped). */
function emitTo(handlers, event) {
  for (const handler of handlers) if (handler !== undefined) deliver(handler, event);
}

// The level of a captured console line, from the prefix the sandbox gives it.
function levelOf(line) {
  if (line.startsWith('[warn] ')) return 'warn';
  if (line.startsWith('[error] ')) return 'error';
  return 'log';
}

/**
 * Follows one run. `handlers`: the onEvent functions (undefined entries allowed); `trace`:
 * whether to make spans (when OpenTelemetry records); `form`: 'native' | 'cloudflare';
 * `executionId`: the durable run this pass belongs to.
 */
class RunObserver {
  #handlers;
  #span; // { span, context } of lib/otel.js, or undefined
  #base;
  #queuedAt;
  #started = false;
  // Calls started and not yet answered: at the run's end they end too (`unanswered`).
  #open = new Set();
  runId = undefined;

  constructor(handlers, span, base) {
    this.#handlers = handlers;
    this.#span = span;
    this.#base = base;
    this.#queuedAt = Date.now();
  }

  /** An observer for a run, or undefined when nothing watches it. */
  static for({ executorOnEvent, onEvent, tracing, form, executionId, isolation }) {
    let span;
    if (tracing) {
      const attributes = { 'codemode.form': form, 'codemode.isolation': isolation };
      if (executionId !== undefined) attributes['codemode.execution.id'] = executionId;
      span = otel.startRunSpan(attributes);
    }
    if (executorOnEvent === undefined && onEvent === undefined && span === undefined) return undefined;
    const base = executionId === undefined ? {} : { executionId };
    return new RunObserver([executorOnEvent, onEvent], span, base);
  }

  get hasHandlers() {
    return this.#handlers[0] !== undefined || this.#handlers[1] !== undefined;
  }

  #emit(event) {
    if (this.#base.executionId !== undefined) event.executionId = this.#base.executionId;
    emitTo(this.#handlers, event);
  }

  queued(runId) {
    this.runId = runId;
    if (this.#span !== undefined && runId !== undefined) this.#span.span.setAttribute('codemode.run.id', runId);
    if (this.hasHandlers) this.#emit({ type: 'run.queued', at: this.#queuedAt, runId });
  }

  // The host hears of a run's start with its first tool call or console line, or its report
  // (then `at` is the queue time plus the queue phase the report measured).
  #start(at) {
    if (this.#started) return;
    this.#started = true;
    if (this.hasHandlers) this.#emit({ type: 'run.started', at, runId: this.runId });
  }

  /** A tool call reaches the host: returns the call's record (see toolEnded). */
  toolCall(callId, provider, tool, argsJson) {
    const at = Date.now();
    this.#start(at);
    const call = { at, t0: performance.now(), callId, provider, tool, argsBytes: bytes(argsJson), span: undefined };
    this.#open.add(call);
    if (this.#span !== undefined) {
      const name = `${provider}.${tool}`;
      call.span = otel.startToolSpan(this.#span, name, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': `${this.runId}:${callId}`,
        'codemode.tool.provider': provider,
        'codemode.tool.method': tool,
        'codemode.tool.args_bytes': call.argsBytes,
      });
    }
    return call;
  }

  /** Calls the dispatch for `call`, within its span's context when traced. */
  invoke(call, fn, provider, tool, argsJson) {
    return call.span === undefined ? fn(provider, tool, argsJson) : otel.withContext(call.span.context, fn, provider, tool, argsJson);
  }

  /** Delivers `tool.started` (once the dispatch has been called). */
  toolStarted(call) {
    if (!this.hasHandlers) return;
    this.#emit({
      type: 'tool.started', at: call.at, runId: this.runId, callId: call.callId,
      provider: call.provider, tool: call.tool, argsBytes: call.argsBytes,
    });
  }

  /** The reply went back: `thrown` is what the dispatch threw or rejected with, if it did. */
  toolEnded(call, reply, thrown) {
    // A reply after the run ended: the call was ended with the run (see #closeOpenCalls).
    if (!this.#open.delete(call)) return;
    const durationMs = performance.now() - call.t0;
    const replyBytes = bytes(reply);
    let error;
    let errorType;
    if (thrown !== undefined) {
      error = messageOf(thrown);
      errorType = (thrown instanceof Error && thrown.constructor && thrown.constructor.name) || 'Error';
    } else {
      error = replyError(reply);
      errorType = 'tool_error';
    }
    const paused = error === undefined && reply.startsWith(CONNECTOR_PAUSE);
    if (call.span !== undefined) {
      const attributes = { 'codemode.tool.reply_bytes': replyBytes };
      if (paused) attributes['codemode.tool.paused'] = true;
      otel.endSpan(call.span.span, attributes, error, errorType);
    }
    if (!this.hasHandlers) return;
    const event = {
      type: 'tool.ended', at: Date.now(), runId: this.runId, callId: call.callId,
      provider: call.provider, tool: call.tool, argsBytes: call.argsBytes, replyBytes, durationMs,
    };
    if (error !== undefined) event.error = error;
    if (paused) event.paused = true;
    this.#emit(event);
  }

  log(line) {
    const at = Date.now();
    this.#start(at);
    if (this.hasHandlers) this.#emit({ type: 'log', at, runId: this.runId, level: levelOf(line), line });
  }

  // The calls the run was still awaiting when it ended (a timeout, an abort, a program that did
  // not await them): each ends now, `unanswered`, its reply (if it comes) never reaching it.
  #closeOpenCalls() {
    for (const call of this.#open) {
      const durationMs = performance.now() - call.t0;
      if (call.span !== undefined) otel.endSpan(call.span.span, { 'codemode.tool.unanswered': true }, UNANSWERED, 'unanswered');
      if (this.hasHandlers) {
        this.#emit({
          type: 'tool.ended', at: Date.now(), runId: this.runId, callId: call.callId, provider: call.provider,
          tool: call.tool, argsBytes: call.argsBytes, replyBytes: 0, durationMs, error: UNANSWERED, unanswered: true,
        });
      }
    }
    this.#open.clear();
  }

  /** The run's native report arrived (see shapeNativeReport for its fields). */
  ended(report, aborted) {
    this.#start(this.#queuedAt + (report.queuedMs || 0));
    this.#closeOpenCalls();
    const timing = { queuedMs: report.queuedMs, runMs: report.runMs, totalMs: report.totalMs, phases: report.phases };
    const stats = { toolCalls: report.toolCalls, heapUsedBytes: report.heapUsedBytes, cpuMs: report.cpuMs, codeCacheHit: report.codeCacheHit };
    const event = { type: 'run.ended', at: Date.now(), runId: this.runId, outcome: 'completed', timing, stats };
    if (report.faultCode !== undefined && report.faultCode !== null) {
      event.outcome = 'fault';
      event.code = report.faultCode;
      event.error = report.faultMessage;
    } else if (report.error !== undefined && report.error !== null) {
      event.outcome = aborted ? 'aborted' : 'error';
      event.error = report.error;
      event.errorKind = report.errorKind;
      if (report.errorBound !== undefined && report.errorBound !== null) event.errorBound = report.errorBound;
    }
    if (this.#span !== undefined) {
      const attributes = {
        'codemode.outcome': event.outcome,
        'codemode.tool_calls': report.toolCalls,
        'codemode.queued_ms': report.queuedMs,
        'codemode.run_ms': report.runMs,
        'codemode.cpu_ms': report.cpuMs,
      };
      if (event.errorKind !== undefined) attributes['codemode.error.kind'] = event.errorKind;
      if (event.errorBound !== undefined) attributes['codemode.error.bound'] = event.errorBound;
      otel.endSpan(this.#span.span, attributes, event.error, event.code || event.errorKind);
    }
    if (this.hasHandlers) this.#emit(event);
  }

  /** The run's promise rejected without a report (a machinery fault). */
  failed(error) {
    this.#start(Date.now());
    this.#closeOpenCalls();
    const event = { type: 'run.ended', at: Date.now(), runId: this.runId, outcome: 'fault', error: messageOf(error) };
    if (error && typeof error.code === 'string') event.code = error.code;
    if (this.#span !== undefined) otel.endSpan(this.#span.span, { 'codemode.outcome': 'fault' }, event.error, event.code || 'fault');
    if (this.hasHandlers) this.#emit(event);
  }
}

module.exports = { EXECUTION_ID, EVENT_TYPES, RunObserver, checkOnEvent, emitTo, levelOf };
