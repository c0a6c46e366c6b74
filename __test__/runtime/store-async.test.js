'use strict';
// The durable runtime's store never blocks the event loop (issue 17): every store operation runs
// on one of the store's own threads and answers with a promise. While another process holds the
// SQLite file's write lock (or, over PostgreSQL, a lock on the executions table), a run that needs
// the store waits, and everything else on this thread (timers, other runs' tool calls) keeps going.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { KIND, storeOptions, nativeStore } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

// A child process that takes the file's write lock (BEGIN IMMEDIATE), says so, and holds it for
// `ms` before committing. Python's sqlite3 is the other writer: a second SQLite library, as a
// second program sharing the file would be. Over PostgreSQL, psql takes a lock on the executions
// table that lets reads through but no write.
function holdWriteLock(options, ms) {
  let child;
  if (KIND === 'sqlite') {
    const script = [
      'import sqlite3, sys, time',
      'con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)',
      'con.execute("BEGIN IMMEDIATE")',
      'print("locked", flush=True)',
      'time.sleep(float(sys.argv[2]) / 1000)',
      'con.execute("COMMIT")',
    ].join('\n');
    child = spawn('python3', ['-c', script, options.path, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  } else {
    const script = [
      `SET search_path TO "${options.store.schema}";`,
      'BEGIN;',
      'LOCK TABLE cm_executions IN EXCLUSIVE MODE;',
      '\\echo locked',
      `SELECT pg_sleep(${ms / 1000});`,
      'COMMIT;',
    ].join('\n');
    child = spawn('psql', ['-q', '-X', '-v', 'ON_ERROR_STOP=1', '-f', '-', options.store.url], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin.end(script);
  }
  const locked = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => { if (String(chunk).includes('locked')) resolve(); });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the lock holder exited early (${code})`)));
  });
  const done = new Promise((resolve) => child.on('exit', resolve));
  return { locked, done };
}

test('the event loop keeps ticking while another process holds the store\'s write lock for 3 s', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-store-async-'));
  const store = storeOptions(dir);
  const runtime = createCodemodeRuntime({ executor, connectors: [], ...store });
  try {
    // The file exists with its schema before the other process locks it.
    assert.equal((await runtime.execute({ code: 'async () => 1' })).status, 'completed');
    const holder = holdWriteLock(store, 3000);
    await holder.locked;
    const lockedAt = Date.now();
    let ticks = 0;
    let last = Date.now();
    let longestGap = 0;
    const timer = setInterval(() => {
      const now = Date.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks += 1;
    }, 20);
    // Another run on the same executor, which needs no store, is served meanwhile.
    const plain = executor.execute({ code: 'async () => "served"' });
    const durable = runtime.execute({ code: 'async () => 2' });
    const served = await plain;
    const servedAfter = Date.now() - lockedAt;
    const outcome = await durable;
    const waited = Date.now() - lockedAt;
    clearInterval(timer);
    await holder.done;
    assert.equal(served.result, 'served');
    assert.ok(servedAfter < 2000, `a run that needs no store was served after ${servedAfter} ms, while the lock was held`);
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
    assert.equal(outcome.result, 2);
    assert.ok(waited >= 2500, `the durable run waited for the lock (${waited} ms)`);
    assert.ok(ticks >= 50, `the timer ticked ${ticks} times in ${waited} ms`);
    assert.ok(longestGap < 1000, `the event loop stalled for ${longestGap} ms`);
  } finally {
    runtime.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every NativeStore operation answers with a promise, and failures reject with the stable code', async () => {
  const store = nativeStore(storeOptions(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-store-async-'))));
  const pending = store.listExecutions('rt', 10);
  assert.equal(typeof pending.then, 'function');
  assert.deepEqual(await pending, []);
  await assert.rejects(store.recordResult('rt', 'nope', 0, null, null), { code: 'ERR_INVALID_ARGUMENT', message: 'No log entry at step 0' });
  // The store keeps working after a rejected operation.
  assert.equal(await store.getExecution('rt', 'nope'), null);
});

// A SQLite store has one connection; a PostgreSQL one is given one here (with more, operations
// asked for together run on whichever connection is free).
test('operations of one store connection run in the order they were asked for', async () => {
  const options = storeOptions(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-store-async-')));
  if (KIND === 'postgres') options.store.maxConnections = 1;
  const store = nativeStore(options);
  const lease = { owner: 'me/1/x', until: Date.now() + 60_000 };
  const [begun, running, released, after] = await Promise.all([
    store.begin('rt', 'exec_1', 'async () => 1', '[]', 10, lease, undefined),
    store.running('rt'),
    store.release('rt', 'exec_1', 'me/1/x'),
    store.running('rt'),
  ]);
  assert.equal(begun, null);
  assert.deepEqual(running.map((r) => [r.id, r.owner]), [['exec_1', 'me/1/x']]);
  assert.equal(released, true);
  assert.deepEqual(after.map((r) => r.owner ?? null), [null]);
});
