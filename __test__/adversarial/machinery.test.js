'use strict';
// Adversarial corpus, machinery under attack: programs that attack each bound from inside the isolate.
//
// Every verdict is taken from what the HOST observed — host wall time, whether the host process
// stayed alive (exit code / signal of a child process), host RSS growth, dispatch calls the host
// actually received, and whether the next run on the same executor still works — never from
// what the attacking program says about itself.
//
// Attacks that can crash or exhaust the process (huge allocations, the TurboFan hole, builtins
// that may ignore termination) run in a child process (see `runChild`); the child prints one
// `@@STEP` JSON line per attack, and a `@@START` line before each so a child that dies can be
// attributed to the attack that killed it.
//
// Tests marked `// FINDING (fixed):` guard holes this corpus found in the build of 2026-11-29
// 16:03 (the comment above each gives the exact program and what the host observed then); all
// were fixed the same day and the tests now pass. Tests marked `Regression` guard holes found
// while the corpus was written.

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  IsolateExecutor,
  timed,
  assertNextRunWorks,
} = require('./harness.js');

// ---------------------------------------------------------------------------------------------
// Machinery under attack
// ---------------------------------------------------------------------------------------------

test('machinery: a flood of spinning programs beyond maxQueue is refused and the executor recovers', async () => {
  const flood = new IsolateExecutor({ workers: 1, timeout: 100, memoryLimitMb: 16, maxQueue: 2 });
  try {
    const t0 = Date.now();
    const settled = await Promise.allSettled(
      Array.from({ length: 12 }, () => flood.execute({ code: 'async () => { for (;;) {} }' })));
    const elapsed = Date.now() - t0;
    const rejected = settled.filter((s) => s.status === 'rejected');
    const resolved = settled.filter((s) => s.status === 'fulfilled');
    assert.ok(rejected.length >= 6, `${rejected.length} of 12 were refused (maxQueue 2, 1 worker)`);
    for (const r of rejected) assert.equal(r.reason.code, 'ERR_QUEUE_FULL');
    for (const r of resolved) assert.equal(r.value.error, 'Execution timed out');
    assert.ok(elapsed < 20_000, `the flood took ${elapsed} ms to drain`);
    await assertNextRunWorks(flood);
  } finally {
    await flood.dispose();
  }
});
