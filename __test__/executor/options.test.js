'use strict';
// Option names are checked: a misspelt option fails with ERR_INVALID_ARGUMENT naming it and the
// nearest known name, instead of silently running with the default (`timeoutMs: 5000` used to
// run with 60 s). Cloudflare's own options that mean nothing on Node are accepted.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');

const refused = (name, nearest) => (e) => {
  assert.equal(e.code, 'ERR_INVALID_ARGUMENT');
  assert.match(e.message, new RegExp(`no option named ${name}\\b`));
  if (nearest) assert.match(e.message, new RegExp(`did you mean ${nearest}\\?`));
  return true;
};

test('misspelt executor options are refused with the nearest known name', () => {
  assert.throws(() => new IsolateExecutor({ timeoutMs: 5000 }), refused('timeoutMs', 'timeout'));
  assert.throws(() => new IsolateExecutor({ memoryLimit: 64 }), refused('memoryLimit', 'memoryLimitMb'));
  assert.throws(() => new IsolateExecutor({ worker: 2 }), refused('worker', 'workers'));
  assert.throws(() => new IsolateExecutor({ isolaton: 'thread' }), refused('isolaton', 'isolation'));
  assert.throws(() => new IsolateExecutor({ totallyUnknown: 1 }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && !/did you mean/.test(e.message));
});

test("Cloudflare's loader and bindings are accepted and ignored", async () => {
  const ex = new IsolateExecutor({ loader: { get() {} }, bindings: { KV: {} }, workers: 1 });
  try {
    assert.equal((await ex.execute('async () => typeof env', [])).result, 'undefined');
  } finally {
    await ex.dispose();
  }
});

test('misspelt request and handle options reject the run', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    await assert.rejects(ex.execute({ code: 'async () => 1', timout: 10 }), refused('timout', 'timeout'));
    await assert.rejects(ex.execute({ code: 'async () => 1', retainHandle: true }), refused('retainHandle', 'retainHandles'));
    const kept = await ex.execute({ code: 'async () => 1', retainHandles: true });
    await assert.rejects(kept.handle.execute('async () => 2', { timeuot: 5 }), refused('timeuot', 'timeout'));
    assert.equal((await kept.handle.execute('async () => 2', { timeout: 5000 })).result, 2);
    await kept.handle.dispose();
  } finally {
    await ex.dispose();
  }
});

test('createCodemodeRuntime refuses a misspelt option instead of writing .codemode/runtime.db', () => {
  const executor = { execute: async () => ({ result: 1 }) };
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [], stor: ':memory:' }), refused('stor'));
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [], maxExecution: 3, path: ':memory:' }), refused('maxExecution', 'maxExecutions'));
  // Cloudflare's `ctx` (the Durable Object state) is accepted and ignored.
  assert.equal(typeof createCodemodeRuntime({ executor, connectors: [], ctx: {}, path: ':memory:' }).tool, 'function');
});

test('a heartbeat timeout no longer than the interval is refused, naming both', () => {
  assert.throws(
    () => new IsolateExecutor({ heartbeatIntervalMs: 2000, heartbeatTimeoutMs: 1000 }),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /heartbeatTimeoutMs must be longer than heartbeatIntervalMs \(got 1000 and 2000\)/.test(e.message),
  );
  assert.throws(() => new IsolateExecutor({ heartbeatTimeoutMs: 500 }), /heartbeatTimeoutMs must be longer than heartbeatIntervalMs \(got 500 and 1000\)/);
});
