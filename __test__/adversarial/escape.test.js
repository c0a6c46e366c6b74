'use strict';
// Adversarial corpus, escape attempts: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  HOST_BOUND_MS,
  recordingDispatch,
  timed,
  assertNextRunWorks,
  sharedExecutors,
} = require('./harness.js');

const shared = sharedExecutors();

// ---------------------------------------------------------------------------------------------
// Escape attempts
// ---------------------------------------------------------------------------------------------

test('escape: host globals are absent; import() and fetch are refused', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await shared.ex.execute({
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
  const out = await shared.ex.execute({
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
  const out = await shared.ex.execute({
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
  const spin = await timed(shared.ex, { code: "async () => { Error.prepareStackTrace = () => { for (;;) {} }; throw new Error('boom'); }", timeout: 1000 });
  // (The native form adds where it was thrown: V8 places an error without calling the program's
  // prepareStackTrace.)
  assert.ok(/^boom( \(line 1, column \d+\)\n|$)/.test(spin.out.error) || spin.out.error === 'Execution timed out', spin.out.error);
  assert.ok(spin.ms < HOST_BOUND_MS);
  const thrower = await shared.ex.execute({ code: "async () => { Error.prepareStackTrace = () => { throw new Error('pst'); }; throw new Error('boom'); }" });
  assert.equal(typeof thrower.error, 'string');
  await assertNextRunWorks(shared.ex);
});

test('escape: overwriting JSON, prototypes and Reflect before tool calls leaves the host args valid', async () => {
  const { calls, dispatch } = recordingDispatch();
  const out = await shared.solo.execute({
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
  const next = await shared.solo.execute({
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
    const out = await shared.ex.execute({
      code: `async () => { ${proto}.toJSON = function () { return { length: 4294967295 }; }; return await tools.echo(1, 2); }`,
      providers: [{ name: 'tools', tools: ['echo'] }],
      dispatch,
    });
    assert.equal(calls.length, 1, `${proto}: ${JSON.stringify(out)}`);
    const parsed = JSON.parse(calls[0].argsJson);
    assert.ok(Array.isArray(parsed), `${proto}.toJSON: the host received argsJson ${calls[0].argsJson}, not an argument array`);
  }
  await assertNextRunWorks(shared.ex);
});
