'use strict';
// Where the durable runtime keeps its state (issue 17): `path` (a SQLite file) or `store` (a
// PostgreSQL database), each with its own settings, checked when the runtime is made; and a
// database that cannot be reached is a clear, coded failure that leaves everything else working.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');

const executor = new IsolateExecutor({ workers: 1 });
test.after(() => executor.dispose());

const URL = 'postgres://codemode@127.0.0.1:1/codemode';

test('store settings are checked when the runtime is made, with ERR_INVALID_ARGUMENT and a message naming the setting', () => {
  const made = (options) => () => createCodemodeRuntime({ executor, connectors: [], ...options });
  const refused = (options, pattern) => assert.throws(made(options), (e) => e.code === 'ERR_INVALID_ARGUMENT' && pattern.test(e.message), JSON.stringify(options));
  refused({ store: 'mysql://x/y' }, /store must name a PostgreSQL database with a postgres:\/\/ or postgresql:\/\/ URL \(got "mysql:\/\/x\/y"\); a SQLite file is given as path/);
  refused({ store: 42 }, /store must be a postgres:\/\/ URL or \{ url/);
  // Credentials in a refused URL are not echoed.
  assert.throws(made({ store: { url: 'mysql://user:secret@h/db' } }), (e) => !e.message.includes('secret'));
  refused({ store: URL, path: 'x.db' }, /path applies to a SQLite file and cannot be given with store/);
  refused({ store: URL, durability: 'full' }, /durability applies to a SQLite file/);
  refused({ store: { url: URL, maxConnection: 2 } }, /has no option named maxConnection \(did you mean maxConnections\?\)/);
  refused({ store: { url: URL, maxConnections: 0 } }, /maxConnections must be an integer between 1 and 64 \(got 0\)/);
  refused({ store: { url: URL, maxConnections: 2.5 } }, /maxConnections must be an integer \(got 2.5\)/);
  refused({ store: { url: URL, connectTimeoutMs: 50 } }, /connectTimeoutMs must be an integer between 100 and 60000 \(got 50\)/);
  refused({ store: { url: URL, statementTimeoutMs: 700_000 } }, /statementTimeoutMs must be an integer between 100 and 600000 \(got 700000\)/);
  refused({ store: { url: URL, schema: 'a; DROP TABLE x' } }, /schema must be letters, digits and "_"/);
  refused({ store: { url: URL, ca: 'not a certificate' } }, /ca must be PEM certificates/);
  refused({ store: { url: `${URL}?sslmode=disable`, ca: '-----BEGIN CERTIFICATE-----' } }, /ca is given but the URL says sslmode=disable/);
  refused({ store: 'postgres://u@h:notaport/db' }, /not a PostgreSQL URL/);
  // Good settings make a runtime, and connect to nothing yet.
  for (const store of [URL, `postgresql://u@127.0.0.1:1/db`, `${URL}?sslmode=require`, { url: URL, maxConnections: 8, connectTimeoutMs: 100, statementTimeoutMs: 100, schema: 'tenant_1' }]) {
    assert.doesNotThrow(made({ store }));
  }
});

test('a database that cannot be reached: every operation rejects with ERR_STORE_UNAVAILABLE soon, and other runtimes go on', async () => {
  const unreachable = createCodemodeRuntime({ executor, connectors: [], store: { url: URL, connectTimeoutMs: 500 } });
  const started = Date.now();
  await assert.rejects(unreachable.execute({ code: 'async () => 1' }), (e) => e.code === 'ERR_STORE_UNAVAILABLE' && /PostgreSQL is unavailable/.test(e.message));
  await assert.rejects(unreachable.executions(), { code: 'ERR_STORE_UNAVAILABLE' });
  await assert.rejects(unreachable.pending(), { code: 'ERR_STORE_UNAVAILABLE' });
  await assert.rejects(unreachable.approve({ executionId: 'exec_x', seq: 0 }), { code: 'ERR_STORE_UNAVAILABLE' });
  const took = Date.now() - started;
  assert.ok(took < 5000, `four operations against a refusing address took ${took} ms`);
  // A runtime over a SQLite file, and the executor, are untouched.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-store-options-'));
  const local = createCodemodeRuntime({ executor, connectors: [], path: path.join(dir, 'runtime.db') });
  assert.equal((await local.execute({ code: 'async () => 7' })).result, 7);
  assert.equal((await executor.execute({ code: 'async () => 8' })).result, 8);
  fs.rmSync(dir, { recursive: true, force: true });
});
