'use strict';
// Everything rests on a second V8 working inside Node's process: load the addon, run isolates
// on non-main threads, and check that Node's own V8 (vm, timers, JSON, Intl) keeps working.
const test = require('node:test');
const assert = require('node:assert/strict');
const vm = require('node:vm');
const { isMainThread } = require('node:worker_threads');
const { IsolateExecutor } = require('../helpers.js');

test('isolates run off the main thread while Node keeps working', async () => {
  const ex = new IsolateExecutor({ workers: 2 });
  try {
    let ticks = 0;
    const interval = setInterval(() => { ticks++; }, 5);
    const runs = [];
    for (let i = 0; i < 8; i++) {
      runs.push(ex.execute({ code: `async () => { let s = 0; for (let i = 0; i < 2e6; i++) s += i % ${i + 2}; return [s, Intl.NumberFormat('de-DE').format(1234567.891)] }` }));
    }
    // Node's own V8 keeps doing its work meanwhile.
    assert.equal(vm.runInNewContext('a + b', { a: 2, b: 3 }), 5);
    assert.deepEqual(JSON.parse(JSON.stringify({ x: [1, 2] })), { x: [1, 2] });
    assert.equal(new Intl.NumberFormat('de-DE').format(1234567.891), '1.234.567,891');
    const results = await Promise.all(runs);
    clearInterval(interval);
    for (const [i, out] of results.entries()) {
      assert.equal(out.error, undefined);
      let s = 0;
      for (let k = 0; k < 2e6; k++) s += k % (i + 2);
      assert.deepEqual(out.result, [s, '1.234.567,891']);
    }
    assert.ok(isMainThread);
    assert.ok(ticks > 0, 'host timers fired while the isolates ran');
    assert.equal(vm.runInNewContext('[1,2,3].map(x => x * 2).join()'), '2,4,6');
  } finally {
    await ex.dispose();
  }
});

test('a program that spins never blocks the host event loop', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    let ticks = 0;
    const interval = setInterval(() => { ticks++; }, 10);
    const out = await ex.execute({ code: 'async () => { const end = Date.now() + 400; while (Date.now() < end) {} return "done" }' });
    clearInterval(interval);
    assert.equal(out.result, 'done');
    // 400 ms of spinning: a blocked loop would see 0 ticks; a free one sees many.
    assert.ok(ticks >= 5, `only ${ticks} host ticks while the program spun`);
  } finally {
    await ex.dispose();
  }
});
