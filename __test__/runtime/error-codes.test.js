'use strict';
// Every fault of the durable runtime carries a stable `code` (docs/guides/failures.md:
// "messages may change; codes never do"), as a CodemodeExecutorError, with the contract's
// message unchanged (docs/cloudflare-compat.md §16): bad options and arguments are
// ERR_INVALID_ARGUMENT, a rollback that leaves something in force (or finds the run held by a
// pass) ERR_ROLLBACK_INCOMPLETE.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector, CodemodeExecutorError, ErrorCodes } = require('../../lib/index.js');
const { Tracker } = require('../fixtures/tracker.js');
const { storeOptions } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

function setup(extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-codes-'));
  const tracker = new Tracker(path.join(dir, 'tracker.json'), extra);
  return { tracker, runtime: createCodemodeRuntime({ executor, connectors: [tracker], ...storeOptions(dir) }) };
}

/** An assert.throws/rejects matcher: a CodemodeExecutorError with `code` and `message`. */
function fault(code, message) {
  return (error) => {
    assert.ok(error instanceof CodemodeExecutorError, `a CodemodeExecutorError, not ${error && error.constructor && error.constructor.name}: ${error && error.message}`);
    assert.equal(error.code, code);
    if (message instanceof RegExp) assert.match(error.message, message);
    else if (message !== undefined) assert.equal(error.message, message);
    return true;
  };
}

class Named extends CodemodeConnector {
  constructor(n) { super(); this.n = n; }
  name() { return this.n; }
  tools() { return {}; }
}

test('connector names, the runtime name and the executor: ERR_INVALID_ARGUMENT with the contract\'s messages', () => {
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [new Named('codemode')], path: ':memory:' }),
    fault(ErrorCodes.INVALID_ARGUMENT, 'Connector name "codemode" is reserved for the codemode platform SDK.'));
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [new Named('a'), new Named('a')], path: ':memory:' }),
    fault(ErrorCodes.INVALID_ARGUMENT, 'Duplicate connector name "a" — each connector needs a unique namespace (pass a distinct `name` option).'));
  const bad = createCodemodeRuntime({ executor, connectors: [], name: 'no spaces', path: ':memory:' });
  assert.throws(() => bad.tool(), fault(ErrorCodes.INVALID_ARGUMENT, 'Invalid codemode runtime name "no spaces" — use letters, digits, "_", "-" or "."'));
  assert.throws(() => createCodemodeRuntime({ connectors: [], path: ':memory:' }),
    fault(ErrorCodes.INVALID_ARGUMENT, 'createCodemodeRuntime: options.executor must implement execute(code, providers, options)'));
});

test('execute({ code, idempotencyKey }) with a bad code or key rejects with ERR_INVALID_ARGUMENT', async () => {
  const { runtime } = setup();
  await assert.rejects(runtime.execute({}), fault(ErrorCodes.INVALID_ARGUMENT, 'execute({ code }): code must be a string'));
  for (const idempotencyKey of ['', 'k'.repeat(1025), 42, null]) {
    await assert.rejects(runtime.execute({ code: 'async () => 1', idempotencyKey }),
      fault(ErrorCodes.INVALID_ARGUMENT, 'execute({ idempotencyKey }): the key must be a non-empty string of at most 1024 characters'));
  }
  assert.equal((await runtime.execute({ code: 'async () => 1', idempotencyKey: 'k'.repeat(1024) })).status, 'completed');
});

test('saveSnippet from an execution that does not exist: ERR_INVALID_ARGUMENT', async () => {
  const { runtime } = setup();
  await assert.rejects(runtime.saveSnippet('s', { executionId: 'nope' }), fault(ErrorCodes.INVALID_ARGUMENT, 'No execution "nope" to save from'));
});

test('a rollback that leaves an effect in force rejects with ERR_ROLLBACK_INCOMPLETE, the contract\'s message unchanged', async () => {
  const { runtime } = setup();
  const done = await runtime.execute({ code: 'async () => tracker.label({ id: 1 })' });
  assert.equal(done.status, 'completed');
  await assert.rejects(runtime.rollback({ executionId: done.executionId }),
    fault(ErrorCodes.ROLLBACK_INCOMPLETE, 'Rollback reverted 0 action(s) but 1 failed: tracker.label: labels cannot be removed'));
});

test('a rollback of a run a pass holds rejects with ERR_ROLLBACK_INCOMPLETE', async () => {
  let release;
  let entered;
  const inside = new Promise((resolve) => { entered = resolve; });
  const { runtime } = setup({
    wait: { description: 'Waits', execute: () => { entered(); return new Promise((resolve) => { release = resolve; }); } },
  });
  const running = runtime.execute({ code: 'async () => tracker.wait()' });
  await inside;
  const [run] = await runtime.executions();
  try {
    await assert.rejects(runtime.rollback({ executionId: run.id }),
      fault(ErrorCodes.ROLLBACK_INCOMPLETE, `Execution "${run.id}" is held by a pass in progress; roll it back once that pass has ended.`));
  } finally {
    release('done');
  }
  assert.equal((await running).status, 'completed');
});

test('a connector that is not one (no name() method): ERR_INVALID_ARGUMENT naming its place', () => {
  for (const connectors of [[{}], [new Named('a'), null], [new Named('a'), { name: 'b' }]]) {
    const at = connectors.length - 1;
    assert.throws(() => createCodemodeRuntime({ executor, connectors, path: ':memory:' }),
      fault(ErrorCodes.INVALID_ARGUMENT, `createCodemodeRuntime: connectors[${at}] must be a CodemodeConnector (it has no name() method)`));
  }
});

test('markDone with a result, or saveSnippet with an input schema, too large to record: ERR_INVALID_ARGUMENT, the message unchanged', async () => {
  const { runtime } = setup();
  const done = await runtime.execute({ code: 'async () => 1' });
  assert.equal(done.status, 'completed');
  const big = 'x'.repeat(1_000_001);
  await assert.rejects(runtime.markDone({ executionId: done.executionId, seq: 0, result: big }),
    fault(ErrorCodes.INVALID_ARGUMENT, /^The result given for step 0 is too large to record durably \(1000003 bytes > 1000000 byte limit\)/));
  await assert.rejects(runtime.saveSnippet('s', { executionId: done.executionId, inputSchema: { big } }),
    fault(ErrorCodes.INVALID_ARGUMENT, /^The snippet input schema is too large to record durably/));
  assert.deepEqual(await runtime.snippets(), []);
});

test('the store\'s own faults are CodemodeExecutorErrors too: a file that cannot be opened (ERR_STORE), PostgreSQL settings out of range (ERR_INVALID_ARGUMENT)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-codes-'));
  // A path under a regular file: no directory can be made there.
  fs.writeFileSync(path.join(dir, 'plain'), '');
  const unopenable = createCodemodeRuntime({ executor, connectors: [], path: path.join(dir, 'plain', 'runtime.db') });
  await assert.rejects(unopenable.executions(), fault(ErrorCodes.STORE));
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [], store: { url: 'postgres://nobody@127.0.0.1:1/none', maxConnections: 0 } }),
    fault(ErrorCodes.INVALID_ARGUMENT, /maxConnections must be an integer between 1 and 64 \(got 0\)/));
});
