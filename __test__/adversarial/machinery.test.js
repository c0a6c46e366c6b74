'use strict';
// Adversarial corpus, machinery under attack: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  IsolateExecutor,
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
