'use strict';
// Adversarial corpus, cpu: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  HOST_BOUND_MS,
  runChild,
  describeChild,
  assertChildSurvived,
  assertStep,
  assertMemoryError,
  timed,
  assertNextRunWorks,
  expectTimeout,
  sharedExecutors,
} = require('./harness.js');

const shared = sharedExecutors();

// ---------------------------------------------------------------------------------------------
// CPU
// ---------------------------------------------------------------------------------------------

test('cpu: synchronous infinite loops are stopped at the timeout', async () => {
  await expectTimeout(shared.ex, 'async () => { for (;;) {} }');
  await expectTimeout(shared.ex, '() => { while (true) {} }');
  await expectTimeout(shared.ex, 'async () => { let x = 0; for (;;) { x = (x * 31 + 7) | 0; } }');
  // The loop starts only after a tool call has been answered.
  await expectTimeout(shared.ex, 'async () => { await tools.echo(1); for (;;) {} }');
});

test('cpu: infinite loops inside microtasks are stopped', async () => {
  // A microtask that re-queues itself forever without allocating much.
  await expectTimeout(shared.ex, 'async () => { function f() { Promise.resolve().then(f); } f(); await new Promise(() => {}); }');
  // A microtask that spins.
  await expectTimeout(shared.ex, 'async () => { await null; for (;;) {} }');
  // Spinning in a thenable's then().
  await expectTimeout(shared.ex, 'async () => await { then() { for (;;) {} } }');
});

test('cpu: catastrophic regex backtracking is stopped; Atomics.wait cannot block the worker', async () => {
  await expectTimeout(shared.ex, "async () => /(a+)+$/.test('a'.repeat(40) + 'b')");
  // Atomics.wait is either refused outright or ended by the timeout: never a blocked thread.
  const abandonedBefore = shared.ex.stats().abandoned;
  const { out, ms } = await timed(shared.ex, { code: 'async () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)', timeout: 300 });
  assert.equal(typeof out.error, 'string', `Atomics.wait resolved ${JSON.stringify(out.result)}`);
  assert.match(out.error, /^Execution timed out$|Atomics\.wait cannot be called/);
  assert.ok(ms < HOST_BOUND_MS, `answered after ${ms} ms`);
  const stats = shared.ex.stats();
  assert.equal(stats.abandoned, abandonedBefore, `a worker was abandoned: ${JSON.stringify(stats)}`);
  await assertNextRunWorks(shared.ex);
});

test('cpu: spinning getters read by the sandbox itself (error description, result encoding, console) are stopped', async () => {
  await expectTimeout(shared.ex, "async () => { throw { name: 'E', get message() { for (;;) {} } }; }");
  await expectTimeout(shared.ex, 'async () => ({ toJSON() { for (;;) {} } })');
  await expectTimeout(shared.ex, 'async () => { console.log({ toString() { for (;;) {} } }); }');
  await expectTimeout(shared.ex, "async () => { await tools.echo({ toJSON() { for (;;) {} } }); }");
});

test('cpu: a dispatch that never answers cannot hang the run; a late reply is dropped', async () => {
  let late;
  const request = {
    code: 'async () => await tools.echo(1)',
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: () => new Promise((resolve) => { late = resolve; }),
    timeout: 300,
  };
  const { out, ms } = await timed(shared.ex, request);
  assert.equal(out.error, 'Execution timed out');
  assert.ok(ms < HOST_BOUND_MS, `answered after ${ms} ms`);
  assert.equal(typeof late, 'function', 'dispatch was never called');
  late(JSON.stringify({ result: 'too late' })); // must not disturb anything
  await assertNextRunWorks(shared.ex);
  const again = await shared.ex.execute({
    code: 'async () => await tools.echo(41)',
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: (p, t, args) => JSON.stringify({ result: JSON.parse(args)[0] + 1 }),
  });
  assert.equal(again.result, 42);
});

test('cpu (child): TurboFan loop allocating new Array(300) ignores termination; the run is answered and the host keeps serving', async () => {
  const child = await runChild({
    executor: { workers: 2, timeout: 2000, memoryLimitMb: 64 },
    steps: [{
      name: 'tf-hole-timeout',
      code: 'async () => { const keep = []; for (let i = 0; ; i++) { keep[i & 1023] = new Array(300); } }',
      timeout: 300,
      // A normal run started while the attack holds the other worker.
      alongside: 'async () => [1, 2, 3].map((x) => x * 2)',
      alongsideDelayMs: 100,
    }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'tf-hole-timeout');
  assert.equal(step.out.error, 'Execution timed out', JSON.stringify(step.out));
  assert.deepEqual(step.alongside.result, { value: [2, 4, 6] }, `run alongside the attack: ${JSON.stringify(step.alongside)}`);
  assert.ok(step.alongside.ms < HOST_BOUND_MS, `run alongside the attack took ${step.alongside.ms} ms`);
  // Whether the worker had to be abandoned depends on TurboFan having optimized the loop before
  // the deadline; either way the pool must be back to two workers.
  assert.equal(step.stats.workers, 2, `pool did not keep two workers: ${JSON.stringify(step.stats)}`);
});

test('memory (child): TurboFan loop allocating new Array(300) until memory runs out: thread parked, run answered', async () => {
  const child = await runChild({
    executor: { workers: 2, timeout: 5000, memoryLimitMb: 64 },
    steps: [{ name: 'tf-hole-memory', code: 'async () => { const a = []; while (true) a.push(new Array(300)); }' }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'tf-hole-memory');
  assertMemoryError(step);
  assert.equal(step.stats.workers, 2, `pool did not keep two workers: ${JSON.stringify(step.stats)}`);
});

// Regression (found by this corpus, fixed in 5ef26c0 "Weak tool-call callback"): after a run
// whose worker was abandoned, the abandoned thread kept its Job, whose ToolSink owned a ref'd
// ThreadsafeFunction, so the host process could never exit on its own after dispose() (the
// unref'd 5 s timer below fired).
test('host (child): the process can still exit on its own after dispose() following an abandoned worker', async () => {
  const child = await runChild({
    executor: { workers: 1, timeout: 2000, memoryLimitMb: 64 },
    steps: [{
      name: 'tf-hole-then-exit',
      code: 'async () => { const keep = []; for (let i = 0; ; i++) { keep[i & 1023] = new Array(300); } }',
      timeout: 300,
    }],
    exit: 'natural',
    naturalExitMs: 5000,
  });
  assert.ok(child.steps['tf-hole-then-exit'], describeChild(child));
  assert.equal(child.steps['tf-hole-then-exit'].out.error, 'Execution timed out');
  assert.ok(child.disposed, `dispose() never resolved\n${describeChild(child)}`);
  assert.equal(child.stillAlive, undefined,
    `the host process was still alive ${child.stillAlive && child.stillAlive.afterMs} ms after dispose() resolved`);
  assert.equal(child.signal, null, describeChild(child));
  assert.equal(child.code, 0, describeChild(child));
});

// Regression (found by this corpus, fixed in 2555e83 "Guard the callback Array methods"):
// every / some / forEach / map / filter / reduce / reduceRight on an array-like (or sparse
// array) with a huge length and no elements loop inside a builtin (HasProperty per index, never
// calling the callback) that does not honour TerminateExecution. Before the guards, the run was
// answered only by abandoning the worker (~timeout + 2050 ms) and the abandoned thread kept
// spinning at 100% of a core for good. findIndex calls its callback on every index and is
// stopped normally (the control below).
test('array-likes (child): iteration builtins on huge array-likes are stopped without abandoning a spinning worker', async () => {
  const programs = {
    every: 'async () => Array.prototype.every.call({ length: 2 ** 40 }, () => true)',
    some: 'async () => Array.prototype.some.call({ length: 2 ** 40 }, () => false)',
    forEach: 'async () => Array.prototype.forEach.call({ length: 2 ** 40 }, () => 0)',
    map: 'async () => Array.prototype.map.call({ length: 2 ** 32 - 1 }, (x) => x).length',
    filter: 'async () => Array.prototype.filter.call({ length: 2 ** 40 }, (x) => x).length',
    reduce: 'async () => Array.prototype.reduce.call({ length: 2 ** 40 }, (a) => a, 0)',
    reduceRight: 'async () => Array.prototype.reduceRight.call({ length: 2 ** 40 }, (a) => a, 0)',
    'sparse forEach': 'async () => { const a = []; a.length = 2 ** 32 - 1; a.forEach(() => 0); }',
    // Control: calls its callback on every index, so it is stopped normally.
    'findIndex (control)': 'async () => Array.prototype.findIndex.call({ length: 2 ** 40 }, () => false)',
  };
  const names = Object.keys(programs);
  const children = {};
  // Two at a time: each child holds at most one spinning thread.
  for (let i = 0; i < names.length; i += 2) {
    const batch = names.slice(i, i + 2);
    const results = await Promise.all(batch.map((name) => runChild({
      executor: { workers: 1, timeout: 2000, memoryLimitMb: 64 },
      steps: [{ name, code: programs[name], timeout: 300, measureCpuMs: 1000 }],
      exit: 'exit',
    })));
    batch.forEach((name, k) => { children[name] = results[k]; });
  }
  const problems = [];
  for (const name of names) {
    const child = children[name];
    assertChildSurvived(child);
    const step = assertStep(child, name);
    assert.equal(typeof step.out.error, 'string', `${name}: resolved without error ${JSON.stringify(step.out)}`);
    if (step.stats.abandoned !== 0) {
      problems.push(`${name}: answered ${JSON.stringify(step.out.error)} after ${step.ms} ms only by abandoning the worker ` +
        `(abandoned=${step.stats.abandoned}); host CPU over the next second: ${step.cpuFraction.toFixed(2)} cores`);
    }
  }
  assert.deepEqual(problems, [], problems.join('\n'));
});
