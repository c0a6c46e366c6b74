'use strict';
// Adversarial corpus: programs that attack each bound from inside the isolate.
//
// Every verdict is taken from what the HOST observed — host wall time, whether the host process
// stayed alive (exit code / signal of a child process), host RSS growth, dispatch calls the host
// actually received, and whether the next run on the same executor still works — never from
// what the attacking program says about itself.
//
// Attacks that can crash or exhaust the process (huge allocations, the TurboFan hole, builtins
// that may ignore termination) run in a child process (see `runChild`); the child prints one
// `@@STEP` JSON line per attack, and a `@@START` line before each so a child that dies can be
// attributed to the attack that killed it.
//
// Tests marked `// FINDING (fixed):` guard holes this corpus found in the build of 2026-11-29
// 16:03 (the comment above each gives the exact program and what the host observed then); all
// were fixed the same day and the tests now pass. Tests marked `Regression` guard holes found
// while the corpus was written.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');

const LIB = path.join(__dirname, '..', 'lib', 'index.js');
const { IsolateExecutor } = require(LIB);

const GB = 1024 * 1024 * 1024;
const MB = 1024 * 1024;
// Host-side bounds: generous on purpose (2 shared cores). The point is "bounded", not "fast".
const HOST_BOUND_MS = 10_000; // a run with a timeout of a few hundred ms must be answered by then
const RSS_GROWTH_BOUND = 1.5 * GB;
const CHILD_TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// Child-process runner
// ---------------------------------------------------------------------------------------------

// The script every child runs. It reads a spec from ADV_SPEC:
//   { executor: {...options}, steps: [{ name, code, timeout?, memoryLimitMb?, tools?,
//     alongside?: code run concurrently with the attack, measureCpuMs?: n }],
//     exit: 'exit' | 'natural', naturalExitMs? }
// and prints @@START / @@STEP / @@DONE lines.
const CHILD_SCRIPT = String.raw`
'use strict';
const { IsolateExecutor } = require(process.env.ADV_LIB);
const spec = JSON.parse(process.env.ADV_SPEC);
const emit = (tag, obj) => process.stdout.write('@@' + tag + ' ' + JSON.stringify(obj) + '\n');
const rss = () => process.memoryUsage().rss;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
function small(value) {
  if (value === undefined) return { undefined: true };
  const text = JSON.stringify(value);
  return text.length > 2000 ? { truncated: text.length } : { value };
}
function summarize(out, rejected) {
  if (rejected) return { rejected };
  return {
    error: typeof out.error === 'string' ? out.error.slice(0, 400) : out.error,
    errorLength: typeof out.error === 'string' ? out.error.length : undefined,
    result: small(out.result),
    logs: out.logs.length,
    toolCalls: out.stats.toolCalls,
  };
}
async function settle(promise) {
  try { return summarize(await promise); } catch (e) { return summarize(null, { code: e.code, message: String(e.message).slice(0, 300) }); }
}
(async () => {
  const ex = new IsolateExecutor(spec.executor);
  const rssStart = rss();
  let rssPeak = rssStart;
  const peakTimer = setInterval(() => { rssPeak = Math.max(rssPeak, rss()); }, 10);
  for (const step of spec.steps) {
    emit('START', { name: step.name });
    const dispatched = [];
    const request = {
      code: step.code,
      providers: [{ name: 'tools', tools: ['echo'] }],
      dispatch: (provider, tool, argsJson) => {
        dispatched.push({ provider, tool, argsBytes: argsJson.length });
        return JSON.stringify({ result: argsJson.length });
      },
    };
    if (step.timeout !== undefined) request.timeout = step.timeout;
    if (step.memoryLimitMb !== undefined) request.memoryLimitMb = step.memoryLimitMb;
    const rss0 = rss();
    const t0 = Date.now();
    const attack = settle(ex.execute(request));
    let alongside;
    if (step.alongside) {
      await sleep(step.alongsideDelayMs ?? 100);
      const ta = Date.now();
      const r = await settle(ex.execute({ code: step.alongside }));
      alongside = { ...r, ms: Date.now() - ta, attackStillRunning: false };
    }
    const out = await attack;
    const ms = Date.now() - t0;
    const rss1 = rss();
    rssPeak = Math.max(rssPeak, rss1);
    let cpuFraction;
    if (step.measureCpuMs) {
      const c0 = cpuMs();
      const w0 = Date.now();
      await sleep(step.measureCpuMs);
      cpuFraction = (cpuMs() - c0) / (Date.now() - w0);
    }
    const t1 = Date.now();
    const next = await settle(ex.execute({ code: 'async () => 1 + 1' }));
    emit('STEP', {
      name: step.name, ms, out, alongside, dispatched: dispatched.slice(0, 20), dispatchedCount: dispatched.length,
      rssBefore: rss0, rssAfter: rss1, rssGrowth: rss1 - rss0, cpuFraction,
      next, nextMs: Date.now() - t1, stats: ex.stats(),
    });
  }
  clearInterval(peakTimer);
  emit('DONE', { rssStart, rssPeak, rssEnd: rss(), peakGrowth: rssPeak - rssStart });
  if (spec.exit === 'natural') {
    await ex.dispose();
    emit('DISPOSED', {});
    // Unref'd: it only fires if something else keeps the event loop alive.
    setTimeout(() => { emit('STILL_ALIVE', { afterMs: spec.naturalExitMs }); process.exit(3); }, spec.naturalExitMs).unref();
    return;
  }
  process.exit(0);
})().catch((e) => { emit('CRASH', { message: String(e && e.stack) }); process.exit(2); });
`;

function runChild(spec, { timeoutMs = CHILD_TIMEOUT_MS } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ['-e', CHILD_SCRIPT], {
      env: { ...process.env, ADV_LIB: LIB, ADV_SPEC: JSON.stringify(spec) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; if (stderr.length > 200_000) stderr = stderr.slice(-100_000); });
    const timer = setTimeout(() => { killed = true; child.kill('SIGKILL'); }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const lines = stdout.split('\n');
      const tagged = (tag) => lines.filter((l) => l.startsWith(`@@${tag} `)).map((l) => JSON.parse(l.slice(tag.length + 3)));
      const steps = {};
      for (const s of tagged('STEP')) steps[s.name] = s;
      const started = tagged('START').map((s) => s.name);
      resolve({
        code, signal, killedByTimeout: killed, elapsedMs: Date.now() - t0,
        steps, started, done: tagged('DONE')[0], disposed: tagged('DISPOSED').length > 0,
        stillAlive: tagged('STILL_ALIVE')[0], crash: tagged('CRASH')[0],
        stderrTail: stderr.slice(-1500),
      });
    });
  });
}

function describeChild(child) {
  const lastStarted = child.started[child.started.length - 1];
  return `child exit code=${child.code} signal=${child.signal} killedByTimeout=${child.killedByTimeout} ` +
    `elapsed=${child.elapsedMs}ms last attack started=${JSON.stringify(lastStarted)} ` +
    `steps done=${JSON.stringify(Object.keys(child.steps))}\ncrash=${JSON.stringify(child.crash)}\nstderr tail:\n${child.stderrTail}`;
}

// The host survived: the child exited by itself with 0 (it calls process.exit(0) at the end).
function assertChildSurvived(child) {
  assert.equal(child.killedByTimeout, false, `child hung\n${describeChild(child)}`);
  assert.equal(child.signal, null, `child killed by a signal\n${describeChild(child)}`);
  assert.equal(child.code, 0, `child exited abnormally\n${describeChild(child)}`);
  assert.ok(child.done, `child never finished its steps\n${describeChild(child)}`);
  assert.ok(child.done.peakGrowth < RSS_GROWTH_BOUND,
    `host RSS grew by ${(child.done.peakGrowth / MB).toFixed(0)} MB (bound ${RSS_GROWTH_BOUND / MB} MB)`);
}

// One step's host observations: answered within the host bound, RSS bounded, next run works.
function assertStep(child, name, { boundMs = HOST_BOUND_MS } = {}) {
  const step = child.steps[name];
  assert.ok(step, `no observation for ${name}\n${describeChild(child)}`);
  assert.ok(step.ms < boundMs, `${name}: answered after ${step.ms} ms on the host clock (bound ${boundMs} ms)`);
  assert.ok(step.rssGrowth < RSS_GROWTH_BOUND, `${name}: host RSS grew by ${(step.rssGrowth / MB).toFixed(0)} MB`);
  assert.equal(step.next.rejected, undefined, `${name}: follow-up run rejected ${JSON.stringify(step.next.rejected)}`);
  assert.equal(step.next.error, undefined, `${name}: follow-up run failed: ${step.next.error}`);
  assert.deepEqual(step.next.result, { value: 2 }, `${name}: follow-up run returned ${JSON.stringify(step.next.result)}`);
  return step;
}

function assertMemoryError(step) {
  assert.equal(step.out.rejected, undefined, `${step.name}: rejected ${JSON.stringify(step.out.rejected)}`);
  assert.equal(typeof step.out.error, 'string', `${step.name}: resolved without error: ${JSON.stringify(step.out)}`);
  assert.ok(step.out.error.startsWith('Memory exhausted'), `${step.name}: error was ${JSON.stringify(step.out.error)}`);
}

// ---------------------------------------------------------------------------------------------
// In-process helpers (attacks that cannot crash the host)
// ---------------------------------------------------------------------------------------------

let ex; // workers: 2, the general executor
let small; // tight message bounds
let solo; // workers: 1, so consecutive runs are guaranteed to share a thread

test.before(() => {
  ex = new IsolateExecutor({ workers: 2, timeout: 2000, memoryLimitMb: 64, maxQueue: 1000 });
  small = new IsolateExecutor({
    workers: 2, timeout: 2000, memoryLimitMb: 64,
    limits: {
      maxArgsBytes: 1024, maxReplyBytes: 1024, maxResultBytes: 1024, maxLogLines: 20,
      maxLogBytes: 1024, maxToolCalls: 5, maxCodeBytes: 64 * 1024,
    },
  });
  solo = new IsolateExecutor({ workers: 1, timeout: 2000, memoryLimitMb: 64 });
});

test.after(async () => {
  await Promise.all([ex.dispose(), small.dispose(), solo.dispose()]);
});

function recordingDispatch(reply = (p, t, args) => ({ result: JSON.parse(args) })) {
  const calls = [];
  const dispatch = (provider, tool, argsJson) => {
    calls.push({ provider, tool, argsJson });
    return JSON.stringify(reply(provider, tool, argsJson));
  };
  return { calls, dispatch };
}

async function timed(executor, request) {
  const t0 = Date.now();
  const out = await executor.execute(request);
  return { out, ms: Date.now() - t0 };
}

async function assertNextRunWorks(executor, label = '') {
  const out = await executor.execute({ code: 'async () => 1 + 1' });
  assert.equal(out.error, undefined, `${label} follow-up run failed: ${out.error}`);
  assert.equal(out.result, 2, `${label} follow-up run returned ${JSON.stringify(out.result)}`);
}

async function expectTimeout(executor, code, timeout = 300) {
  const { calls, dispatch } = recordingDispatch();
  const { out, ms } = await timed(executor, { code, timeout, providers: [{ name: 'tools', tools: ['echo'] }], dispatch });
  assert.ok(calls.length <= 1, `${calls.length} tool calls reached the host`);
  assert.equal(out.error, 'Execution timed out', `program ${code}\nresolved with ${JSON.stringify(out).slice(0, 300)}`);
  assert.ok(ms < HOST_BOUND_MS, `program ${code}: answered after ${ms} ms`);
  await assertNextRunWorks(executor, code);
}

// ---------------------------------------------------------------------------------------------
// CPU
// ---------------------------------------------------------------------------------------------

test('cpu: synchronous infinite loops are stopped at the timeout', async () => {
  await expectTimeout(ex, 'async () => { for (;;) {} }');
  await expectTimeout(ex, '() => { while (true) {} }');
  await expectTimeout(ex, 'async () => { let x = 0; for (;;) { x = (x * 31 + 7) | 0; } }');
  // The loop starts only after a tool call has been answered.
  await expectTimeout(ex, 'async () => { await tools.echo(1); for (;;) {} }');
});

test('cpu: infinite loops inside microtasks are stopped', async () => {
  // A microtask that re-queues itself forever without allocating much.
  await expectTimeout(ex, 'async () => { function f() { Promise.resolve().then(f); } f(); await new Promise(() => {}); }');
  // A microtask that spins.
  await expectTimeout(ex, 'async () => { await null; for (;;) {} }');
  // Spinning in a thenable's then().
  await expectTimeout(ex, 'async () => await { then() { for (;;) {} } }');
});

test('cpu: catastrophic regex backtracking is stopped; Atomics.wait cannot block the worker', async () => {
  await expectTimeout(ex, "async () => /(a+)+$/.test('a'.repeat(40) + 'b')");
  // Atomics.wait is either refused outright or ended by the timeout: never a blocked thread.
  const abandonedBefore = ex.stats().abandoned;
  const { out, ms } = await timed(ex, { code: 'async () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)', timeout: 300 });
  assert.equal(typeof out.error, 'string', `Atomics.wait resolved ${JSON.stringify(out.result)}`);
  assert.match(out.error, /^Execution timed out$|Atomics\.wait cannot be called/);
  assert.ok(ms < HOST_BOUND_MS, `answered after ${ms} ms`);
  const stats = ex.stats();
  assert.equal(stats.abandoned, abandonedBefore, `a worker was abandoned: ${JSON.stringify(stats)}`);
  await assertNextRunWorks(ex);
});

test('cpu: spinning getters read by the sandbox itself (error description, result encoding, console) are stopped', async () => {
  await expectTimeout(ex, "async () => { throw { name: 'E', get message() { for (;;) {} } }; }");
  await expectTimeout(ex, 'async () => ({ toJSON() { for (;;) {} } })');
  await expectTimeout(ex, 'async () => { console.log({ toString() { for (;;) {} } }); }');
  await expectTimeout(ex, "async () => { await tools.echo({ toJSON() { for (;;) {} } }); }");
});

test('cpu: a dispatch that never answers cannot hang the run; a late reply is dropped', async () => {
  let late;
  const request = {
    code: 'async () => await tools.echo(1)',
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: () => new Promise((resolve) => { late = resolve; }),
    timeout: 300,
  };
  const { out, ms } = await timed(ex, request);
  assert.equal(out.error, 'Execution timed out');
  assert.ok(ms < HOST_BOUND_MS, `answered after ${ms} ms`);
  assert.equal(typeof late, 'function', 'dispatch was never called');
  late(JSON.stringify({ result: 'too late' })); // must not disturb anything
  await assertNextRunWorks(ex);
  const again = await ex.execute({
    code: 'async () => await tools.echo(41)',
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: (p, t, args) => JSON.stringify({ result: JSON.parse(args)[0] + 1 }),
  });
  assert.equal(again.result, 42);
});

test('cpu (child): TurboFan loop allocating new Array(300) ignores termination; the run is answered and the host keeps serving', async () => {
  const child = await runChild({
    executor: { workers: 2, timeout: 2000, memoryLimitMb: 64 },
    steps: [{
      name: 'tf-hole-timeout',
      code: 'async () => { const keep = []; for (let i = 0; ; i++) { keep[i & 1023] = new Array(300); } }',
      timeout: 300,
      // A normal run started while the attack holds the other worker.
      alongside: 'async () => [1, 2, 3].map((x) => x * 2)',
      alongsideDelayMs: 100,
    }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'tf-hole-timeout');
  assert.equal(step.out.error, 'Execution timed out', JSON.stringify(step.out));
  assert.deepEqual(step.alongside.result, { value: [2, 4, 6] }, `run alongside the attack: ${JSON.stringify(step.alongside)}`);
  assert.ok(step.alongside.ms < HOST_BOUND_MS, `run alongside the attack took ${step.alongside.ms} ms`);
  // Whether the worker had to be abandoned depends on TurboFan having optimized the loop before
  // the deadline; either way the pool must be back to two workers.
  assert.equal(step.stats.workers, 2, `pool did not keep two workers: ${JSON.stringify(step.stats)}`);
});

test('memory (child): TurboFan loop allocating new Array(300) until memory runs out: thread parked, run answered', async () => {
  const child = await runChild({
    executor: { workers: 2, timeout: 5000, memoryLimitMb: 64 },
    steps: [{ name: 'tf-hole-memory', code: 'async () => { const a = []; while (true) a.push(new Array(300)); }' }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'tf-hole-memory');
  assertMemoryError(step);
  assert.equal(step.stats.workers, 2, `pool did not keep two workers: ${JSON.stringify(step.stats)}`);
});

// Regression (found by this corpus, fixed in 5ef26c0 "Weak tool-call callback"): after a run
// whose worker was abandoned, the abandoned thread kept its Job, whose ToolSink owned a ref'd
// ThreadsafeFunction, so the host process could never exit on its own after dispose() (the
// unref'd 5 s timer below fired).
test('host (child): the process can still exit on its own after dispose() following an abandoned worker', async () => {
  const child = await runChild({
    executor: { workers: 1, timeout: 2000, memoryLimitMb: 64 },
    steps: [{
      name: 'tf-hole-then-exit',
      code: 'async () => { const keep = []; for (let i = 0; ; i++) { keep[i & 1023] = new Array(300); } }',
      timeout: 300,
    }],
    exit: 'natural',
    naturalExitMs: 5000,
  });
  assert.ok(child.steps['tf-hole-then-exit'], describeChild(child));
  assert.equal(child.steps['tf-hole-then-exit'].out.error, 'Execution timed out');
  assert.ok(child.disposed, `dispose() never resolved\n${describeChild(child)}`);
  assert.equal(child.stillAlive, undefined,
    `the host process was still alive ${child.stillAlive && child.stillAlive.afterMs} ms after dispose() resolved`);
  assert.equal(child.signal, null, describeChild(child));
  assert.equal(child.code, 0, describeChild(child));
});

// Regression (found by this corpus, fixed in 2555e83 "Guard the callback Array methods"):
// every / some / forEach / map / filter / reduce / reduceRight on an array-like (or sparse
// array) with a huge length and no elements loop inside a builtin (HasProperty per index, never
// calling the callback) that does not honour TerminateExecution. Before the guards, the run was
// answered only by abandoning the worker (~timeout + 2050 ms) and the abandoned thread kept
// spinning at 100% of a core for good. findIndex calls its callback on every index and is
// stopped normally (the control below).
test('array-likes (child): iteration builtins on huge array-likes are stopped without abandoning a spinning worker', async () => {
  const programs = {
    every: 'async () => Array.prototype.every.call({ length: 2 ** 40 }, () => true)',
    some: 'async () => Array.prototype.some.call({ length: 2 ** 40 }, () => false)',
    forEach: 'async () => Array.prototype.forEach.call({ length: 2 ** 40 }, () => 0)',
    map: 'async () => Array.prototype.map.call({ length: 2 ** 32 - 1 }, (x) => x).length',
    filter: 'async () => Array.prototype.filter.call({ length: 2 ** 40 }, (x) => x).length',
    reduce: 'async () => Array.prototype.reduce.call({ length: 2 ** 40 }, (a) => a, 0)',
    reduceRight: 'async () => Array.prototype.reduceRight.call({ length: 2 ** 40 }, (a) => a, 0)',
    'sparse forEach': 'async () => { const a = []; a.length = 2 ** 32 - 1; a.forEach(() => 0); }',
    // Control: calls its callback on every index, so it is stopped normally.
    'findIndex (control)': 'async () => Array.prototype.findIndex.call({ length: 2 ** 40 }, () => false)',
  };
  const names = Object.keys(programs);
  const children = {};
  // Two at a time: each child holds at most one spinning thread.
  for (let i = 0; i < names.length; i += 2) {
    const batch = names.slice(i, i + 2);
    const results = await Promise.all(batch.map((name) => runChild({
      executor: { workers: 1, timeout: 2000, memoryLimitMb: 64 },
      steps: [{ name, code: programs[name], timeout: 300, measureCpuMs: 1000 }],
      exit: 'exit',
    })));
    batch.forEach((name, k) => { children[name] = results[k]; });
  }
  const problems = [];
  for (const name of names) {
    const child = children[name];
    assertChildSurvived(child);
    const step = assertStep(child, name);
    assert.equal(typeof step.out.error, 'string', `${name}: resolved without error ${JSON.stringify(step.out)}`);
    if (step.stats.abandoned !== 0) {
      problems.push(`${name}: answered ${JSON.stringify(step.out.error)} after ${step.ms} ms only by abandoning the worker ` +
        `(abandoned=${step.stats.abandoned}); host CPU over the next second: ${step.cpuFraction.toFixed(2)} cores`);
    }
  }
  assert.deepEqual(problems, [], problems.join('\n'));
});

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

test('memory (child): heap growth of arrays, strings and objects ends with a memory error', async () => {
  const programs = {
    arrays: 'async () => { const keep = []; for (let i = 0; ; i++) keep.push([i, i + 1, i + 2, i + 3]); }',
    strings: "async () => { const keep = []; for (let i = 0; ; i++) keep.push('s' + i + '-' + Math.random()); }",
    objects: 'async () => { const keep = []; for (let i = 0; ; i++) keep.push({ a: i, b: { c: i }, d: [i] }); }',
    'string chunks': "async () => { const keep = []; for (let i = 0; ; i++) keep.push(String(i).padEnd(1000, 'x')); }",
    'microtask chain': 'async () => { Promise.resolve().then(function f() { return Promise.resolve().then(f); }); await new Promise(() => {}); }',
    'closures': 'async () => { let f = () => 0; for (let i = 0; ; i++) { const g = f; f = () => g() + i; } }',
  };
  const child = await runChild({
    executor: { workers: 2, timeout: 20_000, memoryLimitMb: 64 },
    steps: Object.entries(programs).map(([name, code]) => ({ name, code })),
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const name of Object.keys(programs)) assertMemoryError(assertStep(child, name, { boundMs: 30_000 }));
});

test('memory (child): two memory attacks at once on both workers', async () => {
  const code = 'async () => { const keep = []; for (let i = 0; ; i++) keep.push({ i, s: "v" + i }); }';
  const child = await runChild({
    executor: { workers: 2, timeout: 20_000, memoryLimitMb: 64 },
    steps: [{ name: 'both workers', code, alongside: code, alongsideDelayMs: 0 }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'both workers', { boundMs: 30_000 });
  assertMemoryError(step);
  assert.ok(step.alongside.error && step.alongside.error.startsWith('Memory exhausted'), JSON.stringify(step.alongside));
});

test('memory (child): ArrayBuffers, typed arrays and SharedArrayBuffers are bounded by the budget', async () => {
  const programs = {
    'huge ArrayBuffer': 'async () => new ArrayBuffer(2 ** 31).byteLength',
    'many 4 MiB ArrayBuffers': 'async () => { const keep = []; for (;;) keep.push(new ArrayBuffer(4 * 2 ** 20)); }',
    'many 1 MiB typed arrays': 'async () => { const keep = []; for (;;) keep.push(new Float64Array(2 ** 17)); }',
    'typed array from array-like': 'async () => new Float64Array({ length: 2 ** 40 }).length',
    'many SharedArrayBuffers': 'async () => { const keep = []; for (;;) keep.push(new SharedArrayBuffer(4 * 2 ** 20)); }',
    'ArrayBuffer.prototype.transfer': 'async () => new ArrayBuffer(8).transfer(2 ** 30).byteLength',
  };
  const child = await runChild({
    executor: { workers: 2, timeout: 20_000, memoryLimitMb: 64 },
    steps: Object.entries(programs).map(([name, code]) => ({ name, code })),
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const name of Object.keys(programs)) assertMemoryError(assertStep(child, name, { boundMs: 30_000 }));
});

// FINDING (fixed): resizable ArrayBuffers and growable SharedArrayBuffers bypass the ArrayBuffer budget
// entirely (V8 reserves and commits their pages itself, not through the ArrayBuffer::Allocator).
// Observed with memoryLimitMb 64: `b = new ArrayBuffer(0, { maxByteLength: 2 ** 30 });
// b.resize(2 ** 29); new Uint8Array(b).fill(1)` RESOLVES with result 536870912 and the host RSS
// grows by ~480 MB; three such buffers grew host RSS by ~1.5 GB in one run; with maxByteLength
// 2 ** 32 the host reached 2.1 GB. Nothing stops a program from taking all of the host's memory.
test('memory (child): resizable ArrayBuffer and growable SharedArrayBuffer are bounded by the budget', async () => {
  const programs = {
    'resizable ArrayBuffer': 'async () => { const b = new ArrayBuffer(0, { maxByteLength: 2 ** 30 }); b.resize(2 ** 29); new Uint8Array(b).fill(1); return b.byteLength; }',
    'growable SharedArrayBuffer': 'async () => { const b = new SharedArrayBuffer(0, { maxByteLength: 2 ** 30 }); b.grow(2 ** 29); new Uint8Array(b).fill(1); return b.byteLength; }',
  };
  const child = await runChild({
    executor: { workers: 1, timeout: 20_000, memoryLimitMb: 64 },
    steps: Object.entries(programs).map(([name, code]) => ({ name, code })),
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const name of Object.keys(programs)) {
    // Resizable buffers are refused up front: their maximum length counts against the budget.
    const step = assertStep(child, name, { boundMs: 30_000 });
    assert.match(step.out.error, /maxByteLength \d+ exceeds the sandbox's memory budget of 67108864 bytes/, name);
  }
});

// FINDING (fixed): the wrapper read `maxByteLength` twice (and V8 a third time), and only for
// `typeof options === 'object'`. A getter answering 16 to the checks and 2 ** 33 to V8, or a
// function as the options object, resolved with a 4 GiB buffer filled (4.2 GB host RSS at
// memoryLimitMb 64), for ArrayBuffer and SharedArrayBuffer alike.
test('memory (child): maxByteLength is read once, also from function options, and V8 gets the checked value', async () => {
  const getter = 'let n = 0; const opts = { get maxByteLength() { return ++n <= 2 ? 16 : 2 ** 33; } };';
  const programs = {
    'getter answering twice': `async () => { ${getter} const b = new ArrayBuffer(0, opts); let grew = true; try { b.resize(2 ** 32); } catch { grew = false; } return [n, b.maxByteLength, grew]; }`,
    'valueOf answering twice': 'async () => { let n = 0; const big = { valueOf() { return ++n <= 1 ? 16 : 2 ** 33; } }; const b = new ArrayBuffer(0, { maxByteLength: big }); let grew = true; try { b.resize(2 ** 32); } catch { grew = false; } return [n, b.maxByteLength, grew]; }',
    'function as options': 'async () => { const opts = function () {}; opts.maxByteLength = 2 ** 33; const b = new ArrayBuffer(0, opts); b.resize(2 ** 32); return b.byteLength; }',
    'growable SharedArrayBuffer, function options': 'async () => { const opts = function () {}; opts.maxByteLength = 2 ** 33; const b = new SharedArrayBuffer(0, opts); b.grow(2 ** 32); return b.byteLength; }',
    'Reflect.construct replaced': 'async () => { Reflect.construct = (O, args, nt) => new O(args[0], { maxByteLength: 2 ** 33 }); const b = new ArrayBuffer(0, { maxByteLength: 16 }); return b.maxByteLength; }',
  };
  const child = await runChild({
    executor: { workers: 1, timeout: 20_000, memoryLimitMb: 64 },
    steps: Object.entries(programs).map(([name, code]) => ({ name, code })),
    exit: 'exit',
  });
  assertChildSurvived(child);
  const out = (name) => assertStep(child, name, { boundMs: 30_000 }).out;
  assert.deepEqual(out('getter answering twice').result, { value: [1, 16, false] });
  assert.deepEqual(out('valueOf answering twice').result, { value: [1, 16, false] });
  assert.match(out('function as options').error, /maxByteLength 8589934592 exceeds the sandbox's memory budget/);
  assert.match(out('growable SharedArrayBuffer, function options').error, /maxByteLength 8589934592 exceeds the sandbox's memory budget/);
  assert.deepEqual(out('Reflect.construct replaced').result, { value: 16 });
});

test('memory (child): string doubling and huge string building stop with an error', async () => {
  const programs = {
    doubling: "async () => { let s = 'x'; for (;;) s = s + s; }",
    'doubling 40 times': "async () => { let s = 'ab'; for (let i = 0; i < 40; i++) s += s; return s.length; }",
    'repeat past max length': "async () => 'x'.repeat(2 ** 30).length",
    'JSON of a huge sparse array': 'async () => { const a = []; a.length = 2 ** 32 - 1; return JSON.stringify(a).length; }',
  };
  const child = await runChild({
    executor: { workers: 2, timeout: 20_000, memoryLimitMb: 64 },
    steps: Object.entries(programs).map(([name, code]) => ({ name, code })),
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const name of Object.keys(programs)) {
    const step = assertStep(child, name, { boundMs: 30_000 });
    assert.equal(typeof step.out.error, 'string', `${name}: resolved without error ${JSON.stringify(step.out)}`);
    assert.match(step.out.error, /Invalid string length|Memory exhausted/, `${name}: ${step.out.error}`);
  }
});

// Map / Set growth: the hash table's rehash is one large allocation. On the build of 15:47 it
// intermittently aborted the process (about 1 run in 10: SIGTRAP, "# Fatal JavaScript out of
// memory: CALL_AND_RETRY_LAST") when the near-heap-limit grant was current + max(initial/4,
// 8 MB); with the larger grant of 3be2198 no abort was seen in 15 runs. Repeated to catch a
// regression.
test('memory (child): Map and Set growth end with a memory error, never a process abort', async () => {
  const steps = [];
  for (let i = 0; i < 3; i++) {
    steps.push({ name: `Map #${i}`, code: 'async () => { const m = new Map(); for (let i = 0; ; i++) m.set(i, i); }' });
    steps.push({ name: `Set #${i}`, code: 'async () => { const s = new Set(); for (let i = 0; ; i++) s.add(i); }' });
  }
  const child = await runChild({
    executor: { workers: 1, timeout: 20_000, memoryLimitMb: 64 },
    steps,
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const { name } of steps) assertMemoryError(assertStep(child, name, { boundMs: 30_000 }));
});

// FINDING (fixed): a single allocation far larger than the heap limit is accepted, and the next GC then
// ABORTS THE HOST PROCESS (deterministic). Observed with memoryLimitMb 64:
//   `async () => { const a = new Array(2 ** 25); const b = []; for (let i = 0; i < 1e5; i++) b.push({ i }); return 1 }`
//   → process killed by SIGTRAP (exit 133), stderr "# Fatal JavaScript out of memory: Reached
//   heap limit" (last GCs: "Mark-Compact (reduce) 256.4 (256.5) -> 256.4 (256.5) MB").
//   `new Array(2 ** 25).fill(0)` aborts too (the guard's RangeError allocation triggers the GC).
//   `new Array(2 ** 24)` (128 MB) followed by allocation aborts sometimes (always on the 15:47
//   build; on the 16:03 build once in the test run, not in a separate probe with timeout 5000).
//   Only `new Array(2 ** 23)` (64 MB) reliably ends with 'Memory exhausted'.
//   `async () => { const a = 'x'.repeat(2 ** 28); a.indexOf('y'); const k = []; for (let i = 0; i < 1e5; i++) k.push({ i }); }`
//   (flattening makes a 256 MB string) → same abort.
// `new Array(2 ** 25)` alone resolves with its length (RSS +256 MB), and
// `'x'.repeat(2 ** 29 - 24)` + indexOf alone resolves with a result (RSS +511 MB): the heap
// limit is not enforced for one large object. The near-heap-limit callback grants relative to
// the current *limit*; when one object already put the heap far above it, two grants still
// leave the limit below the heap's actual size, and V8 gives up.
test('memory (child): one allocation far beyond the heap limit ends the run, never the process', async () => {
  const programs = {
    'new Array(2 ** 25) then allocate': 'async () => { const a = new Array(2 ** 25); const b = []; for (let i = 0; i < 1e5; i++) b.push({ i }); return a.length + b.length; }',
    'new Array(2 ** 24) then allocate': 'async () => { const a = new Array(2 ** 24); const b = []; for (let i = 0; i < 1e5; i++) b.push({ i }); return a.length + b.length; }',
    'new Array(2 ** 25).fill(0)': 'async () => new Array(2 ** 25).fill(0).length',
    'flat 256 MB string then allocate': "async () => { const s = 'x'.repeat(2 ** 28); s.indexOf('y'); const k = []; for (let i = 0; i < 1e5; i++) k.push({ i }); return s.length; }",
    'flat 512 MB string': "async () => { const s = 'x'.repeat(2 ** 29 - 24); return s.indexOf('y'); }",
  };
  const EXPECTED_BIG_ALLOCATION = {
    'new Array(2 ** 25) then allocate': 'memory',
    'new Array(2 ** 24) then allocate': 'memory',
    'new Array(2 ** 25).fill(0)': /Array\.prototype\.fill: length 33554432 exceeds the sandbox limit|Memory exhausted/,
    'flat 256 MB string then allocate': 'memory',
    'flat 512 MB string': /"value":-1|Memory exhausted/,
  };
  // One child per program: an abort must not hide the others.
  const problems = [];
  for (const [name, code] of Object.entries(programs)) {
    const child = await runChild({
      executor: { workers: 1, timeout: 20_000, memoryLimitMb: 64 },
      steps: [{ name, code }],
      exit: 'exit',
    });
    if (child.code !== 0 || child.signal !== null || !child.steps[name]) {
      const fatal = /#\s*(Fatal[^\n]*)/.exec(child.stderrTail);
      problems.push(`${name}: host process died: exit code=${child.code} signal=${child.signal} ${fatal ? fatal[1] : child.stderrTail.slice(-300)}`);
      continue;
    }
    const step = child.steps[name];
    // The budget applies to the live heap, measured after each collection and at the end of the
    // run; one object may exceed it transiently (V8's hard limit sits 1280 MB above the budget
    // so that such an allocation never aborts the process). So: a run whose big object is
    // still alive when memory is measured fails with the memory error; a run that drops it
    // before any collection may complete. Either way the process lives and RSS stays bounded.
    const expected = EXPECTED_BIG_ALLOCATION[name];
    const ok = expected === 'memory'
      ? typeof step.out.error === 'string' && step.out.error.startsWith('Memory exhausted')
      : expected.test(JSON.stringify(step.out));
    if (!ok) {
      problems.push(`${name}: resolved ${JSON.stringify(step.out).slice(0, 200)} with host RSS growth ${(child.done.peakGrowth / MB).toFixed(0)} MB (memoryLimitMb 64)`);
    }
    assertStep(child, name, { boundMs: 30_000 });
  }
  assert.deepEqual(problems, [], problems.join('\n'));
});

// ---------------------------------------------------------------------------------------------
// Array-like builtins (guarded)
// ---------------------------------------------------------------------------------------------

test('array-likes (child): guarded builtins refuse huge array-likes and sparse arrays', async () => {
  const likes = {
    'includes 2**40': 'async () => Array.prototype.includes.call({ length: 2 ** 40 }, 1)',
    'indexOf 2**40': 'async () => Array.prototype.indexOf.call({ length: 2 ** 40 }, 1)',
    'lastIndexOf 2**40': 'async () => Array.prototype.lastIndexOf.call({ length: 2 ** 40 }, 1)',
    'sort 2**27+100': 'async () => Array.prototype.sort.call({ length: 2 ** 27 + 100 })',
    'toSorted 2**27+100': 'async () => Array.prototype.toSorted.call({ length: 2 ** 27 + 100 }).length',
  };
  const receivers = {
    'array-like 2**32-1': '({ length: 2 ** 32 - 1 })',
    'sparse array 2**32-1': '(() => { const a = []; a.length = 2 ** 32 - 1; return a; })()',
    'proxy of sparse array': '(() => { const a = []; a.length = 2 ** 32 - 1; return new Proxy(a, {}); })()',
  };
  const calls = {
    fill: 'fill(0)', reverse: 'reverse()', copyWithin: 'copyWithin(0, 1)', toReversed: 'toReversed()',
    with: 'with(0, 1)', toSpliced: 'toSpliced(0, 1)', sort: 'sort()', includes: 'includes(1)', join: 'join()',
    splice: 'splice(0, 1)', unshift: 'unshift(1)', flat: 'flat()', slice: 'slice(0)',
  };
  const programs = { ...likes };
  for (const [rname, receiver] of Object.entries(receivers)) {
    for (const [mname, call] of Object.entries(calls)) {
      const method = call.slice(0, call.indexOf('('));
      const args = call.slice(call.indexOf('(') + 1, -1);
      programs[`${mname} on ${rname}`] =
        `async () => { const r = ${receiver}; return Array.prototype.${method}.call(r${args ? ', ' + args : ''}) === undefined; }`;
    }
  }
  const child = await runChild({
    executor: { workers: 2, timeout: 5000, memoryLimitMb: 64 },
    steps: Object.entries(programs).map(([name, code]) => ({ name, code })),
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const name of Object.keys(programs)) {
    const step = assertStep(child, name);
    assert.equal(typeof step.out.error, 'string', `${name}: resolved without error ${JSON.stringify(step.out)}`);
    assert.match(step.out.error, /exceeds the sandbox limit of \d+ elements/, `${name}: ${step.out.error}`);
    assert.equal(step.stats.abandoned, 0, `${name}: a worker was abandoned`);
  }
});

test('array-likes: proxy receivers whose length changes between reads', async () => {
  // Small on the first read (the guard's), huge afterwards: the builtin must only see the copy.
  const growing = `async () => {
    const reads = { n: 0 };
    const p = new Proxy([3, 1, 2, 5, 4], { get(t, k) { if (k === 'length') return reads.n++ === 0 ? 5 : 2 ** 40; return t[k]; } });
    const sorted = Array.prototype.sort.call(p);
    return { same: sorted === p, first: [p[0], p[1], p[2], p[3], p[4]], reads: reads.n };
  }`;
  const { out, ms } = await timed(ex, { code: growing, timeout: 2000 });
  assert.equal(out.error, undefined, out.error);
  assert.ok(ms < HOST_BOUND_MS);
  assert.deepEqual(out.result.first, [1, 2, 3, 4, 5]);
  assert.equal(out.result.same, true);

  // Huge on the first read: refused.
  const shrinking = `async () => {
    let n = 0;
    const p = new Proxy([], { get(t, k) { if (k === 'length') return n++ === 0 ? 2 ** 40 : 5; return t[k]; } });
    return Array.prototype.fill.call(p, 0);
  }`;
  const second = await timed(ex, { code: shrinking, timeout: 2000 });
  assert.match(second.out.error || '', /exceeds the sandbox limit/);

  // Length as a valueOf that changes its mind, through every guarded mutating method.
  const tricky = `async () => {
    const results = {};
    for (const m of ['fill', 'reverse', 'copyWithin', 'sort', 'splice', 'unshift', 'includes', 'toReversed', 'with', 'toSpliced']) {
      let n = 0;
      const obj = { 0: 1, 1: 2, 2: 3, get length() { n++; return n === 1 ? 3 : 2 ** 32 - 1; } };
      try {
        const args = m === 'with' ? [0, 9] : m === 'copyWithin' ? [0, 1] : m === 'splice' ? [0, 1] : m === 'unshift' ? [0] : m === 'fill' ? [0] : m === 'includes' ? [3] : m === 'toSpliced' ? [0, 1] : [];
        Array.prototype[m].apply(obj, args);
        results[m] = 'ok';
      } catch (e) { results[m] = e.name; }
    }
    return results;
  }`;
  const third = await timed(ex, { code: tricky, timeout: 5000 });
  assert.equal(third.out.error, undefined, third.out.error);
  assert.ok(third.ms < HOST_BOUND_MS, `took ${third.ms} ms`);
  for (const [m, r] of Object.entries(third.out.result)) assert.ok(r === 'ok' || r === 'RangeError' || r === 'TypeError', `${m}: ${r}`);
  await assertNextRunWorks(ex);
});

// ---------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------

test('messages: oversized tool arguments end the run before the host sees them', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await small.execute({
    code: "async () => { await tools.echo('ok'); await tools.echo('x'.repeat(5000)); return 'not reached'; }",
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch,
  });
  assert.match(out.error || '', /maxArgsBytes/);
  assert.equal(out.result, undefined);
  assert.deepEqual(calls.map((c) => c.argsJson), ['["ok"]'], 'the oversized call reached the host');
  await assertNextRunWorks(small);
});

test('messages (child): 128 MB of tool arguments is refused with host RSS bounded', async () => {
  const child = await runChild({
    executor: { workers: 1, timeout: 10_000, memoryLimitMb: 512 },
    steps: [{ name: 'huge args', code: "async () => { await tools.echo('x'.repeat(2 ** 27)); return 'not reached'; }" }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'huge args', { boundMs: 30_000 });
  assert.match(step.out.error || '', /maxArgsBytes/);
  assert.equal(step.dispatchedCount, 0, 'the oversized call reached the host');
});

test('messages: an oversized reply from dispatch ends the run', async () => {
  const out = await small.execute({
    code: 'async () => { const r = await tools.big(); return typeof r; }',
    providers: [{ name: 'tools', tools: ['big'] }],
    dispatch: () => JSON.stringify({ result: 'y'.repeat(10_000) }),
  });
  assert.match(out.error || '', /maxReplyBytes/);
  assert.equal(out.result, undefined);
  await assertNextRunWorks(small);
});

test('messages: too many tool calls, sequential and in parallel', async () => {
  for (const code of [
    'async () => { for (let i = 0; i < 100; i++) await tools.echo(i); return "done"; }',
    'async () => { await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.echo(i))); return "done"; }',
    'async () => { for (let i = 0; i < 1e6; i++) tools.echo(i).catch(() => {}); await new Promise(() => {}); }',
  ]) {
    const { calls, dispatch } = recordingDispatch();
    const { out, ms } = await timed(small, { code, providers: [{ name: 'tools', tools: ['echo'] }], dispatch });
    assert.match(out.error || '', /maxToolCalls/, code);
    assert.ok(calls.length <= 5, `${calls.length} calls reached the host (maxToolCalls 5)`);
    assert.ok(ms < HOST_BOUND_MS, `answered after ${ms} ms`);
    await assertNextRunWorks(small);
  }
});

test('messages: log floods by lines and by bytes', async () => {
  const lines = await small.execute({ code: 'async () => { for (let i = 0; ; i++) console.log(i); }' });
  assert.match(lines.error || '', /maxLogLines/);
  assert.ok(lines.logs.length <= 20, `${lines.logs.length} lines kept`);

  const oneBig = await small.execute({ code: "async () => { console.log('x'.repeat(100000)); return 1; }" });
  assert.match(oneBig.error || '', /maxLogBytes/);
  assert.ok(oneBig.logs.join('').length <= 1024);

  const manySmall = await small.execute({ code: "async () => { for (let i = 0; i < 19; i++) console.error('y'.repeat(100)); return 1; }" });
  assert.match(manySmall.error || '', /maxLogBytes/);
  assert.ok(manySmall.logs.join('').length <= 1024, `${manySmall.logs.join('').length} bytes kept`);

  const viaToString = await small.execute({ code: "async () => { console.warn({ toString() { return 'z'.repeat(50000); } }); return 1; }" });
  assert.match(viaToString.error || '', /maxLogBytes/);
  await assertNextRunWorks(small);
});

test('messages: oversized results, directly and through toJSON', async () => {
  for (const code of [
    "async () => 'x'.repeat(5000)",
    'async () => Array.from({ length: 2000 }, (_, i) => i)',
    "async () => ({ toJSON() { return 'x'.repeat(100000); } })",
    "async () => { const o = {}; for (let i = 0; i < 200; i++) o['k' + i] = i; return o; }",
  ]) {
    const out = await small.execute({ code });
    assert.match(out.error || '', /maxResultBytes/, `${code}: ${JSON.stringify(out).slice(0, 200)}`);
    assert.equal(out.result, undefined);
  }
  await assertNextRunWorks(small);
});

test('messages: results with cycles, functions, symbols, BigInt cannot be transferred', async () => {
  for (const code of [
    'async () => { const a = {}; a.self = a; return a; }',
    'async () => { const a = [1]; a.push(a); return a; }',
    'async () => () => 1',
    'async () => ({ nested: { f() {} } })',
    "async () => Symbol('s')",
    "async () => ({ s: Symbol('s') })",
    'async () => 10n',
    'async () => [1, 2, 3n]',
    'async () => { let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return a; }',
  ]) {
    const { out, ms } = await timed(ex, { code });
    assert.equal(typeof out.error, 'string', `${code}: resolved ${JSON.stringify(out.result)}`);
    assert.match(out.error, /could not be transferred/, `${code}: ${out.error}`);
    assert.equal(out.result, undefined);
    assert.ok(ms < HOST_BOUND_MS);
  }
  await assertNextRunWorks(ex);
});

test('messages: oversized program source is refused', async () => {
  const code = `async () => ${JSON.stringify('x'.repeat(70 * 1024))}.length`;
  const out = await small.execute({ code });
  assert.match(out.error || '', /maxCodeBytes/);
  await assertNextRunWorks(small);
});

// FINDING (fixed): the text of a thrown value is bounded by nothing. Observed with memoryLimitMb 64:
// `async () => { throw 'x'.repeat(2 ** 29 - 24) }` resolves with an `error` string of 536870888
// characters; host RSS grew ~517 MB in the run (peak 1.1 GB for the process). `throw
// 'x'.repeat(2 ** 28)` gives a 268435456-character error (+261 MB). Messages are otherwise
// bounded (maxResultBytes, maxLogBytes...), so the error text is a way around them; two workers
// doing this at once push the host past 2 GB.
test('messages (child): the error text of a thrown huge string is bounded', async () => {
  const child = await runChild({
    executor: {
      workers: 1, timeout: 20_000, memoryLimitMb: 64,
      limits: { maxResultBytes: MB, maxLogBytes: MB, maxArgsBytes: MB, maxReplyBytes: MB },
    },
    steps: [
      { name: 'throw 256M string', code: "async () => { throw 'x'.repeat(2 ** 28); }" },
      { name: 'Error with 64M message', code: "async () => { throw new Error('m'.repeat(2 ** 26)); }" },
    ],
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const name of ['throw 256M string', 'Error with 64M message']) {
    const step = assertStep(child, name, { boundMs: 30_000 });
    assert.equal(typeof step.out.error, 'string');
    assert.ok(step.out.errorLength <= 4 * MB,
      `${name}: the host received an error text of ${step.out.errorLength} characters (every size limit is 1 MiB); host RSS +${(step.rssGrowth / MB).toFixed(0)} MB`);
  }
});

// ---------------------------------------------------------------------------------------------
// Escape attempts
// ---------------------------------------------------------------------------------------------

test('escape: host globals are absent; import() and fetch are refused', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await ex.execute({
    code: `async () => {
      const seen = {
        process: typeof process, require: typeof require, module: typeof module, exports: typeof exports,
        Buffer: typeof Buffer, WebAssembly: typeof WebAssembly, globalProcess: typeof globalThis.process,
        __dirname: typeof __dirname,
      };
      try { await import('fs'); seen.import = 'imported'; } catch (e) { seen.import = 'rejected'; }
      try { await import('node:child_process'); seen.import2 = 'imported'; } catch (e) { seen.import2 = 'rejected'; }
      try { await fetch('http://127.0.0.1:1/'); seen.fetch = 'fetched'; } catch (e) { seen.fetch = 'rejected'; }
      return seen;
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch,
  });
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, {
    process: 'undefined', require: 'undefined', module: 'undefined', exports: 'undefined', Buffer: 'undefined',
    WebAssembly: 'undefined', globalProcess: 'undefined', __dirname: 'undefined',
    import: 'rejected', import2: 'rejected', fetch: 'rejected',
  });
  assert.equal(calls.length, 0);
});

test('escape: constructor chains (from provider proxies, tools, console, fetch, globalThis) reach no host object', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await ex.execute({
    code: `async () => {
      const attempts = {
        toolsCtor: () => tools.constructor.constructor('return typeof process')(),
        toolsCtorThis: async () => typeof (await tools.constructor.constructor('return this')()).process,
        toolCtor: () => tools.echo.constructor.constructor('return typeof process')(),
        toolsProto: () => tools.__proto__.constructor.constructor('return typeof require')(),
        protoOf: () => Object.getPrototypeOf(tools).constructor.constructor('return typeof process')(),
        functionThis: () => typeof Function('return this')().process,
        indirectEval: () => typeof (0, eval)('this').process,
        consoleCtor: () => console.log.constructor('return typeof process')(),
        fetchCtor: () => fetch.constructor('return typeof require')(),
        globalCtor: () => globalThis.constructor.constructor('return typeof process')(),
        generator: () => (function* () {}).constructor('return typeof process')().next().value,
        errorCtor: () => new Error().constructor.constructor('return typeof process')(),
        toolsKeys: () => JSON.stringify(Reflect.ownKeys(tools)),
      };
      const out = {};
      for (const [k, f] of Object.entries(attempts)) {
        try { out[k] = String(await f()); } catch (e) { out[k] = 'threw'; }
      }
      return out;
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch,
  });
  assert.equal(out.error, undefined, out.error);
  for (const [k, v] of Object.entries(out.result)) {
    if (k === 'toolsKeys') assert.equal(v, '[]');
    else assert.ok(v === 'undefined' || v === 'threw', `${k} reached ${v}`);
  }
  // Calling tools.constructor etc. makes tool calls for unknown tools: none may reach the host.
  assert.deepEqual(calls, []);
});

test('escape: Error.prepareStackTrace exposes no sandbox internals and cannot bypass the tool list', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await ex.execute({
    code: `async function main() {
      const found = new Set();
      Error.stackTraceLimit = Infinity;
      Error.prepareStackTrace = (e, frames) => {
        for (const f of frames) {
          try { const fn = f.getFunction(); if (typeof fn === 'function') found.add(fn); } catch {}
          try { const th = f.getThis(); if (typeof th === 'function') found.add(th); } catch {}
        }
        return 'captured';
      };
      const probes = [
        () => tools.echo(1n),
        () => tools.echo({ toJSON() { return new Error('inside stringify').stack; } }),
        () => tools.missing(),
        () => Array.prototype.includes.call(null),
        () => Array.prototype.sort.call({ length: 2, get 0() { return new Error('inside guard').stack; } }),
        () => [3, 1, 2].sort(() => { throw new Error('inside comparator'); }),
        () => console.log({ toString() { return new Error('inside console').stack; } }),
        () => fetch('x'),
      ];
      for (const p of probes) { try { await p(); } catch (e) { void e.stack; } }
      const source = main.toString();
      const foreign = [...found].filter((f) => {
        const text = Function.prototype.toString.call(f);
        return !source.includes(text) && !text.includes('[native code]');
      });
      // Whatever leaked, try it as the raw tool-call native: ('tools', 'secret', '[]').
      for (const f of foreign) { try { const r = f('tools', 'secret', '[]'); if (r && r.then) await r.catch(() => {}); } catch {} }
      return { found: found.size, foreign: foreign.map((f) => Function.prototype.toString.call(f).slice(0, 80)) };
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch,
  });
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result.foreign, [], 'functions of the sandbox leaked through stack frames');
  assert.ok(calls.every((c) => c.tool === 'echo'), `host saw ${JSON.stringify(calls)}`);
  assert.ok(!calls.some((c) => c.tool === 'secret'));

  // A prepareStackTrace that spins or throws must not disturb error reporting.
  const spin = await timed(ex, { code: "async () => { Error.prepareStackTrace = () => { for (;;) {} }; throw new Error('boom'); }", timeout: 1000 });
  assert.ok(spin.out.error === 'boom' || spin.out.error === 'Execution timed out', spin.out.error);
  assert.ok(spin.ms < HOST_BOUND_MS);
  const thrower = await ex.execute({ code: "async () => { Error.prepareStackTrace = () => { throw new Error('pst'); }; throw new Error('boom'); }" });
  assert.equal(typeof thrower.error, 'string');
  await assertNextRunWorks(ex);
});

test('escape: overwriting JSON, prototypes and Reflect before tool calls leaves the host args valid', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await solo.execute({
    code: `async () => {
      JSON.stringify = () => '{broken';
      JSON.parse = () => ({ result: 'forged' });
      Object.prototype.polluted = 'yes';
      Array.prototype.push = function () { throw new Error('push hijacked'); };
      Array.prototype[Symbol.iterator] = function* () { yield 'forged'; };
      Function.prototype.call = Function.prototype.apply = function () { throw new Error('call hijacked'); };
      Reflect.apply = () => { throw new Error('Reflect.apply hijacked'); };
      Set.prototype.has = () => true;
      Object.defineProperty = () => { throw new Error('defineProperty hijacked'); };
      String.prototype.toString = () => 'forged';
      Promise.prototype.then = function () { throw new Error('then hijacked'); };
      const r = await tools.echo({ a: 1 }, [2, 3], 'four');
      let secret;
      try { await tools.secret(); secret = 'reached'; } catch (e) { secret = e.message; }
      return { r, secret };
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch,
  });
  assert.deepEqual(calls.map((c) => [c.provider, c.tool, c.argsJson]), [['tools', 'echo', '[{"a":1},[2,3],"four"]']]);
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, { r: [{ a: 1 }, [2, 3], 'four'], secret: 'Tool "secret" not found' });
  const next = await solo.execute({
    code: 'async () => [typeof Object.prototype.polluted, JSON.stringify([1, { a: 2 }]), typeof Array.prototype.push, Set.prototype.has.call(new Set(), 1), typeof Reflect.apply]',
  });
  assert.deepEqual(next.result, ['undefined', '[1,{"a":2}]', 'function', false, 'function']);
});

// FINDING (fixed): a program can make the host receive tool arguments that are not a JSON array. The
// bootstrap serializes the argument array with the captured JSON.stringify, but that still
// honours a `toJSON` found on Array.prototype / Object.prototype. Observed:
//   `async () => { Array.prototype.toJSON = function () { return 'pwned' }; return await tools.echo(1, 2) }`
//   → dispatch receives argsJson === '"pwned"' (also with Object.prototype.toJSON). With
//   `toJSON() { return { length: 4294967295 } }` a host that does `Array.from(JSON.parse(argsJson))`
//   or `fn.apply(null, JSON.parse(argsJson))` allocates/throws on attacker-chosen shapes; the
//   documented contract is "argsJson is the JSON text of the argument array".
test('escape: Array.prototype.toJSON / Object.prototype.toJSON cannot change the shape of argsJson', async () => {
  for (const proto of ['Array.prototype', 'Object.prototype']) {
    const { calls, dispatch } = recordingDispatch();
    const out = await ex.execute({
      code: `async () => { ${proto}.toJSON = function () { return { length: 4294967295 }; }; return await tools.echo(1, 2); }`,
      providers: [{ name: 'tools', tools: ['echo'] }],
      dispatch,
    });
    assert.equal(calls.length, 1, `${proto}: ${JSON.stringify(out)}`);
    const parsed = JSON.parse(calls[0].argsJson);
    assert.ok(Array.isArray(parsed), `${proto}.toJSON: the host received argsJson ${calls[0].argsJson}, not an argument array`);
  }
  await assertNextRunWorks(ex);
});

// ---------------------------------------------------------------------------------------------
// State leaks between runs
// ---------------------------------------------------------------------------------------------

test('state: globals and prototypes modified in run 1 are not visible in run 2 (same worker thread)', async () => {
  const first = await solo.execute({
    code: `async () => {
      globalThis.leak = 'from run 1';
      (0, eval)('var leakedVar = 1');
      implicitGlobal = 1;
      Object.prototype.pollutedObject = 1;
      Array.prototype.pollutedArray = 1;
      Array.prototype.map = () => 'hijacked map';
      String.prototype.trim = () => 'hijacked trim';
      Math.random = () => 4;
      Date.now = () => 0;
      JSON.stringify = () => 'hijacked stringify';
      Symbol.for('run1');
      console.log = () => { throw new Error('console hijacked'); };
      Object.defineProperty(tools, 'echo', { value: () => 'hijacked tool' });
      Object.freeze(Object.prototype);
      return 'run 1 done';
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: () => JSON.stringify({ result: 'host echo' }),
  });
  assert.equal(first.result, 'run 1 done', first.error);
  const second = await solo.execute({
    code: `async () => {
      console.log('run 2 logs');
      return {
        leak: typeof globalThis.leak, leakedVar: typeof leakedVar, implicitGlobal: typeof implicitGlobal,
        pollutedObject: typeof ({}).pollutedObject, pollutedArray: typeof [].pollutedArray,
        map: [1, 2].map((x) => x + 1), trim: '  t  '.trim(), random: Math.random() < 1, now: Date.now() > 0,
        stringify: JSON.stringify({ a: 1 }), frozen: Object.isFrozen(Object.prototype),
        tool: await tools.echo(),
      };
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: () => JSON.stringify({ result: 'host echo' }),
  });
  assert.equal(second.error, undefined, second.error);
  assert.deepEqual(second.logs, ['run 2 logs']);
  assert.deepEqual(second.result, {
    leak: 'undefined', leakedVar: 'undefined', implicitGlobal: 'undefined', pollutedObject: 'undefined', pollutedArray: 'undefined',
    map: [2, 3], trim: 't', random: true, now: true, stringify: '{"a":1}', frozen: false, tool: 'host echo',
  });
});

test('state: concurrent runs on two workers do not see each other', async () => {
  const writer = (tag) => `async () => {
    globalThis.shared = '${tag}';
    Object.prototype.owner = '${tag}';
    await new Promise((r) => { let n = 0; const spin = () => (++n < 2000 ? Promise.resolve().then(spin) : r()); spin(); });
    return [globalThis.shared, ({}).owner];
  }`;
  const [a, b] = await Promise.all([ex.execute({ code: writer('A') }), ex.execute({ code: writer('B') })]);
  assert.deepEqual(a.result, ['A', 'A']);
  assert.deepEqual(b.result, ['B', 'B']);
  const c = await ex.execute({ code: 'async () => [typeof globalThis.shared, typeof ({}).owner]' });
  assert.deepEqual(c.result, ['undefined', 'undefined']);
});

// ---------------------------------------------------------------------------------------------
// Web APIs of the sandbox (timers, structuredClone, encoders, crypto)
// ---------------------------------------------------------------------------------------------

test('web APIs (child): timers, queueMicrotask, structuredClone, encoders and crypto under attack stay bounded', async () => {
  const TIMED_OUT = /^Execution timed out$/;
  const MEMORY = /^Memory exhausted/;
  const programs = {
    'timer flood': ['async () => { for (;;) setTimeout(() => {}, 1e9); }', /maxTimers/],
    'interval with a spinning callback': ['async () => { setInterval(() => { for (;;) {} }, 1); await new Promise(() => {}); }', TIMED_OUT, 300],
    'awaiting a 24-day setTimeout': ["async () => { await new Promise((r) => setTimeout(r, 2 ** 31 - 1)); return 'woke'; }", TIMED_OUT, 300],
    'queueMicrotask loop': ['async () => { (function f() { queueMicrotask(f); })(); await new Promise(() => {}); }', TIMED_OUT, 300],
    'timer chain that allocates': ['async () => { const keep = []; await new Promise(() => { (function f() { keep.push(new Array(1000).fill(1)); setTimeout(f, 0); })(); }); }', MEMORY],
    'structuredClone of deep nesting': ['async () => { let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return structuredClone(a).length; }', /call stack/],
    'structuredClone doubling': ['async () => { let o = { a: [1, 2, 3] }; for (;;) o = { l: structuredClone(o), r: structuredClone(o) }; }', /^Execution timed out$|^Memory exhausted/, 1000],
    'TextEncoder on 128M chars': ["async () => new TextEncoder().encode('x'.repeat(2 ** 27)).length", MEMORY],
    'btoa on 64M chars': ["async () => btoa('x'.repeat(2 ** 26)).length", MEMORY],
    'atob on 64M chars': ["async () => atob('QUFB'.repeat(2 ** 24)).length", MEMORY],
    'getRandomValues with a lying byteLength': ['async () => { const a = new Uint8Array(16); let n = 0; Object.defineProperty(a, "byteLength", { get() { return n++ ? 2 ** 31 : 16; } }); crypto.getRandomValues(a); return n; }', /./],
  };
  const child = await runChild({
    executor: { workers: 2, timeout: 20_000, memoryLimitMb: 64 },
    steps: Object.entries(programs).map(([name, [code, , timeout]]) => ({ name, code, timeout })),
    exit: 'exit',
  });
  assertChildSurvived(child);
  for (const [name, [, expected]] of Object.entries(programs)) {
    const step = assertStep(child, name, { boundMs: 30_000 });
    assert.equal(typeof step.out.error, 'string', `${name}: resolved without error ${JSON.stringify(step.out)}`);
    assert.match(step.out.error, expected, `${name}: ${step.out.error}`);
    assert.ok(step.rssGrowth < 512 * MB, `${name}: host RSS grew ${(step.rssGrowth / MB).toFixed(0)} MB`);
    assert.equal(step.stats.abandoned, 0, `${name}: a worker was abandoned`);
  }
});

// FINDING (fixed): every timer firing leaks host memory outside the isolate's heap limit. The run loop
// (src/sandbox/mod.rs, the settle loop and fire_due_timers) creates Local handles
// (`v8::Integer::new_from_unsigned`, `v8::Local::new(tc, fire_timer)`, ...) in the one
// HandleScope that lives for the whole run, so they are never released. Observed with
// memoryLimitMb 64: `async () => { setInterval(() => {}, 0); await new Promise(() => {}); }`
// grows host RSS by ~100 MB per second (964 MB after a 10 s timeout, ~9 million firings in 3 s);
// with the default 60 s timeout that is ~6 GB from one run. A 5-million-step setTimeout(f, 0)
// chain leaked ~140 MB. memoryLimitMb does not bound it.
test('web APIs (child): a zero-delay setInterval does not grow host memory without bound', async () => {
  const child = await runChild({
    executor: { workers: 1, timeout: 8000, memoryLimitMb: 16 },
    steps: [{ name: 'setInterval 0', code: 'async () => { setInterval(() => {}, 0); await new Promise(() => {}); }' }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  const step = assertStep(child, 'setInterval 0', { boundMs: 30_000 });
  assert.equal(step.out.error, 'Execution timed out');
  assert.ok(child.done.peakGrowth < 400 * MB,
    `host RSS peaked ${(child.done.peakGrowth / MB).toFixed(0)} MB above its start during an 8 s run with memoryLimitMb 16`);
});

// ---------------------------------------------------------------------------------------------
// Machinery under attack
// ---------------------------------------------------------------------------------------------

test('machinery: a flood of spinning programs beyond maxQueue is refused and the executor recovers', async () => {
  const flood = new IsolateExecutor({ workers: 1, timeout: 100, memoryLimitMb: 16, maxQueue: 2 });
  try {
    const t0 = Date.now();
    const settled = await Promise.allSettled(
      Array.from({ length: 12 }, () => flood.execute({ code: 'async () => { for (;;) {} }' })));
    const elapsed = Date.now() - t0;
    const rejected = settled.filter((s) => s.status === 'rejected');
    const resolved = settled.filter((s) => s.status === 'fulfilled');
    assert.ok(rejected.length >= 6, `${rejected.length} of 12 were refused (maxQueue 2, 1 worker)`);
    for (const r of rejected) assert.equal(r.reason.code, 'ERR_QUEUE_FULL');
    for (const r of resolved) assert.equal(r.value.error, 'Execution timed out');
    assert.ok(elapsed < 20_000, `the flood took ${elapsed} ms to drain`);
    await assertNextRunWorks(flood);
  } finally {
    await flood.dispose();
  }
});
