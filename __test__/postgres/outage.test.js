'use strict';
// The durable runtime over a PostgreSQL server that goes away (issue 17), judged on the bank
// connector's ledger: a server that stops during a pass interrupts the pass without ending the
// run or writing half of anything, and the run is finished by recover() once the server is back,
// each effect once; a server that ends the store's connections (a restart, a failover) is not
// noticed at all. Runs its own throwaway cluster (scripts/postgres.js), which it stops and
// starts; only in npm test's PostgreSQL pass.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { Bank, readLedger } = require('../fixtures/bank.js');
const { startPostgres } = require('../../scripts/postgres.js');

const executor = new IsolateExecutor({ workers: 1 });
let pg;
test.before(async () => {
  pg = await startPostgres({ own: true });
  if (pg.skipped) throw new Error(`these tests need a PostgreSQL cluster of their own: ${pg.skipped}`);
});
test.after(async () => {
  await executor.dispose();
  if (pg && !pg.skipped) pg.stop();
});

// A bank whose `transfer` of memo `at` runs `then()` after its effect, before it returns.
function bankWith(ledger, at, then) {
  const bank = new Bank(ledger);
  const tools = bank.tools();
  return new (class extends Bank {
    tools() {
      return {
        ...tools,
        transfer: {
          ...tools.transfer,
          execute: async (args, ctx) => {
            const out = await tools.transfer.execute(args, ctx);
            if (args.memo === at) then();
            return out;
          },
        },
      };
    }
  })(ledger);
}

const PROGRAM = 'async () => { await bank.transfer({ memo: "t1" }); await bank.transfer({ memo: "cut" }); await bank.pay({ memo: "p" }); return "done"; }';
const effects = (ledger) => readLedger(ledger).filter((r) => r.op === 'effect').map((r) => r.memo);

test('the server stops mid-pass: the pass is interrupted, the run kept, and recover() finishes it once the server is back, each effect once', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-outage-'));
  const ledger = path.join(dir, 'ledger.jsonl');
  const store = { url: pg.url, schema: 'outage_stop', connectTimeoutMs: 1000 };
  let stopped = false;
  const runtime = createCodemodeRuntime({
    executor,
    connectors: [bankWith(ledger, 'cut', () => { if (!stopped) { stopped = true; pg.halt(); } })],
    store,
    leaseMs: 300,
  });
  const outcome = await runtime.execute({ code: PROGRAM });
  assert.equal(outcome.status, 'error', JSON.stringify(outcome));
  assert.equal(outcome.interrupted, 'ERR_STORE_UNAVAILABLE');
  assert.match(outcome.error, /^The pass was interrupted \(ERR_STORE_UNAVAILABLE: codemode store: PostgreSQL is unavailable: .*\); the run was kept and can be resumed by recover\(\)$/);
  assert.deepEqual(effects(ledger), ['t1', 'cut'], 'the program stopped at the call whose result could not be recorded');
  await assert.rejects(runtime.executions(), { code: 'ERR_STORE_UNAVAILABLE' });

  pg.restart();
  // As the server left it: still running, t1 recorded, cut decided but its result unknown.
  const [kept] = await runtime.executions();
  assert.equal(kept.id, outcome.executionId);
  assert.equal(kept.status, 'running');
  assert.deepEqual(kept.log.map((e) => [e.method, e.args.memo, e.state]), [['transfer', 't1', 'applied'], ['transfer', 'cut', 'executing']]);
  await new Promise((r) => setTimeout(r, 400)); // the interrupted pass's lease lapses
  const [recovered] = await runtime.recover();
  assert.equal(recovered.status, 'completed', JSON.stringify(recovered));
  assert.equal(recovered.result, 'done');
  // transfer is idempotent: retried with the same key, it did not apply twice.
  assert.deepEqual(effects(ledger), ['t1', 'cut', 'p']);
  runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the server ends the store\'s connections mid-pass (a restart, a failover): the pass goes on unaware', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-outage-'));
  const ledger = path.join(dir, 'ledger.jsonl');
  let ended = 0;
  const endConnections = () => {
    const sql = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'codemode-executor'";
    const out = spawnSync('psql', ['-X', '-At', '-c', sql, pg.url], { encoding: 'utf8' });
    ended = Number(out.stdout);
  };
  const runtime = createCodemodeRuntime({ executor, connectors: [bankWith(ledger, 'cut', endConnections)], store: { url: pg.url, schema: 'outage_end' } });
  const outcome = await runtime.execute({ code: PROGRAM });
  assert.ok(ended >= 1, `connections ended: ${ended}`);
  assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
  assert.equal(outcome.result, 'done');
  assert.deepEqual(effects(ledger), ['t1', 'cut', 'p']);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a server that is down when a run starts: execute rejects with ERR_STORE_UNAVAILABLE and starts nothing; once it is back, runs go on', async () => {
  const runtime = createCodemodeRuntime({ executor, connectors: [], store: { url: pg.url, schema: 'outage_down', connectTimeoutMs: 500 } });
  assert.equal((await runtime.execute({ code: 'async () => 1' })).result, 1);
  pg.halt();
  try {
    await assert.rejects(runtime.execute({ code: 'async () => 2' }), { code: 'ERR_STORE_UNAVAILABLE' });
  } finally {
    pg.restart();
  }
  assert.equal((await runtime.execute({ code: 'async () => 3' })).result, 3);
  assert.deepEqual((await runtime.executions()).map((e) => e.result), [3, 1], 'the refused run left no trace');
});
