'use strict';
// Crash safety of durable runs (issue 13), judged on the bank connector's fsynced ledger, not on
// what the runtime reports. Each trial starts a child process that runs a durable execution
// (pay, transfer, wire with approval, pay) and approves it; the child is killed with SIGKILL at
// a chosen point (just before or after an effect, at the pause, while its engine starts) or at a
// random moment; then this process recovers the file with the public API, playing the person
// for what waits (approvals, calls in doubt: marked done if the ledger shows their effect,
// retried otherwise) and rolling back every third run.
//
// Must hold over every trial: no effect applied twice, no run left non-terminal, no approval
// lost (an approval accepted before the kill is not asked for again), no `rolled_back` run with
// an effect in force, and every completed run has each of its four effects in force once.
//
// CODEMODE_CRASH_TRIALS=N (default 30 per isolation mode) for longer runs.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { Bank, readLedger, inForce } = require('../fixtures/bank.js');
const { storeOptions } = require('./stores.js');

const TRIALS = Number(process.env.CODEMODE_CRASH_TRIALS || 30);
const WORKER = path.join(__dirname, '..', 'fixtures', 'bank-worker.js');
const MEMOS = ['p1', 't1', 'w1', 'p2'];
const CHOSEN = ['STARTED', 'BEFORE p1', 'EFFECT p1', 'EFFECT t1', 'PAUSED', 'BEFORE w1', 'EFFECT w1', 'EFFECT p2'];

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

// Runs the worker and kills it at `point` (a marker line) or after `delayMs`; resolves when it
// is gone, with what it printed.
function runAndKill(store, ledgerFile, { point, delayMs }) {
  return new Promise((resolve) => {
    const isolation = process.env.CODEMODE_EXECUTOR_ISOLATION || 'process';
    const child = spawn(process.execPath, [WORKER, JSON.stringify(store), ledgerFile, isolation], {
      env: { ...process.env, BANK_MARKERS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let killed = false;
    const kill = () => { if (!killed) { killed = true; child.kill('SIGKILL'); } };
    child.stdout.on('data', (d) => {
      out += d;
      if (point !== undefined && out.split('\n').some((line) => line === point || line.startsWith(`${point} `))) kill();
    });
    child.stderr.on('data', () => {});
    const timer = delayMs === undefined ? undefined : setTimeout(kill, delayMs);
    const guard = setTimeout(kill, 20_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(guard);
      resolve({ out, code, signal });
    });
  });
}

async function settle(runtime, ledgerFile, verdict) {
  for (let round = 0; round < 8; round++) {
    await runtime.recover();
    const open = (await runtime.executions()).filter((e) => e.status === 'running' || e.status === 'paused');
    if (open.length === 0) return;
    for (const execution of open) {
      if (execution.status !== 'paused') continue;
      for (const p of await runtime.pending(execution.id)) {
        if (p.inDoubt) {
          verdict.inDoubt++;
          if (inForce(ledgerFile).has(p.args.memo)) {
            await runtime.markDone({ executionId: execution.id, seq: p.seq, result: { memo: p.args.memo, done: true } });
            await runtime.approve({ executionId: execution.id });
          } else {
            await runtime.approve({ executionId: execution.id, seq: p.seq });
          }
        } else {
          if (verdict.approvedBeforeKill) verdict.lostApprovals++;
          await runtime.approve({ executionId: execution.id, seq: p.seq });
        }
      }
    }
  }
}

async function trial(i) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-crash-'));
  const store = storeOptions(dir);
  const ledgerFile = path.join(dir, 'ledger.jsonl');
  const plan = i % 2 === 0 ? { point: CHOSEN[(i / 2) % CHOSEN.length] } : { delayMs: 150 + Math.floor(Math.random() * 900) };
  const killed = await runAndKill(store, ledgerFile, plan);
  const verdict = { plan, duplicates: 0, nonTerminal: 0, lostApprovals: 0, rolledBackInForce: 0, missingEffects: 0, inDoubt: 0, approvedBeforeKill: false, status: 'none' };
  const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(ledgerFile)], ...store, leaseMs: 2000 });
  const before = (await runtime.executions())[0];
  // The child's approval was accepted (the run is running again and w1 was decided) if the
  // child got past its pause: such an approval must not be asked for again.
  verdict.approvedBeforeKill = before !== undefined && killed.out.includes('PAUSED') && before.status === 'running' && before.log.some((e) => e && e.method === 'wire');
  await settle(runtime, ledgerFile, verdict);
  const [execution] = await runtime.executions();
  if (execution !== undefined) {
    verdict.status = execution.status;
    if (execution.status === 'running' || execution.status === 'paused') verdict.nonTerminal++;
    if (execution.status === 'completed') {
      const live = inForce(ledgerFile);
      verdict.missingEffects += MEMOS.filter((m) => !live.has(m)).length;
      if (i % 3 === 0) {
        await runtime.rollback({ executionId: execution.id });
        const after = await runtime.execution(execution.id);
        verdict.status = after.status;
        if (after.status === 'rolled_back' && inForce(ledgerFile).size > 0) verdict.rolledBackInForce++;
      }
    }
  }
  const effects = readLedger(ledgerFile).filter((r) => r.op === 'effect');
  for (const memo of MEMOS) {
    const n = effects.filter((r) => r.memo === memo).length;
    if (n > 1) verdict.duplicates += n - 1;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return verdict;
}

test(`crash safety: ${TRIALS} kills of a process mid-run, recovered by another over the same store`, { timeout: 600_000 }, async () => {
  const totals = { duplicates: 0, nonTerminal: 0, lostApprovals: 0, rolledBackInForce: 0, missingEffects: 0, inDoubt: 0, approvedBeforeKill: 0 };
  const statuses = {};
  const bad = [];
  for (let i = 0; i < TRIALS; i++) {
    const v = await trial(i);
    for (const k of Object.keys(totals)) totals[k] += Number(v[k]);
    statuses[v.status] = (statuses[v.status] || 0) + 1;
    if (v.duplicates || v.nonTerminal || v.lostApprovals || v.rolledBackInForce || v.missingEffects) bad.push(v);
  }
  console.log(`crash trials: ${TRIALS}, outcomes ${JSON.stringify(statuses)}, ${JSON.stringify(totals)}`);
  assert.deepEqual(bad, [], JSON.stringify(bad, null, 1));
});
