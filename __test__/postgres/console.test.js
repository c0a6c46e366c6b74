'use strict';
// The standalone console over PostgreSQL (`codemode-executor console --store postgres://…
// --schema s`), in npm test's PostgreSQL pass: it lists the application's runs from the
// database, records an approval there, and the application's runtime runs the approved call
// when it recovers. Over HTTP only (the page itself is tested in __test__/console).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { IsolateExecutor, CodemodeConnector, createCodemodeRuntime } = require('../../lib/index.js');

const BIN = path.join(__dirname, '..', '..', 'bin', 'codemode-executor.js');
const url = process.env.CODEMODE_PG_URL;

test('the standalone console over PostgreSQL: list, approve (recorded), recover (run)', { timeout: 60_000 }, async () => {
  assert.ok(url, 'CODEMODE_PG_URL names the database (npm test sets it in this pass)');
  const schema = `t_console_${process.pid}`;
  const orders = [];
  class Shop extends CodemodeConnector {
    name() { return 'shop'; }
    tools() {
      return { order: { description: 'Order', requiresApproval: true, execute: async ({ item }) => { orders.push(item); return { ordered: item }; } } };
    }
  }
  const executor = new IsolateExecutor({ isolation: 'thread', workers: 1 });
  const runtime = createCodemodeRuntime({ executor, connectors: [new Shop()], store: { url, schema }, name: 'pg-console' });
  const cli = spawn(process.execPath, [BIN, 'console', '--store', url, '--schema', schema, '--name', 'pg-console'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const paused = await runtime.execute({ code: 'async () => shop.order({ item: "tea" })' });
    assert.equal(paused.status, 'paused');
    let out = '';
    let err = '';
    cli.stderr.on('data', (d) => { err += d; });
    const base = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL from the console: ${out} ${err}`)), 20_000);
      cli.stdout.on('data', (d) => {
        out += d;
        const m = /http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\//.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        }
      });
    });
    assert.match(out, /runtime "pg-console" in postgres(ql)?:\/\/.*\(schema t_console_\d+\)/);
    assert.doesNotMatch(out, /:[^@/\s]+@/, 'no password printed');
    const overview = await (await fetch(`${base}api/overview`)).json();
    assert.equal(overview.mode, 'store');
    assert.deepEqual(overview.executions.map((e) => [e.id, e.status]), [[paused.executionId, 'paused']]);
    assert.deepEqual(overview.pending.map((p) => [p.executionId, p.seq, p.method]), [[paused.executionId, 0, 'order']]);

    const csrf = /<meta name="codemode-csrf" content="([^"]+)">/.exec(await (await fetch(base)).text())[1];
    const approved = await (await fetch(`${base}api/executions/${paused.executionId}/approve`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-codemode-csrf': csrf }, body: JSON.stringify({ seq: 0 }),
    })).json();
    assert.equal(approved.status, 'approved', JSON.stringify(approved));
    assert.deepEqual(orders, [], 'the console ran nothing');
    assert.equal((await runtime.execution(paused.executionId)).status, 'running');

    const recovered = await runtime.recover();
    assert.deepEqual(recovered.map((o) => [o.executionId, o.status]), [[paused.executionId, 'completed']]);
    assert.deepEqual(orders, ['tea']);
    const after = await (await fetch(`${base}api/executions/${paused.executionId}`)).json();
    assert.equal(after.status, 'completed');
    assert.equal(after.result, JSON.stringify({ ordered: 'tea' }, null, 2));
  } finally {
    cli.kill('SIGKILL');
    await executor.dispose();
  }
});
