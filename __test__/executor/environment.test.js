'use strict';
// The Web platform globals of the sandbox (docs/cloudflare-compat.md §2.15): timers, queueMicrotask, performance,
// structuredClone, atob/btoa, TextEncoder/TextDecoder, crypto random values, DOMException.
// Where Node has the same API, the sandbox must agree with it.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const ex = new IsolateExecutor({ workers: 1, timeout: 5000 });
test.after(() => ex.dispose());
const run = async (code) => {
  const out = await ex.execute({ code });
  assert.equal(out.error, undefined, out.error);
  return out;
};

test('timers fire in order, intervals repeat until cleared, and microtasks run first', async () => {
  const { result } = await run(`async () => {
    const order = [];
    setTimeout(() => order.push("t20"), 20);
    setTimeout((a, b) => order.push("t0:" + a + b), 0, "x", "y");
    const cancelled = setTimeout(() => order.push("never"), 5);
    clearTimeout(cancelled);
    queueMicrotask(() => order.push("micro"));
    let ticks = 0;
    await new Promise((resolve) => {
      const id = setInterval(() => { ticks++; if (ticks === 3) { clearInterval(id); resolve(); } }, 2);
    });
    await new Promise((resolve) => setTimeout(resolve, 40));
    return { order, ticks };
  }`);
  assert.deepEqual(result, { order: ['micro', 't0:xy', 't20'], ticks: 3 });
});

test('a timer delay is honoured on the clock', async () => {
  const { result } = await run(`async () => {
    const start = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 60));
    return performance.now() - start;
  }`);
  assert.ok(result >= 55, `waited ${result} ms`);
});

test('timers do not outlive the run, and pending timers keep a waiting run alive only to its deadline', async () => {
  const quick = await run('async () => { setTimeout(() => {}, 60000); setInterval(() => {}, 1); return "done" }');
  assert.equal(quick.result, 'done');
  assert.ok(quick.timing.runMs < 1000);
  const waiting = await ex.execute({ code: 'async () => { await new Promise((r) => setTimeout(r, 60000)) }', timeout: 300 });
  assert.equal(waiting.error, 'Execution timed out');
  const next = await run('async () => typeof globalThis.leftover');
  assert.equal(next.result, 'undefined');
});

test('an exception in a timer callback is logged, not fatal', async () => {
  const out = await run('async () => { setTimeout(() => { throw new TypeError("tick failed") }, 0); await new Promise((r) => setTimeout(r, 10)); return "alive" }');
  assert.equal(out.result, 'alive');
  assert.deepEqual(out.logs, ['[error] Uncaught TypeError: tick failed']);
});

test('timer arguments are validated like the Web does', async () => {
  const { result } = await run(`async () => {
    try { setTimeout("alert(1)", 0); return "accepted a string"; } catch (e) { return e instanceof TypeError; }
  }`);
  assert.equal(result, true);
});

test('too many timers at once breaks the maxTimers bound', async () => {
  const out = await ex.execute({ code: 'async () => { for (let i = 0; i < 20000; i++) setTimeout(() => {}, 1000); return 1 }' });
  assert.match(out.error, /maxTimers/);
});

test('btoa and atob agree with Node, errors included', async () => {
  const inputs = ['', 'f', 'fo', 'foo', 'hello world', '\u00ff\u00fe\u0000', 'ÿ'];
  const encoded = ['', 'Zg==', 'Zm8', ' Zm9v\n', 'aGVsbG8gd29ybGQ=', '////', 'Zg=', 'Zm9v!', 'Z', 'Zm9vYg==='];
  const { result } = await run(`async () => {
    const attempt = (f) => { try { return f(); } catch (e) { return e.name; } };
    return {
      btoa: ${JSON.stringify(inputs)}.map((s) => attempt(() => btoa(s))),
      btoaWide: attempt(() => btoa("☃")),
      atob: ${JSON.stringify(encoded)}.map((s) => attempt(() => atob(s))),
    };
  }`);
  const attempt = (f) => { try { return f(); } catch (e) { return e.name; } };
  assert.deepEqual(result.btoa, inputs.map((s) => btoa(s)));
  assert.equal(result.btoaWide, 'InvalidCharacterError');
  assert.deepEqual(result.atob, encoded.map((s) => attempt(() => atob(s))));
});

test('TextEncoder and TextDecoder agree with Node on valid and broken UTF-8', async () => {
  const strings = ['', 'ascii', 'héllo', '☃ snow', '𝄞 clef', '\ud800 lone', 'tail \udc00', '\u0000\u007f\u0080\u07ff\u0800\uffff'];
  const byteCases = [[0xc3, 0xa9], [0xc3], [0xe2, 0x98], [0xf0, 0x9d, 0x84], [0xff, 0x41], [0xed, 0xa0, 0x80], [0xef, 0xbb, 0xbf, 0x41],
    [0xc0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe0, 0x80, 0x41], [0x41, 0xf0, 0x9f, 0x98, 0x80, 0x42]];
  const { result } = await run(`async () => {
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    const fatal = new TextDecoder("utf-8", { fatal: true });
    const keep = new TextDecoder("utf8", { ignoreBOM: true });
    const streamed = new TextDecoder();
    const parts = [new Uint8Array([0xf0, 0x9d]), new Uint8Array([0x84, 0x9e, 0x41])];
    const stream = streamed.decode(parts[0], { stream: true }) + streamed.decode(parts[1]);
    const into = new Uint8Array(5);
    const intoResult = enc.encodeInto("a☃b", into);
    return {
      encoded: ${JSON.stringify(strings)}.map((s) => Array.from(enc.encode(s))),
      decoded: ${JSON.stringify(byteCases)}.map((b) => dec.decode(new Uint8Array(b))),
      kept: keep.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])),
      fatal: ${JSON.stringify(byteCases)}.map((b) => { try { return fatal.decode(new Uint8Array(b)); } catch (e) { return e.name; } }),
      stream, into: [intoResult.read, intoResult.written, Array.from(into)],
      fromBuffer: dec.decode(new Uint8Array([104, 105]).buffer),
      unsupported: (() => { try { new TextDecoder("latin-1"); return "accepted"; } catch (e) { return e.name; } })(),
      encoding: [enc.encoding, dec.encoding],
    };
  }`);
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const fatal = new TextDecoder('utf-8', { fatal: true });
  assert.deepEqual(result.encoded, strings.map((s) => Array.from(enc.encode(s))));
  assert.deepEqual(result.decoded, byteCases.map((b) => dec.decode(new Uint8Array(b))));
  assert.equal(result.kept, new TextDecoder('utf8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])));
  assert.deepEqual(result.fatal, byteCases.map((b) => { try { return fatal.decode(new Uint8Array(b)); } catch { return 'TypeError'; } }));
  assert.equal(result.stream, '𝄞A');
  const into = new Uint8Array(5);
  const r = enc.encodeInto('a☃b', into);
  assert.deepEqual(result.into, [r.read, r.written, Array.from(into)]);
  assert.equal(result.fromBuffer, 'hi');
  assert.equal(result.unsupported, 'RangeError');
  assert.deepEqual(result.encoding, ['utf-8', 'utf-8']);
});

test('structuredClone copies deeply, keeps cycles and types, and refuses functions', async () => {
  const { result } = await run(`async () => {
    const source = { date: new Date(86400000), map: new Map([["k", { v: 1 }]]), set: new Set([1, "two"]),
      re: /x+/gi, bytes: new Uint16Array([1, 65535]), nested: [1, [2, { three: 3 }]], big: 10n, err: new RangeError("r") };
    source.self = source;
    const copy = structuredClone(source);
    const attempts = [() => structuredClone(() => 1), () => structuredClone(Symbol("s")), () => structuredClone({ p: Promise.resolve() })]
      .map((f) => { try { f(); return "cloned"; } catch (e) { return e.name; } });
    copy.nested[1][1].three = 33;
    return [copy !== source, copy.self === copy, copy.date instanceof Date, copy.date.getTime(), copy.map.get("k").v,
      [...copy.set], copy.re.source + "/" + copy.re.flags, copy.bytes instanceof Uint16Array, [...copy.bytes],
      source.nested[1][1].three, copy.big === 10n, copy.err instanceof RangeError, copy.err.message, attempts];
  }`);
  assert.deepEqual(result, [true, true, true, 86400000, 1, [1, 'two'], 'x+/gi', true, [1, 65535], 3, true, true, 'r',
    ['DataCloneError', 'DataCloneError', 'DataCloneError']]);
});

test('crypto.getRandomValues and randomUUID give real randomness within the Web limits', async () => {
  const { result } = await run(`async () => {
    const a = crypto.getRandomValues(new Uint8Array(32));
    const b = crypto.getRandomValues(new Uint32Array(8));
    const uuids = Array.from({ length: 50 }, () => crypto.randomUUID());
    const errors = [() => crypto.getRandomValues(new Float64Array(2)), () => crypto.getRandomValues(new Uint8Array(65537))]
      .map((f) => { try { f(); return "ok"; } catch (e) { return e.name; } });
    return { a: Array.from(a), b: Array.from(b), uuids, errors };
  }`);
  assert.equal(result.a.length, 32);
  assert.ok(new Set(result.a).size > 8, 'bytes vary');
  assert.ok(result.b.some((x) => x !== 0));
  assert.equal(new Set(result.uuids).size, 50);
  for (const uuid of result.uuids) assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(result.errors, ['TypeMismatchError', 'QuotaExceededError']);
});

test('performance.now is monotonic and DOMException behaves like an Error', async () => {
  const { result } = await run(`async () => {
    const t1 = performance.now(); let x = 0; for (let i = 0; i < 1e5; i++) x += i; const t2 = performance.now();
    const e = new DOMException("nope", "AbortError");
    return [t2 >= t1, typeof performance.timeOrigin, e instanceof Error, e.name, e.message, e.code];
  }`);
  assert.deepEqual(result, [true, 'number', true, 'AbortError', 'nope', 20]);
});
