'use strict';
// Every bound ends only the run that broke it, with a message naming the bound; the executor
// keeps serving. Memory tests run in child processes (they can take a process down if a bound
// fails).
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, runChild } = require('../helpers.js');

const FOLLOW_UP = { code: 'async () => "next run works"' };

async function expectBreach(ex, request, pattern) {
  const started = Date.now();
  const out = await ex.execute(request);
  assert.match(out.error || '', pattern);
  assert.equal(out.result, undefined);
  assert.ok(Date.now() - started < 15_000, 'the breach ended the run promptly');
  assert.equal((await ex.execute(FOLLOW_UP)).result, 'next run works');
  return out;
}

test('defaults: timeout 60 s, 128 MB, a finite queue of at least 1000, one worker per core', () => {
  const ex = new IsolateExecutor();
  const limits = ex.bounds;
  ex.dispose();
  assert.equal(limits.timeout, 60_000);
  assert.equal(limits.memoryLimitMb, 128);
  assert.ok(Number.isFinite(limits.maxQueue) && limits.maxQueue >= 1000);
  assert.equal(limits.workers, require('node:os').availableParallelism());
});

test('an awaiting program is ended at the deadline with "Execution timed out"', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const started = Date.now();
    const out = await ex.execute({
      code: 'async () => { console.log("waiting"); await api.never(); }',
      providers: [{ name: 'api', tools: ['never'] }],
      dispatch: () => new Promise(() => {}),
      timeout: 300,
    });
    const elapsed = Date.now() - started;
    assert.equal(out.error, 'Execution timed out');
    assert.deepEqual(out.logs, ['waiting']);
    assert.ok(elapsed >= 290 && elapsed < 10_000, `elapsed ${elapsed} ms`);
  } finally {
    await ex.dispose();
  }
});

test('a program that never yields is terminated and its worker serves the next run', async () => {
  const ex = new IsolateExecutor({ workers: 1, timeout: 300 });
  try {
    for (const code of ['async () => { while (true) {} }', '() => { for (;;) { Math.random(); } }',
      'async () => { await null; let x = 0; while (true) { x = (x + 1) | 0 } }']) {
      const started = Date.now();
      const out = await ex.execute({ code });
      assert.equal(out.error, 'Execution timed out', code);
      assert.ok(Date.now() - started < 10_000);
      assert.equal((await ex.execute(FOLLOW_UP)).result, 'next run works');
    }
    assert.equal(ex.stats().workers, 1);
  } finally {
    await ex.dispose();
  }
});

test('the timeout counts time spent waiting for slow tools', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const out = await ex.execute({
      code: 'async () => { for (let i = 0; i < 10; i++) await api.slow(); return "done" }',
      providers: [{ name: 'api', tools: ['slow'] }],
      dispatch: () => new Promise((r) => setTimeout(() => r('{"result":1}'), 100)),
      timeout: 350,
    });
    assert.equal(out.error, 'Execution timed out');
  } finally {
    await ex.dispose();
  }
});

test('message bounds: arguments, replies, results, logs and tool calls', async () => {
  const ex = new IsolateExecutor({
    workers: 1,
    limits: { maxArgsBytes: 1000, maxReplyBytes: 1000, maxResultBytes: 1000, maxLogLines: 5, maxLogBytes: 200, maxToolCalls: 3, maxCodeBytes: 2000 },
  });
  const providers = [{ name: 'api', tools: ['echo', 'big'] }];
  const dispatch = (p, tool, argsJson) => (tool === 'big' ? JSON.stringify({ result: 'x'.repeat(5000) }) : JSON.stringify({ result: JSON.parse(argsJson)[0] }));
  try {
    // Within the bounds everything works.
    const fine = await ex.execute({ code: 'async () => { console.log("ok"); return api.echo("y".repeat(900)) }', providers, dispatch });
    assert.equal(fine.result, 'y'.repeat(900));

    await expectBreach(ex, { code: 'async () => { try { await api.echo("x".repeat(2000)) } catch { return "caught" } }', providers, dispatch }, /maxArgsBytes/);
    await expectBreach(ex, { code: 'async () => { try { await api.big() } catch { return "caught" } }', providers, dispatch }, /maxReplyBytes/);
    await expectBreach(ex, { code: 'async () => "z".repeat(2000)', providers, dispatch }, /maxResultBytes/);
    const lines = await expectBreach(ex, { code: 'async () => { for (let i = 0; i < 100; i++) { try { console.log(i) } catch {} } return "kept going" }', providers, dispatch }, /maxLogLines/);
    assert.deepEqual(lines.logs, ['0', '1', '2', '3', '4']);
    await expectBreach(ex, { code: 'async () => { try { console.log("x".repeat(500)) } catch {} return "kept going" }', providers, dispatch }, /maxLogBytes/);
    await expectBreach(ex, { code: 'async () => { for (let i = 0; i < 10; i++) { try { await api.echo(i) } catch {} } return "kept going" }', providers, dispatch }, /maxToolCalls/);
    await expectBreach(ex, { code: `async () => ${JSON.stringify('c'.repeat(3000))}`, providers, dispatch }, /maxCodeBytes/);
  } finally {
    await ex.dispose();
  }
});

test('heap exhaustion ends the run with a memory error; the host survives and the next run works', async () => {
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ workers: 1, memoryLimitMb: 64, timeout: 20000 });
    const before = process.memoryUsage().rss;
    const results = [];
    for (const code of [
      'async () => { const a = []; while (true) a.push({ x: Math.random(), y: [1, 2, 3] }); }',
      'async () => { let s = "x"; while (true) s = s + s; }',
      'async () => { const m = new Map(); for (let i = 0; ; i++) m.set(i, "v" + i); }',
    ]) {
      const out = await ex.execute({ code });
      const next = await ex.execute({ code: 'async () => 6 * 7' });
      results.push([out.error, next.result]);
    }
    const big = await ex.execute({ code: 'async () => { let x = []; while (true) x.push(new Array(100000).fill(1.5)); }', memoryLimitMb: 32 });
    report({ results, big: big.error, growthMb: (process.memoryUsage().rss - before) / 1048576 });
    await ex.dispose();
  `);
  assert.equal(child.code, 0, child.stderr);
  for (const [error, next] of child.report.results) {
    assert.match(error, /^(Memory exhausted|Invalid string length|Invalid array length)/);
    assert.equal(next, 42);
  }
  assert.match(child.report.big, /Memory exhausted.*32 MB/);
  assert.ok(child.report.growthMb < 1500, `host RSS grew by ${child.report.growthMb} MB`);
});

test('ArrayBuffer and TypedArray memory is capped by the same budget', async () => {
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ workers: 1, memoryLimitMb: 64 });
    const one = await ex.execute({ code: 'async () => new Uint8Array(200 * 1024 * 1024).length' });
    const many = await ex.execute({ code: 'async () => { const keep = []; for (let i = 0; i < 100; i++) keep.push(new ArrayBuffer(8 * 1024 * 1024)); return keep.length }' });
    const fits = await ex.execute({ code: 'async () => { const a = new Float64Array(1024 * 1024); a[5] = 2.5; return a[5] * a.length }' });
    const next = await ex.execute({ code: 'async () => 1 + 1' });
    report({ one: one.error, many: many.error, fits: fits.result, next: next.result });
    await ex.dispose();
  `);
  assert.equal(child.code, 0, child.stderr);
  assert.match(child.report.one, /Memory exhausted/);
  assert.match(child.report.many, /Memory exhausted/);
  assert.equal(child.report.fits, 2.5 * 1024 * 1024);
  assert.equal(child.report.next, 2);
});

test('executor options are validated with ERR_INVALID_ARGUMENT', () => {
  for (const options of [{ workers: 0 }, { workers: 1.5 }, { maxQueue: 'many' }, { timeout: NaN }, { memoryLimitMb: 8 },
    { limits: { maxLogLines: -1 } }, { limits: 'x' }, 'nope']) {
    assert.throws(() => new IsolateExecutor(options), (e) => e.code === 'ERR_INVALID_ARGUMENT', JSON.stringify(options));
  }
});

test('a misspelt or misplaced bound is refused, not dropped; Cloudflare options still pass', async () => {
  assert.throws(() => new IsolateExecutor({ limits: { maxReplyBytez: 10 } }),
    { code: 'ERR_INVALID_ARGUMENT', message: /options\.limits has no bound named maxReplyBytez \(known: maxArgsBytes, maxReplyBytes, / });
  assert.throws(() => new IsolateExecutor({ maxReplyBytes: 10 }),
    { code: 'ERR_INVALID_ARGUMENT', message: 'maxReplyBytes is a bound of options.limits: pass { limits: { maxReplyBytes } }' });
  const ex = new IsolateExecutor({ workers: 1, loader: {}, limits: { maxReplyBytes: 4096 } });
  try {
    assert.equal(ex.bounds.maxReplyBytes, 4096);
    assert.equal((await ex.execute({ code: 'async () => 1' })).result, 1);
  } finally {
    await ex.dispose();
  }
});
