'use strict';
// Adversarial corpus, messages: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  MB,
  HOST_BOUND_MS,
  runChild,
  assertChildSurvived,
  assertStep,
  recordingDispatch,
  timed,
  assertNextRunWorks,
  sharedExecutors,
} = require('./harness.js');

const shared = sharedExecutors();

// ---------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------

test('messages: oversized tool arguments end the run before the host sees them', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await shared.small.execute({
    code: "async () => { await tools.echo('ok'); await tools.echo('x'.repeat(5000)); return 'not reached'; }",
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch,
  });
  assert.match(out.error || '', /maxArgsBytes/);
  assert.equal(out.result, undefined);
  assert.deepEqual(calls.map((c) => c.argsJson), ['["ok"]'], 'the oversized call reached the host');
  await assertNextRunWorks(shared.small);
});

test('messages (child): 128 MB of tool arguments is refused with host RSS bounded', async () => {
  const child = await runChild({
    executor: { workers: 1, timeout: 10_000, memoryLimitMb: 512 },
    steps: [{ name: 'huge args', code: "async () => { await tools.echo('x'.repeat(2 ** 27)); return 'not reached'; }" }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'huge args', { boundMs: 30_000 });
  assert.match(step.out.error || '', /maxArgsBytes/);
  assert.equal(step.dispatchedCount, 0, 'the oversized call reached the host');
});

test('messages: an oversized reply from dispatch ends the run', async () => {
  const out = await shared.small.execute({
    code: 'async () => { const r = await tools.big(); return typeof r; }',
    providers: [{ name: 'tools', tools: ['big'] }],
    dispatch: () => JSON.stringify({ result: 'y'.repeat(10_000) }),
  });
  assert.match(out.error || '', /maxReplyBytes/);
  assert.equal(out.result, undefined);
  await assertNextRunWorks(shared.small);
});

test('messages: too many tool calls, sequential and in parallel', async () => {
  for (const code of [
    'async () => { for (let i = 0; i < 100; i++) await tools.echo(i); return "done"; }',
    'async () => { await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.echo(i))); return "done"; }',
    'async () => { for (let i = 0; i < 1e6; i++) tools.echo(i).catch(() => {}); await new Promise(() => {}); }',
  ]) {
    const { calls, dispatch } = recordingDispatch();
    const { out, ms } = await timed(shared.small, { code, providers: [{ name: 'tools', tools: ['echo'] }], dispatch });
    assert.match(out.error || '', /maxToolCalls/, code);
    assert.ok(calls.length <= 5, `${calls.length} calls reached the host (maxToolCalls 5)`);
    assert.ok(ms < HOST_BOUND_MS, `answered after ${ms} ms`);
    await assertNextRunWorks(shared.small);
  }
});

test('messages: log floods by lines and by bytes', async () => {
  const lines = await shared.small.execute({ code: 'async () => { for (let i = 0; ; i++) console.log(i); }' });
  assert.match(lines.error || '', /maxLogLines/);
  assert.ok(lines.logs.length <= 20, `${lines.logs.length} lines kept`);

  const oneBig = await shared.small.execute({ code: "async () => { console.log('x'.repeat(100000)); return 1; }" });
  assert.match(oneBig.error || '', /maxLogBytes/);
  assert.ok(oneBig.logs.join('').length <= 1024);

  const manySmall = await shared.small.execute({ code: "async () => { for (let i = 0; i < 19; i++) console.error('y'.repeat(100)); return 1; }" });
  assert.match(manySmall.error || '', /maxLogBytes/);
  assert.ok(manySmall.logs.join('').length <= 1024, `${manySmall.logs.join('').length} bytes kept`);

  const viaToString = await shared.small.execute({ code: "async () => { console.warn({ toString() { return 'z'.repeat(50000); } }); return 1; }" });
  assert.match(viaToString.error || '', /maxLogBytes/);
  await assertNextRunWorks(shared.small);
});

test('messages: oversized results, directly and through toJSON', async () => {
  for (const code of [
    "async () => 'x'.repeat(5000)",
    'async () => Array.from({ length: 2000 }, (_, i) => i)',
    "async () => ({ toJSON() { return 'x'.repeat(100000); } })",
    "async () => { const o = {}; for (let i = 0; i < 200; i++) o['k' + i] = i; return o; }",
  ]) {
    const out = await shared.small.execute({ code });
    assert.match(out.error || '', /maxResultBytes/, `${code}: ${JSON.stringify(out).slice(0, 200)}`);
    assert.equal(out.result, undefined);
  }
  await assertNextRunWorks(shared.small);
});

test('messages: results with cycles, functions, symbols, BigInt cannot be transferred', async () => {
  for (const code of [
    'async () => { const a = {}; a.self = a; return a; }',
    'async () => { const a = [1]; a.push(a); return a; }',
    'async () => () => 1',
    'async () => ({ nested: { f() {} } })',
    "async () => Symbol('s')",
    "async () => ({ s: Symbol('s') })",
    'async () => 10n',
    'async () => [1, 2, 3n]',
    'async () => { let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return a; }',
  ]) {
    const { out, ms } = await timed(shared.ex, { code });
    assert.equal(typeof out.error, 'string', `${code}: resolved ${JSON.stringify(out.result)}`);
    assert.match(out.error, /could not be transferred/, `${code}: ${out.error}`);
    assert.equal(out.result, undefined);
    assert.ok(ms < HOST_BOUND_MS);
  }
  await assertNextRunWorks(shared.ex);
});

test('messages: oversized program source is refused', async () => {
  const code = `async () => ${JSON.stringify('x'.repeat(70 * 1024))}.length`;
  const out = await shared.small.execute({ code });
  assert.match(out.error || '', /maxCodeBytes/);
  await assertNextRunWorks(shared.small);
});

// FINDING (fixed): the text of a thrown value is bounded by nothing. Observed with memoryLimitMb 64:
// `async () => { throw 'x'.repeat(2 ** 29 - 24) }` resolves with an `error` string of 536870888
// characters; host RSS grew ~517 MB in the run (peak 1.1 GB for the process). `throw
// 'x'.repeat(2 ** 28)` gives a 268435456-character error (+261 MB). Messages are otherwise
// bounded (maxResultBytes, maxLogBytes...), so the error text is a way around them; two workers
// doing this at once push the host past 2 GB.
test('messages (child): the error text of a thrown huge string is bounded', async () => {
  const child = await runChild({
    executor: {
      workers: 1, timeout: 20_000, memoryLimitMb: 64,
      limits: { maxResultBytes: MB, maxLogBytes: MB, maxArgsBytes: MB, maxReplyBytes: MB },
    },
    steps: [
      { name: 'throw 256M string', code: "async () => { throw 'x'.repeat(2 ** 28); }" },
      { name: 'Error with 64M message', code: "async () => { throw new Error('m'.repeat(2 ** 26)); }" },
    ],
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const name of ['throw 256M string', 'Error with 64M message']) {
    const step = assertStep(child, name, { boundMs: 30_000 });
    assert.equal(typeof step.out.error, 'string');
    assert.ok(step.out.errorLength <= 4 * MB,
      `${name}: the host received an error text of ${step.out.errorLength} characters (every size limit is 1 MiB); host RSS +${(step.rssGrowth / MB).toFixed(0)} MB`);
  }
});
