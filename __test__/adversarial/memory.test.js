'use strict';
// Adversarial corpus, memory: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  MB,
  runChild,
  assertChildSurvived,
  assertStep,
  assertMemoryError,
} = require('./harness.js');

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
    'flat 512 MB string': 'memory',
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
    // V8's own limit sits just above the budget, so an object made in one piece past it ends
    // the run while it is made (V8 is granted room once so the allocation itself completes).
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

// FINDING (fixed, issue 12 hole 4): the budget was enforced only after collections and at the
// end of a run, and V8's own limit sat 1280 MB above it, so a large object made in one piece and
// dropped before any collection went unseen. Observed with memoryLimitMb 64 on 4952097: the
// flattened 256 MB string resolved with -1; the split timed out (`Execution timed out` after
// 4 s with timeout 2000) instead of a memory error.
test('memory (child): objects made in one piece past the budget end the run with the memory error while they are made', async () => {
  const programs = {
    'flatten a 256 MB string': "async () => { const piece = 'x'.repeat(2 ** 20); let s = ''; for (let i = 0; i < 256; i++) s += piece; return s.indexOf('y'); }",
    "split a 128 MB string into characters": "async () => '1'.repeat(2 ** 27 - 1).split('').length",
    'JSON of a 128 MB string': "async () => JSON.stringify('x'.repeat(2 ** 27)).length",
    'join 2^22 strings of 64 bytes': "async () => Array.from({ length: 2 ** 22 }, () => 'y'.repeat(64)).join('').length",
  };
  const problems = [];
  for (const [name, code] of Object.entries(programs)) {
    const child = await runChild({
      executor: { workers: 1, timeout: 4000, memoryLimitMb: 64 },
      steps: [{ name, code }],
      exit: 'exit',
    });
    assertChildSurvived(child);
    const step = assertStep(child, name, { boundMs: 15_000 });
    if (!(typeof step.out.error === 'string' && step.out.error.startsWith('Memory exhausted'))) {
      problems.push(`${name}: ${JSON.stringify(step.out).slice(0, 200)} after ${step.ms} ms`);
    }
  }
  assert.deepEqual(problems, [], problems.join('\n'));
});
