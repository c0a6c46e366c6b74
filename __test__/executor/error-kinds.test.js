'use strict';
// What ended a failed run, as data: native-form results carry `errorKind` (and `errorBound`
// for a broken bound) next to `error`, decided where the failure happened, never read back
// from the message text. The Cloudflare form keeps Cloudflare's shape.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, tableDispatch } = require('../helpers.js');

const executor = new IsolateExecutor({ workers: 2, timeout: 5000, limits: { maxToolCalls: 2, maxLogLines: 3, maxResultBytes: 1024, maxReplyBytes: 256 } });
test.after(() => executor.dispose());

const providers = [{ name: 'tools', tools: ['echo', 'big'] }];
const dispatch = tableDispatch({ tools: { echo: (x) => x, big: () => 'y'.repeat(1000) } });
const run = (code, extra = {}) => executor.execute({ code, providers, dispatch, ...extra });

async function kind(code, extra) {
  const out = await run(code, extra);
  return [out.errorKind, out.errorBound, out.error === undefined ? undefined : typeof out.error];
}

test('errorKind: syntax, program, timeout, unsettleable', async () => {
  assert.deepEqual(await kind('async () => { const = 1 }'), ['syntax', undefined, 'string']);
  assert.deepEqual(await kind('async () => 1); (async () => 2'), ['syntax', undefined, 'string']);
  assert.deepEqual(await kind('async () => { throw new Error("boom") }'), ['program', undefined, 'string']);
  assert.deepEqual(await kind('() => { throw 7 }'), ['program', undefined, 'string']);
  assert.deepEqual(await kind('42'), ['program', undefined, 'string']);
  // A message that reads like a bound's is still the program's own error.
  assert.deepEqual(await kind('async () => { throw new Error("Memory exhausted: the program exceeded its memory limit of 64 MB (memoryLimitMb)") }'), ['program', undefined, 'string']);
  assert.deepEqual(await kind('async () => new Promise((r) => setTimeout(r, 10000))', { timeout: 200 }), ['timeout', undefined, 'string']);
  assert.deepEqual(await kind('async () => { for (;;) {} }', { timeout: 200 }), ['timeout', undefined, 'string']);
  assert.deepEqual(await kind('async () => new Promise(() => {})'), ['unsettleable', undefined, 'string']);
  const ok = await run('async () => 1');
  assert.equal('errorKind' in ok, false, 'a run that succeeds has no errorKind');
});

test('errorKind: memory and every bound, with the bound named', async () => {
  assert.deepEqual(await kind('async () => { const keep = []; for (;;) keep.push({ a: [1, 2, 3] }); }', { memoryLimitMb: 16 }), ['memory', undefined, 'string']);
  assert.deepEqual(await kind('async () => { for (let i = 0; i < 3; i++) await tools.echo(i); }'), ['bound', 'maxToolCalls', 'string']);
  assert.deepEqual(await kind('async () => { for (let i = 0; i < 5; i++) console.log(i); }'), ['bound', 'maxLogLines', 'string']);
  assert.deepEqual(await kind('async () => "x".repeat(5000)'), ['bound', 'maxResultBytes', 'string']);
  assert.deepEqual(await kind('async () => tools.big()'), ['bound', 'maxReplyBytes', 'string']);
  const small = new IsolateExecutor({ workers: 1, cpuTimeMs: 200, timeout: 20_000, limits: { maxCodeBytes: 64 } });
  try {
    const cpu = await small.execute({ code: 'async () => { for (;;) {} }' });
    assert.deepEqual([cpu.errorKind, cpu.errorBound], ['bound', 'cpuTimeMs']);
    const big = await small.execute({ code: `async () => ${JSON.stringify('z'.repeat(200))}` });
    assert.deepEqual([big.errorKind, big.errorBound], ['bound', 'maxCodeBytes']);
  } finally {
    await small.dispose();
  }
});

test('errorKind in retained handles; the Cloudflare form keeps Cloudflare\'s shape', async () => {
  const first = await executor.execute({ code: 'async () => { globalThis.n = 1; return 1; }', retainHandles: true });
  try {
    const out = await first.handle.execute('async () => { throw new TypeError("t") }');
    assert.deepEqual([out.errorKind, out.errorBound], ['program', undefined]);
  } finally {
    await first.handle.dispose();
  }
  const cf = await executor.execute('async () => { throw new Error("x") }', []);
  assert.deepEqual(Object.keys(cf).sort(), ['error', 'logs', 'result']);
});
