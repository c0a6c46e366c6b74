'use strict';
// createCodemodeRuntime({ onEvent }): a durable run's pause, approval, rejection, rollback and
// outcome, and the run events of each of its passes, all naming the execution; a throwing
// handler changes nothing.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { Tracker, load } = require('../fixtures/tracker.js');
const { storeOptions } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

function setup(onEvent) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-events-'));
  const dbFile = path.join(dir, 'tracker.json');
  const tracker = new Tracker(dbFile);
  const runtime = createCodemodeRuntime({ executor, connectors: [tracker], onEvent, ...storeOptions(dir) });
  return { runtime, dbFile };
}

const CODE = `async () => {
  const issues = await tracker.list_issues();
  console.log("issues", issues.length);
  return tracker.create_issue({ title: "second" });
}`;

test('pause, approve, complete and roll back: each an event, with the passes\' run events', async () => {
  const events = [];
  const { runtime, dbFile } = setup((e) => events.push(e));
  const paused = await runtime.execute({ code: CODE });
  assert.equal(paused.status, 'paused');
  const id = paused.executionId;
  const firstPass = events.splice(0);
  assert.ok(firstPass.every((e) => e.executionId === id), 'every event names the execution');
  const types = firstPass.map((e) => e.type);
  assert.deepEqual(types.filter((t) => t.startsWith('run.') || t.startsWith('execution.')), ['run.queued', 'run.started', 'run.ended', 'execution.paused']);
  const calls = firstPass.filter((e) => e.type === 'tool.ended');
  assert.deepEqual(calls.map((e) => [e.provider, e.tool, e.paused === true]), [['tracker', 'list_issues', false], ['tracker', 'create_issue', true]]);
  assert.deepEqual(firstPass.at(-1).pending, [{ seq: 1, connector: 'tracker', method: 'create_issue' }]);

  const done = await runtime.approve({ executionId: id, seq: 1 });
  assert.equal(done.status, 'completed');
  const secondPass = events.splice(0);
  assert.equal(secondPass[0].type, 'execution.approved');
  assert.equal(secondPass[0].seq, 1);
  assert.equal(secondPass.at(-1).type, 'execution.completed');
  assert.ok(secondPass.every((e) => e.executionId === id));
  const runIds = new Set(secondPass.filter((e) => e.type.startsWith('run.')).map((e) => e.runId));
  assert.equal(runIds.size, 1, 'the approval ran one pass');
  assert.ok(!runIds.has(firstPass[0].runId), 'a new run');
  assert.equal(load(dbFile).issues.length, 2);

  assert.deepEqual(await runtime.rollback({ executionId: id }), { reverted: 1, leftInForce: [], calls: [{ seq: 1, connector: 'tracker', method: 'create_issue', fate: 'reverted' }, { seq: 0, connector: 'tracker', method: 'list_issues', fate: 'no_revert' }] });
  assert.deepEqual(events.splice(0).map((e) => [e.type, e.executionId, e.reverted, e.leftInForce]), [['execution.rolledBack', id, 1, 0]]);
});

test('reject and a failed run are events; a throwing handler changes nothing', async () => {
  let thrown = 0;
  const events = [];
  const { runtime } = setup((e) => { events.push(e); thrown++; throw new Error('handler failed'); });
  const paused = await runtime.execute({ code: CODE });
  assert.equal(paused.status, 'paused');
  assert.equal(await runtime.reject({ executionId: paused.executionId, seq: 1 }), true);
  assert.deepEqual(events.at(-1), { type: 'execution.rejected', at: events.at(-1).at, executionId: paused.executionId, seq: 1 });
  const failed = await runtime.execute({ code: 'async () => { throw new Error("boom"); }' });
  assert.equal(failed.status, 'error');
  assert.equal(events.at(-1).type, 'execution.failed');
  assert.equal(events.at(-1).error, failed.error);
  assert.equal(thrown, events.length);
});
