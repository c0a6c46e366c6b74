'use strict';
// onEvent (lib/events.js): a run's events in order and complete (every tool.started has its
// tool.ended), in both request forms and (npm test) both isolation modes; bounded by the run's
// own bounds; a handler that throws, rejects or is slow changes nothing for the run.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, ErrorCodes } = require('../../lib/index.js');

const seen = [];
const executor = new IsolateExecutor({ workers: 2, onEvent: (event) => seen.push(event) });
test.after(() => executor.dispose());

// The events of one run, as the executor's onEvent saw them.
function ofRun(runId) {
  return seen.filter((e) => e.runId === runId);
}

const PROGRAM = `async () => {
  console.log("start");
  const a = await t.add({ x: 1, y: 2 });
  const [b, c] = await Promise.all([t.slow({ ms: 5 }), t.add({ x: a, y: a })]);
  let failed = "";
  try { await t.fail({ why: "no" }); } catch (e) { failed = e.message; }
  try { await t.reject({}); } catch (e) { failed += "|" + e.message; }
  console.warn("end", a, b, c);
  return { a, b, c, failed };
}`;

// A dispatch with sync, async, throwing and rejecting tools; `args` records what it was given.
function dispatcher(args) {
  return (provider, tool, argsJson) => {
    args.push({ tool, argsJson });
    const [input] = JSON.parse(argsJson);
    switch (tool) {
      case 'add': return JSON.stringify({ result: input.x + input.y });
      case 'slow': return new Promise((resolve) => setTimeout(() => resolve(JSON.stringify({ result: 'slept' })), input.ms));
      case 'fail': throw new Error(`fail: ${input.why}`);
      default: return Promise.reject(new Error('rejected'));
    }
  };
}

const PROVIDERS = [{ name: 't', tools: ['add', 'slow', 'fail', 'reject'] }];

// The checks every run's event list must pass: one queued, started and ended, in that order,
// each call's start before its end, exactly once, and log events as the run's logs.
function checkRun(events, out) {
  const types = events.map((e) => e.type);
  assert.equal(types[0], 'run.queued');
  assert.equal(types[1], 'run.started');
  assert.equal(types.at(-1), 'run.ended');
  assert.equal(types.filter((t) => t.startsWith('run.')).length, 3, 'one queued, started and ended');
  const open = new Map();
  for (const [i, e] of events.entries()) {
    if (i > 0) assert.ok(e.at >= events[0].at, `${e.type} at ${e.at} after the run was queued`);
    if (e.type === 'tool.started') {
      assert.ok(!open.has(e.callId), `call ${e.callId} starts once`);
      open.set(e.callId, e);
    } else if (e.type === 'tool.ended') {
      const started = open.get(e.callId);
      assert.ok(started, `call ${e.callId} ended after it started`);
      assert.equal(e.tool, started.tool);
      assert.equal(e.argsBytes, started.argsBytes);
      assert.ok(e.durationMs >= 0);
      open.set(e.callId, null);
    }
  }
  assert.ok([...open.values()].every((v) => v === null), 'every call started has ended');
  assert.deepEqual(events.filter((e) => e.type === 'log').map((e) => e.line), out.logs);
}

test('native form: run and tool events in order, complete, with sizes, errors and the report', async () => {
  const args = [];
  const own = [];
  let settledWith;
  const out = await executor.execute({ code: PROGRAM, providers: PROVIDERS, dispatch: dispatcher(args), onEvent: (e) => own.push(e) })
    .then((r) => { settledWith = own.length; return r; });
  assert.deepEqual(out.result, { a: 3, b: 'slept', c: 6, failed: 'fail: no|rejected' });
  assert.equal(settledWith, own.length, 'every event was delivered before the promise settled');
  const runId = own[0].runId;
  assert.equal(typeof runId, 'number');
  assert.deepEqual(ofRun(runId), own, "the executor's onEvent saw the same events, in the same order");
  checkRun(own, out);
  const ends = own.filter((e) => e.type === 'tool.ended');
  assert.equal(ends.length, 5);
  assert.equal(out.stats.toolCalls, 5);
  // Sizes are the bytes of the JSON texts that crossed.
  for (const end of ends) {
    const sent = args.find((a, i) => a.tool === end.tool && i === end.callId);
    assert.ok(sent, `call ${end.callId} reached dispatch`);
    assert.equal(end.argsBytes, Buffer.byteLength(sent.argsJson));
  }
  const byTool = Object.fromEntries(ends.map((e) => [e.tool, e]));
  assert.equal(byTool.slow.replyBytes, Buffer.byteLength(JSON.stringify({ result: 'slept' })));
  assert.ok(byTool.slow.durationMs >= 4, `slow took ${byTool.slow.durationMs} ms`);
  assert.equal(byTool.fail.error, 'fail: no');
  assert.equal(byTool.reject.error, 'rejected');
  assert.equal(byTool.add.error, undefined);
  assert.deepEqual(own.filter((e) => e.type === 'log').map((e) => e.level), ['log', 'warn']);
  const ended = own.at(-1);
  assert.equal(ended.outcome, 'completed');
  assert.deepEqual(ended.timing, out.timing);
  assert.deepEqual(ended.stats, out.stats);
});

test('console lines and tool calls arrive in the order the program made them', async () => {
  const own = [];
  const out = await executor.execute({
    code: 'async () => { for (let i = 0; i < 10; i++) { console.log("line", i); await t.add({ x: i, y: 0 }); } console.log("done"); }',
    providers: PROVIDERS,
    dispatch: dispatcher([]),
    onEvent: (e) => own.push(e),
  });
  assert.equal(out.error, undefined);
  const expected = ['run.queued', 'run.started'];
  for (let i = 0; i < 10; i++) expected.push(`log line ${i}`, 'tool.started', 'tool.ended');
  expected.push('log done', 'run.ended');
  assert.deepEqual(own.map((e) => (e.type === 'log' ? `log ${e.line}` : e.type)), expected);
});

test('Cloudflare form: the same events, a failing provider function, a program error', async () => {
  const own = [];
  const fns = { twice: async (n) => n * 2, broken: async () => { throw new Error('broken tool'); } };
  const out = await executor.execute('async () => { console.log("x"); const d = await p.twice(21); try { await p.broken(); } catch {} return d; }',
    [{ name: 'p', fns }], { onEvent: (e) => own.push(e) });
  assert.equal(out.result, 42);
  checkRun(own, out);
  const ends = own.filter((e) => e.type === 'tool.ended');
  assert.deepEqual(ends.map((e) => [e.provider, e.tool, e.error]), [['p', 'twice', undefined], ['p', 'broken', 'broken tool']]);
  const failed = [];
  const bad = await executor.execute('async () => { throw new Error("program failed"); }', [], { onEvent: (e) => failed.push(e) });
  assert.equal(bad.error, 'program failed');
  const ended = failed.at(-1);
  assert.equal(ended.type, 'run.ended');
  assert.equal(ended.outcome, 'error');
  assert.equal(ended.error, 'program failed');
  assert.equal(ended.errorKind, 'program');
});

test('bounded by the run: a program flooding calls and lines ends at its bounds, and so do its events', async () => {
  const local = new IsolateExecutor({ workers: 1, limits: { maxToolCalls: 20, maxLogLines: 30 } });
  try {
    const own = [];
    const out = await local.execute({
      code: 'async () => { for (let i = 0; i < 25; i++) console.log("line", i); for (let i = 0; i < 1000; i++) await t.add({ x: i, y: 1 }); }',
      providers: PROVIDERS,
      dispatch: dispatcher([]),
      onEvent: (e) => own.push(e),
    });
    assert.equal(out.errorKind, 'bound');
    assert.equal(out.errorBound, 'maxToolCalls');
    const count = (type) => own.filter((e) => e.type === type).length;
    assert.ok(count('log') <= 30, `${count('log')} log events`);
    assert.equal(count('log'), out.logs.length);
    assert.ok(count('tool.started') <= 20, `${count('tool.started')} calls`);
    assert.equal(count('tool.started'), count('tool.ended'));
    assert.ok(own.length <= 3 + 2 * 20 + 30, `${own.length} events in all`);
    assert.equal(own.at(-1).outcome, 'error');
    assert.equal(own.at(-1).errorBound, 'maxToolCalls');
  } finally {
    await local.dispose();
  }
});

test('a handler that throws, rejects, never settles or is slow changes nothing for the run', async () => {
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const run = async (onEvent) => {
      const args = [];
      const out = await executor.execute({ code: PROGRAM, providers: PROVIDERS, dispatch: dispatcher(args), onEvent });
      return { result: out.result, error: out.error, logs: out.logs, toolCalls: out.stats.toolCalls, calls: args.map((a) => a.tool).sort() };
    };
    const plain = await run(undefined);
    let thrown = 0;
    const handlers = {
      throws: () => { thrown++; throw new Error('handler failed'); },
      rejects: () => Promise.reject(new Error('handler rejected')),
      neverSettles: () => new Promise(() => {}),
      slow: () => { const until = Date.now() + 3; while (Date.now() < until); },
    };
    for (const [name, handler] of Object.entries(handlers)) {
      assert.deepEqual(await run(handler), plain, `with a handler that ${name}`);
    }
    assert.ok(thrown >= 10, `the throwing handler was called for every event (${thrown})`);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('timeouts, aborts, a source over maxCodeBytes and retained handles end their events too', async () => {
  const timedOut = [];
  const out = await executor.execute({ code: 'async () => { await t.slow({ ms: 1000 }); }', providers: PROVIDERS, dispatch: dispatcher([]), timeout: 200, onEvent: (e) => timedOut.push(e) });
  assert.equal(out.errorKind, 'timeout');
  const ended = timedOut.at(-1);
  assert.deepEqual([ended.type, ended.outcome, ended.errorKind], ['run.ended', 'error', 'timeout']);
  const calls = () => timedOut.filter((e) => e.type.startsWith('tool.')).map((e) => [e.type, e.unanswered === true]);
  assert.deepEqual(calls(), [['tool.started', false], ['tool.ended', true]], 'a call still awaited when the run ended ends with it');
  assert.equal(timedOut.at(-2).type, 'tool.ended');
  assert.equal(timedOut.at(-2).error, 'The run ended before this call was answered');
  const count = timedOut.length;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal(timedOut.length, count, 'its late reply adds nothing after run.ended');

  const aborted = [];
  const controller = new AbortController();
  const pending = executor.execute({ code: 'async () => { await t.slow({ ms: 2000 }); }', providers: PROVIDERS, dispatch: dispatcher([]), signal: controller.signal, onEvent: (e) => aborted.push(e) });
  while (!aborted.some((e) => e.type === 'tool.started')) await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort();
  await assert.rejects(pending, { name: 'AbortError' });
  while (!aborted.some((e) => e.type === 'run.ended')) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(aborted.at(-1).outcome, 'aborted');
  checkRun(aborted, { logs: [] });

  const tooBig = [];
  const local = new IsolateExecutor({ workers: 1, limits: { maxCodeBytes: 64 } });
  try {
    const big = await local.execute({ code: `async () => ${'1 + '.repeat(40)}1`, onEvent: (e) => tooBig.push(e) });
    assert.equal(big.errorBound, 'maxCodeBytes');
    assert.deepEqual(tooBig.map((e) => [e.type, e.outcome]), [['run.queued', undefined], ['run.started', undefined], ['run.ended', 'error']]);
  } finally {
    await local.dispose();
  }

  const first = await executor.execute({ code: 'async () => { globalThis.n = await t.add({ x: 1, y: 1 }); return n; }', providers: PROVIDERS, dispatch: dispatcher([]), retainHandles: true });
  try {
    const again = [];
    const second = await first.handle.execute('async () => n + await t.add({ x: n, y: 1 })', { onEvent: (e) => again.push(e) });
    assert.equal(second.result, 5);
    checkRun(again, second);
    assert.deepEqual(again.filter((e) => e.type === 'tool.ended').map((e) => e.tool), ['add']);
  } finally {
    await first.handle.dispose();
  }
});

test('onEvent must be a function', async () => {
  assert.throws(() => new IsolateExecutor({ onEvent: 'yes' }), { code: ErrorCodes.INVALID_ARGUMENT, message: /onEvent must be a function/ });
  await assert.rejects(executor.execute({ code: 'async () => 1', onEvent: 1 }), { code: ErrorCodes.INVALID_ARGUMENT, message: /request\.onEvent must be a function/ });
  await assert.rejects(executor.execute('async () => 1', [], { onEvent: {} }), { code: ErrorCodes.INVALID_ARGUMENT, message: /options\.onEvent must be a function/ });
  assert.throws(() => new IsolateExecutor({ tracing: 'on' }), { code: ErrorCodes.INVALID_ARGUMENT, message: /tracing must be a boolean/ });
});
