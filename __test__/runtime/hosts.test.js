'use strict';
// Hosts that share only the store (issue 17): several processes, each with its own executor,
// start durable runs over one store and approve whatever any of them paused, all at once, racing
// each other for the same approvals. Judged on the bank connector's ledger, which every host
// appends to: each approved action ran exactly once, every run completed, and racing approvals
// were refused rather than applied twice. Over a SQLite file in the SQLite passes, over one
// PostgreSQL database in the PostgreSQL pass (stores.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runChild } = require('../helpers.js');
const { readLedger } = require('../fixtures/bank.js');
const { storeOptions } = require('./stores.js');

const HOSTS = 3;
const RUNS_PER_HOST = 4;

// One host: starts its runs (each pays, then wires with approval), then approves every pending
// action it sees, from any host, until no run of the store is open. Reports its tally.
const HOST = (store, ledger, host) => `
  const { IsolateExecutor, createCodemodeRuntime } = lib;
  const { Bank } = require(${JSON.stringify(path.join(__dirname, '..', 'fixtures', 'bank.js'))});
  const executor = new IsolateExecutor({ isolation: ${JSON.stringify(process.env.CODEMODE_EXECUTOR_ISOLATION || 'process')}, workers: 1 });
  const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(${JSON.stringify(ledger)})], ...${JSON.stringify(store)} });
  const tally = { started: 0, approved: 0, refused: 0 };
  for (let i = 0; i < ${RUNS_PER_HOST}; i++) {
    const memo = 'h${host}r' + i;
    const out = await runtime.execute({ code: 'async () => { await bank.pay({ memo: "' + memo + 'p" }); await bank.wire({ memo: "' + memo + 'w" }); return "' + memo + '"; }' });
    if (out.status !== 'paused') throw new Error('expected a pause: ' + JSON.stringify(out));
    tally.started++;
  }
  const deadline = Date.now() + 60_000;
  // Every host approves once all have started: they race for the same approvals.
  while ((await runtime.pending()).length < ${HOSTS * RUNS_PER_HOST} && (await runtime.executions(1000)).every((e) => e.status !== 'completed')) {
    if (Date.now() > deadline) throw new Error('the other hosts never started');
    await new Promise((r) => setTimeout(r, 10));
  }
  for (;;) {
    const open = (await runtime.executions(1000)).filter((e) => e.status === 'running' || e.status === 'paused');
    if (open.length === 0) break;
    if (Date.now() > deadline) throw new Error('runs still open: ' + open.map((e) => e.id + ':' + e.status).join(', '));
    const pending = await runtime.pending();
    for (const p of pending) {
      const out = await runtime.approve({ executionId: p.executionId, seq: p.seq });
      if (out.status === 'completed') tally.approved++;
      else tally.refused++;
    }
    if (pending.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  await executor.dispose();
  report(tally);
`;

test(`${HOSTS} hosts sharing one store approve each other's runs at once: every action runs exactly once`, { timeout: 180_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-hosts-'));
  const ledger = path.join(dir, 'ledger.jsonl');
  const store = storeOptions(dir);
  const results = await Promise.all(Array.from({ length: HOSTS }, (_, i) => runChild(HOST(store, ledger, i), { timeoutMs: 120_000 })));
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  const tallies = results.map((r) => r.report);
  const runs = HOSTS * RUNS_PER_HOST;
  assert.equal(tallies.reduce((n, t) => n + t.started, 0), runs);
  assert.equal(tallies.reduce((n, t) => n + t.approved, 0), runs, `each run completed by exactly one approval: ${JSON.stringify(tallies)}`);
  const effects = readLedger(ledger).filter((r) => r.op === 'effect').map((r) => r.memo).sort();
  const expected = [];
  for (let h = 0; h < HOSTS; h++) for (let i = 0; i < RUNS_PER_HOST; i++) expected.push(`h${h}r${i}p`, `h${h}r${i}w`);
  assert.deepEqual(effects, expected.sort(), 'every pay and every wire once');
  // The hosts did race: approvals of runs another host had approved first were refused.
  assert.ok(tallies.reduce((n, t) => n + t.refused, 0) > 0, `no approval was refused: ${JSON.stringify(tallies)}`);
  console.log(`hosts: ${JSON.stringify(tallies)}`);
  fs.rmSync(dir, { recursive: true, force: true });
});
