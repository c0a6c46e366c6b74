'use strict';
// Adversarial corpus, admission: both arrangements accept the same work. In 'process'
// isolation a run waiting for its engine to start counts as taking a worker, not a queue slot.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('admission: { workers: 1, maxQueue: 1 } accepts one running and one queued run right after construction, then refuses', async () => {
  const ex = new IsolateExecutor({ workers: 1, maxQueue: 1, timeout: 5000 });
  try {
    const runs = [];
    for (let i = 0; i < 3; i++) {
      runs.push(ex.execute({ code: `async () => { const t = Date.now(); while (Date.now() - t < 400); return ${i}; }` }).then((r) => r.result, (e) => e.code));
      await sleep(50);
    }
    assert.deepEqual(await Promise.all(runs), [0, 1, 'ERR_QUEUE_FULL']);
  } finally {
    await ex.dispose();
  }
});
