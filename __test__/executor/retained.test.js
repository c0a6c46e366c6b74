'use strict';
// retainHandles: a run's isolate kept for further code in the same global scope. Runs in the
// suite's isolation mode (the suite runs once per mode).
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, tableDispatch } = require('../helpers.js');

const providers = [{ name: 'tools', tools: ['add'] }];
const dispatch = tableDispatch({ tools: { add: (a, b) => a + b } });

test('a retained isolate keeps its globals and providers for further runs', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const first = await ex.execute({
      code: 'async () => { globalThis.total = await tools.add(1, 2); return total; }',
      providers, dispatch, retainHandles: true,
    });
    assert.equal(first.result, 3);
    assert.equal(typeof first.handle.id, 'number');
    const second = await first.handle.execute('async () => { total = await tools.add(total, 10); return total; }');
    assert.equal(second.result, 13);
    assert.equal(second.stats.toolCalls, 1);
    const third = await first.handle.execute('async () => typeof total');
    assert.equal(third.result, 'number');
    // Errors in a handle run are outcomes and leave the handle usable.
    const failed = await first.handle.execute('async () => { throw new Error("nope") }');
    assert.match(failed.error, /nope/);
    assert.equal((await first.handle.execute('async () => total')).result, 13);
    // Other runs do not see the retained globals.
    assert.equal((await ex.execute({ code: 'async () => typeof total' })).result, 'undefined');
    assert.equal(await first.handle.dispose(), true);
    await assert.rejects(first.handle.execute('async () => 1'), { code: 'ERR_HANDLE_CLOSED' });
    assert.equal(await first.handle.dispose(), false);
  } finally {
    await ex.dispose();
  }
});

test('a retained isolate does not hold a worker: other runs keep flowing', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const kept = await ex.execute({ code: 'async () => 1', retainHandles: true });
    const others = await Promise.all([1, 2, 3].map((n) => ex.execute({ code: `async () => ${n}` })));
    assert.deepEqual(others.map((o) => o.result), [1, 2, 3]);
    assert.equal((await kept.handle.execute('async () => 2')).result, 2);
    assert.equal(ex.stats().retained, 1);
    await kept.handle.dispose();
  } finally {
    await ex.dispose();
  }
});

test('without retainHandles there is no handle', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const out = await ex.execute({ code: 'async () => 1' });
    assert.equal(out.handle, undefined);
    await assert.rejects(ex.execute({ code: 'async () => 1', retainHandles: 'yes' }), { code: 'ERR_INVALID_ARGUMENT' });
  } finally {
    await ex.dispose();
  }
});

test('maxRetained caps the retained isolates; the run still completes, without a handle', async () => {
  const ex = new IsolateExecutor({ workers: 1, maxRetained: 1 });
  try {
    const a = await ex.execute({ code: 'async () => "a"', retainHandles: true });
    const b = await ex.execute({ code: 'async () => "b"', retainHandles: true });
    assert.ok(a.handle);
    assert.equal(b.result, 'b');
    assert.equal(b.handle, undefined);
    await a.handle.dispose();
    // The slot frees once the isolate is gone.
    let c;
    for (let i = 0; i < 50 && !(c && c.handle); i++) {
      c = await ex.execute({ code: 'async () => "c"', retainHandles: true });
      if (!c.handle) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(c.handle);
    await c.handle.dispose();
  } finally {
    await ex.dispose();
  }
});

test('an idle retained isolate expires after retainedIdleMs', async () => {
  const ex = new IsolateExecutor({ workers: 1, retainedIdleMs: 100 });
  try {
    const kept = await ex.execute({ code: 'async () => 1', retainHandles: true });
    assert.equal((await kept.handle.execute('async () => 2')).result, 2);
    await new Promise((r) => setTimeout(r, 400));
    await assert.rejects(kept.handle.execute('async () => 3'), { code: 'ERR_HANDLE_CLOSED' });
    assert.equal(ex.stats().retained, 0);
  } finally {
    await ex.dispose();
  }
});

test('a handle run ended by a bound closes the handle; a timed-out first run is not retained', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const kept = await ex.execute({ code: 'async () => 1', retainHandles: true });
    const spun = await kept.handle.execute('async () => { while (true) {} }', { timeout: 100 });
    assert.equal(spun.error, 'Execution timed out');
    await assert.rejects(kept.handle.execute('async () => 1'), { code: 'ERR_HANDLE_CLOSED' });
    const late = await ex.execute({ code: 'async () => { while (true) {} }', timeout: 100, retainHandles: true });
    assert.equal(late.error, 'Execution timed out');
    assert.equal(late.handle, undefined);
  } finally {
    await ex.dispose();
  }
});

// FINDING (fixed): only a run stopped from outside (a spinning loop) counted as ended by a bound;
// one that timed out awaiting a tool, or broke maxReplyBytes, kept (or got) its handle.
test('runs ended by a bound while awaiting a tool are not retained, and close their handle', async () => {
  const ex = new IsolateExecutor({ workers: 1, limits: { maxReplyBytes: 1024 } });
  const providers = [{ name: 't', tools: ['wait', 'big'] }];
  const dispatch = (provider, tool) => (tool === 'wait' ? new Promise(() => {}) : JSON.stringify({ result: 'x'.repeat(4096) }));
  try {
    const waited = await ex.execute({ code: 'async () => await t.wait()', providers, dispatch, timeout: 150, retainHandles: true });
    assert.equal(waited.errorKind, 'timeout');
    assert.equal(waited.handle, undefined, 'a run that timed out awaiting a tool is not retained');
    const big = await ex.execute({ code: 'async () => await t.big()', providers, dispatch, retainHandles: true });
    assert.equal(big.errorBound, 'maxReplyBytes');
    assert.equal(big.handle, undefined, 'a run that broke maxReplyBytes is not retained');
    const kept = await ex.execute({ code: 'async () => 1', providers, dispatch, retainHandles: true });
    const late = await kept.handle.execute('async () => await t.wait()', { timeout: 150 });
    assert.equal(late.errorKind, 'timeout');
    assert.equal(late.handle, undefined);
    await assert.rejects(kept.handle.execute('async () => 1'), { code: 'ERR_HANDLE_CLOSED' });
    // A program's own failure keeps the isolate: only bounds end it.
    const threw = await ex.execute({ code: 'async () => { throw new Error("mine") }', retainHandles: true });
    assert.equal(threw.errorKind, 'program');
    assert.ok(threw.handle);
    await threw.handle.dispose();
  } finally {
    await ex.dispose();
  }
});

test('disposing the executor closes its retained isolates', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  const kept = await ex.execute({ code: 'async () => 1', retainHandles: true });
  await ex.dispose();
  await assert.rejects(kept.handle.execute('async () => 1'), { code: 'ERR_DISPOSED' });
});
