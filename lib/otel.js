'use strict';
// OpenTelemetry, when the host has `@opentelemetry/api` installed (an optional peer): an
// execution is a span (`codemode.execute`) whose parent is the context active when execute()
// was called, and each tool call a child span following the GenAI tool-execution conventions
// (`execute_tool {gen_ai.tool.name}`, gen_ai.operation.name = execute_tool). The API is
// loaded on first use, once; absent, or with no tracer provider registered (its spans do not
// record), a run costs one no-op span and its tool calls nothing.

let api; // undefined: not looked for yet; null: not installed
let tracer;

const TRACER_NAME = '@supolka/codemode-executor';

function loadApi() {
  if (api === undefined) {
    try {
      api = require('@opentelemetry/api');
    } catch {
      api = null;
    }
  }
  return api;
}

/**
 * Starts the span of one execution under the active context. Returns undefined when tracing
 * is unavailable or off (nothing records), else `{ span, context }` (`context`: the span's
 * own, the parent of its tool calls).
 */
function startRunSpan(attributes) {
  const otel = loadApi();
  if (otel === null) return undefined;
  if (tracer === undefined) tracer = otel.trace.getTracer(TRACER_NAME, require('../package.json').version);
  const parent = otel.context.active();
  const span = tracer.startSpan('codemode.execute', { kind: otel.SpanKind.INTERNAL, attributes }, parent);
  if (!span.isRecording()) return undefined;
  return { span, context: otel.trace.setSpan(parent, span) };
}

/** The child span of one tool call, and the context its dispatch runs in. */
function startToolSpan(run, name, attributes) {
  const span = tracer.startSpan(`execute_tool ${name}`, { kind: api.SpanKind.INTERNAL, attributes }, run.context);
  return { span, context: api.trace.setSpan(run.context, span) };
}

/** Calls `fn(...args)` with `context` active (so spans the tool makes nest under its call). */
function withContext(context, fn, a, b, c) {
  return api.context.with(context, fn, undefined, a, b, c);
}

/** Ends `span`, marked failed with `message` and `errorType` when given. */
function endSpan(span, attributes, message, errorType) {
  if (attributes !== undefined) span.setAttributes(attributes);
  if (message !== undefined) {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: api.SpanStatusCode.ERROR, message });
  }
  span.end();
}

module.exports = { startRunSpan, startToolSpan, withContext, endSpan };
