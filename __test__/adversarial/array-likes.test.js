'use strict';
// Adversarial corpus, array-like builtins: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  HOST_BOUND_MS,
  runChild,
  assertChildSurvived,
  assertStep,
  timed,
  assertNextRunWorks,
  sharedExecutors,
} = require('./harness.js');

const shared = sharedExecutors();

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
  const { out, ms } = await timed(shared.ex, { code: growing, timeout: 2000 });
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
  const second = await timed(shared.ex, { code: shrinking, timeout: 2000 });
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
  const third = await timed(shared.ex, { code: tricky, timeout: 5000 });
  assert.equal(third.out.error, undefined, third.out.error);
  assert.ok(third.ms < HOST_BOUND_MS, `took ${third.ms} ms`);
  for (const [m, r] of Object.entries(third.out.result)) assert.ok(r === 'ok' || r === 'RangeError' || r === 'TypeError', `${m}: ${r}`);
  await assertNextRunWorks(shared.ex);
});
