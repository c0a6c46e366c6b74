'use strict';
// Adversarial corpus, web APIs: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  MB,
  runChild,
  assertChildSurvived,
  assertStep,
} = require('./harness.js');

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

// Streams, Blob and FormData under attack: each program ends at a bound (time or memory) and the
// host stays up. Queues live on the isolate's heap and Blob bytes in the ArrayBuffer budget.
test('web APIs (child): streams, Blobs and crypto that never end, cycle or grow stay bounded', async () => {
  const TIMED_OUT = /^Execution timed out$/;
  const MEMORY = /^Memory exhausted/;
  const programs = {
    'a stream that never ends': ['async () => { const s = new ReadableStream({ pull(c) { c.enqueue(1); } }); for await (const x of s) {} }', TIMED_OUT, 500],
    'enqueue without backpressure': ["async () => { new ReadableStream({ start(c) { for (;;) c.enqueue('x'.repeat(1000) + Math.random()); } }); }", MEMORY],
    'a tee branch never read': ['async () => { const [a] = new ReadableStream({ pull(c) { c.enqueue(new Uint8Array(65536)); } }).tee(); for await (const x of a) {} }', MEMORY],
    'a pipeTo cycle': ['async () => { const t = new TransformStream(); const w = t.writable.getWriter(); w.write(1); w.releaseLock(); await t.readable.pipeThrough(new TransformStream({ transform(c, ctl) { ctl.enqueue(c); } })).pipeTo(t.writable); }', TIMED_OUT, 500],
    'a 1 GB Blob from parts': ['async () => { const part = new Blob([new Uint8Array(2 ** 24)]); return new Blob(new Array(64).fill(part)).size; }', MEMORY],
    'a Blob doubling': ["async () => { let b = new Blob(['x']); for (;;) b = new Blob([b, b]); }", MEMORY],
    'a body stream read to its end forever': ['async () => new Response(new ReadableStream({ pull(c) { c.enqueue(new Uint8Array(1 << 20)); } })).arrayBuffer()', MEMORY],
    'HMAC signing in a loop': ["async () => { const k = await crypto.subtle.importKey('raw', new Uint8Array(64), { name: 'HMAC', hash: 'SHA-512' }, false, ['sign']); const data = new Uint8Array(1 << 20); for (;;) await crypto.subtle.sign('HMAC', k, data); }", TIMED_OUT, 500],
    // Each 4096-bit key is one native call that can take seconds of CPU on a busy core; the
    // search for primes gives up when the run is told to stop, so no worker is abandoned.
    'RSA key generation in a loop': ["async () => { for (;;) await crypto.subtle.generateKey({ name: 'RSA-PSS', hash: 'SHA-256', modulusLength: 4096, publicExponent: new Uint8Array([1, 0, 1]) }, false, ['sign']); }", TIMED_OUT, 500],
    'an RSA key of 16 384 bits': ["async () => { const n = new Uint8Array(2048).fill(255); const b64 = btoa(String.fromCharCode(...n)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, ''); await crypto.subtle.importKey('jwk', { kty: 'RSA', n: b64, e: 'AQAB' }, { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify']); }", /NotSupportedError|16384 bits/],
    'an HMAC key past the budget': ["async () => crypto.subtle.importKey('raw', new Uint8Array(2 ** 27), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])", MEMORY],
    // A hand-made deflate-raw block of ~840 KB that inflates to ~134 MB (one literal, then
    // 520 000 matches of 258 bytes): refused before any output past the budget is held.
    'a decompression bomb': [`async () => {
      const n = 520000; const out = new Uint8Array(Math.ceil((11 + n * 13 + 7) / 8) + 1); let bit = 0;
      const put = (value, count) => { for (let i = 0; i < count; i++) { if ((value >> i) & 1) out[bit >> 3] |= 1 << (bit & 7); bit++; } };
      const code = (value, length) => { let r = 0; for (let i = 0; i < length; i++) r |= ((value >> i) & 1) << (length - 1 - i); put(r, length); };
      put(1, 1); put(1, 2); code(0x30, 8);
      for (let i = 0; i < n; i++) { code(0xc5, 8); code(0, 5); }
      code(0, 7);
      return (await new Response(new Blob([out]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer()).byteLength;
    }`, /larger than the memory bound/],
    'a MessageChannel ping-pong': ['async () => { const { port1, port2 } = new MessageChannel(); port1.onmessage = (e) => port1.postMessage(e.data); port2.onmessage = (e) => port2.postMessage(e.data); port1.postMessage(1); await new Promise(() => {}); }', TIMED_OUT, 500],
    'a MessageChannel flood never read': ["async () => { const { port1 } = new MessageChannel(); for (;;) port1.postMessage('x'.repeat(1000) + Math.random()); }", MEMORY],
    'a byte stream allocating 2^40-byte chunks': ["async () => { const s = new ReadableStream({ type: 'bytes', autoAllocateChunkSize: 2 ** 40, pull(c) { c.byobRequest.respond(1); } }); await s.getReader().read(); }", MEMORY],
    'BYOB reads that never end': ["async () => { const r = new ReadableStream({ type: 'bytes', pull(c) { c.byobRequest.respond(c.byobRequest.view.byteLength); } }).getReader({ mode: 'byob' }); let v = new Uint8Array(65536); for (;;) v = (await r.read(v)).value; }", TIMED_OUT, 500],
    'multipart from a huge FormData': ["async () => { const f = new FormData(); const big = new Blob([new Uint8Array(2 ** 24)]); for (let i = 0; i < 64; i++) f.append('f' + i, big); return (await new Response(f).arrayBuffer()).byteLength; }", MEMORY],
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
