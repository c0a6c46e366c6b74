'use strict';
// Programs as models write them (issue 16): ES module programs with params, TypeScript, the
// code cache, live logs, timing phases, disposal with `using`, and clear errors for what the
// sandbox does not have. Runs in both arrangements (the suite runs once per isolation).
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, tableDispatch } = require('../helpers.js');

const MODULES = {
  'util.js': 'export const twice = (x) => x * 2;\nexport default function label(x) { return `#${x}` }',
  'types.js': 'export const VERSION = 3',
};
const executor = new IsolateExecutor({ workers: 2, timeout: 5000, modules: MODULES, limits: { maxArgsBytes: 4096, maxLogLines: 4 } });
test.after(() => executor.dispose());

const providers = [{ name: 'tools', tools: ['echo', 'slow'] }];
const dispatch = tableDispatch({
  tools: {
    echo: (x) => x,
    slow: (ms) => new Promise((resolve) => setTimeout(() => resolve(ms), ms)),
  },
});
const run = (code, extra = {}) => executor.execute({ code, providers, dispatch, ...extra });

// ---------------------------------------------------------------------------------------------
// Module programs and params

test('a module program: its default export is called with params, and imports the executor\'s modules statically', async () => {
  const out = await run(`import { twice } from 'util.js';
import label from './util.js';
import * as types from 'types.js';
export default async function main(params) {
  const echoed = await tools.echo(params.n);
  return { doubled: twice(echoed), label: label(params.n), version: types.VERSION };
}`, { params: { n: 21 } });
  assert.equal(out.error, undefined);
  assert.deepEqual(out.result, { doubled: 42, label: '#21', version: 3 });
});

test('a module program may await at its top level; named exports beside the default are fine', async () => {
  const out = await run('const base = await tools.echo(10);\nexport const unused = 1;\nexport default (p) => base + p', { params: 5 });
  assert.deepEqual([out.result, out.error], [15, undefined]);
});

test('the arrow-function form receives params as its first argument; without params it gets none', async () => {
  assert.equal((await run('async (p) => p.a + p.b', { params: { a: 1, b: 2 } })).result, 3);
  assert.equal((await run('async (...args) => args.length')).result, 0);
  assert.equal((await run('async (p) => p === null', { params: null })).result, true);
});

test('params are JSON data cloned in: the program sees JSON\'s reading, and its changes stay inside', async () => {
  const params = { when: new Date(0), list: [1, 2], nested: { keep: true } };
  const out = await run('async (p) => { const seen = [typeof p.when, p.when]; p.list.push(3); p.nested.keep = false; return seen }', { params });
  assert.deepEqual(out.result, ['string', '1970-01-01T00:00:00.000Z']);
  assert.deepEqual(params.list, [1, 2]);
  assert.equal(params.nested.keep, true);
});

test('params that are not JSON data are refused with ERR_INVALID_ARGUMENT; oversized params break maxArgsBytes', async () => {
  await assert.rejects(run('async (p) => p', { params: 1n }), { code: 'ERR_INVALID_ARGUMENT', message: /request.params must be JSON data/ });
  await assert.rejects(run('async (p) => p', { params: () => 1 }), { code: 'ERR_INVALID_ARGUMENT' });
  const big = await run('async (p) => p.length', { params: 'x'.repeat(5000) });
  assert.deepEqual([big.errorKind, big.errorBound], ['bound', 'maxArgsBytes']);
  assert.match(big.error, /The params value is too large \(5002 bytes > 4096 byte limit, maxArgsBytes\)/);
  // The executor keeps working.
  assert.equal((await run('async (p) => p', { params: 'ok' })).result, 'ok');
});

test('params that are not JSON data at any depth are refused before the program starts, in both forms', async () => {
  // JSON.stringify alone dropped or changed these, and the program ran (with its tool calls).
  const calls = [];
  const watched = tableDispatch({ tools: { echo: (x) => { calls.push(x); return x; } } });
  const bad = [
    [[1, () => 1], /a function is not JSON data at "1"/],
    [{ a: { s: Symbol('s') } }, /a symbol is not JSON data at "s"/],
    [{ a: [{ b: 2n }] }, /a bigint is not JSON data at "b"/],
    [{ m: new Map([[1, 2]]) }, /a Map is not JSON data/],
    [{ n: [1, NaN] }, /NaN is not JSON data/],
    [[undefined], /undefined in an array is not JSON data/],
  ];
  for (const [params, message] of bad) {
    await assert.rejects(executor.execute({ code: 'async (p) => tools.echo(1)', params, providers, dispatch: watched }),
      { code: 'ERR_INVALID_ARGUMENT', message }, message.source);
    await assert.rejects(executor.execute('async (p) => codemode.echo(1)', { echo: (x) => calls.push(x) }, { params }),
      { code: 'ERR_INVALID_ARGUMENT', message }, message.source);
  }
  assert.deepEqual(calls, [], 'a refused run made tool calls');
  // What JSON reads the same stays accepted: dates through toJSON, an undefined property.
  const ok = await run('async (p) => [p.when, "gone" in p]', { params: { when: new Date(0), gone: undefined } });
  assert.deepEqual(ok.result, ['1970-01-01T00:00:00.000Z', false]);
});

test('a module without a default export, or whose default export is not a function, fails as the program\'s error', async () => {
  const none = await run('export const a = 1');
  assert.equal(none.errorKind, 'program');
  assert.match(none.error, /The module has no default export/);
  const value = await run('export default 42');
  assert.equal(value.errorKind, 'program');
  assert.match(value.error, /default export must be a function, .*\(it is a number\)/);
  const missing = await run("import { nope } from 'util.js';\nexport default () => nope");
  assert.equal(missing.errorKind, 'program');
  assert.match(missing.error, /does not provide an export named 'nope'/);
});

test('a template literal whose lines look like declarations does not make a program a module', async () => {
  const out = await run('async () => {\n  const script = `\nexport PATH=/bin\nimport x from y\n`;\n  return script.trim().split("\\n").length\n}');
  assert.deepEqual([out.result, out.error], [2, undefined]);
});

test('the Cloudflare form: a module gets options.params, imports resolve, and plain code is still normalized', async () => {
  const module = await executor.execute("import { twice } from 'util.js';\nexport default async function (p) { return twice(p) }", [], { params: 8 });
  assert.deepEqual(module, { result: 16, logs: [] });
  const fns = await executor.execute('export default async function main(p) { return await codemode.add(p, 1) }', { add: (a, b) => a + b }, { params: 2 });
  assert.equal(fns.result, 3);
  // Statement blocks keep Cloudflare's reading.
  assert.equal((await executor.execute('const a = 20;\nreturn a + 1', [])).result, 21);
});

test('retained handles take params, TypeScript and module programs too', async () => {
  const first = await run('async (p: number) => { globalThis.base = p; return p }', { params: 5, retainHandles: true });
  assert.ok(first.handle, first.error);
  const next = await first.handle.execute('async (p: { add: number }): Promise<number> => globalThis.base + p.add', { params: { add: 2 } });
  assert.deepEqual([next.result, next.error], [7, undefined]);
  const mod = await first.handle.execute("import { twice } from 'util.js';\nexport default (p) => twice(globalThis.base) + p", { params: 1 });
  assert.deepEqual([mod.result, mod.error], [11, undefined]);
  await first.handle.dispose();
});

// ---------------------------------------------------------------------------------------------
// TypeScript, in the shapes models answer with

const TS_CASES = [
  ['a fenced ```ts block with an interface, generics and a typed arrow',
    'Here is the program:\n\n```ts\ninterface Forecast { city: string; tempC: number }\n\nasync (params: { cities: string[] }): Promise<string[]> => {\n  const results: Forecast[] = [];\n  for (const city of params.cities) {\n    const tempC = await tools.echo<number>(city.length) as number;\n    results.push({ city, tempC });\n  }\n  return results.filter((f): f is Forecast => f.tempC > 4).map((f) => f.city);\n}\n```\n\nIt returns the warm cities.',
    { cities: ['Oslo', 'Lisbon', 'Rome'] }, ['Lisbon']],
  ['a module with a type-only import of a module, satisfies and a non-null assertion',
    "```typescript\nimport type { VERSION } from 'types.js';\nimport { twice } from 'util.js';\n\ntype Input = { values: number[] };\n\nexport default async function main({ values }: Input) {\n  const first = values.at(0)!;\n  const config = { factor: 2 } satisfies Record<string, number>;\n  return twice(first) * config.factor;\n}\n```",
    { values: [5, 6] }, 20],
  ['an enum, which strip-only refuses and the transform handles',
    'async () => {\n  enum Status { Active = "active", Done = "done" }\n  const list: Status[] = [Status.Active, Status.Done];\n  return list.join(",");\n}',
    undefined, 'active,done'],
  ['a class with typed fields, access modifiers, optional chaining and a generic helper',
    'async () => {\n  class Counter<T> {\n    private items: T[] = [];\n    add(item: T): this { this.items.push(item); return this; }\n    get size(): number { return this.items.length; }\n  }\n  const c = new Counter<string>().add("a").add("b");\n  const maybe: { deep?: { n: number } } = {};\n  return [c.size, maybe.deep?.n ?? -1];\n}',
    undefined, [2, -1]],
  ['a trailing semicolon after a typed arrow, with type aliases and a union',
    'async (p: { mode: "a" | "b" }): Promise<number> => {\n  type Score = number;\n  const score: Score = p.mode === "a" ? 1 : 2;\n  return score;\n};',
    { mode: 'b' }, 2],
];

for (const [name, code, params, expected] of TS_CASES) {
  test(`TypeScript: ${name}`, async () => {
    const out = await run(code, { params });
    assert.equal(out.error, undefined);
    assert.deepEqual(out.result, expected);
  });
}

test('TypeScript: positions in stacks and syntax errors are those of the program as written', async () => {
  const stack = await run('async () => {\n  const s: string = new Error("x").stack!;\n  return s;\n}');
  // Every form names its frames program.js, at the positions of the program as written.
  assert.match(stack.result, /program\.js:2:21\)?$/m, stack.result);
  const moduleStack = await run('export default async (): Promise<string> => {\n  const s: string = new Error("x").stack!;\n  return s;\n}');
  assert.match(moduleStack.result, /program\.js:2:21/, moduleStack.result);
  const syntax = await run('async () => {\n  const x: number = 1;\n  const y = ;\n}');
  assert.equal(syntax.errorKind, 'syntax');
  assert.equal(syntax.error, 'Expression expected (line 3, column 13)\n   3 |   const y = ;\n     |             ^');
});

// ---------------------------------------------------------------------------------------------
// Function bodies, other languages and error places (issue 33)

const BODY_PROGRAMS = [
  ['plain', 'const list = await tools.echo([1, 2, 3]); return list.length;'],
  ['fenced', '```js\nconst list = await tools.echo([1, 2, 3]);\nreturn list.length;\n```'],
  ['TypeScript', 'const list: number[] = await tools.echo([1, 2, 3]);\nreturn list.length;'],
  ['fenced TypeScript after prose', 'Here you go:\n```ts\nconst list: number[] = await tools.echo([1, 2, 3]);\nreturn list.length;\n```'],
  ['after imports', "import { twice } from 'util.js';\nimport label from 'util.js';\nconst list = await tools.echo([1, 2, 3]);\nreturn label(twice(list.length) / 2);"],
  ['TypeScript after imports', "import { twice } from 'util.js';\nimport * as types from 'types.js';\nconst list: number[] = await tools.echo([1, 2, 3]);\nreturn twice(list.length) / 2 + types.VERSION - 3;"],
];

for (const [shape, code] of BODY_PROGRAMS) {
  test(`a function body runs in both forms: ${shape}`, async () => {
    const native = await run(code);
    assert.equal(native.error, undefined);
    assert.ok(native.result === 3 || native.result === '#3', JSON.stringify(native.result));
    const cf = await executor.execute(code, [{ name: 'tools', fns: { echo: (x) => x } }]);
    assert.equal(cf.error, undefined);
    assert.deepEqual(cf.result, native.result);
  });
}

test('a retained handle runs a function body too', async () => {
  const first = await run('async () => { globalThis.n = 4 }', { retainHandles: true });
  const next = await first.handle.execute('const m = await tools.echo(globalThis.n); return m + 1;');
  assert.deepEqual([next.result, next.error], [5, undefined]);
  await first.handle.dispose();
});

test('a program in another language is told so in both forms, before anything runs', async () => {
  for (const code of ['```python\nprint("hi")\n```', '```bash\nls -la\n```']) {
    const native = await run(code);
    assert.equal(native.errorKind, 'syntax');
    assert.match(native.error, /the program is a ```(python|bash) code block: only JavaScript or TypeScript runs here/);
    const cf = await executor.execute(code, []);
    assert.match(cf.error, /only JavaScript or TypeScript runs here/);
  }
});

test('syntax and runtime errors give the line and column as written, with the line itself, in every shape', async () => {
  const cases = [
    // [program, expected first line of the error, the excerpt's line]
    ['async () => {\n  const a = 1;\n  const b = ;\n}', "Unexpected token ';' (line 3, column 13)", '  const b = ;'],
    ['const a = 1;\nconst c = 2;\nconst b = ;\nreturn b', "Unexpected token ';' (line 3, column 11)", 'const b = ;'],
    ['const a: number = 1;\nconst c = 2;\nconst b: number = ;\nreturn b', 'Expression expected (line 3, column 19)', 'const b: number = ;'],
    ["import { twice } from 'util.js';\nconst list = ;\nreturn twice(list.length);", "Unexpected token ';' (line 2, column 14)", 'const list = ;'],
    ['async () => {\n  const a = undefined;\n  return a.foo.bar;\n}', "Cannot read properties of undefined (reading 'foo') (line 3, column 12)", '  return a.foo.bar;'],
    ['async () => {\n  const a: any = undefined;\n  return a.foo.bar;\n}', "Cannot read properties of undefined (reading 'foo') (line 3, column 12)", '  return a.foo.bar;'],
    ['const a = undefined;\nconst b = 1;\nreturn a.foo.bar;', "Cannot read properties of undefined (reading 'foo') (line 3, column 10)", 'return a.foo.bar'],
    ['export default async () => {\n  await tools.echo(1);\n  throw new Error("no rows");\n}', 'no rows (line 3, column 9)', '  throw new Error("no rows");'],
    ["import { twice } from 'util.js';\nconst x = twice(1);\nnull.f();", "Cannot read properties of null (reading 'f') (line 3, column 6)", 'null.f()'],
    // A program that ends before what it opened is closed: placed after its last character, not
    // at the wrapper's `}` or `)` on a line past the program's end.
    ['async () => {\n  return [1, 2', 'Unexpected end of input: the program ends before a bracket, string or block it opened is closed (line 2, column 15)', '  return [1, 2'],
    ['const a = 1;\nconst b = (a +\n\n', 'Unexpected end of input: the program ends before a bracket, string or block it opened is closed (line 2, column 15)', 'const b = (a +'],
    // A program that is one bare expression: its first column, not column 0.
    ['missing', 'missing is not defined (line 1, column 1)', 'missing'],
  ];
  for (const [code, head, line] of cases) {
    const out = await run(code);
    const lines = out.error.split('\n');
    assert.equal(lines[0], head, code);
    assert.equal(lines[1].replace(/^\s*\d+ \| /, ''), line, code);
    assert.match(lines[2], /^\s+\| +\^$/, code);
    const column = Number(head.match(/column (\d+)/)[1]);
    assert.equal(lines[2].indexOf('^') - lines[2].indexOf('|') - 2, column - 1, `caret under column ${column}: ${out.error}`);
  }
  // A value that is not an Error, and an error from a tool, have no place in the program.
  assert.equal((await run('async () => { throw "plain" }')).error, 'plain');
});

test('TypeScript namespaces go through the transform; decorators (which V8 does not run) are a syntax error', async () => {
  const ns = await run('async () => {\n  namespace Geometry { export const unit = 2; }\n  return Geometry.unit * 3;\n}');
  assert.deepEqual([ns.result, ns.error], [6, undefined]);
  const decorated = await run('async () => {\n  function sealed(c: any) { return c }\n  @sealed class A {}\n  return new A();\n}');
  assert.equal(decorated.errorKind, 'syntax');
});

test('typescript: false compiles programs as JavaScript (types are then syntax errors)', async () => {
  const plain = new IsolateExecutor({ workers: 1, typescript: false });
  try {
    const out = await plain.execute({ code: 'async () => { const x: number = 1; return x }' });
    assert.equal(out.errorKind, 'syntax');
    assert.equal((await plain.execute({ code: 'async () => 1 < 2' })).result, true);
  } finally {
    await plain.dispose();
  }
  assert.throws(() => new IsolateExecutor({ typescript: 'yes' }), { code: 'ERR_INVALID_ARGUMENT', message: /typescript must be a boolean/ });
});

test('the Cloudflare form accepts TypeScript: an arrow function, and statements with a top-level return', async () => {
  assert.deepEqual(await executor.execute('async () => { const x: number = 4; return x }', []), { result: 4, logs: [] });
  assert.deepEqual(await executor.execute('const x: number = 4;\nreturn x * 2', []), { result: 8, logs: [] });
});

// ---------------------------------------------------------------------------------------------
// The code cache

test('the same source compiles once: later runs (other params) hit the code cache, and behave the same', async () => {
  const cached = new IsolateExecutor({ workers: 1 });
  try {
    const code = 'async (p: { n: number }) => { if (p.n < 0) throw new Error("negative " + p.n); return p.n * 2 }';
    const first = await cached.execute({ code, params: { n: 1 } });
    assert.deepEqual([first.result, first.stats.codeCacheHit], [2, false]);
    const second = await cached.execute({ code, params: { n: 2 } });
    assert.deepEqual([second.result, second.stats.codeCacheHit], [4, true]);
    const failing = await cached.execute({ code, params: { n: -1 } });
    // From the cache too, the error says where it was thrown.
    assert.deepEqual([failing.error.split('\n')[0], failing.errorKind, failing.stats.codeCacheHit], ['negative -1 (line 1, column 50)', 'program', true]);
    const other = await cached.execute({ code: code + ' ', params: { n: 1 } });
    assert.equal(other.stats.codeCacheHit, false, 'another source is another entry');
    const modules = 'export default (p) => p + 1';
    await cached.execute({ code: modules, params: 1 });
    const moduleHit = await cached.execute({ code: modules, params: 2 });
    assert.deepEqual([moduleHit.result, moduleHit.stats.codeCacheHit], [3, true]);
    // A source that does not compile is not kept.
    await cached.execute({ code: 'async () => {' });
    assert.equal((await cached.execute({ code: 'async () => {' })).stats.codeCacheHit, false);
  } finally {
    await cached.dispose();
  }
});

test('codeCacheMb: 0 keeps nothing; the bound is shown in limits and checked', async () => {
  const none = new IsolateExecutor({ workers: 1, codeCacheMb: 0 });
  try {
    assert.equal(none.bounds.codeCacheMb, 0);
    await none.execute({ code: 'async () => 1' });
    assert.equal((await none.execute({ code: 'async () => 1' })).stats.codeCacheHit, false);
  } finally {
    await none.dispose();
  }
  assert.equal(executor.bounds.codeCacheMb, 32);
  assert.throws(() => new IsolateExecutor({ codeCacheMb: -1 }), { code: 'ERR_INVALID_ARGUMENT', message: /codeCacheMb/ });
});

// ---------------------------------------------------------------------------------------------
// Live logs

test('onLog: each console line in order with its level and run id, all before the promise settles', async () => {
  const seen = [];
  const out = await run('async () => { console.log("a", 1); await tools.slow(20); console.warn("b"); console.error("c"); return 1 }', {
    onLog: (line, info) => seen.push([line, info.level, typeof info.runId]),
  });
  assert.deepEqual(seen, [['a 1', 'log', 'number'], ['[warn] b', 'warn', 'number'], ['[error] c', 'error', 'number']]);
  assert.deepEqual(out.logs, ['a 1', '[warn] b', '[error] c']);
});

test('onLog: a line arrives while the program still runs', async () => {
  let resolveFirst;
  const firstLine = new Promise((resolve) => { resolveFirst = resolve; });
  const pending = run('async () => { console.log("early"); await tools.slow(400); return "done" }', { onLog: (line) => resolveFirst(line) });
  const state = await Promise.race([firstLine.then((line) => `line ${line}`), pending.then(() => 'finished first')]);
  assert.equal(state, 'line early');
  assert.equal((await pending).result, 'done');
});

test('onLog: a slow or throwing callback never stalls or breaks the run; the bounds still apply', async () => {
  const slow = await run('async () => { console.log(1); console.log(2); return "ok" }', {
    onLog: () => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300); throw new Error('listener failed'); },
  });
  assert.deepEqual([slow.result, slow.error], ['ok', undefined]);
  assert.ok(slow.timing.runMs < 300, `the program did not wait for onLog (ran ${slow.timing.runMs} ms)`);
  const lines = [];
  const bounded = await run('async () => { for (let i = 0; i < 10; i++) console.log(i) }', { onLog: (line) => lines.push(line) });
  assert.deepEqual([bounded.errorKind, bounded.errorBound], ['bound', 'maxLogLines']);
  assert.deepEqual(lines, ['0', '1', '2', '3']);
  await assert.rejects(run('async () => 1', { onLog: 'no' }), { code: 'ERR_INVALID_ARGUMENT', message: /request.onLog must be a function/ });
});

test('onLog in retained handles and in the Cloudflare form', async () => {
  const first = await run('async () => 1', { retainHandles: true });
  const lines = [];
  await first.handle.execute('async () => { console.log("in handle") }', { onLog: (line) => lines.push(line) });
  await first.handle.dispose();
  await executor.execute('async () => { console.log("cloudflare") }', [], { onLog: (line) => lines.push(line) });
  assert.deepEqual(lines, ['in handle', 'cloudflare']);
});

// ---------------------------------------------------------------------------------------------
// Timing phases and CPU time

test('timing.phases: queue, isolate, compile, run, toolWait, adding up to totalMs; toolWait covers the host\'s answers', async () => {
  const out = await run('async () => { await tools.slow(60); let x = 0; for (let i = 0; i < 2e6; i++) x += i; return x > 0 }');
  assert.equal(out.result, true);
  const names = out.timing.phases.map((p) => p.name);
  assert.deepEqual(names, ['queue', 'isolate', 'compile', 'run', 'toolWait']);
  const sum = out.timing.phases.reduce((s, p) => s + p.durationMs, 0);
  assert.ok(Math.abs(sum - out.timing.totalMs) <= Math.max(1, out.timing.totalMs * 0.05), `phases add to ${sum}, total ${out.timing.totalMs}`);
  const phase = (name) => out.timing.phases.find((p) => p.name === name).durationMs;
  assert.ok(phase('toolWait') >= 50, `toolWait ${phase('toolWait')} covers the 60 ms tool`);
  assert.ok(phase('toolWait') <= out.timing.runMs);
  assert.ok(out.stats.cpuMs > 0 && out.stats.cpuMs < out.timing.runMs, `cpu ${out.stats.cpuMs} ms of ${out.timing.runMs} ms`);
  const idle = await run('async () => tools.slow(100)');
  assert.ok(idle.stats.cpuMs < 50, `awaiting a tool is not CPU time (${idle.stats.cpuMs} ms)`);
});

// ---------------------------------------------------------------------------------------------
// Disposal with `using` / `await using` (the protocol's symbols; Node 20 has no `using` syntax)

test('Symbol.asyncDispose ends an executor, Symbol.asyncDispose / Symbol.dispose close a handle', async () => {
  const scoped = new IsolateExecutor({ workers: 1 });
  const out = await scoped.execute({ code: 'async () => 1', retainHandles: true });
  await out.handle[Symbol.asyncDispose]();
  await assert.rejects(out.handle.execute('async () => 2'), { code: 'ERR_HANDLE_CLOSED' });
  const again = await scoped.execute({ code: 'async () => 1', retainHandles: true });
  again.handle[Symbol.dispose]();
  await assert.rejects(again.handle.execute('async () => 2'), { code: 'ERR_HANDLE_CLOSED' });
  await scoped[Symbol.asyncDispose]();
  await assert.rejects(scoped.execute({ code: 'async () => 1' }), { code: 'ERR_DISPOSED' });
});

test('the runtime handle closes with Symbol.dispose and Symbol.asyncDispose', async () => {
  const { createCodemodeRuntime } = require('../../lib/index.js');
  const runtime = createCodemodeRuntime({ executor, connectors: [], path: ':memory:' });
  let closed = 0;
  const close = runtime.close.bind(runtime);
  runtime.close = () => { closed += 1; close(); };
  runtime[Symbol.dispose]();
  await runtime[Symbol.asyncDispose]();
  assert.equal(closed, 2);
});

// ---------------------------------------------------------------------------------------------
// Clear errors for what stays unsupported

test('require, module.exports, process and Buffer: the message says what is not supported and what to write', async () => {
  const req = await run('async () => { const fs = require("fs"); return fs }');
  assert.equal(req.errorKind, 'program');
  assert.match(req.error, /^require is not defined\. CommonJS `require` is not supported: call the host's tools/);
  assert.match((await run('async () => { module.exports = 1 }')).error, /CommonJS `module.exports` is not supported/);
  assert.match((await run('async () => process.env.HOME')).error, /`process` is not available in the sandbox: pass values in `params`/);
  assert.match((await run('async () => Buffer.from("x")')).error, /`Buffer` is not available .* TextEncoder/);
});

test('Node built-in modules, statically or dynamically imported, are explained', async () => {
  const stat = await run("import fs from 'node:fs';\nexport default () => fs");
  assert.match(stat.error, /No such module "node:fs"\. Node built-in modules are not available in the sandbox/);
  const dyn = await run("async () => (await import('child_process')).exec");
  assert.match(dyn.error, /No such module "child_process"\. Node built-in modules are not available/);
  // A module the executor does not have, that is not Node's, keeps the plain message.
  assert.equal((await run("async () => import('other.js')")).error, 'No such module "other.js".');
});

test('JSX is a syntax error that says so', async () => {
  const out = await run('async () => {\n  const el = <div className="x">{1}</div>;\n  return el;\n}');
  assert.equal(out.errorKind, 'syntax');
  assert.match(out.error, /JSX is not supported: programs are JavaScript or TypeScript/);
  assert.match(out.error, /\(line 2, column \d+\)/);
});

test('the Cloudflare form keeps Cloudflare\'s texts: no help sentence, no position', async () => {
  const out = await executor.execute('async () => require("fs")', []);
  assert.deepEqual(out, { result: undefined, error: 'require is not defined', logs: [] });
  const dyn = await executor.execute("async () => import('node:fs')", []);
  assert.equal(dyn.error, 'No such module "node:fs".');
});

// ---------------------------------------------------------------------------------------------
// runCode and the durable runtime (the AI SDK code tool and the runtime go through runCode)

test('runCode hands this executor the program as written: a typed arrow function runs instead of being wrapped as a statement', async () => {
  const { runCode } = require('../../lib/index.js');
  assert.deepEqual(await runCode({ code: '```ts\nasync (): Promise<number> => { const x: number = 41; return x + 1 }\n```', executor, providers: [] }), { result: 42 });
  assert.deepEqual(await runCode({ code: 'const a: number = 1;\nreturn a + 1', executor, providers: [] }), { result: 2 });
  // Any other executor still gets normalizeCode's output, as Cloudflare's runCode does.
  const seen = [];
  const other = { execute: async (code) => { seen.push(code); return { result: 1, logs: [] }; } };
  await runCode({ code: 'return 1', executor: other, providers: [] });
  assert.deepEqual(seen, ['async () => {\nreturn 1\n}']);
});

test('the durable runtime runs TypeScript programs', async () => {
  const { createCodemodeRuntime } = require('../../lib/index.js');
  const runtime = createCodemodeRuntime({ executor, connectors: [], path: ':memory:' });
  const out = await runtime.execute({ code: 'async () => { const n: number = 5; return n * 2 }' });
  assert.deepEqual([out.status, out.result], ['completed', 10]);
});

test('a snippet saved from a TypeScript execution runs through codemode.run', async () => {
  const { createCodemodeRuntime } = require('../../lib/index.js');
  const runtime = createCodemodeRuntime({ executor, connectors: [], path: ':memory:' });
  const source = await runtime.execute({ code: 'async (input?: { n: number }): Promise<number> => (input ? input.n : 0) * 3' });
  assert.equal(source.status, 'completed', JSON.stringify(source));
  await runtime.saveSnippet('triple', { executionId: source.executionId });
  const out = await runtime.execute({ code: 'async () => codemode.run("triple", { n: 4 })' });
  assert.deepEqual([out.status, out.result], ['completed', 12], JSON.stringify(out));
});

test('examples/typed-program.js runs: live lines, the warm cities, and a code-cache hit on the second run', () => {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const out = spawnSync(process.execPath, [path.join(__dirname, '..', '..', 'examples', 'typed-program.js')], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(out.status, 0, out.stderr);
  const lines = out.stdout.trimEnd().split('\n');
  assert.deepEqual(lines.slice(0, 3), ['  live: Oslo 27°F', '  live: Lisbon 64°F', '  live: Nairobi 64°F']);
  const results = lines.slice(3).map((line) => JSON.parse(line.slice(0, line.indexOf(' ('))));
  assert.deepEqual(results, [{ result: ['Lisbon'], codeCacheHit: false }, { result: ['Nairobi'], codeCacheHit: true }]);
});
