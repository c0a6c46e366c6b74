'use strict';
// Replay that does not depend on the model's discipline (issue 36): a corpus of model-shaped
// programs (replay-corpus.programs.js) that pause on approval tools, over tools that reply after
// seeded delays in varied orders (replay-corpus.js). Each program is run through the durable
// runtime and approved until it ends, and once more uninterrupted, through a runtime whose tools
// need no approval, with the same delays. The approved run must complete; every effect must
// have been applied exactly once, with the arguments the person was shown, and with the same
// arguments as the uninterrupted run (values derived from time and randomness compared by
// structure: each program's check ties them to what the program computed before its pause).
// Last, what truly cannot be replayed (something read outside the log) must still be reported as
// divergence, not applied differently.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector } = require('../../lib/index.js');
const { storeOptions } = require('./stores.js');
const { makeWorld, outOfIssueOrder, stableJson, normalize, isApproval, prng } = require('./replay-corpus.js');
const { PROGRAMS } = require('./replay-corpus.programs.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

// Approvals a run may take before the test gives up on it.
const MAX_APPROVALS = 12;

function runtimeFor(world, options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-corpus-'));
  return createCodemodeRuntime({ executor, connectors: world.connectors, ...storeOptions(dir), ...options });
}

// What a run did, for the checks: the effects' real invocations and what was shown for approval.
function view(world, result, pending) {
  const effects = world.invocations.filter((i) => i.effect);
  return {
    effects,
    pending,
    result,
    calls: (tool) => effects.filter((e) => e.tool === tool).map((e) => e.args),
  };
}

// The program through the durable runtime, approved until it ends: one pending action is
// approved by its seq; several pending at once are approved together (the runtime's form for
// them). Which is approved first is not for the test to pick: approve() takes what waits.
async function approvedRun(program) {
  const world = makeWorld(program.seed, { approvals: true });
  const runtime = runtimeFor(world);
  const pending = [];
  const history = [];
  try {
    let out = await runtime.execute({ code: program.code });
    history.push(out.status);
    let approvals = 0;
    while (out.status === 'paused' && approvals < MAX_APPROVALS) {
      const waiting = out.pending.map((p) => ({ tool: `${p.connector}.${p.method}`, args: p.args, seq: p.seq }));
      pending.push(...waiting.filter((w) => !pending.some((p) => p.seq === w.seq)));
      out = waiting.length === 1
        ? await runtime.approve({ executionId: out.executionId, seq: waiting[0].seq })
        : await runtime.approve({ executionId: out.executionId });
      approvals++;
      history.push(out.status);
    }
    return { world, out, approvals, history, run: view(world, out.result, pending) };
  } finally {
    runtime.close();
  }
}

async function uninterruptedRun(program) {
  const world = makeWorld(program.seed, { approvals: false });
  const runtime = runtimeFor(world);
  try {
    const out = await runtime.execute({ code: program.code });
    return { world, out, run: view(world, out.result, []) };
  } finally {
    runtime.close();
  }
}

const effectKey = (e) => stableJson({ tool: e.tool, args: e.args });
const normalized = (effects, vary) => effects.map((e) => stableJson({ tool: e.tool, args: normalize(e.args, vary) })).sort();

// The parallel programs whose uninterrupted run got replies out of the order it issued the calls.
const shuffled = new Set();

for (const [index, program] of PROGRAMS.entries()) {
  const label = `corpus ${String(index + 1).padStart(2, '0')}: ${program.name}`;
  test(label, async () => {
    const vary = program.vary || [];
    // The uninterrupted run: the program itself is sound, and its checks hold.
    const reference = await uninterruptedRun(program);
    assert.equal(reference.out.status, 'completed', `the uninterrupted run: ${reference.out.error}`);
    program.check?.(reference.run);
    if (program.parallel && outOfIssueOrder(reference.world)) shuffled.add(program.name);

    const approved = await approvedRun(program);
    const { out, run } = approved;
    assert.ok(run.pending.length >= 1, 'the program paused at least once');
    assert.equal(out.status, 'completed', `after ${approved.approvals} approval(s) (${approved.history.join(' → ')}): ${out.error}`);

    // Every effect applied exactly once: no call ran twice (by its seq, or by its arguments).
    const bySeq = new Map();
    for (const e of run.effects) bySeq.set(e.seq, (bySeq.get(e.seq) || 0) + 1);
    for (const [seq, n] of bySeq) assert.equal(n, 1, `the effect at seq ${seq} ran ${n} times`);
    const byArgs = new Map();
    for (const e of run.effects) byArgs.set(effectKey(e), (byArgs.get(effectKey(e)) || 0) + 1);
    for (const [key, n] of byArgs) assert.equal(n, 1, `${key} ran ${n} times`);

    // Each approved action ran with the arguments the person was shown.
    for (const p of run.pending) {
      assert.ok(isApproval(p.tool), `${p.tool} was shown for approval`);
      const ran = run.effects.filter((e) => e.seq === p.seq);
      assert.equal(ran.length, 1, `the approved ${p.tool} (seq ${p.seq}) ran once`);
      assert.equal(ran[0].tool, p.tool, `seq ${p.seq} is the approved tool`);
      assert.deepEqual(ran[0].args, p.args, `${p.tool} (seq ${p.seq}) ran with the arguments shown for approval`);
    }
    // Every approval tool that ran was approved first.
    for (const e of run.effects.filter((x) => isApproval(x.tool))) {
      assert.ok(run.pending.some((p) => p.seq === e.seq), `${e.tool} (seq ${e.seq}) ran without being shown for approval`);
    }

    // The same effects, with the same arguments, as the uninterrupted run.
    assert.deepEqual(normalized(run.effects, vary), normalized(reference.run.effects, vary));
    // And the values derived from time and randomness are those the program computed before
    // its pause.
    program.check?.(run);
  });
}

test('the corpus: at least 30 programs, each pausing on an approval tool and with its own seed', () => {
  assert.ok(PROGRAMS.length >= 30, `${PROGRAMS.length} programs`);
  assert.equal(new Set(PROGRAMS.map((p) => p.seed)).size, PROGRAMS.length);
  assert.equal(new Set(PROGRAMS.map((p) => p.name)).size, PROGRAMS.length);
  for (const p of PROGRAMS) assert.match(p.code, /\b(mail\.send|bank\.(pay|refund)|calendar\.book|tickets\.close)\(/, p.name);
  // The seeds' delays reorder replies: in most parallel programs' uninterrupted runs (the
  // corpus tests above ran first), replies arrived out of the order the calls were issued.
  const parallel = PROGRAMS.filter((p) => p.parallel).length;
  assert.ok(parallel >= 20, `${parallel} programs with parallel calls`);
  assert.ok(shuffled.size >= parallel / 2, `replies out of issue order in ${shuffled.size} of ${parallel} parallel programs`);
  // The seeded PRNG is reproducible.
  const a = prng(42);
  const b = prng(42);
  assert.deepEqual([a(), a(), a()], [b(), b(), b()]);
});

// ---- What cannot be replayed is reported, not applied differently ------------------------------

// A billing service whose plan change is an effect, and a mailer that needs approval.
class Billing extends CodemodeConnector {
  constructor(ran, extra = {}) {
    super();
    this.ran = ran;
    this.extra = extra;
  }

  name() { return 'billing'; }

  tools() {
    const ran = this.ran;
    return {
      set_plan: { description: 'Change the plan', execute: async (args) => { ran.push(['set_plan', args]); return { plan: args.plan }; } },
      cancel: { description: 'Cancel the account', execute: async (args) => { ran.push(['cancel', args]); return { cancelled: true }; } },
      notify: { description: 'Mail the customer', requiresApproval: true, execute: async (args) => { ran.push(['notify', args]); return 'sent'; } },
      ...this.extra,
    };
  }
}

test('a value fetched through globalOutbound outside a step, which changes between passes, is reported as divergence naming the call', async () => {
  let reads = 0;
  const outboundExecutor = new IsolateExecutor({
    workers: 1,
    // A host-side counter the program reads outside any tool and any step.
    globalOutbound: async () => new Response(JSON.stringify({ n: ++reads }), { headers: { 'content-type': 'application/json' } }),
  });
  const ran = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-corpus-'));
  const runtime = createCodemodeRuntime({ executor: outboundExecutor, connectors: [new Billing(ran)], ...storeOptions(dir) });
  try {
    const code = `async () => {
      const { n } = await (await fetch("https://config.example/flag")).json();
      const plan = n % 2 === 1 ? "basic" : "pro";
      await billing.set_plan({ plan });
      await billing.notify({ to: "ana@example.com", subject: \`Now on \${plan}\` });
      return plan;
    }`;
    const paused = await runtime.execute({ code });
    assert.equal(paused.status, 'paused');
    const out = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
    assert.equal(out.status, 'error');
    assert.match(out.error, /replay divergence/i);
    assert.match(out.error, /billing\.set_plan/, 'the message names the call');
    assert.match(out.error, /argument/i, 'and why: its arguments differ from the recorded run');
    assert.deepEqual(ran, [['set_plan', { plan: 'basic' }]], 'the other plan was never applied, nor the mail sent');
    assert.equal((await runtime.execution(paused.executionId)).status, 'error');
  } finally {
    runtime.close();
    await outboundExecutor.dispose();
  }
});

test('a replay: "reexecute" read whose answer changes between passes and picks the effect is reported as divergence naming both calls', async () => {
  let pass = 0;
  const ran = [];
  const extra = {
    // A read that runs again on every pass (its result is not stored), answering differently.
    status: { description: 'Account status', replay: 'reexecute', execute: async () => (++pass === 1 ? 'active' : 'closed') },
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-corpus-'));
  const runtime = createCodemodeRuntime({ executor, connectors: [new Billing(ran, extra)], ...storeOptions(dir) });
  try {
    const code = `async () => {
      const status = await billing.status();
      if (status === "active") await billing.set_plan({ plan: "pro" });
      else await billing.cancel({ reason: status });
      await billing.notify({ to: "ben@example.com", subject: status });
    }`;
    const paused = await runtime.execute({ code });
    assert.equal(paused.status, 'paused');
    const out = await runtime.approve({ executionId: paused.executionId, seq: paused.pending[0].seq });
    assert.equal(out.status, 'error');
    assert.match(out.error, /replay divergence/i);
    assert.match(out.error, /billing\.set_plan/, 'the message names the recorded call');
    assert.match(out.error, /billing\.cancel/, 'and the one made instead');
    assert.deepEqual(ran, [['set_plan', { plan: 'pro' }]], 'cancel never ran, nor the mail');
  } finally {
    runtime.close();
  }
});
