'use strict';
// Ownership of a durable run (issue 13): a pass holds its run with a lease; approvals name the
// action they approve; a run keyed by idempotencyKey is started once; a fault of the machinery
// keeps the run instead of ending it.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { CodemodeExecutorError } = require('../../lib/errors.js');
const { Tracker, load } = require('../fixtures/tracker.js');
const { Bank, readLedger } = require('../fixtures/bank.js');
const { KIND, storeOptions, nativeStore } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

function files() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-ownership-'));
  return { dir, store: storeOptions(dir), data: path.join(dir, 'tracker.json'), ledger: path.join(dir, 'ledger.jsonl') };
}

const READ_THEN_CREATE = `async () => {
  const issues = await tracker.list_issues();
  const made = await tracker.create_issue({ title: "second" });
  return { before: issues.length, made };
}`;

// FINDING (fixed): the pause was visible in pending() before the pass that paused had ended; an
// approval landing then resumed the run under the ending pass, which read `running` and failed
// the run with `Code execution failed: __CODEMODE_PAUSE__` (99 % of rounds with an approver in
// the same process, on d1d03ce^).
test('a prompt approval, as soon as the pause is visible, never destroys the run', async () => {
  for (let round = 0; round < 10; round++) {
    const f = files();
    const runtime = createCodemodeRuntime({ executor, connectors: [new Tracker(f.data)], ...f.store });
    const first = runtime.execute({ code: READ_THEN_CREATE });
    let approval;
    while (approval === undefined) {
      const [p] = await runtime.pending();
      if (p !== undefined) approval = runtime.approve({ executionId: p.executionId, seq: p.seq });
      else await new Promise((r) => setImmediate(r));
    }
    const [paused, done] = await Promise.all([first, approval]);
    assert.equal(paused.status, 'paused', `round ${round}: ${JSON.stringify(paused)}`);
    assert.equal(done.status, 'completed', `round ${round}: ${JSON.stringify(done)}`);
    assert.equal(load(f.data).ran.create_issue, 1);
  }
});

test('approve({ seq }) applies only to the action the approver saw, and names what waits instead', async () => {
  const f = files();
  const runtime = createCodemodeRuntime({ executor, connectors: [new Tracker(f.data)], ...f.store });
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  const stale = await runtime.approve({ executionId: paused.executionId, seq: 5 });
  assert.deepEqual(stale, {
    status: 'error',
    executionId: paused.executionId,
    error: `Execution "${paused.executionId}" has no single action 5 awaiting approval: awaiting now: tracker.create_issue (seq 1).`,
  });
  assert.equal(load(f.data).ran.create_issue, undefined, 'nothing ran');
  const done = await runtime.approve({ executionId: paused.executionId, seq: 1 });
  assert.equal(done.status, 'completed');
  assert.equal(load(f.data).ran.create_issue, 1);
});

test('execute({ idempotencyKey }): started once; a retry answers in progress, then the recorded outcome', async () => {
  const f = files();
  let release;
  const gate = new Promise((r) => { release = r; });
  const tracker = new Tracker(f.data, { slow: { description: 'slow', execute: () => gate } });
  const runtime = createCodemodeRuntime({ executor, connectors: [tracker], ...f.store });
  const code = 'async () => { await tracker.slow(); return (await tracker.list_issues()).length; }';
  const first = runtime.execute({ code, idempotencyKey: 'order-17' });
  await new Promise((r) => setTimeout(r, 200));
  const during = await runtime.execute({ code, idempotencyKey: 'order-17' });
  assert.equal(during.status, 'running');
  assert.equal(during.inProgress, true);
  release('ok');
  const done = await first;
  assert.equal(done.status, 'completed');
  assert.equal(during.executionId, done.executionId);
  const again = await runtime.execute({ code, idempotencyKey: 'order-17' });
  assert.equal(again.replayed, true);
  assert.equal(again.executionId, done.executionId);
  assert.equal(again.result, 1);
  assert.equal(load(f.data).ran.list_issues, 1, 'the run was not started twice');
  assert.equal((await runtime.executions()).length, 1);
  await assert.rejects(runtime.execute({ code, idempotencyKey: '' }), /idempotencyKey/);
});

// An executor whose first run of a pass fails the way a lost engine does.
function flakyExecutor(failures) {
  let left = failures;
  return {
    execute(...args) {
      if (left > 0) {
        left--;
        return Promise.reject(new CodemodeExecutorError('ERR_WORKER_LOST', 'this execution\'s engine process died: killed by signal 9 (SIGKILL)'));
      }
      return executor.execute(...args);
    },
  };
}

// FINDING (fixed): an engine lost during an approve stored ERR_WORKER_LOST as the run's outcome,
// and approving again was refused (the approved action never ran).
test('a machinery fault during an approve keeps the run: the pass is retried and the approved action runs once', async () => {
  const f = files();
  const bank = () => new Bank(f.ledger);
  const runtime = createCodemodeRuntime({ executor, connectors: [bank()], ...f.store });
  const paused = await runtime.execute({ code: 'async () => { await bank.pay({ memo: "a" }); await bank.wire({ memo: "w" }); return "done"; }' });
  assert.equal(paused.status, 'paused');
  const flaky = createCodemodeRuntime({ executor: flakyExecutor(1), connectors: [bank()], ...f.store });
  const done = await flaky.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual(readLedger(f.ledger).filter((r) => r.op === 'effect').map((r) => r.memo), ['a', 'w']);
  // Faults on every retry: the run is kept for recover(), not ended.
  const second = await runtime.execute({ code: 'async () => { await bank.pay({ memo: "b" }); await bank.wire({ memo: "x" }); return "two"; }' });
  const broken = createCodemodeRuntime({ executor: flakyExecutor(10), connectors: [bank()], ...f.store });
  const interrupted = await broken.approve({ executionId: second.executionId, seq: second.pending[0].seq });
  assert.equal(interrupted.status, 'error');
  assert.equal(interrupted.interrupted, 'ERR_WORKER_LOST');
  assert.equal((await runtime.execution(second.executionId)).status, 'running');
  const [recovered] = await runtime.recover();
  assert.equal(recovered.status, 'completed');
  assert.equal(recovered.result, 'two');
  const memos = readLedger(f.ledger).filter((r) => r.op === 'effect').map((r) => r.memo);
  assert.deepEqual(memos, ['a', 'w', 'b', 'x'], 'every action ran exactly once');
});

test('a call in doubt pauses the run for a person unless its tool is idempotent; rollback never hides one', async () => {
  const f = files();
  // A pass that dies between the effect and its record: simulated by a tool that never
  // returns, in a runtime whose lease is short and then abandoned.
  const ledgerBank = new Bank(f.ledger);
  const tools = ledgerBank.tools();
  let hang;
  const stuck = new Promise((r) => { hang = r; });
  class Stuck extends Bank {
    tools() {
      return { ...tools, pay: { ...tools.pay, execute: async (args, ctx) => { await tools.pay.execute(args, ctx); return stuck; } } };
    }
  }
  const dying = createCodemodeRuntime({ executor, connectors: [new Stuck(f.ledger)], ...f.store, leaseMs: 150 });
  const lost = dying.execute({ code: 'async () => { await bank.transfer({ memo: "t" }); await bank.pay({ memo: "p" }); return 1; }' });
  // Wait for the effect of pay, then stop the pass renewing its lease by ending its executor
  // run the hard way: the test drops the pass (its promise is never awaited to the end).
  while (!readLedger(f.ledger).some((r) => r.memo === 'p')) await new Promise((r) => setTimeout(r, 5));
  const [running] = await dying.executions();
  // Make the holder look dead: its lease is cleared as a dead process's would be.
  await nativeStore(f.store).release('default', running.id, running.owner);
  const survivor = createCodemodeRuntime({ executor, connectors: [new Bank(f.ledger)], ...f.store });
  const [outcome] = await survivor.recover();
  assert.equal(outcome.status, 'paused', JSON.stringify(outcome));
  const [doubt] = outcome.pending;
  assert.equal(doubt.inDoubt, true);
  assert.equal(doubt.method, 'pay');
  // transfer (idempotent, applied) is replayed; pay is not re-run.
  assert.deepEqual(readLedger(f.ledger).filter((r) => r.op === 'effect').map((r) => r.memo), ['t', 'p']);
  // Rolling back now reverts the call in doubt too, so the run can say rolled_back.
  await survivor.rollback({ executionId: running.id });
  const after = await survivor.execution(running.id);
  assert.equal(after.status, 'rolled_back');
  assert.deepEqual(readLedger(f.ledger).filter((r) => r.op === 'revert').map((r) => r.memo).sort(), ['p', 't']);
  // The dropped pass finally returns: its late result does not undo the rollback.
  hang({ memo: 'p', done: true });
  const late = await lost;
  assert.equal(late.status, 'error');
  const final = await survivor.execution(running.id);
  assert.equal(final.status, 'rolled_back');
  assert.deepEqual(final.log.map((e) => e.state), ['reverted', 'reverted']);
});

test('an engine process killed during an approve: the run is kept, retried, and its approved action runs once', async () => {
  const f = files();
  const engine = new IsolateExecutor({ isolation: 'process', workers: 1 });
  try {
    let killed = false;
    // wire's execute kills the engine that runs the program, once, before its effect.
    class Killer extends Bank {
      tools() {
        const tools = super.tools();
        const wire = tools.wire.execute;
        return {
          ...tools,
          wire: {
            ...tools.wire,
            execute: async (args, ctx) => {
              if (!killed) {
                killed = true;
                for (const pid of engine.stats().enginePids) process.kill(pid, 'SIGKILL');
                await new Promise((r) => setTimeout(r, 100));
              }
              return wire(args, ctx);
            },
          },
        };
      }
    }
    const runtime = createCodemodeRuntime({ executor: engine, connectors: [new Killer(f.ledger)], ...f.store });
    const paused = await runtime.execute({ code: 'async () => { await bank.pay({ memo: "a" }); await bank.wire({ memo: "w" }); await bank.pay({ memo: "b" }); return "done"; }' });
    assert.equal(paused.status, 'paused');
    const done = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
    assert.equal(killed, true);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(readLedger(f.ledger).filter((r) => r.op === 'effect').map((r) => r.memo), ['a', 'w', 'b']);
  } finally {
    await engine.dispose();
  }
});

test('two processes approving the same run at jittered moments: one runs it, the other is refused, the action runs once', async () => {
  const { spawn } = require('node:child_process');
  const approveIn = (f, id, seq, delayMs) => new Promise((resolve) => {
    const source = `
      const { IsolateExecutor, createCodemodeRuntime } = require('./lib/index.js');
      const { Bank } = require('./__test__/fixtures/bank.js');
      const executor = new IsolateExecutor({ workers: 1 });
      const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(${JSON.stringify(f.ledger)})], ...${JSON.stringify(f.store)} });
      setTimeout(() => runtime.approve({ executionId: ${JSON.stringify(id)}, seq: ${seq} })
        .then((o) => { console.log(JSON.stringify(o)); return executor.dispose(); }), ${delayMs});`;
    const child = spawn(process.execPath, ['-e', source], { cwd: path.join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('exit', () => resolve(JSON.parse(out.trim().split('\n').pop())));
  });
  for (let round = 0; round < 3; round++) {
    const f = files();
    const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(f.ledger)], ...f.store });
    const paused = await runtime.execute({ code: 'async () => { await bank.wire({ memo: "w" }); return "done"; }' });
    const seq = paused.pending[0].seq;
    const outcomes = await Promise.all([approveIn(f, paused.executionId, seq, Math.random() * 40), approveIn(f, paused.executionId, seq, Math.random() * 40)]);
    const completed = outcomes.filter((o) => o.status === 'completed');
    assert.equal(completed.length, 1, JSON.stringify(outcomes));
    const refused = outcomes.find((o) => o.status !== 'completed');
    assert.match(refused.error, /is not paused \(status: (running|completed)\)|still held by the pass/);
    assert.equal((await runtime.execution(paused.executionId)).status, 'completed');
    assert.equal(readLedger(f.ledger).filter((r) => r.op === 'effect').length, 1);
  }
});

test('recoverEveryMs takes up an orphaned run on its own; leaseMs, recoverEveryMs, maxExecutions and durability are validated', async () => {
  const f = files();
  // A SQLite file asked for full durability (a PostgreSQL server has its own).
  const durable = KIND === 'sqlite' ? { durability: 'full' } : {};
  const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(f.ledger)], ...f.store, ...durable });
  const paused = await runtime.execute({ code: 'async () => { await bank.wire({ memo: "w" }); await bank.pay({ memo: "p" }); return "done"; }' });
  // Approved in a process that died right after: the run is running and held by nobody.
  const store = nativeStore(f.store);
  const resumed = await store.resume('default', paused.executionId, { owner: 'gone/1/x', until: Date.now() + 60_000 }, paused.pending[0].seq);
  assert.equal(resumed.kind, 'resumed');
  assert.equal(await store.release('default', paused.executionId, 'gone/1/x'), true);
  const watcher = createCodemodeRuntime({ executor, connectors: [new Bank(f.ledger)], ...f.store, recoverEveryMs: 100 });
  try {
    let status;
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await runtime.execution(paused.executionId)).status;
    }
    assert.equal(status, 'completed');
    assert.deepEqual(readLedger(f.ledger).filter((r) => r.op === 'effect').map((r) => r.memo), ['w', 'p']);
  } finally {
    watcher.close();
  }
  for (const [options, pattern] of [
    [{ leaseMs: 5 }, /leaseMs must be an integer between 100 and 3600000 \(got 5\)/],
    [{ recoverEveryMs: 1.5 }, /recoverEveryMs must be an integer of at least 100 ms/],
    [{ recoverEvery: 100, recoverEveryMs: 100 }, /recoverEvery is the old name of recoverEveryMs; give only recoverEveryMs/],
    [{ durability: 'fast' }, /durability must be "normal" or "full" \(got "fast"\)/],
    [{ maxExecutions: -1 }, /maxExecutions must be an integer of at least 0 \(got -1\)/],
    [{ maxExecutions: 2.5 }, /maxExecutions must be an integer of at least 0 \(got 2.5\)/],
  ]) {
    assert.throws(() => createCodemodeRuntime({ executor, connectors: [], path: path.join(f.dir, 'options.db'), ...options }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && pattern.test(e.message));
  }
});

test("recoverEvery, the option's old name, still works and warns once that it is now recoverEveryMs", async () => {
  const f = files();
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  const runtimes = [];
  try {
    for (let i = 0; i < 2; i++) {
      runtimes.push(createCodemodeRuntime({ executor, connectors: [new Bank(f.ledger)], ...f.store, recoverEvery: 60_000 }));
    }
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
    for (const runtime of runtimes) runtime.close();
  }
  const renamed = warnings.filter((w) => w.code === 'CODEMODE_RENAMED_OPTION');
  assert.equal(renamed.length, 1, 'one warning per process, not per runtime');
  assert.equal(renamed[0].name, 'DeprecationWarning');
  assert.match(renamed[0].message, /option recoverEvery is now named recoverEveryMs/);
});
