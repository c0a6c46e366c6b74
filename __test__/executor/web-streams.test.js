'use strict';
// The Streams standard in the sandbox (ReadableStream, WritableStream, TransformStream, queuing
// strategies, piping, tee, async iteration, byte streams), TextEncoderStream/TextDecoderStream,
// and Request/Response bodies as streams. Each program runs in the sandbox and in Node, whose
// streams follow the same standard; both must record the same events in the same order.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const ex = new IsolateExecutor({ workers: 1, timeout: 5000 });
test.after(() => ex.dispose());

async function both(code) {
  const out = await ex.execute({ code });
  assert.equal(out.error, undefined, out.error);
  const fn = new Function(`return (${code})`)();
  return [out.result, JSON.parse(JSON.stringify(await fn()))];
}
const HELPERS = `
  const log = [];
  const settle = (p) => p.then((v) => ['ok', v], (e) => ['err', e && e.name ? e.name : e]);
  const tick = () => new Promise((r) => setTimeout(r, 0));
  // A read result as text, its keys in one order: Node's own order differs between versions
  // (Node 24 gives a queued chunk's result as { done, value } and a pending read's as
  // { value, done }), and the order is not what these tests check.
  const show = (r) => JSON.stringify({ done: r.done, value: r.value });
`;

test('ReadableStream: controller, default reader, queue, desiredSize and backpressure', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    let controller;
    let pulls = 0;
    const stream = new ReadableStream({
      start(c) { controller = c; log.push('start ' + c.desiredSize); },
      pull(c) { pulls++; log.push('pull ' + c.desiredSize); },
      cancel(reason) { log.push('cancel ' + reason); },
    }, new CountQueuingStrategy({ highWaterMark: 2 }));
    await tick();
    controller.enqueue('a');
    controller.enqueue('b');
    log.push('desired ' + controller.desiredSize);
    const reader = stream.getReader();
    log.push('locked ' + stream.locked);
    log.push(show(await reader.read()));
    await tick();
    log.push(show(await reader.read()));
    const pending = reader.read();
    controller.enqueue('c');
    log.push(show(await pending));
    controller.close();
    log.push(show(await reader.read()));
    log.push('closed ' + (await reader.closed));
    log.push(await settle(stream.cancel('late')));
    reader.releaseLock();
    log.push('locked ' + stream.locked);
    log.push(await settle(reader.read()));
    const errored = new ReadableStream({ start(c) { c.error(new RangeError('bad')); } });
    const r2 = errored.getReader();
    log.push(await settle(r2.read()), await settle(r2.closed));
    let thrown; try { errored.getReader(); } catch (e) { thrown = e.name; }
    log.push(thrown);
    const bySize = new ReadableStream({ start(c) { c.enqueue('abcd'); log.push('size desired ' + c.desiredSize); } }, { highWaterMark: 10, size: (chunk) => chunk.length });
    let bad; try { new ReadableStream({}, { highWaterMark: -1 }); } catch (e) { bad = e.name; }
    log.push(bad, pulls > 0);
    let badType; try { new ReadableStream({ type: 'nope' }); } catch (e) { badType = e.name; }
    log.push(badType);
    const cancelled = new ReadableStream({ cancel(r) { log.push('source cancel ' + r); return 'ignored'; } });
    log.push(await settle(cancelled.cancel('why')));
    void bySize;
    return log;
  }`);
  assert.deepEqual(sandbox, node);
  assert.ok(sandbox.length > 15);
});

test('WritableStream: writer, backpressure, close, abort, sink errors', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const written = [];
    let finishWrite;
    const stream = new WritableStream({
      start() { log.push('start'); },
      write(chunk, c) { written.push(chunk); log.push('write ' + chunk + ' ' + (c.signal instanceof AbortSignal)); return new Promise((r) => { finishWrite = r; }); },
      close() { log.push('close'); },
    }, { highWaterMark: 2 });
    const writer = stream.getWriter();
    log.push('desired ' + writer.desiredSize);
    await writer.ready;
    const w1 = writer.write('a');
    const w2 = writer.write('b');
    log.push('desired ' + writer.desiredSize);
    const w3 = writer.write('c');
    log.push('desired ' + writer.desiredSize);
    await tick();
    finishWrite();
    await w1;
    await tick();
    finishWrite();
    await w2;
    await tick();
    finishWrite();
    await w3;
    log.push('desired ' + writer.desiredSize);
    await writer.close();
    log.push(await settle(writer.closed), written.join(''));
    const failing = new WritableStream({ write() { throw new TypeError('sink'); }, abort(r) { log.push('abort ' + r); } });
    const fw = failing.getWriter();
    log.push(await settle(fw.write(1)), await settle(fw.closed), await settle(fw.ready));
    const aborted = new WritableStream({ abort(reason) { log.push('sink abort ' + reason); } });
    const aw = aborted.getWriter();
    log.push(await settle(aw.abort('stop')), await settle(aw.closed));
    aw.releaseLock();
    log.push(aborted.locked, await settle(aw.closed));
    const closing = new WritableStream();
    log.push(await settle(closing.close()), await settle(closing.close()));
    return log;
  }`);
  assert.deepEqual(sandbox, node);
  assert.ok(sandbox.length > 12);
  // A write after an abort rejects with the abort's reason, one after close with a TypeError
  // (Node 20 fails an internal assertion on both, so this part runs in the sandbox only).
  const out = await ex.execute({ code: `async () => {
    const aborted = new WritableStream().getWriter();
    await aborted.abort('stop');
    const closed = new WritableStream().getWriter();
    await closed.close();
    return [await aborted.write(1).then(() => 'written', (e) => 'rejected ' + e), await closed.write(1).then(() => 'written', (e) => e.name)];
  }` });
  assert.deepEqual(out.result, ['rejected stop', 'TypeError']);
});

test('pipeTo and pipeThrough: order, close and error propagation, prevent* options, abort signals', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const collected = [];
    const sink = () => new WritableStream({ write(c) { collected.push(c); }, close() { collected.push('|closed'); }, abort(r) { collected.push('|aborted ' + r); } });
    await ReadableStream.from([1, 2, 3]).pipeTo(sink());
    const upper = new TransformStream({ transform(chunk, c) { c.enqueue(String(chunk).toUpperCase()); c.enqueue('!'); }, flush(c) { c.enqueue('end'); } });
    await ReadableStream.from(['a', 'b']).pipeThrough(upper).pipeTo(sink());
    await ReadableStream.from(['x']).pipeTo(sink(), { preventClose: true });
    const failing = new ReadableStream({ start(c) { c.enqueue('y'); c.error('source failed'); } });
    log.push(await settle(failing.pipeTo(sink())));
    log.push(await settle(new ReadableStream({ start(c) { c.error('again'); } }).pipeTo(sink(), { preventAbort: true })));
    const cancelled = [];
    const source = new ReadableStream({ pull(c) { c.enqueue('z'); }, cancel(r) { cancelled.push('cancel ' + r); } }, { highWaterMark: 0 });
    const brokenSink = new WritableStream({ write() { throw 'sink failed'; } });
    log.push(await settle(source.pipeTo(brokenSink)), cancelled);
    const controller = new AbortController();
    const slow = new ReadableStream({ pull(c) { c.enqueue('s'); return new Promise((r) => setTimeout(r, 5)); }, cancel(r) { log.push('slow cancel ' + (r && r.name)); } });
    const piping = slow.pipeTo(new WritableStream({ abort(r) { log.push('sink abort ' + (r && r.name)); } }), { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    log.push(await settle(piping));
    log.push(await settle(ReadableStream.from([1]).pipeTo(sink(), { signal: AbortSignal.abort() })));
    const locked = ReadableStream.from([1]);
    locked.getReader();
    log.push(await settle(locked.pipeTo(sink())));
    let throughError; try { locked.pipeThrough(new TransformStream()); } catch (e) { throughError = e.name; }
    log.push(throughError);
    return [collected, log];
  }`);
  assert.deepEqual(sandbox, node);
  assert.deepEqual(sandbox[0].slice(0, 4), [1, 2, 3, '|closed']);
});

test('tee, async iteration (break cancels, preventCancel keeps), ReadableStream.from', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const [a, b] = ReadableStream.from([1, 2, 3]).tee();
    const fromA = [];
    for await (const x of a) fromA.push(x);
    const fromB = [];
    for await (const x of b) fromB.push(x);
    const reasons = [];
    const source = new ReadableStream({ pull(c) { c.enqueue(0); }, cancel(r) { reasons.push(r); } });
    const [c1, c2] = source.tee();
    const p1 = c1.cancel('one');
    await tick();
    reasons.push('after one: ' + reasons.length);
    await Promise.all([p1, c2.cancel('two')]);
    const seen = [];
    const endless = new ReadableStream({ pull(c) { c.enqueue(seen.length); }, cancel(r) { seen.push('cancelled ' + r); } });
    for await (const x of endless) { seen.push(x); if (x >= 2) break; }
    seen.push('locked ' + endless.locked);
    const kept = ReadableStream.from(['k1', 'k2']);
    for await (const x of kept.values({ preventCancel: true })) { seen.push(x); break; }
    const rest = await kept.getReader().read();
    async function* gen() { yield 'g1'; await tick(); yield 'g2'; }
    const generated = [];
    for await (const x of ReadableStream.from(gen())) generated.push(x);
    const iterator = ReadableStream.from([1, 2])[Symbol.asyncIterator]();
    const both = await Promise.all([iterator.next(), iterator.next(), iterator.next()]);
    let notIterable; try { ReadableStream.from(5); } catch (e) { notIterable = e.name; }
    const erroring = new ReadableStream({ start(c) { c.enqueue(1); c.error(new Error('mid')); } });
    const partial = [];
    let iterError;
    try { for await (const x of erroring) partial.push(x); } catch (e) { iterError = e.message; }
    return [fromA, fromB, reasons, seen, rest, generated, both, notIterable, partial, iterError,
      Object.getPrototypeOf(Object.getPrototypeOf(iterator)) === Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}).prototype)];
  }`);
  assert.deepEqual(sandbox, node);
  assert.deepEqual(sandbox[0], [1, 2, 3]);
});

test('TransformStream: backpressure, terminate, error, cancel from the readable side', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const transformed = [];
    const ts = new TransformStream({
      start(c) { log.push('start ' + c.desiredSize); },
      transform(chunk, c) { transformed.push(chunk); c.enqueue(chunk * 2); },
      flush() { log.push('flush'); },
    });
    const writer = ts.writable.getWriter();
    log.push('writer desired ' + writer.desiredSize);
    const write1 = writer.write(1);
    await tick();
    log.push('transformed before read ' + transformed.length);
    const reader = ts.readable.getReader();
    log.push(show(await reader.read()));
    await write1;
    writer.write(2);
    log.push(show(await reader.read()));
    writer.close();
    log.push(show(await reader.read()));
    const terminating = new TransformStream({ transform(chunk, c) { c.enqueue(chunk); c.terminate(); } });
    const tw = terminating.writable.getWriter();
    const tr = terminating.readable.getReader();
    tw.write('only');
    log.push(show(await tr.read()), show(await tr.read()), await settle(tw.write('more')));
    const failing = new TransformStream({ transform() { throw new SyntaxError('bad chunk'); } });
    const fw = failing.writable.getWriter();
    // The readable side has no room (highWaterMark 0): the write waits for a read.
    const pendingRead = settle(failing.readable.getReader().read());
    log.push(await settle(fw.write('x')), await pendingRead, await settle(fw.closed));
    const cancelled = new TransformStream({ cancel(r) { log.push('transformer cancel ' + r); } });
    await cancelled.readable.cancel('reader gone');
    log.push(await settle(cancelled.writable.getWriter().write('y')));
    const identity = new TransformStream();
    const iw = identity.writable.getWriter();
    iw.write('same');
    iw.close();
    const out = [];
    for await (const x of identity.readable) out.push(x);
    let badType; try { new TransformStream({ readableType: 'bytes' }); } catch (e) { badType = e.name; }
    log.push(out, badType);
    return log;
  }`);
  assert.deepEqual(sandbox, node);
});

test('byte streams: enqueue transfers, default and BYOB readers, Blob.stream()', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const source = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const stream = new ReadableStream({ type: 'bytes', start(c) { c.enqueue(source); source[0] = 99; c.close(); } });
    const reader = stream.getReader({ mode: 'byob' });
    const first = await reader.read(new Uint8Array(4));
    const second = await reader.read(new Uint8Array(4));
    const third = await reader.read(new Uint8Array(4));
    log.push([Array.from(first.value), first.done], [Array.from(second.value), second.done], [third.value.length, third.done, third.value.constructor.name]);
    let notBytes; try { new ReadableStream().getReader({ mode: 'byob' }); } catch (e) { notBytes = e.name; }
    let badChunk; try { new ReadableStream({ type: 'bytes', start(c) { c.enqueue('str'); } }); } catch (e) { badChunk = e.name; }
    const blobChunks = [];
    // How a Blob's bytes are split into chunks is the implementation's choice.
    for await (const chunk of new Blob(['hello ', 'blob']).stream()) blobChunks.push(chunk.constructor.name + ':' + new TextDecoder().decode(chunk));
    const blobText = blobChunks.map((c) => c.replace(/^Uint8Array:/, '')).join('');
    const defaultReader = new ReadableStream({ type: 'bytes', pull(c) { c.enqueue(new Uint8Array([7])); c.close(); } }).getReader();
    const d1 = await defaultReader.read();
    log.push(notBytes, blobText, blobChunks.every((c) => c.startsWith('Uint8Array:')), Array.from(d1.value), (await defaultReader.read()).done);
    return log;
  }`);
  assert.deepEqual(sandbox.slice(0, 3), node.slice(0, 3));
  assert.deepEqual(sandbox.slice(4), node.slice(4));
});

test('TextEncoderStream and TextDecoderStream split code points across chunks', async () => {
  const [sandbox, node] = await both(`async () => {
    const text = async (stream) => { let s = ''; for await (const c of stream) s += c; return s; };
    const bytes = async (stream) => { const out = []; for await (const c of stream) out.push(...c); return out; };
    const encoded = await bytes(ReadableStream.from(['h\\ud83d', '\\ude00i', '\\ud800'] ).pipeThrough(new TextEncoderStream()));
    const chunks = [[0xf0, 0x9f], [0x98], [0x80, 0x41], [0xe2]].map((b) => new Uint8Array(b));
    const decoded = await text(ReadableStream.from(chunks).pipeThrough(new TextDecoderStream()));
    const latin = await text(ReadableStream.from([new Uint8Array([0x80, 0xe9])]).pipeThrough(new TextDecoderStream('windows-1252')));
    const fatal = new TextDecoderStream('utf-8', { fatal: true });
    let failed; try { await text(ReadableStream.from([new Uint8Array([0xff])]).pipeThrough(fatal)); } catch (e) { failed = e.name; }
    let notBytes; try { await text(ReadableStream.from(['str']).pipeThrough(new TextDecoderStream())); } catch (e) { notBytes = e.name; }
    const ds = new TextDecoderStream('utf-16le', { ignoreBOM: true });
    return [encoded, decoded, latin, failed, notBytes, new TextEncoderStream().encoding, ds.encoding, ds.fatal, ds.ignoreBOM];
  }`);
  assert.deepEqual(sandbox, node);
});

test('Request and Response bodies are streams: body, bodyUsed, clone by tee, stream bodies, fetch with a stream', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const response = new Response('hello');
    const body = response.body;
    log.push(body instanceof ReadableStream, body === response.body, response.bodyUsed, new Response(null).body, new Response().body);
    const reader = body.getReader();
    const chunk = await reader.read();
    log.push(chunk.value.constructor.name, new TextDecoder().decode(chunk.value), response.bodyUsed, await settle(response.text()));
    const cloned = new Response('twice');
    void cloned.body;
    const copy = cloned.clone();
    log.push(await cloned.text(), await copy.text());
    const fromStream = new Response(ReadableStream.from([new Uint8Array([104]), new Uint8Array([105])]));
    log.push(fromStream.headers.get('content-type'), await fromStream.text(), fromStream.bodyUsed);
    const wrongChunks = new Response(ReadableStream.from(['not bytes']));
    log.push(await settle(wrongChunks.text()));
    const stream = ReadableStream.from([new Uint8Array([1])]);
    stream.getReader();
    let lockedBody; try { new Response(stream); } catch (e) { lockedBody = e.name; }
    let noDuplex; try { new Request('https://example.com/', { method: 'POST', body: ReadableStream.from([]) }); } catch (e) { noDuplex = e.name; }
    const request = new Request('https://example.com/', { method: 'POST', body: ReadableStream.from([new Uint8Array([111, 107])]), duplex: 'half' });
    const requestCopy = request.clone();
    log.push(lockedBody, noDuplex, await request.text(), await requestCopy.text(), request.bodyUsed);
    const read = new Response('r');
    await read.text();
    let lockedAfterRead; try { read.body.getReader(); } catch (e) { lockedAfterRead = e.name; }
    log.push(read.body instanceof ReadableStream, read.bodyUsed, read.body.locked, lockedAfterRead);
    const source = new Request('https://example.com/', { method: 'PUT', body: 'moved' });
    const moved = new Request(source);
    log.push(source.bodyUsed, await moved.text());
    return log;
  }`);
  assert.deepEqual(sandbox, node);
  const out = await ex.execute({
    code: `async () => {
      const body = ReadableStream.from(['a', 'b']).pipeThrough(new TextEncoderStream());
      const response = await fetch('https://api.example.com/echo', { method: 'POST', body, duplex: 'half' });
      return [response.status, await response.text()];
    }`,
    outbound: async (request) => new Response(`got ${request.method} ${await request.text()}`, { status: 201 }),
  });
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, [201, 'got POST ab']);
});

test('the stream globals are built on first use, from intrinsics captured before the program ran', async () => {
  const out = await ex.execute({ code: `async () => {
    const listed = Object.keys(globalThis).filter((k) => k.includes('Stream'));
    globalThis.TransformStream = 'mine';
    delete globalThis.WritableStream;
    globalThis.Symbol = undefined;
    Object.getOwnPropertyDescriptor = null;
    Object.defineProperty = null;
    Promise.resolve = null;
    Promise.reject = null;
    const chunks = [];
    for await (const chunk of new Response('abc').body.pipeThrough(new TextDecoderStream())) chunks.push(chunk);
    const tee = ReadableStream.from(['x']).tee();
    return [listed, TransformStream, typeof WritableStream, chunks.join(''), (await tee[1].getReader().read()).value];
  }` });
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, [[], 'mine', 'undefined', 'abc', 'x']);
});

test('CompressionStream and DecompressionStream: gzip, deflate and deflate-raw cross with Node both ways', async () => {
  const zlib = require('node:zlib');
  const text = 'compress me, '.repeat(200);
  const packed = {
    gzip: zlib.gzipSync(text).toString('base64'),
    deflate: zlib.deflateSync(text).toString('base64'),
    'deflate-raw': zlib.deflateRawSync(text).toString('base64'),
  };
  const out = await ex.execute({ code: `async () => {
    const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
    const collect = async (stream) => new Uint8Array(await new Response(stream).arrayBuffer());
    const settle = (p) => p.then(() => 'ok', (e) => e.name);
    const results = {};
    for (const [format, data] of Object.entries(${JSON.stringify(packed)})) {
      const unpacked = new TextDecoder().decode(await collect(new Blob([b64(data)]).stream().pipeThrough(new DecompressionStream(format))));
      const mine = await collect(ReadableStream.from([new TextEncoder().encode(${JSON.stringify(text)})]).pipeThrough(new CompressionStream(format)));
      const truncated = b64(data).slice(0, -3);
      const junk = new Uint8Array([...b64(data), 1, 2, 3]);
      results[format] = [unpacked === ${JSON.stringify(text)}, btoa(String.fromCharCode(...mine)),
        await settle(collect(new Blob([truncated]).stream().pipeThrough(new DecompressionStream(format)))),
        await settle(collect(new Blob([junk]).stream().pipeThrough(new DecompressionStream(format))))];
    }
    let badFormat; try { new CompressionStream('br'); } catch (e) { badFormat = e.name; }
    const notBytes = await settle(collect(ReadableStream.from(['text']).pipeThrough(new CompressionStream('gzip'))));
    const empty = (await collect(new Blob([]).stream().pipeThrough(new CompressionStream('gzip')))).length > 0;
    return [results, badFormat, notBytes, empty];
  }` });
  assert.equal(out.error, undefined, out.error);
  const [results, badFormat, notBytes, empty] = out.result;
  const inflate = { gzip: zlib.gunzipSync, deflate: zlib.inflateSync, 'deflate-raw': zlib.inflateRawSync };
  for (const [format, [unpacked, mine, truncated, junk]] of Object.entries(results)) {
    assert.equal(unpacked, true, format);
    assert.equal(inflate[format](Buffer.from(mine, 'base64')).toString(), text, format);
    assert.deepEqual([truncated, junk], ['TypeError', 'TypeError'], format);
  }
  assert.deepEqual([badFormat, notBytes, empty], ['TypeError', 'TypeError', true]);
});

// Web IDL's promise-returning operations reject rather than throw: pipeTo and cancel called on
// something that is not a ReadableStream, and pipeTo given a signal that is only dressed as an
// AbortSignal (its prototype, no brand), settle as rejected promises with a TypeError.
test('pipeTo and cancel reject on a wrong receiver or a fake signal', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const outcome = (f) => { try { return settle(f()); } catch (e) { return ['threw', e.name]; } };
    const fake = Object.create(AbortSignal.prototype);
    return [
      await outcome(() => ReadableStream.prototype.pipeTo.call({}, new WritableStream())),
      await outcome(() => ReadableStream.prototype.cancel.call({})),
      await outcome(() => new ReadableStream().pipeTo(new WritableStream(), { signal: fake })),
      await outcome(() => new ReadableStream({ start(c) { c.close(); } }).pipeTo(new WritableStream(), { signal: new AbortController().signal })),
    ];
  }`);
  assert.deepEqual(sandbox, [['err', 'TypeError'], ['err', 'TypeError'], ['err', 'TypeError'], ['ok', null]]);
  assert.deepEqual(sandbox, node);
});

// The ReadableStream constructor reads its arguments as Web IDL converts them: the strategy first
// (highWaterMark, converted at once, then size), then the source's members in name order
// (autoAllocateChunkSize, cancel, pull, start, type), each once; a bad autoAllocateChunkSize is a
// TypeError. Node 20 reads size before highWaterMark, so this runs in the sandbox only.
test('the ReadableStream constructor reads strategy then source, each member once, in name order', async () => {
  const out = await ex.execute({ code: `() => {
    const reads = [];
    const spy = (name, members) => new Proxy(members, { get(target, key) { reads.push(name + '.' + String(key)); return target[key]; } });
    const hwm = { valueOf() { reads.push('hwm.valueOf'); return 2; } };
    new ReadableStream(spy('source', { type: 'bytes', autoAllocateChunkSize: 8, start() {}, pull() {}, cancel() {} }), spy('strategy', { highWaterMark: hwm }));
    const refused = [-1, NaN, Infinity].map((n) => { try { new ReadableStream({ autoAllocateChunkSize: n }); return 'ok'; } catch (e) { return e.name; } });
    let zero; try { new ReadableStream({ type: 'bytes', autoAllocateChunkSize: 0 }); zero = 'ok'; } catch (e) { zero = e.name; }
    new ReadableStream({ autoAllocateChunkSize: 0 });
    return [reads, refused, zero];
  }` });
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, [
    ['strategy.highWaterMark', 'hwm.valueOf', 'strategy.size', 'source.autoAllocateChunkSize', 'source.cancel', 'source.pull', 'source.start', 'source.type'],
    ['TypeError', 'TypeError', 'TypeError'], 'TypeError',
  ]);
});

test('byte streams: byobRequest filled in place or with a new view, read(view, { min }), autoAllocateChunkSize, release with a pending read', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const bytes = (v) => Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    // respond(): the source writes into the reader's own memory; the reader gets a view of the
    // same kind over a new (transferred) buffer, and its old view is detached.
    let n = 0;
    const counting = new ReadableStream({
      type: 'bytes',
      pull(c) {
        const request = c.byobRequest;
        log.push('pull ' + (request === null ? 'null' : request.view.constructor.name + ' ' + request.view.byteOffset + '+' + request.view.byteLength));
        for (let i = 0; i < 3; i++) request.view[i] = ++n;
        request.respond(3);
        log.push('after respond ' + c.byobRequest);
      },
    });
    const reader = counting.getReader({ mode: 'byob' });
    const mine = new Uint16Array(4);
    const first = await reader.read(mine);
    log.push(first.value.constructor.name, first.value.length, bytes(first.value), mine.byteLength, first.value.buffer.byteLength);
    // min: the read waits for 3 elements (6 bytes); odd bytes stay queued for the next read.
    const second = await reader.read(new Uint16Array(4), { min: 3 });
    log.push(second.value.length, bytes(second.value));
    const errors = [];
    for (const [view, options] of [[new Uint8Array(2), { min: 0 }], [new Uint8Array(2), { min: 3 }], [new DataView(new ArrayBuffer(2)), { min: 3 }], [new Uint8Array(0), undefined], [new Uint8Array(2), { min: -1 }]]) {
      errors.push((await settle(reader.read(view, options)))[1]);
    }
    log.push(errors);
    reader.releaseLock();
    // respondWithNewView: the source answers with a view over the request's buffer.
    const viaNewView = new ReadableStream({
      type: 'bytes',
      pull(c) {
        const view = c.byobRequest.view;
        const answer = new Uint8Array(view.buffer, view.byteOffset, 2);
        answer.set([40, 41]);
        c.byobRequest.respondWithNewView(answer);
      },
    });
    const r2 = viaNewView.getReader({ mode: 'byob' });
    log.push(bytes((await r2.read(new Uint8Array(8))).value));
    // autoAllocateChunkSize: a default read gets a byobRequest over a buffer of that size.
    const auto = new ReadableStream({
      type: 'bytes',
      autoAllocateChunkSize: 16,
      pull(c) {
        log.push('auto ' + c.byobRequest.view.byteLength);
        c.byobRequest.view.set([7, 8]);
        c.byobRequest.respond(2);
        c.close();
      },
    });
    const r3 = auto.getReader();
    const a = await r3.read();
    log.push(bytes(a.value), a.value.buffer.byteLength, (await r3.read()).done);
    // A reader released with a read pending: what the source writes afterwards reaches the
    // next reader.
    let controller;
    const held = new ReadableStream({ type: 'bytes', start(c) { controller = c; } });
    const r4 = held.getReader({ mode: 'byob' });
    const pending = settle(r4.read(new Uint8Array(4)));
    await tick();
    r4.releaseLock();
    log.push((await pending)[1]);
    controller.byobRequest.view.set([1, 2]);
    controller.byobRequest.respond(2);
    const r5 = held.getReader();
    log.push(bytes((await r5.read()).value));
    // close() with a BYOB read pending: the source answers it with respond(0).
    let c6;
    const closing = new ReadableStream({ type: 'bytes', start(c) { c6 = c; } });
    const r6 = closing.getReader({ mode: 'byob' });
    const read6 = r6.read(new Uint8Array(4));
    await tick();
    c6.close();
    c6.byobRequest.respond(0);
    const done6 = await read6;
    log.push(done6.done, done6.value.byteLength, done6.value.buffer.byteLength);
    // enqueue() transfers the chunk's buffer to the stream.
    const chunk = new Uint8Array([5, 6]);
    new ReadableStream({ type: 'bytes', start(c) { c.enqueue(chunk); } });
    log.push(chunk.byteLength, chunk.buffer.byteLength);
    return log;
  }`);
  assert.deepEqual(sandbox, node);
  // What the program saw, as the Streams standard has it (Node agreeing is checked above).
  // The odd third byte of the first respond() stays queued: the second read takes it, then asks
  // the source for the rest of its view from offset 1.
  assert.deepEqual(sandbox.slice(0, 8), ['pull Uint8Array 0+8', 'after respond null', 'Uint16Array', 1, [1, 2], 0, 8, 'pull Uint8Array 1+7']);
  assert.deepEqual(sandbox[sandbox.indexOf('auto 16') + 1], [7, 8]);
  assert.deepEqual(sandbox.slice(-2), [0, 0]);
});

test('byte streams tee into byte streams: a BYOB read of one branch reads into its buffer, the other gets a copy', async () => {
  const [sandbox, node] = await both(`async () => {
    ${HELPERS}
    const bytes = (v) => Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    let n = 0;
    const source = new ReadableStream({
      type: 'bytes',
      pull(c) {
        const request = c.byobRequest;
        log.push('source ' + (request === null ? 'enqueue' : 'byob ' + request.view.byteLength));
        if (request === null) c.enqueue(new Uint8Array([++n, ++n]));
        else { request.view.set([++n, ++n, ++n]); request.respond(3); }
        if (n >= 8) c.close();
      },
    });
    const [left, right] = source.tee();
    const leftReader = left.getReader({ mode: 'byob' });
    const a = await leftReader.read(new Uint8Array(5));
    log.push('left ' + bytes(a.value));
    const rightReader = right.getReader();
    const b = await rightReader.read();
    log.push('right ' + bytes(b.value), b.value.buffer === a.value.buffer);
    const c = await rightReader.read();
    log.push('right ' + bytes(c.value));
    const d = await leftReader.read(new Uint8Array(5));
    log.push('left ' + bytes(d.value));
    let rest;
    while (!(rest = await rightReader.read()).done) log.push('right ' + bytes(rest.value));
    log.push('right done');
    return log;
  }`);
  assert.deepEqual(sandbox, node);
  assert.ok(sandbox.includes('source byob 5'), sandbox.join(' | '));
});
