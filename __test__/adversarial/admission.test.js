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

// One file of every thread of process `pid` (/proc/<pid>/task/<tid>/<file>); a thread or a
// process that ended meanwhile gives nothing.
function threadFiles(pid, file) {
  const fs = require('node:fs');
  let tasks = [];
  try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { return []; }
  const texts = [];
  for (const tid of tasks) {
    try { texts.push(fs.readFileSync(`/proc/${pid}/task/${tid}/${file}`, 'utf8')); } catch { /* ended */ }
  }
  return texts;
}

// The engine processes are started from whichever of this process's threads spawned them, so
// every thread's children count, not only the main thread's.
function childPids(pid) {
  return threadFiles(pid, 'children').flatMap((text) => text.trim().split(/\s+/).filter(Boolean).map(Number));
}

// Threads named codemode-worker-N in this process ('thread') or in the engine processes.
function workerThreads() {
  return [process.pid, ...childPids(process.pid)]
    .flatMap((pid) => threadFiles(pid, 'comm'))
    .filter((name) => name.startsWith('codemode-worke')).length;
}

// The count once the pool is at rest: standby threads (started while a run waits for a thread)
// and extra workers leave about a second after going idle, and a demoted worker's replacement is
// started as it leaves, so the count can be above or dip below its resting value for a moment.
async function threadsAtRest(want) {
  let now = workerThreads();
  for (let i = 0; i < 60 && now !== want; i++) {
    await sleep(100);
    now = workerThreads();
  }
  return now;
}

const RUNAWAY = 'async () => { for (;;) {} }';

test('admission: a healthy run is served while runaways hold every worker, and the extra workers leave afterwards', async () => {
  // One worker, three runaways at a 3 s CPU budget: queued behind them, the healthy run would
  // wait for their budgets one after another (~9 s). The wall timeout is far above the CPU
  // budget: the workers run at nice 10, so beside other CPU-bound work (a compiler) three
  // runaways can take over 20 s of wall time to use 3 s of CPU each.
  const ex = new IsolateExecutor({ workers: 1, overflowWorkers: 4, timeout: 60_000, cpuTimeMs: 3000 });
  try {
    await ex.execute({ code: 'async () => 0' });
    // At rest, one worker (workers: 1) and no other thread.
    assert.equal(await threadsAtRest(1), 1, 'worker threads at rest before the runaways');
    const runaways = Array.from({ length: 3 }, () => ex.execute({ code: RUNAWAY }));
    await sleep(100);
    const started = Date.now();
    const healthy = await ex.execute({ code: 'async () => "served"' });
    const waited = Date.now() - started;
    assert.equal(healthy.result, 'served');
    assert.ok(waited < 2500, `the healthy run waited ${waited} ms behind 3 runaways on 1 worker`);
    for (const r of await Promise.all(runaways)) assert.match(r.error, /^CPU time exceeded/);
    // The extra workers (and the demoted ones) leave within about a second of going idle.
    const now = await threadsAtRest(1);
    assert.equal(now, 1, `worker threads: 1 before, ${now} after`);
    assert.equal((await ex.execute({ code: 'async () => 2' })).result, 2);
  } finally {
    await ex.dispose();
  }
});

test('admission: overflowWorkers bounds the extra workers: runaways beyond it still queue', async () => {
  const ex = new IsolateExecutor({ workers: 1, overflowWorkers: 1, timeout: 20_000, cpuTimeMs: 1500 });
  try {
    await ex.execute({ code: 'async () => 0' });
    const base = await threadsAtRest(1);
    assert.equal(base, 1, 'worker threads at rest before the runaways');
    const runaways = Array.from({ length: 4 }, () => ex.execute({ code: RUNAWAY }));
    await sleep(600);
    const peak = workerThreads();
    assert.ok(peak <= base + 1, `worker threads: ${base} before, ${peak} with 4 runaways and overflowWorkers: 1`);
    const started = Date.now();
    const healthy = await ex.execute({ code: 'async () => "late"' });
    // Two workers, four runaways: the healthy run waits for the first two budgets at least.
    assert.equal(healthy.result, 'late');
    assert.ok(Date.now() - started > 800, 'served before any runaway ended');
    await Promise.all(runaways);
  } finally {
    await ex.dispose();
  }
});
