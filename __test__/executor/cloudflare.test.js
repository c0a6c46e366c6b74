'use strict';
// The Cloudflare drop-in: execute(code, providersOrFns, options) must behave as the spec
// (docs/cloudflare-compat.md §2–§4) says DynamicWorkerExecutor does, and Cloudflare's
// own runCode from the published @cloudflare/codemode 0.5.6 must run against it unchanged.
// The package's entry imports `cloudflare:workers`, so its Workers-free chunks are imported by
// file (the chunk names are fixed for the pinned version).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { IsolateExecutor } = require('../helpers.js');
const { normalizeCode, sanitizeToolName } = require('../../lib/index.js');

const CF_DIST = path.join(__dirname, '..', '..', 'node_modules', '@cloudflare', 'codemode', 'dist');
const cfChunk = (name) => import(pathToFileURL(path.join(CF_DIST, name)).href);

const ex = new IsolateExecutor({ workers: 2 });
test.after(() => ex.dispose());

test('normalizeCode gives the exact outputs of the spec table', () => {
  const table = [
    ['', 'async () => {}'],
    ['async () => { return 1; }', 'async () => { return 1; }'],
    ['async () => { return 1; };', 'async () => { return 1; };'],
    ['(async () => { return 42; })', '(async () => { return 42; })'],
    ['1 + 2', 'async () => {\nreturn (1 + 2)\n}'],
    ['const x = 10;\nx * 2', 'async () => {\nconst x = 10;\nreturn (x * 2)\n}'],
    ['const x = 42', 'async () => {\nconst x = 42\n}'],
    ['return 42', 'async () => {\nreturn 42\n}'],
    ['const = oops {{{', 'async () => {\nconst = oops {{{\n}'],
    ['```js\n1+1\n```', 'async () => {\nreturn (1+1)\n}'],
    ['export default function() { return 42; }', 'async () => {\nreturn (function() { return 42; })();\n}'],
    ['export default class { constructor() {} }', 'async () => {\nreturn (class { constructor() {} });\n}'],
    ['async function run() { return 1 }', 'async () => {\nasync function run() { return 1 }\nreturn run();\n}'],
    ['function helper() { return 1; }\nhelper()', 'async () => {\nfunction helper() { return 1; }\nreturn (helper())\n}'],
    ['(async () => { return 42; })()', 'async () => {\nreturn ((async () => { return 42; })())\n}'],
    ['x; // c', 'async () => {\nreturn (x)\n}'],
    ['{a:1}', 'async () => {\n{a:1}\n}'],
  ];
  for (const [input, expected] of table) assert.equal(normalizeCode(input), expected, JSON.stringify(input));
});

test('normalizeCode agrees with Cloudflare\'s own on further inputs', async () => {
  const { s: cfNormalize } = await cfChunk('json-schema-types-D_m9tVnI.js');
  const inputs = ['   ', '```python\nprint(1)\n```', 'text before\n```js\n1\n```', '```ts\nconst a: number = 1\n```',
    'export default 42', 'export default async () => 7', 'export default function named() { return 1 }',
    'function* gen() { yield 1 }', 'await Promise.resolve(3)', 'import x from "y"\nx', 'a = 1; b = 2; a + b // sum',
    '"use strict"; 5', 'label: for (;;) break label;', 'class A {}', '() => 1', 'async (x) => x', 'x => x * 2;',
    '// only a comment', '/* block */ 1', 'const s = "😀";\ns.length', 'if (true) { 1 }', '```\n1 + 1\n```'];
  for (const input of inputs) assert.equal(normalizeCode(input), cfNormalize(input), JSON.stringify(input));
});

test('programForRun reads a text sent again as the first time, past its cache\'s bounds', async () => {
  const { programForRun, RUN_CACHE_ENTRIES, RUN_CACHE_MAX_CHARS } = require('../../lib/cloudflare/normalize.js');
  const expected = (i) => ({ code: `async () => {\nreturn (${i} + 1)\n}`, statements: false });
  // More distinct texts than the cache keeps, then all of them again (the first ones evicted).
  const count = RUN_CACHE_ENTRIES + 8;
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < count; i++) assert.deepEqual(programForRun(`${i} + 1`), expected(i), `pass ${pass}, text ${i}`);
  }
  // A result handed out cannot change what the next caller of the same text gets.
  const first = programForRun('1 + 1');
  assert.ok(Object.isFrozen(first));
  assert.throws(() => { 'use strict'; first.code = 'async () => 666'; }, TypeError);
  assert.deepEqual(programForRun('1 + 1'), expected(1));
  // Each kind of reading, twice: statements, modules, the empty program.
  for (const [text, reading] of [['const a: number = 1; return a', { code: 'const a: number = 1; return a', statements: true }],
    ['export default () => 5', { code: 'export default () => 5', statements: false }], ['  ', { code: 'async () => {}', statements: false }]]) {
    assert.deepEqual(programForRun(text), reading, text);
    assert.deepEqual(programForRun(text), reading, `${text} again`);
  }
  // A text longer than the cache takes is read every time, the same way.
  const long = `const pad = ${JSON.stringify('x'.repeat(RUN_CACHE_MAX_CHARS))};\npad.length`;
  const longReading = { code: `async () => {\n${long.slice(0, long.lastIndexOf('\n') + 1)}return (pad.length)\n}`, statements: false };
  assert.deepEqual(programForRun(long), longReading);
  assert.deepEqual(programForRun(long), longReading);
  // Through execute: the same text run again with other tools and params.
  for (let i = 0; i < 3; i++) {
    const out = await ex.execute('async (params) => codemode.add(params.n)', [{ name: 'codemode', fns: { add: (n) => n + i } }], { params: { n: 10 } });
    assert.deepEqual(out, { result: 10 + i, logs: [] });
  }
  assert.deepEqual(await ex.execute(long, []), { result: RUN_CACHE_MAX_CHARS, logs: [] });
});

test('sanitizeToolName follows the spec and Cloudflare', async () => {
  const { a: cfSanitize } = await cfChunk('json-schema-types-D_m9tVnI.js');
  const table = { 'get-weather': 'get_weather', 'api.v2.search': 'api_v2_search', '3drender': '_3drender', class: 'class_',
    'hello@world!': 'helloworld', '@#$': '$', '@#!': '_', '': '_', 'a b': 'a_b', await: 'await_', yield: 'yield_', ok: 'ok' };
  for (const [input, expected] of Object.entries(table)) {
    assert.equal(sanitizeToolName(input), expected, input);
    assert.equal(cfSanitize(input), expected, `cloudflare ${input}`);
  }
});

test('Cloudflare\'s runCode runs against IsolateExecutor with the results the spec gives', async () => {
  const { t: runCode } = await cfChunk('run-code-Q3Jh6Dcu.js');
  const providers = [{ name: 'codemode', fns: { add: async ({ a, b }) => a + b, fail: async () => { throw new Error('nope'); } } }];
  assert.deepEqual(await runCode({ code: '1 + 2', executor: ex, providers }), { result: 3 });
  assert.deepEqual(await runCode({ code: 'console.log("hi"); return await codemode.add({ a: 2, b: 5 })', executor: ex, providers }),
    { result: 7, logs: ['hi'] });
  assert.deepEqual(await runCode({ code: '```js\nconst r = await codemode.add({ a: 1, b: 1 });\nr * 10\n```', executor: ex, providers }), { result: 20 });
  await assert.rejects(runCode({ code: 'console.warn("w"); await codemode.fail()', executor: ex, providers }),
    { message: 'Code execution failed: nope\n\nConsole output:\n[warn] w' });
  const connectors = [{ name: 'store', binding: { callTool: async (method, arg) => ({ method, arg }) } }];
  assert.deepEqual(await runCode({ code: 'await store.get({ id: 1 }, "ignored")', executor: ex, providers: [], connectors }),
    { result: { method: 'get', arg: { id: 1 } } });
});

test('success has result and logs, and no error key', async () => {
  const out = await ex.execute('async () => 1', []);
  assert.deepEqual(Object.keys(out), ['result', 'logs']);
  assert.deepEqual(out, { result: 1, logs: [] });
});

test('pre-flight validation returns the spec\'s messages without logs, first failure wins', async () => {
  const fn = () => 1;
  const cases = [
    [[{ name: '__logs', fns: {} }], 'Provider name "__logs" is reserved'],
    [[{ name: 'Promise', fns: {} }], 'Provider name "Promise" is reserved'],
    [[{ name: 'my-tools', fns: {} }], 'Provider name "my-tools" is not a valid JavaScript identifier'],
    [[{ name: 'class', fns: {} }], 'Provider name "class" is a JavaScript reserved word'],
    [[{ name: 'a', fns: {} }, { name: 'a', fns: {} }], 'Duplicate provider name "a"'],
    [[{ name: '1x', fns: {} }, { name: 'console', fns: {} }], 'Provider name "1x" is not a valid JavaScript identifier'],
    [[{ name: 'p', fns: { 'get-x': fn, get_x: fn } }], 'Tool names "get-x" and "get_x" both sanitize to "get_x" in provider "p"'],
  ];
  for (const [providers, error] of cases) {
    assert.deepEqual(await ex.execute('async () => 1', providers), { result: undefined, error });
  }
  const connector = (name) => ({ name, binding: { callTool: async () => 1 } });
  assert.deepEqual(await ex.execute('1', [], { connectors: [connector('console')] }), { result: undefined, error: 'Connector name "console" is reserved' });
  assert.deepEqual(await ex.execute('1', [], { connectors: [connector('a-b')] }), { result: undefined, error: 'Connector name "a-b" is not a valid JavaScript identifier' });
  assert.deepEqual(await ex.execute('1', [{ name: 'x', fns: {} }], { connectors: [connector('x')] }), { result: undefined, error: 'Duplicate name "x" (connector clashes with provider)' });
  // Different providers may reuse tool names.
  const out = await ex.execute('async () => [await a.f(), await b.f()]', [{ name: 'a', fns: { f: () => 'A' } }, { name: 'b', fns: { f: () => 'B' } }]);
  assert.deepEqual(out.result, ['A', 'B']);
});

test('the deprecated record form is one codemode namespace and warns once per call', async () => {
  const warnings = [];
  const original = console.warn;
  console.warn = (...args) => warnings.push(args.join(' '));
  try {
    const out = await ex.execute('async () => codemode.hello("x")', { hello: (who) => `hi ${who}` });
    assert.deepEqual(out, { result: 'hi x', logs: [] });
  } finally {
    console.warn = original;
  }
  assert.deepEqual(warnings, ['[@cloudflare/codemode] Passing raw fns to executor.execute() is deprecated. Use ResolvedProvider[] instead. This will be removed in the next major version.']);
  const none = await ex.execute('async () => typeof codemode', []);
  assert.equal(none.result, 'undefined');
});

test('host functions receive exactly the arguments the program passed', async () => {
  const seen = [];
  const fns = {
    f: (...args) => { seen.push(args); return args.length; },
    concat: (...parts) => parts.join(''),
    'github.list-issues': () => 'sanitized',
  };
  const out = await ex.execute(`async () => [await codemode.f({ a: 1 }), await codemode.f(), await codemode.concat("a", "b"),
    await codemode.github_list_issues(), typeof codemode["github.list-issues"]]`, [{ name: 'codemode', fns }]);
  assert.deepEqual(out.result, [1, 0, 'ab', 'sanitized', 'function']);
  assert.deepEqual(seen, [[{ a: 1 }], []]);
  const raw = await ex.execute('async () => { try { await codemode["github.list-issues"]() } catch (e) { return e.message } }', [{ name: 'codemode', fns }]);
  assert.equal(raw.result, 'Tool "github.list-issues" not found');
});

test('host errors surface as catchable Errors with only the message; an empty message is not rethrown', async () => {
  class Custom extends Error { constructor() { super('custom failure'); this.name = 'CustomError'; this.code = 'E1'; } }
  const fns = {
    custom: () => { throw new Custom(); },
    rejectString: () => Promise.reject('plain string'),
    empty: () => { throw new Error(''); },
    sync: () => { throw new TypeError('sync'); },
  };
  const out = await ex.execute(`async () => {
    const seen = [];
    for (const name of ["custom", "rejectString", "sync"]) {
      try { await codemode[name](); } catch (e) { seen.push([e.constructor.name, e.name, e.message, e.code]); }
    }
    seen.push(await codemode.empty());
    return seen;
  }`, [{ name: 'codemode', fns }]);
  assert.deepEqual(out.result, [['Error', 'Error', 'custom failure', undefined], ['Error', 'Error', 'plain string', undefined],
    ['Error', 'Error', 'sync', undefined], undefined]);
  const uncaught = await ex.execute('async () => { await codemode.custom(); }', [{ name: 'codemode', fns }]);
  assert.deepEqual(uncaught, { result: undefined, error: 'custom failure', logs: [] });
});

test('arguments and replies travel with the transport codec: JSON semantics plus binary', async () => {
  let received;
  const fns = {
    take: (...args) => { received = args; return 'ok'; },
    bytes: () => new Uint8Array([9, 8, 7]),
    buffer: () => new Uint8Array([1, 2]).buffer,
    nodeBuffer: () => Buffer.from([5]),
    date: () => new Date(0),
  };
  const out = await ex.execute(`async () => {
    await codemode.take(new Uint8Array([1, 2]), new Uint16Array([258]).buffer, new Uint16Array([1, 2]), [undefined, NaN], { u: undefined, d: new Date(0), m: new Map([[1, 2]]) });
    const b = await codemode.bytes(), ab = await codemode.buffer(), nb = await codemode.nodeBuffer(), d = await codemode.date();
    let big; try { await codemode.take(1n); } catch (e) { big = e instanceof TypeError; }
    return [b instanceof Uint8Array, [...b], ab instanceof ArrayBuffer, ab.byteLength, nb, typeof d, big];
  }`, [{ name: 'codemode', fns }]);
  assert.deepEqual(out.result, [true, [9, 8, 7], true, 2, { type: 'Buffer', data: [5] }, 'string', true]);
  assert.ok(received[0] instanceof Uint8Array);
  assert.deepEqual([...received[0]], [1, 2]);
  assert.ok(received[1] instanceof ArrayBuffer);
  assert.deepEqual([...new Uint8Array(received[1])], [2, 1]);
  assert.ok(received[2] instanceof Uint8Array);
  assert.deepEqual([...received[2]], [1, 0, 2, 0]);
  assert.deepEqual(received[3], [null, null]);
  assert.deepEqual(received[4], { d: '1970-01-01T00:00:00.000Z', m: {} });
});

test('results keep structured-clone fidelity', async () => {
  const out = await ex.execute(`async () => {
    const o = { u: undefined, n: NaN, z: -0, inf: -Infinity, big: 2n ** 70n, d: new Date(5), m: new Map([["k", [1]]]), s: new Set(["a"]),
      bytes: new Uint8Array([1, 2]), ab: new Uint8Array([3]).buffer, f32: new Float32Array([1.5]), re: /x/g, err: new RangeError("bad"), nested: [undefined, { deeper: null }] };
    o.self = o;
    o.shared = o.m;
    return o;
  }`, []);
  const r = out.result;
  assert.equal(out.error, undefined);
  assert.ok('u' in r && r.u === undefined);
  assert.ok(Number.isNaN(r.n));
  assert.ok(Object.is(r.z, -0));
  assert.equal(r.inf, -Infinity);
  assert.equal(r.big, 2n ** 70n);
  assert.ok(r.d instanceof Date && r.d.getTime() === 5);
  assert.ok(r.m instanceof Map && r.m.get('k')[0] === 1);
  assert.ok(r.s instanceof Set && r.s.has('a'));
  assert.ok(r.bytes instanceof Uint8Array && r.bytes[1] === 2);
  assert.ok(r.ab instanceof ArrayBuffer && new Uint8Array(r.ab)[0] === 3);
  assert.ok(r.f32 instanceof Float32Array && r.f32[0] === 1.5);
  assert.ok(r.re instanceof RegExp && r.re.flags === 'g');
  assert.ok(r.err instanceof RangeError && r.err.message === 'bad');
  assert.deepEqual(r.nested, [undefined, { deeper: null }]);
  assert.equal(r.self, r);
  assert.equal(r.shared, r.m);
  assert.deepEqual(await ex.execute('async () => {}', []), { result: undefined, logs: [] });
  assert.deepEqual(await ex.execute('async () => ({ a: [1, "two", { three: true }] })', []), { result: { a: [1, 'two', { three: true }] }, logs: [] });
});

test('never-throw: everything the program does resolves with an error', async () => {
  const cases = [
    ['async () => { let = ; }', /Unexpected/],
    ['async () => Symbol("s")', /could not be cloned/],
    ['async () => () => 1', /could not be cloned/],
    ['async () => { throw null }', /^null$/],
    ['async () => { throw "just text" }', /^just text$/],
    ['async () => { throw new TypeError("typed") }', /^typed$/],
    ['async () => { while (true) {} }', /^Execution timed out$/],
  ];
  const quick = new IsolateExecutor({ workers: 1, timeout: 300 });
  try {
    for (const [code, pattern] of cases) {
      const out = await quick.execute(code, []);
      assert.equal(out.result, undefined, code);
      assert.match(out.error, pattern, code);
      assert.deepEqual(out.logs, [], code);
    }
    const prelude = await quick.execute('async () => 1', [{ name: 'p', fns: {}, prelude: 'throw new Error("prelude broke")' }]);
    assert.equal(prelude.error, 'prelude broke');
  } finally {
    await quick.dispose();
  }
});

test('preludes run after the namespaces exist, in provider order, and their own properties win', async () => {
  const calls = [];
  const out = await ex.execute('async () => [await codemode.step("s", 2), typeof helperFromPrelude, order]', [
    { name: 'codemode', fns: { __stepDecide: (name) => { calls.push(name); return 'decided'; } },
      prelude: 'var order = ["first"]; codemode.step = async (name, x) => (await codemode.__stepDecide(name)) + ":" + x * 2;' },
    { name: 'other', fns: {}, prelude: 'order.push("second"); function helperFromPrelude() {}' },
  ]);
  assert.deepEqual(out.result, ['decided:4', 'function', ['first', 'second']]);
  assert.deepEqual(calls, ['s']);
});

test('connector namespaces forward only the first argument with clone fidelity and honour control markers', async () => {
  const seen = [];
  const binding = {
    callTool: async (method, arg) => {
      seen.push([method, arg]);
      if (method === 'pause') return { __codemode_control__: 'pause' };
      if (method === 'fail') return { __codemode_control__: 'error', message: 'refused' };
      if (method === 'throws') throw new Error('binding threw');
      return { when: new Date(7), tags: new Set(['t']), n: 5n };
    },
  };
  const out = await ex.execute(`async () => {
    const value = await store.read({ at: new Date(1), key: undefined }, "second is dropped");
    const errors = [];
    for (const m of ["fail", "throws"]) { try { await store[m](); } catch (e) { errors.push(e.message); } }
    return [value.when instanceof Date, value.tags.has("t"), value.n, errors, store[Symbol.toPrimitive]];
  }`, [], { connectors: [{ name: 'store', binding }] });
  assert.deepEqual(out.result, [true, true, 5n, ['refused', 'binding threw'], undefined]);
  assert.equal(seen[0][0], 'read');
  assert.ok(seen[0][1].at instanceof Date);
  assert.ok('key' in seen[0][1]);
  const paused = await ex.execute('async () => { await store.pause(); return "not reached" }', [], { connectors: [{ name: 'store', binding }] });
  assert.equal(paused.error, '__CODEMODE_PAUSE__');
});

test('a late, unawaited tool call does not hold the result, and the host function still runs', async () => {
  let finished = false;
  const started = Date.now();
  const out = await ex.execute('async () => { codemode.slow(); return 1 }', [{ name: 'codemode', fns: {
    slow: async () => { await new Promise((r) => setTimeout(r, 300)); finished = true; throw new Error('ignored'); },
  } }]);
  assert.deepEqual(out, { result: 1, logs: [] });
  assert.ok(Date.now() - started < 250, 'resolved before the slow call finished');
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(finished, true);
});

test('timeout defaults to 60 s and reads "Execution timed out"; a slow host counts against it', async () => {
  assert.equal(new IsolateExecutor().bounds.timeout, 60_000);
  const short = new IsolateExecutor({ workers: 1, timeout: 200 });
  try {
    const out = await short.execute('async () => { console.log("started"); await codemode.slow(); }', [{ name: 'codemode', fns: { slow: () => new Promise((r) => setTimeout(r, 2000)) } }]);
    assert.deepEqual(out, { result: undefined, error: 'Execution timed out', logs: ['started'] });
  } finally {
    await short.dispose();
  }
});

test('globalOutbound null or omitted blocks the network with workerd\'s message; modules ignore executor.js', async () => {
  const blocked = new IsolateExecutor({ workers: 1, globalOutbound: null, modules: { 'executor.js': 'ignored' } });
  try {
    const out = await blocked.execute('async () => { try { await fetch("https://example.com"); } catch (e) { return e.message } }', []);
    assert.equal(out.result, "This worker is not permitted to access the internet via global functions like fetch(). It must use capabilities (such as bindings in 'env') to talk to the outside world.");
    const uncaught = await blocked.execute('async () => { await fetch("https://example.com") }', []);
    assert.match(uncaught.error, /not permitted to access the internet/);
  } finally {
    await blocked.dispose();
  }
  assert.throws(() => new IsolateExecutor({ globalOutbound: 'https://proxy' }), { code: 'ERR_INVALID_ARGUMENT' });
  assert.throws(() => new IsolateExecutor({ globalOutbound: { notFetch: true } }), { code: 'ERR_INVALID_ARGUMENT' });
  assert.throws(() => new IsolateExecutor({ modules: { 'util.js': 42 } }), { code: 'ERR_INVALID_ARGUMENT' });
  assert.throws(() => new IsolateExecutor({ modules: 'util.js' }), { code: 'ERR_INVALID_ARGUMENT' });
});

test('raw model output runs: fences and bare expressions are normalized by the executor', async () => {
  assert.deepEqual(await ex.execute('```js\nconst x = await codemode.two();\nx * 21\n```', [{ name: 'codemode', fns: { two: () => 2 } }]), { result: 42, logs: [] });
  assert.deepEqual(await ex.execute('return "statement block"', []), { result: 'statement block', logs: [] });
});

test('modules load through dynamic import, with static imports between them, top-level await, and one instance per run', async () => {
  const withModules = new IsolateExecutor({ workers: 1, modules: {
    'executor.js': 'this is not JavaScript and is ignored',
    'math.js': 'import { factor } from "./config.js"; export function scale(x) { return x * factor; } export const ready = await Promise.resolve("ready"); export let loads = 0; loads++;',
    'config.js': 'export const factor = 3;',
    'broken.js': 'export const = ;',
    'throws.js': 'throw new Error("module failed");',
    'uses-globals.js': 'export const id = () => typeof crypto.randomUUID();',
  } });
  try {
    const out = await withModules.execute(`async () => {
      const m = await import("math.js");
      const again = await import("./math.js");
      const g = await import("uses-globals.js");
      const failures = [];
      for (const s of ["fs", "node:fs", "broken.js", "throws.js", "executor.js"]) {
        try { await import(s); failures.push("loaded " + s); } catch (e) { failures.push(e.constructor.name + ": " + e.message); }
      }
      return [m.scale(14), m.ready, m === again, m.loads, g.id(), failures];
    }`, []);
    assert.deepEqual(out.result, [42, 'ready', true, 1, 'string', [
      'TypeError: No such module "fs".', 'TypeError: No such module "node:fs".', "SyntaxError: Unexpected token '='",
      'Error: module failed', 'TypeError: No such module "executor.js".',
    ]]);
    // A fresh run gets fresh module instances.
    const second = await withModules.execute('async () => { const m = await import("math.js"); m.loads; return typeof globalThis.loads }', []);
    assert.equal(second.result, 'undefined');
  } finally {
    await withModules.dispose();
  }
});

test('our runCode behaves like Cloudflare\'s on success, logs and failure', async () => {
  const { runCode } = require('../../lib/index.js');
  const { t: cfRunCode } = await cfChunk('run-code-Q3Jh6Dcu.js');
  const providers = [{ name: 'codemode', fns: { twice: (x) => x * 2 } }];
  const cases = ['codemode.twice(4)', 'console.log("a"); console.error("b"); return 1', 'throw new Error("bad")',
    'console.log("before"); throw "plain"', '```js\nawait codemode.twice(2)\n```', ''];
  for (const code of cases) {
    const settle = (p) => p.then((v) => ({ ok: v }), (e) => ({ err: e.message }));
    assert.deepEqual(await settle(runCode({ code, executor: ex, providers })), await settle(cfRunCode({ code, executor: ex, providers })), code);
  }
});

test('never-throw holds for memory exhaustion in the Cloudflare form (child process)', async () => {
  const { runChild } = require('../helpers.js');
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ workers: 1, memoryLimitMb: 32 });
    const oom = await ex.execute('async () => { const keep = []; for (;;) keep.push({ n: keep.length, s: "x".repeat(64) }); }', []);
    const buffers = await ex.execute('async () => { const keep = []; for (;;) keep.push(new ArrayBuffer(1 << 20)); }', []);
    const next = await ex.execute('1 + 1', []);
    report({ oom, buffers, next });
    await ex.dispose();
  `);
  assert.equal(child.code, 0, child.stderr);
  for (const out of [child.report.oom, child.report.buffers]) {
    assert.equal(out.result, undefined);
    assert.match(out.error, /^Memory exhausted: the program exceeded its memory limit of 32 MB/);
    assert.deepEqual(out.logs, []);
  }
  assert.deepEqual(child.report.next, { result: 2, logs: [] });
});
