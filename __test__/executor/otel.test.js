'use strict';
// OpenTelemetry (lib/otel.js) with the real SDK: an execution is a span under the context active
// at execute(), each tool call a child span with the GenAI tool attributes, spans a tool makes
// nest under its call, a durable run's passes share its execution id, and with the AI SDK's
// telemetry on, the run's spans sit inside the generateText trace. Without the API installed,
// runs and events work as before.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { trace, context, SpanStatusCode } = require('@opentelemetry/api');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { generateText, tool, jsonSchema, stepCountIs } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { createCodeTool } = require('../../lib/ai/index.js');
const { Tracker } = require('../fixtures/tracker.js');

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();
trace.setGlobalTracerProvider(provider);
context.setGlobalContextManager(contextManager);
const tracer = trace.getTracer('test');

const executor = new IsolateExecutor({ workers: 2 });
test.after(async () => {
  await executor.dispose();
  await provider.shutdown();
  contextManager.disable();
});

const parentOf = (span) => span.parentSpanContext && span.parentSpanContext.spanId;
const idOf = (span) => span.spanContext().spanId;
const traceOf = (span) => span.spanContext().traceId;

function spans() {
  const all = exporter.getFinishedSpans();
  exporter.reset();
  return all;
}

const PROGRAM = `async () => {
  const a = await t.add({ x: 1, y: 2 });
  try { await t.fail({}); } catch {}
  return a;
}`;

function dispatch(provider, tool, argsJson) {
  // A span the tool makes itself: it must nest under the tool call's span.
  tracer.startSpan(`inner ${tool}`).end();
  if (tool === 'fail') return JSON.stringify({ error: 'it failed' });
  const [{ x, y }] = JSON.parse(argsJson);
  return JSON.stringify({ result: x + y });
}

test('an execution is a span under the active context; each tool call a child with GenAI attributes', async () => {
  spans();
  let parentSpan;
  const out = await tracer.startActiveSpan('request', async (span) => {
    parentSpan = span;
    try {
      return await executor.execute({ code: PROGRAM, providers: [{ name: 't', tools: ['add', 'fail'] }], dispatch });
    } finally {
      span.end();
    }
  });
  assert.equal(out.result, 3);
  const all = spans();
  const run = all.find((s) => s.name === 'codemode.execute');
  assert.ok(run, `spans: ${all.map((s) => s.name).join(', ')}`);
  assert.equal(parentOf(run), idOf(parentSpan), 'the run span is a child of the span active at execute()');
  assert.equal(traceOf(run), traceOf(parentSpan));
  assert.equal(run.attributes['codemode.form'], 'native');
  assert.equal(run.attributes['codemode.outcome'], 'completed');
  assert.equal(run.attributes['codemode.tool_calls'], 2);
  assert.equal(typeof run.attributes['codemode.run.id'], 'number');
  assert.equal(run.status.code, SpanStatusCode.UNSET);

  const calls = all.filter((s) => s.name.startsWith('execute_tool '));
  assert.deepEqual(calls.map((s) => s.name).sort(), ['execute_tool t.add', 'execute_tool t.fail']);
  for (const call of calls) {
    assert.equal(parentOf(call), idOf(run), `${call.name} is a child of the run span`);
    assert.equal(call.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(call.attributes['gen_ai.tool.type'], 'function');
    assert.equal(call.attributes['gen_ai.tool.name'], call.name.slice('execute_tool '.length));
    assert.match(call.attributes['gen_ai.tool.call.id'], /^\d+:\d+$/);
    assert.equal(call.attributes['codemode.tool.provider'], 't');
    const inner = all.find((s) => s.name === `inner ${call.attributes['codemode.tool.method']}`);
    assert.equal(parentOf(inner), idOf(call), `a span made in ${call.name}'s dispatch nests under it`);
  }
  const add = calls.find((s) => s.name === 'execute_tool t.add');
  assert.equal(add.attributes['codemode.tool.args_bytes'], Buffer.byteLength('[{"x":1,"y":2}]'));
  assert.equal(add.attributes['codemode.tool.reply_bytes'], Buffer.byteLength('{"result":3}'));
  const failed = calls.find((s) => s.name === 'execute_tool t.fail');
  assert.equal(failed.status.code, SpanStatusCode.ERROR);
  assert.equal(failed.status.message, 'it failed');
  assert.equal(failed.attributes['error.type'], 'tool_error');
});

test('a failed run marks its span; the Cloudflare form is traced too; tracing: false makes none', async () => {
  spans();
  const out = await executor.execute('async () => { await p.f(1); throw new Error("program failed"); }', [{ name: 'p', fns: { f: async (n) => n } }]);
  assert.equal(out.error, 'program failed');
  const all = spans();
  const run = all.find((s) => s.name === 'codemode.execute');
  assert.equal(run.attributes['codemode.form'], 'cloudflare');
  assert.equal(run.attributes['codemode.outcome'], 'error');
  assert.equal(run.attributes['codemode.error.kind'], 'program');
  assert.equal(run.attributes['error.type'], 'program');
  assert.equal(run.status.code, SpanStatusCode.ERROR);
  assert.equal(run.status.message, 'program failed');
  assert.deepEqual(all.filter((s) => parentOf(s) === idOf(run)).map((s) => s.name), ['execute_tool p.f']);
  assert.equal(parentOf(run), undefined, 'no active span: a root span');

  const untraced = new IsolateExecutor({ workers: 1, tracing: false });
  try {
    const plain = await untraced.execute({ code: PROGRAM, providers: [{ name: 't', tools: ['add', 'fail'] }], dispatch });
    assert.equal(plain.result, 3);
    assert.deepEqual(spans().map((s) => s.name).sort(), ['inner add', 'inner fail'], 'only the tools\' own spans');
  } finally {
    await untraced.dispose();
  }
});

test('a durable run\'s passes share its execution id', async () => {
  spans();
  const runtime = createCodemodeRuntime({ executor, connectors: [new Tracker(path.join(require('node:os').tmpdir(), `otel-tracker-${process.pid}.json`))], path: ':memory:' });
  const paused = await runtime.execute({ code: 'async () => tracker.create_issue({ title: "x" })' });
  assert.equal(paused.status, 'paused');
  const done = await runtime.approve({ executionId: paused.executionId });
  assert.equal(done.status, 'completed');
  const all = spans();
  const passes = all.filter((s) => s.name === 'codemode.execute');
  assert.equal(passes.length, 2);
  assert.deepEqual(passes.map((s) => s.attributes['codemode.execution.id']), [paused.executionId, paused.executionId]);
  const calls = all.filter((s) => s.name === 'execute_tool tracker.create_issue');
  assert.deepEqual(calls.map((s) => s.attributes['codemode.tool.paused']), [true, undefined], 'the first pass paused on the call; the second ran it');
});

test('with the AI SDK\'s telemetry on, the run\'s spans are inside the generateText trace', async () => {
  spans();
  const tools = {
    weather: tool({
      description: 'Weather in a city',
      inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
      execute: async ({ city }) => ({ city, celsius: 4 }),
    }),
  };
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const answered = prompt.some((m) => m.role === 'tool');
      if (answered) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      const code = 'async () => (await codemode.weather({ city: "Oslo" })).celsius';
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'codemode', input: JSON.stringify({ code }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
      };
    },
  });
  const turn = await generateText({
    model, tools: { codemode: createCodeTool({ tools, executor }) }, prompt: 'weather?',
    stopWhen: stepCountIs(3), experimental_telemetry: { isEnabled: true },
  });
  assert.equal(turn.text, 'done');
  const all = spans();
  const root = all.find((s) => s.name === 'ai.generateText');
  const toolCall = all.find((s) => s.name === 'ai.toolCall');
  const run = all.find((s) => s.name === 'codemode.execute');
  const call = all.find((s) => s.name === 'execute_tool codemode.weather');
  assert.ok(root && toolCall && run && call, `spans: ${all.map((s) => s.name).join(', ')}`);
  for (const span of [toolCall, run, call]) assert.equal(traceOf(span), traceOf(root), `${span.name} is in the generateText trace`);
  assert.equal(parentOf(run), idOf(toolCall), 'the run is a child of the AI SDK\'s tool call span');
  assert.equal(parentOf(call), idOf(run));
});

test('without @opentelemetry/api installed, runs and their events work and nothing is traced', async () => {
  const prelude = `
    const Module = require('node:module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (request.startsWith('@opentelemetry/')) { const e = new Error("Cannot find module '" + request + "'"); e.code = 'MODULE_NOT_FOUND'; throw e; }
      return resolve.call(this, request, ...rest);
    };`;
  const source = `${prelude}
    const { IsolateExecutor } = require('./lib/index.js');
    const types = [];
    const executor = new IsolateExecutor({ workers: 1, onEvent: (e) => types.push(e.type) });
    executor.execute({ code: 'async () => (await t.one()) + 1', providers: [{ name: 't', tools: ['one'] }], dispatch: () => '{"result":1}' })
      .then((out) => { console.log(JSON.stringify({ result: out.result, types })); return executor.dispose(); });`;
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, ['-e', source], { cwd: path.join(__dirname, '..', '..'), timeout: 30_000 }, (error, out, err) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout: out, stderr: err });
    });
  });
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout), { result: 2, types: ['run.queued', 'run.started', 'tool.started', 'tool.ended', 'run.ended'] });
});
