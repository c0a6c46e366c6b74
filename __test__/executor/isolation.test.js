'use strict';
// Each run gets a fresh isolate, and nothing of the host.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const ex = new IsolateExecutor({ workers: 1 });
test.after(() => ex.dispose());

test('no global or prototype change survives into the next run', async () => {
  const first = await ex.execute({ code: `async () => {
    globalThis.leak = "from run 1";
    Array.prototype.leaked = 1;
    Object.prototype.polluted = true;
    JSON.stringify = () => "hijacked";
    return typeof leak;
  }` });
  assert.equal(first.result, 'string');
  const second = await ex.execute({ code: `async () => [typeof leak, [].leaked, ({}).polluted, JSON.stringify({ a: 1 })]` });
  assert.deepEqual(second.result, ['undefined', null, null, '{"a":1}']);
});

test('the sandbox has none of the host: no process, require, module loading or WebAssembly', async () => {
  const out = await ex.execute({ code: `async () => {
    const dynamicImport = await import("fs").then(() => "loaded", (e) => "refused");
    return [typeof process, typeof require, typeof module, typeof Buffer, typeof WebAssembly,
      typeof globalThis.process, dynamicImport, Function("return typeof this.process")()];
  }` });
  assert.deepEqual(out.result, ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'refused', 'undefined']);
});

test('fetch exists and rejects because the network is not permitted', async () => {
  const out = await ex.execute({ code: `async () => {
    if (typeof fetch !== "function") return "no fetch";
    try { await fetch("https://example.com"); return "fetched"; } catch (e) { return e.message; }
  }` });
  assert.match(out.result, /not permitted to access the internet/);
});

test('provider proxies lead nowhere on the host', async () => {
  const out = await ex.execute({
    code: `async () => {
      const AsyncFunction = api.constructor.constructor;
      const made = AsyncFunction("return [typeof process, typeof require, typeof globalThis.process]");
      return [AsyncFunction === (async () => {}).constructor, await made()];
    }`,
    providers: [{ name: 'api', tools: [] }],
  });
  assert.deepEqual(out.result, [true, ['undefined', 'undefined', 'undefined']]);
});

test('guarded array builtins refuse huge array-likes instead of hanging or aborting', async () => {
  const cap = ex.bounds.maxArrayLikeLength;
  const out = await ex.execute({ code: `async () => {
    const attempts = {
      includes: () => Array.prototype.includes.call({ length: 2 ** 40 }, 1),
      sort: () => Array.prototype.sort.call({ length: 2 ** 27 + 100 }),
      fill: () => Array.prototype.fill.call({ length: 2 ** 32 - 1 }, 0),
      sparseReverse: () => { const a = []; a.length = 2 ** 32 - 1; return a.reverse(); },
      map: () => Array.prototype.map.call({ length: 2 ** 32 - 1 }, (x) => x),
      sparseSome: () => { const a = []; a.length = 2 ** 32 - 1; return a.some((x) => x); },
      reduce: () => Array.prototype.reduce.call({ length: 2 ** 40 }, (a) => a, 0),
      from: () => Array.from({ length: 2 ** 32 - 1 }),
      concat: () => [].concat({ length: 2 ** 30, [Symbol.isConcatSpreadable]: true }),
    };
    const out = {};
    for (const [name, attempt] of Object.entries(attempts)) {
      try { attempt(); out[name] = "returned"; } catch (e) { out[name] = e.constructor.name + ": " + e.message; }
    }
    return out;
  }` });
  assert.equal(out.error, undefined);
  for (const value of Object.values(out.result)) {
    assert.match(value, new RegExp(`^RangeError: Array(\\.prototype)?\\.\\w+: length \\d+ exceeds the sandbox limit of ${cap} elements$`));
  }
  assert.equal(Object.keys(out.result).length, 9);
  assert.equal(ex.stats().abandoned, 0);
});

test('guarded builtins keep their meaning on ordinary arrays and array-likes', async () => {
  const out = await ex.execute({ code: `async () => {
    const like = { length: 3, 0: "c", 1: "a", 2: "b" };
    Array.prototype.sort.call(like);
    const shifted = { length: 2, 0: 1, 1: 2 };
    const first = Array.prototype.shift.call(shifted);
    return [
      [3, 1, 2].sort(), [1, 2, 3].includes(2), [1, 2, 3].indexOf(3), [1, 2, 3].reverse(),
      [1, 2, 3, 4, 5].copyWithin(0, 3), new Array(3).fill(7), [1, [2, [3]]].flat(2), [1, 2, 3].toReversed(),
      [1, 2, 3].with(1, 9), [1, 2, 3].toSpliced(1, 1), [1, 2, 3].join("-"), [1, 2, 3].slice(1),
      Array.prototype.includes.call("abc", "b"), [like[0], like[1], like[2], like.length],
      [first, shifted.length, shifted[0], 1 in shifted], typeof Array.prototype.sort.name, Array.prototype.sort.name,
      Array.prototype.map.call({ length: 2, 0: 5, 1: 6 }, (x) => x + 1), Array.from({ length: 3, 0: "a", 2: "c" }, (x) => x || "-"),
      [1].concat({ length: 2, 0: "a", 1: "b", [Symbol.isConcatSpreadable]: true }, [2, 3], 4).map(String),
      Array.from(new Set([1, 2])), [3, 4].reduce((a, b) => a + b), [1, 2].every((x) => x > 0),
    ];
  }` });
  assert.deepEqual(out.result, [
    [1, 2, 3], true, 2, [3, 2, 1], [4, 5, 3, 4, 5], [7, 7, 7], [1, 2, 3], [3, 2, 1], [1, 9, 3], [1, 3], '1-2-3', [2, 3],
    true, ['a', 'b', 'c', 3], [1, 1, 2, false], 'string', 'sort',
    [6, 7], ['a', '-', 'c'], ['1', 'a', 'b', '2', '3', '4'], [1, 2], 7, true,
  ]);
});

test('isolates started from the shared startup snapshot do not share random state', async () => {
  const values = [];
  for (let i = 0; i < 6; i++) {
    const out = await ex.execute({ code: 'async () => [Math.random(), crypto.randomUUID()]' });
    values.push(out.result);
  }
  assert.equal(new Set(values.map((v) => v[0])).size, 6, 'Math.random differs between runs');
  assert.equal(new Set(values.map((v) => v[1])).size, 6, 'randomUUID differs between runs');
});
