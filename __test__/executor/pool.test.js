'use strict';
// The pool: bounded queue, disposal, and replacement of lost workers.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, runChild } = require('../helpers.js');

// A dispatch whose calls wait until released.
function gate() {
  const waiting = [];
  let arrived = () => {};
  const firstCall = new Promise((r) => { arrived = r; });
  return {
    firstCall,
    dispatch: () => new Promise((resolve) => { waiting.push(resolve); arrived(); }),
    release: () => { for (const resolve of waiting.splice(0)) resolve('{"result":"released"}'); },
  };
}

test('a full queue rejects at once with ERR_QUEUE_FULL and the pool keeps working', async () => {
  const ex = new IsolateExecutor({ workers: 1, maxQueue: 2 });
  try {
    const g = gate();
    const holding = ex.execute({ code: 'async () => api.wait()', providers: [{ name: 'api', tools: ['wait'] }], dispatch: g.dispatch });
    await g.firstCall; // the worker holds the first run; the queue is empty
    const queued = [ex.execute({ code: 'async () => "q1"' }), ex.execute({ code: 'async () => "q2"' })];
    const started = Date.now();
    await assert.rejects(ex.execute({ code: 'async () => "overflow"' }), (e) => {
      assert.equal(e.code, 'ERR_QUEUE_FULL');
      assert.match(e.message, /queue is full/);
      return true;
    });
    assert.ok(Date.now() - started < 1000, 'rejected at once');
    g.release();
    assert.equal((await holding).result, 'released');
    assert.deepEqual((await Promise.all(queued)).map((o) => o.result), ['q1', 'q2']);
    assert.equal((await ex.execute({ code: 'async () => "after"' })).result, 'after');
  } finally {
    await ex.dispose();
  }
});

test('dispose lets the running run finish, fails queued runs, and refuses later ones', async () => {
  const ex = new IsolateExecutor({ workers: 1, maxQueue: 10 });
  const g = gate();
  const running = ex.execute({ code: 'async () => api.wait()', providers: [{ name: 'api', tools: ['wait'] }], dispatch: g.dispatch });
  await g.firstCall;
  const queued = assert.rejects(ex.execute({ code: 'async () => "never runs"' }), { code: 'ERR_DISPOSED' });
  const disposing = ex.dispose();
  g.release();
  assert.equal((await running).result, 'released');
  await queued;
  await disposing;
  await assert.rejects(ex.execute({ code: 'async () => 1' }), { code: 'ERR_DISPOSED' });
  assert.equal(ex.stats().workers, 0);
  await ex.dispose(); // a second dispose is harmless
});

test('a worker that panics is replaced; its run rejects with ERR_WORKER_LOST, others are unaffected', async () => {
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ workers: 2 });
    const others = [];
    for (let i = 0; i < 20; i++) others.push(ex.execute({ code: 'async () => ' + i }));
    let lost;
    try {
      await ex.execute({ code: 'async () => 1', __faultInjection: 'panic' });
    } catch (e) {
      lost = { code: e.code, message: e.message };
    }
    const results = (await Promise.all(others)).map((o) => o.result);
    const next = await Promise.all([1, 2, 3, 4].map((n) => ex.execute({ code: 'async () => ' + n * 10 })));
    const stats = ex.stats();
    report({ lost, results, next: next.map((o) => o.result), stats });
    await ex.dispose();
  `, { env: { CODEMODE_EXECUTOR_FAULT_INJECTION: '1' } });
  assert.equal(child.code, 0, child.stderr);
  const r = child.report;
  assert.equal(r.lost.code, 'ERR_WORKER_LOST');
  assert.match(r.lost.message, /panicked/);
  assert.deepEqual(r.results, Array.from({ length: 20 }, (_, i) => i));
  assert.deepEqual(r.next, [10, 20, 30, 40]);
  assert.equal(r.stats.lost, 1);
  assert.equal(r.stats.replaced, 1);
  assert.equal(r.stats.workers, 2);
});

test('the fault-injection hook does nothing unless its variable is set', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    const out = await ex.execute({ code: 'async () => "no panic"', __faultInjection: 'panic' });
    assert.equal(out.result, 'no panic');
  } finally {
    await ex.dispose();
  }
});

// Worker threads of this process by thread id, with their nice values.
function workerNices() {
  const fs = require('node:fs');
  const out = new Map();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      if (!fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith('codemode-worker')) continue;
      out.set(tid, Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]));
    } catch {
      // the thread ended while it was being read
    }
  }
  return out;
}

test('worker threads run at the workerNice priority (default 0, the host\'s own), standby threads too', async () => {
  const cores = require('node:os').availableParallelism();
  for (const [options, expected] of [[{}, 0], [{ workerNice: 5 }, 5], [{ workerNice: 19 }, 19]]) {
    const ex = new IsolateExecutor({ isolation: 'thread', workers: 2, ...options });
    try {
      assert.equal((await ex.execute({ code: 'async () => 1' })).result, 1);
      assert.equal(ex.bounds.workerNice, expected);
      // A thread names itself (and sets its priority) when it starts: wait for both workers.
      for (let i = 0; i < 100 && workerNices().size < 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual([...workerNices().values()], Array(2).fill(expected));
    } finally {
      await ex.dispose();
    }
  }
  // Standby threads are started on demand by the watchdog's thread (not by the host's thread
  // that queued the run): back-to-back runs on one worker start them where a core is free.
  const ex = new IsolateExecutor({ isolation: 'thread', workers: 1, standbyIsolates: 4, workerNice: 7 });
  try {
    let most = new Map();
    for (let i = 0; i < 200; i++) {
      await ex.execute({ code: 'async () => 1' });
      const now = workerNices();
      if (now.size > most.size) most = now;
    }
    if (cores >= 2) assert.ok(most.size >= 2, `no standby thread started for 200 back-to-back runs on ${cores} cores`);
    assert.ok(most.size <= 5, `${most.size} threads for one worker and at most four standby threads`);
    assert.deepEqual([...most.values()], Array(most.size).fill(7));
  } finally {
    await ex.dispose();
  }
  assert.throws(() => new IsolateExecutor({ workerNice: 20 }), { code: 'ERR_INVALID_ARGUMENT' });
});

// Runs `code` on a one-worker pool, sampling the worker threads' nice values every 10 ms while
// it runs (the run is on its own thread, so this event loop stays free). No standby threads:
// one thread runs everything, so its priority can be followed.
async function sampleNices(code, options = {}) {
  const ex = new IsolateExecutor({ isolation: 'thread', workers: 1, standbyIsolates: 0, ...options });
  try {
    assert.equal((await ex.execute({ code: 'async () => 0' })).result, 0);
    for (let i = 0; i < 100 && workerNices().size < 1; i++) await new Promise((r) => setTimeout(r, 10));
    const before = workerNices();
    const seen = [];
    const timer = setInterval(() => seen.push(workerNices()), 10);
    const out = await ex.execute({ code });
    clearInterval(timer);
    // A worker that leaves is replaced by a fresh thread: give it up to 500 ms to start.
    const replaced = (m) => m.size === 1 && !m.has([...before.keys()][0]);
    let after = workerNices();
    for (let i = 0; i < 50 && !replaced(after); i++) {
      await new Promise((r) => setTimeout(r, 10));
      after = workerNices();
    }
    return { out, before, seen, after };
  } finally {
    await ex.dispose();
  }
}

test('a run that uses 100 ms of CPU drops to nice 10, and a fresh thread at workerNice replaces that worker after it', async () => {
  const spin = 'async () => { const end = Date.now() + 400; while (Date.now() < end) {} return "spun"; }';
  const { out, before, seen, after } = await sampleNices(spin);
  assert.equal(out.result, 'spun');
  const [tid] = [...before.keys()];
  assert.deepEqual([...before.values()], [0]);
  const niceOfRun = seen.map((m) => m.get(tid)).filter((n) => n !== undefined);
  assert.equal(niceOfRun.at(-1), 10, `the long run was not lowered: ${niceOfRun}`);
  assert.ok(!after.has(tid), 'the lowered thread left after its run');
  assert.deepEqual([...after.values()], [0], 'its replacement runs at workerNice');
});

test('short runs, and runs that mostly wait, keep their worker and its priority; a workerNice at or above 10 is not changed by a long run', async () => {
  const waiting = await sampleNices('async () => { await new Promise((r) => setTimeout(r, 300)); return "waited"; }');
  assert.equal(waiting.out.result, 'waited');
  assert.deepEqual(waiting.after, waiting.before, 'a run awaiting a timer for 300 ms was lowered or replaced');
  assert.deepEqual([...waiting.after.values()], [0]);
  const ex = new IsolateExecutor({ isolation: 'thread', workers: 2, standbyIsolates: 0 });
  try {
    assert.equal((await ex.execute({ code: 'async () => 0' })).result, 0);
    for (let i = 0; i < 100 && workerNices().size < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const before = workerNices();
    assert.equal(before.size, 2);
    for (let i = 0; i < 20; i++) {
      assert.equal((await ex.execute({ code: 'async () => { await new Promise((r) => setTimeout(r, 5)); return 1; }' })).result, 1);
    }
    assert.deepEqual(workerNices(), before, 'short runs changed the workers');
  } finally {
    await ex.dispose();
  }
  const spin = 'async () => { const end = Date.now() + 300; while (Date.now() < end) {} return "spun"; }';
  const { out, before, after } = await sampleNices(spin, { workerNice: 12 });
  assert.equal(out.result, 'spun');
  assert.deepEqual(after, before, 'the worker at nice 12 was neither lowered to 10 nor replaced');
  assert.deepEqual([...after.values()], [12]);
});

test("measureFloors (the bench's isolate floor) times each phase of a fresh isolate and refuses bad sample counts", () => {
  const { measureFloors } = require('../../binding.js');
  const floors = measureFloors(5);
  assert.deepEqual(Object.keys(floors).sort(), ['isolateCreateMs', 'isolateDropMs', 'isolateRestoreMs']);
  for (const [phase, ms] of Object.entries(floors)) {
    assert.ok(Number.isFinite(ms) && ms > 0 && ms < 1000, `${phase}: ${ms}`);
  }
  for (const bad of [0, 10_001]) {
    // The native layer sets `code` itself; the message is the plain sentence.
    assert.throws(() => measureFloors(bad), { code: 'ERR_INVALID_ARGUMENT', message: 'samples must be between 1 and 10000 (got ' + bad + ')' });
  }
});

// CPU time (clock ticks) of each worker thread of process `pid`, by thread id.
function workerCpu(pid) {
  const fs = require('node:fs');
  const out = new Map();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith('codemode-worker')) continue;
      const fields = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      out.set(tid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // the thread ended while it was being read
    }
  }
  return out;
}

// Back-to-back trivial runs: each answer is awaited before the next run is queued.
async function backToBack(ex, runs) {
  for (let i = 0; i < runs; i++) assert.equal((await ex.execute({ code: 'async () => 1' })).result, 1);
}

// Worker threads (named codemode-worker-*) of process `pid` now.
function workerThreads(pid) {
  return workerCpu(pid).size;
}

test('standbyIsolates (default 4) add no concurrency: with one worker and standby threads started, runs never overlap', async () => {
  const plain = new IsolateExecutor({ isolation: 'thread' });
  assert.equal(plain.bounds.standbyIsolates, 4);
  await plain.dispose();
  // In 'thread' isolation this is the pool's places (slots.rs) alone; in 'process' the host
  // also hands an engine no more runs than its workers.
  const ex = new IsolateExecutor({ workers: 1, standbyIsolates: 4, overflowWorkers: 0 });
  try {
    assert.equal(ex.bounds.standbyIsolates, 4);
    // Standby threads start while runs come back to back (where a core is free).
    await backToBack(ex, 100);
    let inside = 0;
    let most = 0;
    const dispatch = async (provider, tool) => {
      if (tool === 'enter') most = Math.max(most, ++inside);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (tool === 'leave') inside--;
      return '{"result":null}';
    };
    const runs = Array.from({ length: 8 }, (_, i) => ex.execute({
      code: `async () => { await api.enter(); await api.leave(); return ${i}; }`,
      providers: [{ name: 'api', tools: ['enter', 'leave'] }],
      dispatch,
    }));
    assert.deepEqual((await Promise.all(runs)).map((o) => o.result), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(most, 1, `${most} runs were inside at once on one worker`);
    assert.equal(ex.stats().workers, 1, 'the standby threads are not counted as workers');
  } finally {
    await ex.dispose();
  }
  assert.throws(() => new IsolateExecutor({ standbyIsolates: 65 }), { code: 'ERR_INVALID_ARGUMENT' });
});

test('standby threads start on demand and take runs: back-to-back runs on one worker are served by several threads, by one without them, and the extra threads leave once runs stop', async () => {
  // A thread that has answered gives its place to a standby thread (its isolate already built)
  // while it builds its next isolate, so the runs rotate over the threads; with
  // standbyIsolates: 0 one thread serves them all.
  const cores = require('node:os').availableParallelism();
  const served = async (standbyIsolates) => {
    const ex = new IsolateExecutor({ workers: 1, standbyIsolates });
    try {
      // (The first run may itself start one: it waits while the worker builds its first isolate.)
      await ex.execute({ code: 'async () => 0' });
      const pid = ex.stats().enginePids?.[0] ?? process.pid;
      // A standby thread that waits 1 s for a place leaves (STANDBY_IDLE).
      const settle = async () => {
        let threads = workerThreads(pid);
        for (let i = 0; i < 40 && threads > 1; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          threads = workerThreads(pid);
        }
        return threads;
      };
      assert.equal(await settle(), 1, 'a standby thread stayed with no run coming');
      const before = workerCpu(pid);
      for (let i = 0; i < 300; i++) await ex.execute({ code: 'async () => { let s = 0; for (let i = 0; i < 20000; i++) s += i; return s; }' });
      const after = workerCpu(pid);
      const serving = [...after].filter(([tid, ticks]) => ticks > (before.get(tid) ?? 0)).length;
      return { serving, threads: after.size, left: await settle() };
    } finally {
      await ex.dispose();
    }
  };
  const withStandby = await served(4);
  if (cores >= 2) assert.ok(withStandby.serving >= 2, `${withStandby.serving} threads served 300 back-to-back runs with up to 4 standby threads`);
  assert.ok(withStandby.threads <= 5, `${withStandby.threads} threads for one worker and four standby threads`);
  assert.equal(withStandby.left, 1, 'the standby threads did not leave after the runs stopped');
  const without = await served(0);
  assert.deepEqual([without.serving, without.threads], [1, 1]);
});

test('no standby thread starts while no core is free: one worker, back-to-back runs, the process held to one core', async () => {
  const { spawnSync } = require('node:child_process');
  const { LIB } = require('../helpers.js');
  const source = `
    const { IsolateExecutor } = require(${JSON.stringify(LIB)});
    const fs = require('node:fs');
    const threads = () => fs.readdirSync('/proc/self/task').filter((t) => {
      try { return fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').startsWith('codemode-worker'); } catch { return false; }
    }).length;
    (async () => {
      const ex = new IsolateExecutor({ isolation: 'thread', workers: 1, standbyIsolates: 4 });
      let most = 0;
      for (let i = 0; i < 200; i++) { await ex.execute({ code: 'async () => 1' }); most = Math.max(most, threads()); }
      await ex.dispose();
      console.log(JSON.stringify({ cores: require('node:os').availableParallelism(), most }));
    })();`;
  const child = spawnSync('taskset', ['-c', '0', process.execPath, '-e', source], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout.trim().split('\n').at(-1)), { cores: 1, most: 1 });
});

test('threads come and go under churn (standby threads, a panicking worker, runaways that start extra workers and leave) and the pool settles back to its workers', async () => {
  const child = await runChild(`
    const fs = require('node:fs');
    const threads = () => fs.readdirSync('/proc/self/task').filter((t) => {
      try { return fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').startsWith('codemode-worker'); } catch { return false; }
    }).length;
    const ex = new lib.IsolateExecutor({ isolation: 'thread', workers: 1, standbyIsolates: 4, overflowWorkers: 2 });
    const trivial = (n) => ex.execute({ code: 'async () => ' + n }).then((o) => o.result);
    let most = 0;
    let lost = 0;
    const results = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 40; i++) { results.push(await trivial(i)); most = Math.max(most, threads()); }
      try { await ex.execute({ code: 'async () => 0', __faultInjection: 'panic' }); } catch (e) { if (e.code === 'ERR_WORKER_LOST') lost++; }
      // A runaway holds the one place for its 300 ms: the queued runs get extra workers, and the
      // runaway's thread, lowered, leaves after it.
      const runaway = ex.execute({ code: 'async () => { for (;;) {} }', timeout: 300 }).then((o) => o.error?.name, (e) => e.code);
      const queued = Array.from({ length: 4 }, (_, i) => trivial(100 + i));
      for (let i = 0; i < 30; i++) { await new Promise((r) => setTimeout(r, 10)); most = Math.max(most, threads()); }
      await runaway;
      results.push(...(await Promise.all(queued)));
    }
    // Extra workers and standby threads leave after 1 s without a run.
    let settled = threads();
    for (let i = 0; i < 60 && settled > 1; i++) { await new Promise((r) => setTimeout(r, 100)); settled = threads(); }
    const final = await trivial(7);
    report({ results: results.length, lost, most, settled, workers: ex.stats().workers, final });
    await ex.dispose();
  `, { env: { CODEMODE_EXECUTOR_FAULT_INJECTION: '1' }, timeoutMs: 120_000 });
  assert.equal(child.code, 0, child.stderr);
  const r = child.report;
  assert.equal(r.results, 5 * 44);
  assert.equal(r.lost, 5);
  assert.ok(r.most <= 1 + 4 + 2 + 1, `${r.most} threads at once for 1 worker, 4 standby, 2 extra (and a replacement on its way)`);
  assert.deepEqual([r.settled, r.workers, r.final], [1, 1, 7]);
});

test('an engine returns the memory its dropped isolates freed once no run has been in progress for a second', async () => {
  // The C allocator keeps what a dropped isolate freed in its thread's arena; after a burst on
  // 32 workers that was about 10 MB of the engine's resident memory, kept until exit.
  const fs = require('node:fs');
  const rssMb = (pid) => Number(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/Rss:\s+(\d+)/)[1]) / 1024;
  const ex = new IsolateExecutor({ isolation: 'process', workers: 32, standbyIsolates: 0 });
  try {
    const code = 'async () => { await new Promise((resolve) => setTimeout(resolve, 200)); return 1; }';
    await Promise.all(Array.from({ length: 64 }, () => ex.execute({ code })));
    const pid = ex.stats().enginePids[0];
    // Every worker has built its next isolate by now; the trim comes 1 s after the last run.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const before = rssMb(pid);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const after = rssMb(pid);
    assert.ok(before - after >= 3, `engine RSS ${before.toFixed(1)} MB 0.4 s after the burst, ${after.toFixed(1)} MB 2 s after`);
    assert.equal((await ex.execute({ code: 'async () => 2' })).result, 2);
  } finally {
    await ex.dispose();
  }
});
