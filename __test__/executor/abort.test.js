'use strict';
// AbortSignal on the native form: a run cancelled while queued, awaiting a tool, or spinning
// ends at once, rejects with the signal's reason, and leaves the pool serving. Runs in the
// suite's isolation mode (the suite runs once per mode).
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const never = () => new Promise(() => {});
const providers = [{ name: 'tools', tools: ['wait'] }];

test('an abort while a run awaits a tool call rejects with the reason; the pool keeps serving', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const ac = new AbortController();
    const run = ex.execute({ code: 'async () => await tools.wait()', providers, dispatch: never, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(run, { name: 'AbortError' });
    assert.equal((await ex.execute({ code: 'async () => "next"' })).result, 'next');
  } finally {
    await ex.dispose();
  }
});

test('an abort stops a program that never yields, well before its timeout', async () => {
  const ex = new IsolateExecutor({ workers: 1, timeout: 30_000 });
  try {
    const ac = new AbortController();
    const started = Date.now();
    const run = ex.execute({ code: 'async () => { while (true) {} }', signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop now')), 100);
    await assert.rejects(run, { message: 'stop now' });
    // The worker is free again: the next run does not wait for the 30 s timeout.
    assert.equal((await ex.execute({ code: 'async () => 1' })).result, 1);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    assert.equal(ex.stats().abandoned, 0);
  } finally {
    await ex.dispose();
  }
});

test('an already aborted signal never starts the run; a queued run is dropped on abort', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    let called = false;
    const dispatch = () => { called = true; return '{"result":1}'; };
    await assert.rejects(ex.execute({ code: 'async () => tools.wait()', providers, dispatch, signal: AbortSignal.abort() }), { name: 'AbortError' });
    // One worker busy; the second run waits in the queue and is aborted there.
    const busy = ex.execute({ code: 'async () => { const s = Date.now(); while (Date.now() - s < 300) {} return "busy"; }' });
    const ac = new AbortController();
    const queued = ex.execute({ code: 'async () => tools.wait()', providers, dispatch, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(queued, { name: 'AbortError' });
    assert.equal((await busy).result, 'busy');
    assert.equal(called, false, 'the aborted runs never reached a tool');
  } finally {
    await ex.dispose();
  }
});

test('a run that finishes first is unaffected by a later abort; bad signals are refused', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const ac = new AbortController();
    const out = await ex.execute({ code: 'async () => 5', signal: ac.signal });
    ac.abort();
    assert.equal(out.result, 5);
    await assert.rejects(ex.execute({ code: 'async () => 1', signal: {} }), { code: 'ERR_INVALID_ARGUMENT' });
    const kept = await ex.execute({ code: 'async () => 1', retainHandles: true });
    const hc = new AbortController();
    const spin = kept.handle.execute('async () => { while (true) {} }', { signal: hc.signal });
    setTimeout(() => hc.abort(), 50);
    await assert.rejects(spin, { name: 'AbortError' });
  } finally {
    await ex.dispose();
  }
});
