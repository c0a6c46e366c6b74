'use strict';
// Fault codes: one list (src/error.rs ErrorCode::ALL), the same in lib/errors.js; errors thrown
// by the native layer (options, store) carry `code` themselves, not inside their message.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { errorCodes, NativeStore, boundTable } = require('../../binding.js');
const { CODES, CodemodeExecutorError } = require('../../lib/errors.js');
const { IsolateExecutor } = require('../helpers.js');

test('lib/errors.js lists exactly the native fault codes', () => {
  assert.deepEqual(Object.values(CODES).sort(), [...errorCodes()].sort());
});

test('an out-of-range bound is refused natively with its code and the range from the table', () => {
  const workers = boundTable().find((b) => b.name === 'workers');
  assert.throws(() => new IsolateExecutor({ workers: workers.max + 1 }), (e) => {
    assert.ok(e instanceof CodemodeExecutorError);
    assert.equal(e.code, 'ERR_INVALID_ARGUMENT');
    assert.equal(e.message, `workers must be an integer between ${workers.min} and ${workers.max} (got ${workers.max + 1})`);
    return true;
  });
  assert.throws(() => new IsolateExecutor({ limits: { maxToolCalls: 0 } }),
    { code: 'ERR_INVALID_ARGUMENT', message: 'limits.maxToolCalls must be an integer between 1 and 4294967295 (got 0)' });
  assert.throws(() => new IsolateExecutor({ timeout: '5s' }),
    { code: 'ERR_INVALID_ARGUMENT', message: 'timeout must be a number (got string 5s)' });
});

test('a per-run override out of range rejects the run with ERR_INVALID_ARGUMENT, checked once natively', async () => {
  const ex = new IsolateExecutor({ workers: 1 });
  try {
    await assert.rejects(ex.execute({ code: 'async () => 1', timeout: 0 }),
      { code: 'ERR_INVALID_ARGUMENT', message: 'timeout must be a number of milliseconds between 1 and 86400000 (got 0)' });
    await assert.rejects(ex.execute({ code: 'async () => 1', memoryLimitMb: 16.5 }),
      { code: 'ERR_INVALID_ARGUMENT', message: /memoryLimitMb must be an integer between 16 and 16384/ });
    assert.equal((await ex.execute({ code: 'async () => 2', timeout: 5000, memoryLimitMb: 32 })).result, 2);
  } finally {
    await ex.dispose();
  }
});

test('store failures carry ERR_STORE; a missing execution carries ERR_INVALID_ARGUMENT', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-errors-'));
  try {
    const blocker = path.join(dir, 'file');
    fs.writeFileSync(blocker, 'not a directory');
    // The store's directory cannot be created under a plain file.
    assert.throws(() => new NativeStore(path.join(blocker, 'sub', 'runtime.db')), (e) => {
      assert.equal(e.code, 'ERR_STORE');
      assert.match(e.message, /^codemode store: cannot create /);
      return true;
    });
    const store = new NativeStore(':memory:');
    await assert.rejects(store.recordResult('rt', 'nope', 0, null, null), { code: 'ERR_INVALID_ARGUMENT', message: 'No log entry at step 0' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
