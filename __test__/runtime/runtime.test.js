'use strict';
// The durable runtime (docs/cloudflare-compat.md §6–§10) over a SQLite file, and over PostgreSQL in npm test's
// PostgreSQL pass (stores.js): every transition and message of §6, across passes, processes and races.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector } = require('../../lib/index.js');
const { Tracker, load } = require('../fixtures/tracker.js');
const { storeOptions } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-runtime-'));
}

function setup(extra = {}, options = {}) {
  const dir = tempDir();
  const dbFile = path.join(dir, 'tracker.json');
  const tracker = new Tracker(dbFile, extra);
  const runtime = createCodemodeRuntime({ executor, connectors: [tracker], ...storeOptions(dir), ...options });
  return { dir, dbFile, tracker, runtime, ran: () => load(dbFile).ran };
}

const READ_THEN_CREATE = `async () => {
  const issues = await tracker.list_issues();
  const made = await tracker.create_issue({ title: "second" });
  return { before: issues.length, made };
}`;

// Runs a script in a child process with this repo's library; resolves its exit and stdout.
function child(source) {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['-e', source], { cwd: path.join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => { stdout += d; });
    proc.stderr.on('data', (d) => { stderr += d; });
    proc.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('connector names and the runtime name are validated with the spec messages', () => {
  class Named extends CodemodeConnector {
    constructor(n) { super(); this.n = n; }
    name() { return this.n; }
    tools() { return {}; }
  }
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [new Named('codemode')], path: ':memory:' }),
    { message: 'Connector name "codemode" is reserved for the codemode platform SDK.' });
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [new Named('a'), new Named('a')], path: ':memory:' }),
    { message: 'Duplicate connector name "a" — each connector needs a unique namespace (pass a distinct `name` option).' });
  // The runtime name is checked lazily, at the first method that touches storage.
  const bad = createCodemodeRuntime({ executor, connectors: [], name: 'no spaces', path: ':memory:' });
  assert.throws(() => bad.tool(), { message: 'Invalid codemode runtime name "no spaces" — use letters, digits, "_", "-" or "."' });
});

test('a completed run: result, logs, calls, hooks, transformResult', async () => {
  const { tracker, runtime } = setup({}, { transformResult: (r) => ({ wrapped: r }) });
  const out = await runtime.execute({ code: 'async () => { const i = await tracker.list_issues(); console.log("n", i.length); return i.length; }' });
  assert.equal(out.status, 'completed');
  assert.match(out.executionId, /^exec_\d{16}_[0-9a-f-]{36}$/);
  assert.deepEqual(out.result, { wrapped: 1 });
  assert.deepEqual(out.logs, ['n 1']);
  assert.equal(out.calls.length, 1);
  assert.equal(out.calls[0].state, 'applied');
  assert.deepEqual(tracker.hooks, [['onPassEnd', 'completed'], ['disposeExecution', 'completed']]);
  const stored = (await runtime.executions())[0];
  assert.equal(stored.result, 1, 'the raw result is stored, not the transformed one');
  assert.equal(stored.status, 'completed');
});

test('a program error: the globals hint, no logs key, hooks with "error"', async () => {
  const { tracker, runtime } = setup();
  const out = await runtime.execute({ code: 'async () => { console.log("before"); return host.readFile("x"); }' });
  assert.equal(out.status, 'error');
  assert.match(out.error, /^Code execution failed: host is not defined/);
  assert.match(out.error, /\(the only globals available in the sandbox are: tracker, codemode\)$/);
  assert.equal('logs' in out, false);
  assert.deepEqual(tracker.hooks, [['onPassEnd', 'error'], ['disposeExecution', 'error']]);
});

test('approval: a paused run is approved from a new process over the same file; earlier calls replay', async () => {
  const { dir, dbFile, tracker, runtime, ran } = setup();
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  assert.equal(paused.status, 'paused');
  assert.deepEqual(paused.pending, [{ executionId: paused.executionId, seq: 1, connector: 'tracker', method: 'create_issue', args: { title: 'second' } }]);
  assert.deepEqual(tracker.hooks, [['onPassEnd', 'paused']], 'no dispose on pause');
  assert.deepEqual(ran(), { list_issues: 1 });
  assert.deepEqual(await runtime.pending(), paused.pending);

  const result = await child(`
    const { IsolateExecutor, createCodemodeRuntime } = require('./lib/index.js');
    const { Tracker } = require('./__test__/fixtures/tracker.js');
    (async () => {
      const executor = new IsolateExecutor({ workers: 1 });
      const runtime = createCodemodeRuntime({ executor, connectors: [new Tracker(${JSON.stringify(dbFile)})], ...${JSON.stringify(storeOptions(dir))} });
      const out = await runtime.approve({ executionId: ${JSON.stringify(paused.executionId)} });
      console.log(JSON.stringify(out));
      await executor.dispose();
    })();
  `);
  assert.equal(result.code, 0, result.stderr);
  const out = JSON.parse(result.stdout.trim().split('\n').pop());
  assert.equal(out.status, 'completed');
  assert.deepEqual(out.result, { before: 1, made: { id: 2, title: 'second' } });
  assert.deepEqual(ran(), { list_issues: 1, create_issue: 1 }, 'list_issues was replayed, not re-executed');
  // Approving again is refused: the run is no longer paused.
  const again = await runtime.approve({ executionId: paused.executionId });
  assert.deepEqual(again, { status: 'error', executionId: paused.executionId, error: `Execution "${paused.executionId}" is not paused (status: completed); only a paused run can be approved.` });
  const unknown = await runtime.approve({ executionId: 'exec_nope' });
  assert.equal(unknown.error, 'No execution "exec_nope" to resume.');
});

test('approve refuses a run whose recorded connectors are not configured', async () => {
  const { dir, runtime } = setup();
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  const bare = createCodemodeRuntime({ executor, connectors: [], ...storeOptions(dir) });
  const out = await bare.approve({ executionId: paused.executionId });
  assert.equal(out.error, `Execution "${paused.executionId}" requires connector(s) "tracker" that are not configured on this runtime.`);
  assert.equal((await runtime.pending(paused.executionId)).length, 1, 'still paused');
});

test('reject: the action is reverted, the run rejected, hooks fired; a stale reject is a no-op', async () => {
  const { tracker, runtime, ran } = setup();
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  tracker.hooks.length = 0;
  assert.equal(await runtime.reject({ executionId: paused.executionId, seq: 1 }), true);
  assert.deepEqual(tracker.hooks, [['disposeExecution', 'rejected']]);
  const [execution] = await runtime.executions();
  assert.equal(execution.status, 'rejected');
  assert.equal(execution.error, 'Action tracker.create_issue rejected by user');
  assert.equal(execution.log[1].state, 'reverted');
  assert.equal(await runtime.reject({ executionId: paused.executionId, seq: 1 }), false);
  assert.equal(ran().create_issue, undefined);
});

test('two processes racing approve and reject on one execution: exactly one outcome, applied at most once', async () => {
  for (let round = 0; round < 4; round++) {
    const { dir, dbFile, runtime, ran } = setup();
    const paused = await runtime.execute({ code: READ_THEN_CREATE });
    const common = `
      const { IsolateExecutor, createCodemodeRuntime } = require('./lib/index.js');
      const { Tracker } = require('./__test__/fixtures/tracker.js');
      const executor = new IsolateExecutor({ workers: 1 });
      const runtime = createCodemodeRuntime({ executor, connectors: [new Tracker(${JSON.stringify(dbFile)})], ...${JSON.stringify(storeOptions(dir))} });
      const id = ${JSON.stringify(paused.executionId)};`;
    const [approver, rejecter] = await Promise.all([
      child(`${common} runtime.approve({ executionId: id }).then((o) => { console.log(JSON.stringify(o.status)); return executor.dispose(); });`),
      child(`${common} runtime.reject({ executionId: id, seq: 1 }).then((o) => { console.log(JSON.stringify(o)); return executor.dispose(); });`),
    ]);
    assert.equal(approver.code, 0, approver.stderr);
    assert.equal(rejecter.code, 0, rejecter.stderr);
    const approved = JSON.parse(approver.stdout.trim()) === 'completed';
    const rejected = JSON.parse(rejecter.stdout.trim()) === true;
    assert.ok(approved !== rejected, `round ${round}: approved ${approved}, rejected ${rejected}`);
    assert.equal(ran().create_issue || 0, approved ? 1 : 0);
    const [execution] = await runtime.executions();
    assert.equal(execution.status, approved ? 'completed' : 'rejected');
  }
});

test('steps: recorded once, replayed on later passes without calling fn', async () => {
  const { runtime } = setup();
  const paused = await runtime.execute({
    code: `async () => {
      const stamp = await codemode.step("stamp", () => globalThis.__calls = (globalThis.__calls || 0) + 1);
      await tracker.create_issue({ title: "t" });
      return stamp;
    }`,
  });
  assert.equal(paused.status, 'paused');
  assert.equal(paused.calls[0].connector, '__step');
  assert.equal(paused.calls[0].method, 'stamp');
  assert.equal(paused.calls[0].result, 1);
  const done = await runtime.approve({ executionId: paused.executionId });
  assert.equal(done.status, 'completed');
  // A fresh isolate would have counted 1 again had fn run: the recorded value came back.
  assert.equal(done.result, 1);
});

test('divergence is reported as data: a different call, then different arguments, at a replayed step', async () => {
  let pass = 0;
  const extra = {
    flip: { description: 'changes every pass', replay: 'reexecute', execute: async () => ++pass },
  };
  const { runtime } = setup(extra);
  // Pass 1 sees flip() = 1 and lists; on approval the ephemeral flip() re-runs (= 2) and the
  // program calls a different tool at the recorded position.
  const code = `async () => {
    const n = await tracker.flip();
    if (n === 1) await tracker.list_issues(); else await tracker.label({ id: 1 });
    await tracker.create_issue({ title: "x" });
  }`;
  const paused = await runtime.execute({ code });
  assert.equal(paused.status, 'paused');
  assert.equal(paused.calls[0].ephemeral, true);
  assert.equal('result' in paused.calls[0] && paused.calls[0].result !== undefined, false, 'ephemeral results are not stored');
  const out = await runtime.approve({ executionId: paused.executionId });
  assert.equal(out.status, 'error');
  assert.equal(out.error, 'Codemode replay divergence at step 1: expected tracker.list_issues, got tracker.label. Code must be deterministic up to tool calls and steps. Wrap nondeterministic work in codemode.step(name, fn).');

  pass = 0;
  const second = setup(extra);
  const argsCode = `async () => {
    const n = await tracker.flip();
    await tracker.label({ id: n });
    await tracker.create_issue({ title: "x" });
  }`;
  const paused2 = await second.runtime.execute({ code: argsCode });
  const out2 = await second.runtime.approve({ executionId: paused2.executionId });
  assert.equal(out2.error, 'Codemode replay divergence at step 1: tracker.label was called with different arguments than the recorded run. Arguments must be deterministic across replays. Wrap nondeterministic inputs in codemode.step(name, fn).');
});

// Issue 36: this run used to end in a replay divergence (the resumed pass received the two
// branches' replies in the other order, so their follow-up calls swapped seqs). Replies now reach
// the program in the order the first pass recorded them, whatever order they arrive in.
test('Promise.all: replies reach a resumed pass in the recorded order, so follow-up calls keep their seqs', async () => {
  let pass = 0;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const extra = {
    // Ephemeral timers whose delays swap between passes, so the two branches' replies reach the
    // host in a different order on the resumed pass.
    wait: { description: 'wait', replay: 'reexecute', execute: async ({ which }) => { await sleep((which === 'a') === (pass === 1) ? 80 : 5); return which; } },
    begin: { description: 'count passes', replay: 'reexecute', execute: async () => ++pass },
  };
  const { runtime } = setup(extra);
  const code = `async () => {
    await tracker.begin();
    await Promise.all([
      tracker.wait({ which: "a" }).then(() => tracker.list_issues()),
      tracker.wait({ which: "b" }).then(() => tracker.label({ id: 1 })),
    ]);
    await tracker.create_issue({ title: "x" });
  }`;
  const paused = await runtime.execute({ code });
  assert.equal(paused.status, 'paused');
  const methods = (calls) => calls.filter(Boolean).map((c) => c.method);
  assert.deepEqual(methods(paused.calls).slice(3, 5), ['label', 'list_issues'], 'pass 1: b finished first');
  const out = await runtime.approve({ executionId: paused.executionId });
  assert.equal(pass, 2, 'a second pass ran, with the delays swapped');
  assert.equal(out.status, 'completed', JSON.stringify(out));
  assert.deepEqual(methods(out.calls), ['begin', 'wait', 'wait', 'label', 'list_issues', 'create_issue']);
});

test('oversized values: arguments and results fail the run, a final result is kept out of the log, code is refused', async () => {
  const { runtime } = setup({
    echo: { description: 'echo', execute: async (a) => a },
    big: { description: 'big', execute: async () => 'y'.repeat(1_000_001) },
  });
  const args = await runtime.execute({ code: 'async () => tracker.echo({ s: "x".repeat(1000000) })' });
  assert.equal(args.status, 'error');
  assert.equal(args.error, 'Arguments to tracker.echo is too large to record durably (1000008 bytes > 1000000 byte limit). Write large data to a file or workspace instead and pass/return a small reference (such as a path).');
  const result = await runtime.execute({ code: 'async () => tracker.big()' });
  assert.equal(result.status, 'error');
  assert.match(result.error, /^The result of tracker\.big is too large to record durably \(1000003 bytes > 1000000 byte limit\)/);
  const cyclic = await runtime.execute({ code: 'async () => { const a = {}; a.self = a; return tracker.echo(a); }' });
  assert.equal(cyclic.status, 'error');
  assert.match(cyclic.error, /^Arguments to tracker\.echo could not be recorded durably \(not serializable: [\s\S]*\)\. Only JSON-compatible values \(plus binary and bigint\) can cross a durable replay boundary\.$/);
  const final = await runtime.execute({ code: 'async () => "z".repeat(1000001)' });
  assert.equal(final.status, 'completed');
  assert.equal(final.result.length, 1000001, 'the model gets the real value');
  const stored = (await runtime.executions()).find((e) => e.id === final.executionId);
  assert.match(stored.result, /^\[codemode: result omitted from the audit trail — The final result is too large to record durably/);
  const code = await runtime.execute({ code: `async () => 1 // ${'c'.repeat(1_000_000)}` });
  assert.deepEqual(Object.keys(code).sort(), ['error', 'executionId', 'status']);
  assert.equal(code.executionId, '');
  assert.match(code.error, /^The execution code is too large to record durably \(1000017 bytes > 1000000 byte limit\)/);
});

// FINDING (fixed, issue 33): a failed revert left the run `completed`, against the contract
// (docs/cloudflare-compat.md §6.9 rollback: `rolled_back` once at least one call was reverted,
// failures reported afterwards). The status is the contract's; what a rollback could not undo is
// data: `leftInForce` on the execution and on rollback's answer.
test('rollback: reverts newest first, reports failures after trying all, marks the run rolled back when one was reverted, and names what stays in force', async () => {
  let busy = 1;
  const { tracker, runtime, dbFile } = setup({
    // A revert that fails once (its service is busy), then works.
    tag: { description: 'Tag an issue', execute: async ({ id }) => ({ id, tagged: true }), revert: async () => { if (busy-- > 0) throw new Error('tag service busy'); } },
  });
  const paused = await runtime.execute({ code: `async () => {
    await tracker.list_issues();
    await tracker.label({ id: 1 });
    await tracker.tag({ id: 1 });
    return tracker.create_issue({ title: "second" });
  }` });
  const id = paused.executionId;
  const done = await runtime.approve({ executionId: id });
  assert.equal(done.status, 'completed');
  assert.equal(load(dbFile).issues.length, 2);
  tracker.hooks.length = 0;
  const failed = await runtime.rollback({ executionId: id }).then(() => assert.fail('rollback resolved'), (e) => e);
  assert.equal(failed.message, 'Rollback reverted 1 action(s) but 2 failed: tracker.tag: tag service busy; tracker.label: labels cannot be removed');
  assert.equal(load(dbFile).issues.length, 1, 'create_issue was reverted');
  assert.equal((await runtime.execution(id)).status, 'rolled_back', 'at least one call was reverted');
  const left = [
    { seq: 2, connector: 'tracker', method: 'tag', error: 'tag service busy' },
    { seq: 1, connector: 'tracker', method: 'label', error: 'labels cannot be removed' },
  ];
  assert.equal(failed.reverted, 1);
  assert.deepEqual(failed.leftInForce, left);
  // The contract's status; the label and the tag are still in force, and the record says so. A
  // read (list_issues: no revert, nothing to undo) is not listed.
  let execution = await runtime.execution(id);
  assert.equal(execution.status, 'rolled_back');
  assert.deepEqual(execution.log.map((e) => e.state), ['applied', 'applied', 'applied', 'reverted']);
  assert.deepEqual(execution.leftInForce, left);
  assert.deepEqual(tracker.hooks, [['disposeExecution', 'rolled_back']]);
  // Rolled back again: the tag's revert works now; the label's still fails.
  tracker.hooks.length = 0;
  const again = await runtime.rollback({ executionId: id }).then(() => assert.fail('rollback resolved'), (e) => e);
  assert.equal(again.message, 'Rollback reverted 1 action(s) but 1 failed: tracker.label: labels cannot be removed');
  assert.deepEqual(again.leftInForce, [left[1]]);
  execution = await runtime.execution(id);
  assert.equal(execution.status, 'rolled_back');
  assert.deepEqual(execution.log.map((e) => e.state), ['applied', 'applied', 'reverted', 'reverted']);
  assert.deepEqual(execution.leftInForce, [left[1]]);
  // Nothing reverted this time: no hooks, nothing changes.
  tracker.hooks.length = 0;
  await assert.rejects(runtime.rollback({ executionId: id }), { message: 'Rollback reverted 0 action(s) but 1 failed: tracker.label: labels cannot be removed', reverted: 0 });
  assert.deepEqual(tracker.hooks, []);
  // A rollback with nothing left to fail answers what it did.
  const clean = await runtime.execute({ code: 'async () => tracker.tag({ id: 1 })' });
  assert.deepEqual(await runtime.rollback({ executionId: clean.executionId }), { reverted: 1, leftInForce: [], calls: [{ seq: 0, connector: 'tracker', method: 'tag', fate: 'reverted' }] });
  const cleanRecord = await runtime.execution(clean.executionId);
  assert.equal(cleanRecord.status, 'rolled_back');
  assert.equal(cleanRecord.leftInForce, undefined);
});

// FINDING (fixed, issue 37): rollback's answer left out every call whose tool has no revert, so a
// run whose effects stayed in force read as rolled back. The answer now names each call's fate.
test('rollback: the answer names every call in force with its fate: reverted, no revert (stays in force), revert failed', async () => {
  const notified = [];
  const { runtime, dbFile } = setup({
    // An effect with no undo: it stays in force, and the answer must say so.
    notify: { description: 'Send a message', execute: async ({ text }) => { notified.push(text); return { sent: true }; } },
    tag: { description: 'Tag an issue', execute: async ({ id }) => ({ id, tagged: true }), revert: async () => {} },
  });
  // Nothing fails: rollback resolves, and still says what it could not undo.
  const quiet = await runtime.execute({ code: 'async () => { await tracker.notify({ text: "hello" }); return tracker.tag({ id: 1 }); }' });
  assert.equal(quiet.status, 'completed');
  const answer = await runtime.rollback({ executionId: quiet.executionId });
  assert.deepEqual(answer, {
    reverted: 1,
    leftInForce: [],
    calls: [
      { seq: 1, connector: 'tracker', method: 'tag', fate: 'reverted' },
      { seq: 0, connector: 'tracker', method: 'notify', fate: 'no_revert' },
    ],
  });
  assert.deepEqual(notified, ['hello'], 'the message stays sent');
  assert.equal((await runtime.execution(quiet.executionId)).status, 'rolled_back', 'the contract\'s status is kept');

  // A call with a revert, one without, one whose revert throws: the error carries every fate.
  const paused = await runtime.execute({ code: `async () => {
    await tracker.notify({ text: "filed" });
    await tracker.label({ id: 1 });
    return tracker.create_issue({ title: "second" });
  }` });
  const done = await runtime.approve({ executionId: paused.executionId });
  assert.equal(done.status, 'completed');
  assert.equal(load(dbFile).issues.length, 2);
  const failed = await runtime.rollback({ executionId: paused.executionId }).then(() => assert.fail('rollback resolved'), (e) => e);
  assert.equal(failed.code, 'ERR_ROLLBACK_INCOMPLETE');
  assert.equal(failed.message, 'Rollback reverted 1 action(s) but 1 failed: tracker.label: labels cannot be removed');
  assert.deepEqual(failed.calls, [
    { seq: 2, connector: 'tracker', method: 'create_issue', fate: 'reverted' },
    { seq: 1, connector: 'tracker', method: 'label', fate: 'revert_failed', error: 'labels cannot be removed' },
    { seq: 0, connector: 'tracker', method: 'notify', fate: 'no_revert' },
  ]);
  assert.equal(load(dbFile).issues.length, 1, 'create_issue was reverted');
  // Again: the reverted call is not listed twice; what stays in force still is.
  const again = await runtime.rollback({ executionId: paused.executionId }).then(() => assert.fail('rollback resolved'), (e) => e);
  assert.deepEqual(again.calls, [
    { seq: 1, connector: 'tracker', method: 'label', fate: 'revert_failed', error: 'labels cannot be removed' },
    { seq: 0, connector: 'tracker', method: 'notify', fate: 'no_revert' },
  ]);

  // A run that only did something without a revert: nothing changes, and the answer says it stays.
  const only = await runtime.execute({ code: 'async () => tracker.notify({ text: "once" })' });
  assert.deepEqual(await runtime.rollback({ executionId: only.executionId }), {
    reverted: 0,
    leftInForce: [],
    calls: [{ seq: 0, connector: 'tracker', method: 'notify', fate: 'no_revert' }],
  });
  assert.equal((await runtime.execution(only.executionId)).status, 'completed');
});

test('expirePaused: paused runs become rejected; a run whose pass is alive is never expired', async () => {
  let release;
  const gate = new Promise((r) => { release = r; });
  const { tracker, runtime } = setup({ slow: { description: 'slow', execute: () => gate } });
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  const running = runtime.execute({ code: 'async () => { await tracker.slow(); return tracker.list_issues(); }' });
  await new Promise((r) => setTimeout(r, 300));
  tracker.hooks.length = 0;
  // Before leases, the live pass was expired too and its effect landed after the expiry.
  const expired = await runtime.expirePaused({ maxAgeMs: 0 });
  assert.deepEqual(expired, [paused.executionId]);
  const all = await runtime.executions();
  const p = all.find((e) => e.id === paused.executionId);
  assert.equal(p.status, 'rejected');
  assert.equal(p.error, 'Expired awaiting approval');
  assert.equal(p.log[1].state, 'reverted');
  const r = all.find((e) => e.id !== paused.executionId);
  assert.equal(r.status, 'running');
  assert.deepEqual(tracker.hooks, [['disposeExecution', 'rejected']]);
  release('done');
  const late = await running;
  assert.equal(late.status, 'completed');
  assert.equal(late.result.length, 1);
});

test('retention keeps exactly maxExecutions terminal runs besides the newest; prune and delete', async () => {
  const { runtime } = setup({}, { maxExecutions: 3 });
  // Runs started in the same millisecond order by their random id suffix (docs/cloudflare-compat.md §6.3): space them.
  for (let i = 0; i < 5; i++) {
    await runtime.execute({ code: `async () => ${i}` });
    await new Promise((r) => setTimeout(r, 3));
  }
  let all = await runtime.executions();
  // Pruning happens when a run begins (docs/cloudflare-compat.md §6.5): the newest run plus exactly 3 earlier ones.
  assert.deepEqual(all.map((e) => e.result), [4, 3, 2, 1]);
  assert.equal((await runtime.executions(2)).length, 2);
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  assert.equal(await runtime.pruneExecutions(1), 2); // 3 and 2; the paused run is never pruned
  all = await runtime.executions();
  assert.deepEqual(all.map((e) => e.status), ['paused', 'completed']);
  assert.equal(await runtime.deleteExecution(paused.executionId), true);
  assert.equal(await runtime.deleteExecution(paused.executionId), false);
});

test('snippets: saved from an execution, run in the sandbox with the outer seq, searched and described', async () => {
  const { runtime } = setup();
  const source = await runtime.execute({ code: 'async (input) => { const i = await tracker.list_issues(); return { n: i.length, input }; }' });
  const saved = await runtime.saveSnippet('count', { executionId: source.executionId, description: 'Count the issues' });
  assert.equal(saved.name, 'count');
  assert.deepEqual((await runtime.snippets()).map((s) => s.name), ['count']);
  const out = await runtime.execute({ code: `async () => {
    const a = await codemode.run("count", { x: 1 });
    const missing = await codemode.run("nope");
    const found = await codemode.search("count issues");
    return { a, missing, kinds: found.results.map((r) => r.kind) };
  }` });
  assert.equal(out.status, 'completed', out.error);
  assert.deepEqual(out.result.a, { n: 1, input: { x: 1 } });
  assert.deepEqual(out.result.missing, { error: 'Snippet "nope" not found.' });
  assert.ok(out.result.kinds.includes('snippet'));
  assert.equal(out.calls[0].method, 'list_issues', "the snippet's call took the outer run's seq 0");
  const described = await runtime.describe('count');
  assert.equal(described.kind, 'snippet');
  await assert.rejects(runtime.saveSnippet('x', { executionId: 'exec_nope' }), { message: 'No execution "exec_nope" to save from' });
  assert.equal(await runtime.deleteSnippet('count'), true);
  assert.equal(await runtime.deleteSnippet('count'), false);
});

test('snippets saved from statement-style code run with codemode.run, in every shape a run accepts', async () => {
  const { runtime } = setup();
  const shapes = {
    statements: 'const list = await tracker.list_issues(); return list.length;',
    typescript: 'const list: unknown[] = await tracker.list_issues();\nreturn list.length;',
    lastExpression: 'const list = await tracker.list_issues();\nlist.length',
    fenced: '```js\nconst list = await tracker.list_issues();\nreturn list.length;\n```',
    arrow: 'async () => (await tracker.list_issues()).length',
    typedArrow: 'async (): Promise<number> => (await tracker.list_issues()).length',
  };
  for (const [name, code] of Object.entries(shapes)) {
    const source = await runtime.execute({ code });
    assert.equal(source.status, 'completed', `${name}: ${source.error}`);
    assert.equal(source.result, 1, name);
    await runtime.saveSnippet(name, { executionId: source.executionId });
    const out = await runtime.execute({ code: `async () => await codemode.run(${JSON.stringify(name)})` });
    assert.equal(out.status, 'completed', `${name}: ${out.error}`);
    assert.equal(out.result, 1, `snippet ${name}`);
  }
});

test('approveProgram: a run waits for a person before its first statement; approved it runs once, rejected nothing ran', async () => {
  const seen = [];
  const { runtime, ran } = setup({}, {
    // Reads go through unasked; anything that creates waits for a person.
    approveProgram: ({ code, connectors }) => { seen.push(connectors); return code.includes('create_issue'); },
  });
  const read = await runtime.execute({ code: 'async () => (await tracker.list_issues()).length' });
  assert.deepEqual([read.status, read.result], ['completed', 1]);
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  assert.equal(paused.status, 'paused', paused.error);
  assert.deepEqual(paused.pending, [{ kind: 'program', executionId: paused.executionId, seq: 0, connector: 'codemode', method: 'program', args: { code: READ_THEN_CREATE }, code: READ_THEN_CREATE }]);
  assert.deepEqual(await runtime.pending(paused.executionId), paused.pending);
  assert.deepEqual(ran(), { list_issues: 1 }, 'nothing of the program ran before its approval');
  assert.deepEqual(seen, [['tracker'], ['tracker']]);
  // Approved: it runs up to the create_issue approval, then that approval completes it.
  const next = await runtime.approve({ executionId: paused.executionId, seq: 0 });
  assert.equal(next.status, 'paused', next.error);
  assert.deepEqual(next.pending.map((p) => [p.kind, p.seq, p.method]), [[undefined, 2, 'create_issue']]);
  const done = await runtime.approve({ executionId: paused.executionId });
  assert.equal(done.status, 'completed', done.error);
  assert.deepEqual(ran(), { list_issues: 2, create_issue: 1 }, 'each call ran once, the program once approved');
  assert.deepEqual(done.calls.map((c) => [c.seq, c.connector, c.method, c.state]), [[0, 'codemode', 'program', 'applied'], [1, 'tracker', 'list_issues', 'applied'], [2, 'tracker', 'create_issue', 'applied']]);
  // Rejected: the run ends with no call in its log past the program itself.
  const refused = await runtime.execute({ code: READ_THEN_CREATE.replace('second', 'third') });
  assert.equal(await runtime.reject({ executionId: refused.executionId, seq: 0 }), true);
  const record = await runtime.execution(refused.executionId);
  assert.equal(record.status, 'rejected');
  assert.deepEqual(record.log.filter(Boolean).map((e) => [e.seq, e.connector, e.state]), [[0, 'codemode', 'reverted']], 'the refused program is the only entry');
  assert.deepEqual(ran(), { list_issues: 2, create_issue: 1 });
  await assert.rejects(async () => createCodemodeRuntime({ executor, approveProgram: 'yes', path: ':memory:' }), { code: 'ERR_INVALID_ARGUMENT' });
});

test('approveProgram survives a restart: a gated run is approved by another runtime over the same store', async () => {
  const { runtime, dir, dbFile } = setup({}, { approveProgram: true });
  const paused = await runtime.execute({ code: READ_THEN_CREATE });
  assert.equal(paused.status, 'paused');
  // A runtime configured without approveProgram still honours the stored gate.
  const other = createCodemodeRuntime({ executor, connectors: [new Tracker(dbFile)], ...storeOptions(dir) });
  assert.deepEqual((await other.recover()), [], 'a gated run is paused, never recovered into running');
  const next = await other.approve({ executionId: paused.executionId, seq: 0 });
  assert.equal(next.status, 'paused', next.error);
  assert.equal(next.pending[0].method, 'create_issue');
});

test('tool(): the AI SDK shape, the model output without calls', async () => {
  const { runtime } = setup();
  const tool = runtime.tool();
  assert.match(tool.description, /^Execute JavaScript in a sandbox with access to connector SDKs\./);
  assert.deepEqual(tool.inputSchema['~standard'].validate({ code: 'x', extra: 1 }), { value: { code: 'x' } });
  const out = await tool.execute({ code: 'async () => 1n' }, {});
  const model = tool.toModelOutput({ output: out });
  assert.equal(model.type, 'json');
  assert.equal('calls' in model.value, false);
  assert.equal(model.value.result, '1');
});

test('one file, two runtime names: partitions that never see each other', async () => {
  const dir = tempDir();
  const a = createCodemodeRuntime({ executor, connectors: [], name: 'a', ...storeOptions(dir, 'shared.db') });
  const b = createCodemodeRuntime({ executor, connectors: [], name: 'b', ...storeOptions(dir, 'shared.db') });
  await a.execute({ code: 'async () => "from a"' });
  assert.equal((await a.executions()).length, 1);
  assert.equal((await b.executions()).length, 0);
});

test('steps: an unrecordable value fails the run naming the step; a throwing fn reaches the program', async () => {
  const { runtime } = setup();
  const big = await runtime.execute({ code: 'async () => codemode.step("big", () => "s".repeat(1000001))' });
  assert.equal(big.status, 'error');
  assert.match(big.error, /^The result of __step\.big is too large to record durably \(1000003 bytes > 1000000 byte limit\)/);
  const thrown = await runtime.execute({ code: 'async () => { try { await codemode.step("t", () => { throw new Error("inner"); }); } catch (e) { return e.message; } }' });
  assert.equal(thrown.status, 'completed');
  assert.equal(thrown.result, 'inner');
  assert.equal(thrown.calls[0].state, 'executing', 'nothing recorded for a step that threw');
});

test('handle arguments: bad input is refused clearly', async () => {
  const { runtime } = setup();
  await assert.rejects(runtime.execute({}), { code: 'ERR_INVALID_ARGUMENT', message: 'execute({ code }): code must be a string' });
  assert.deepEqual(await runtime.approve({}), { status: 'error', executionId: 'undefined', error: 'No execution "undefined" to resume.' });
  assert.equal(typeof runtime.tool(null).description, 'string');
});

test('divergence after a code change: a snippet re-saved while its run was paused', async () => {
  const { runtime } = setup();
  const v1 = await runtime.execute({ code: 'async () => { await tracker.list_issues(); return "v1"; }' });
  await runtime.saveSnippet('prep', { executionId: v1.executionId });
  const paused = await runtime.execute({ code: 'async () => { await codemode.run("prep"); return tracker.create_issue({ title: "x" }); }' });
  assert.equal(paused.status, 'paused');
  // The snippet's code changes before the run is approved.
  const v2 = await runtime.execute({ code: 'async () => { await tracker.label({ id: 1 }); return "v2"; }' });
  await runtime.saveSnippet('prep', { executionId: v2.executionId });
  const out = await runtime.approve({ executionId: paused.executionId });
  assert.equal(out.status, 'error');
  assert.equal(out.error, 'Codemode replay divergence at step 0: expected tracker.list_issues, got tracker.label. Code must be deterministic up to tool calls and steps. Wrap nondeterministic work in codemode.step(name, fn).');
  assert.equal((await runtime.execution(paused.executionId)).status, 'error');
});

test('a connector whose describe() fails makes execute reject, and a later call retries', async () => {
  let failing = true;
  class Flaky extends CodemodeConnector {
    name() { return 'flaky'; }
    tools() { return { ping: { description: 'ping', execute: async () => 'pong' } }; }
    describe() {
      if (failing) return Promise.reject(new Error('connector offline'));
      return super.describe();
    }
  }
  const runtime = createCodemodeRuntime({ executor, connectors: [new Flaky()], ...storeOptions(tempDir()) });
  const tool = runtime.tool();
  await assert.rejects(tool.execute({ code: 'async () => flaky.ping()' }), { message: 'connector offline' });
  failing = false;
  const out = await tool.execute({ code: 'async () => flaky.ping()' });
  assert.equal(out.status, 'completed');
  assert.equal(out.result, 'pong');
});

// FINDING (fixed): binary arguments other than a Uint8Array (a Uint16Array, a DataView) are
// recorded as their bytes, so on the pass after an approval the live argument and the recorded
// one looked different and the run failed with a false replay divergence.
test('binary arguments of every kind replay without a divergence', async () => {
  const { runtime } = setup({
    put: { description: 'takes binary', execute: async ({ data }) => data.byteLength },
    gate: { description: 'needs a person', requiresApproval: true, execute: async () => 'through' },
  });
  for (const expr of ['new Uint8Array([1, 2])', 'new Uint16Array([1, 2])', 'new Float64Array([1.5])', 'new DataView(new ArrayBuffer(4))', 'new Uint8Array([1, 2, 3]).subarray(1)']) {
    const paused = await runtime.execute({ code: `async () => { const n = await tracker.put({ data: ${expr} }); await tracker.gate(); return n; }` });
    assert.equal(paused.status, 'paused', `${expr}: ${JSON.stringify(paused)}`);
    const done = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
    assert.equal(done.status, 'completed', `${expr}: ${done.error}`);
  }
});

// FINDING (fixed): a step whose function threw (and whose program went on) was left executing,
// and the pass after an approval took it for a call in doubt: the run paused again, asking a
// person about an internal step. The contract (§6.5, `executing`) runs it again.
test('a step whose function threw runs again on the next pass instead of waiting for a person', async () => {
  const { runtime } = setup({ gate: { description: 'needs a person', requiresApproval: true, execute: async () => 'through' } });
  const paused = await runtime.execute({ code: 'async () => { let caught = 0; try { await codemode.step("flaky", () => { throw new Error("not yet"); }); } catch { caught++; } await tracker.gate(); return caught; }' });
  assert.equal(paused.status, 'paused');
  assert.deepEqual(paused.pending.map((p) => p.method), ['gate']);
  const done = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.equal(done.result, 1);
});

// Issue 36: a gated program's clock starts when it was approved, on the pass that approves it as
// on every later one (the first read its plan before recording the approval, and its time
// differed from the next pass's: a replay divergence on the timestamp).
test('approveProgram: the clock a gated program reads is the same on the approving pass and after', async () => {
  const { runtime } = setup({}, { approveProgram: () => true });
  const code = 'async () => { const t = Date.now(); await tracker.create_issue({ title: String(t) }); return t; }';
  const paused = await runtime.execute({ code });
  assert.equal(paused.status, 'paused', paused.error);
  await new Promise((r) => setTimeout(r, 30));
  const next = await runtime.approve({ executionId: paused.executionId, seq: 0 });
  assert.equal(next.status, 'paused', next.error);
  const done = await runtime.approve({ executionId: paused.executionId });
  assert.equal(done.status, 'completed', done.error);
  assert.equal(done.calls[1].args.title, String(done.result));
});
