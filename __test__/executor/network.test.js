'use strict';
// The sandbox's network-shaped globals (URL, URLSearchParams, Headers, Request, Response,
// AbortController, crypto.subtle.digest) agree with Node's own implementations, and fetch goes
// through the outbound handler (globalOutbound / request.outbound) or is refused.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const ex = new IsolateExecutor({ workers: 1, timeout: 5000 });
test.after(() => ex.dispose());

// Runs `body` (an expression over `input`) in the sandbox and in Node, and compares.
async function sameAsNode(body, inputs) {
  const fn = new Function('input', `return (async () => (${body}))()`);
  const out = await ex.execute(`async () => { const inputs = ${JSON.stringify(inputs)}; const results = []; for (const input of inputs) { try { results.push(await (async () => (${body}))()); } catch (e) { results.push("throws " + e.name); } } return results; }`, []);
  assert.equal(out.error, undefined, out.error);
  const expected = [];
  for (const input of inputs) {
    try { expected.push(await fn(input)); } catch (e) { expected.push('throws ' + e.name); }
  }
  assert.deepEqual(out.result, expected);
}

test('URL parses and serializes like Node (WHATWG)', async () => {
  await sameAsNode('(() => { const u = new URL(input[0], input[1]); return [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash]; })()', [
    ['https://user:pw@example.com:8080/a/../b/./c?x=1&y=%20#frag'],
    ['../up?q', 'https://example.com/a/b/c'],
    ['HTTP://EXAMPLE.com:80/'],
    ['https://münchen.de/straße'],
    ['file:///C:/path/to/file.txt'],
    ['mailto:someone@example.com'],
    ['https://[::1]:443/x'],
    ['http://192.168.0.1.'],
    ['not a url'],
    ['https://exa mple.com'],
    ['//relative', 'https://base.example/'],
    ['blob:https://example.com/uuid'],
    ['https://example.com/?a=1&a=2&b=%F0%9F%98%80'],
  ]);
});

test('URL setters and searchParams stay in sync like Node', async () => {
  await sameAsNode(`(() => {
    const u = new URL("https://example.com/path?a=1#h");
    u.searchParams.append("b", "two words");
    u.searchParams.set("a", "ü");
    const afterParams = u.href;
    u.pathname = "/new path";
    u.hash = "";
    u.port = "8443";
    u.hostname = "other.example";
    u.protocol = "http";
    u.search = "?z=9";
    return [afterParams, u.href, [...u.searchParams], URL.canParse(input), String(new URL("https://a.b/c").searchParams)];
  })()`, ['https://ok.example', 'nope']);
});

test('URLSearchParams parses, sorts and serializes like Node', async () => {
  await sameAsNode('(() => { const p = new URLSearchParams(input); p.sort(); return [p.toString(), [...p.keys()], p.get("a"), p.getAll("a"), p.has("b"), p.size]; })()', [
    '?a=1&b=2&a=3', 'a=%E2%98%83&b=+plus+', 'c=3&a=&b', '', '=x&&y=', 'a=1;b=2',
  ]);
  const out = await ex.execute('async () => [new URLSearchParams({ q: "a b", n: 1 }).toString(), new URLSearchParams([["x", "1"], ["x", "2"]]).getAll("x")]', []);
  assert.deepEqual(out.result, [new URLSearchParams({ q: 'a b', n: 1 }).toString(), ['1', '2']]);
});

test('Headers behave like Node\'s: case-insensitive, combined values, sorted iteration, validation', async () => {
  await sameAsNode(`(() => {
    const h = new Headers(input);
    h.append("X-Multi", "a");
    h.append("x-multi", "b");
    h.set("Content-Type", "text/plain");
    h.delete("x-remove");
    return [[...h], h.get("X-MULTI"), h.has("content-type"), h.get("missing")];
  })()`, [{ 'X-Remove': '1', Accept: '  */*  ' }, [['b', '2'], ['a', '1']], { 'bad header': 'x' }]);
});

test('Request and Response carry bodies, status and headers like Node\'s', async () => {
  await sameAsNode(`(async () => {
    const req = new Request("https://api.example.com/items", { method: "post", body: JSON.stringify(input), headers: { "x-k": "v" } });
    const res = new Response(JSON.stringify({ echo: input }), { status: 201, statusText: "Created", headers: { "content-type": "application/json" } });
    const clone = res.clone();
    const bytes = new Response(new Uint8Array([104, 105]));
    return [req.method, req.url, req.headers.get("content-type"), await req.text(), res.status, res.ok, res.statusText,
      (await clone.json()).echo, await bytes.text(), res.bodyUsed, Response.json({ a: 1 }).headers.get("content-type"),
      await Response.json(input).json(), Response.redirect("https://x.example/", 301).headers.get("location")];
  })()`, [{ n: 1 }, [1, 2]]);
  const errors = await ex.execute(`async () => {
    const attempt = (f) => { try { f(); return "ok"; } catch (e) { return e.name; } };
    const used = new Response("x"); await used.text();
    let second; try { await used.text(); second = "read twice"; } catch (e) { second = e.name; }
    return [attempt(() => new Request("https://x", { method: "GET", body: "no" })), attempt(() => new Response("", { status: 99 })), second];
  }`, []);
  assert.deepEqual(errors.result, ['TypeError', 'RangeError', 'TypeError']);
});

test('AbortController and AbortSignal behave like Node\'s', async () => {
  const out = await ex.execute(`async () => {
    const c = new AbortController();
    const events = [];
    c.signal.addEventListener("abort", (e) => events.push(e.type));
    c.signal.onabort = () => events.push("onabort");
    c.abort("why");
    c.abort("again");
    const already = AbortSignal.abort();
    let thrown; try { already.throwIfAborted(); } catch (e) { thrown = e.name; }
    const timed = AbortSignal.timeout(10);
    await new Promise((r) => setTimeout(r, 30));
    return [c.signal.aborted, c.signal.reason, events, thrown, timed.aborted, timed.reason.name, AbortSignal.any([c.signal]).aborted];
  }`, []);
  assert.deepEqual(out.result, [true, 'why', ['abort', 'onabort'], 'AbortError', true, 'TimeoutError', true]);
});

test('crypto.subtle.digest matches Node for every supported algorithm', async () => {
  const data = 'The quick brown fox jumps over the lazy dog';
  const out = await ex.execute(`async () => {
    const bytes = new TextEncoder().encode(${JSON.stringify(data)});
    const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
    const results = [];
    for (const alg of ["SHA-1", "SHA-256", { name: "SHA-384" }, "sha-512"]) results.push(hex(await crypto.subtle.digest(alg, bytes)));
    let unknown; try { await crypto.subtle.digest("MD5", bytes); } catch (e) { unknown = e.name; }
    return [results, unknown];
  }`, []);
  const hex = (b) => Buffer.from(b).toString('hex');
  const bytes = new TextEncoder().encode(data);
  const expected = [];
  for (const alg of ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512']) expected.push(hex(await crypto.subtle.digest(alg, bytes)));
  assert.deepEqual(out.result, [expected, 'NotSupportedError']);
});

test('the network globals are built on first use; what the program did to them before stands', async () => {
  const out = await ex.execute(`async () => {
    const gopd = Object.getOwnPropertyDescriptor;
    const listed = Object.keys(globalThis).filter((k) => ['URL', 'fetch', 'Headers'].includes(k));
    const mine = () => 'mine';
    globalThis.fetch = mine;
    delete globalThis.Headers;
    // Intrinsics the globals are built from, broken by the program before their first use.
    globalThis.Symbol = undefined;
    Object.getOwnPropertyNames = null;
    Object.getOwnPropertyDescriptor = null;
    const response = new Response('body text', { status: 201 });
    const url = new URL('https://example.com/a?b=1');
    const d = gopd(globalThis, 'URL');
    return {
      listed,
      fetchIsMine: fetch === mine && fetch() === 'mine',
      headers: typeof Headers,
      text: await response.text(),
      status: response.status,
      tag: String(response),
      search: url.searchParams.get('b'),
      url: { writable: d.writable, enumerable: d.enumerable, configurable: d.configurable, data: 'value' in d },
      fetchIsData: 'value' in gopd(globalThis, 'fetch'),
    };
  }`, []);
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, {
    listed: [],
    fetchIsMine: true,
    headers: 'undefined',
    text: 'body text',
    status: 201,
    tag: '[object Response]',
    search: '1',
    url: { writable: true, enumerable: false, configurable: true, data: true },
    fetchIsData: true,
  });
  // A program that only reads one name gets the same objects as one that reads them all.
  const first = await ex.execute('async () => [typeof AbortController, new AbortController().signal instanceof EventTarget, typeof fetch]', []);
  assert.deepEqual(first.result, ['function', true, 'function']);
});

test('fetch reaches the outbound handler with a real Request and streams its Response back', async () => {
  const seen = [];
  const handler = async (request) => {
    seen.push({ method: request.method, url: request.url, header: request.headers.get('x-key'), body: request.body ? await request.text() : null, isRequest: request instanceof Request });
    if (request.url.endsWith('/binary')) return new Response(new Uint8Array([0, 1, 255]), { headers: { 'content-type': 'application/octet-stream' } });
    if (request.url.endsWith('/fail')) throw new Error('upstream down');
    return new Response(JSON.stringify({ ok: true, got: request.method }), { status: 200, statusText: 'OK', headers: { 'content-type': 'application/json', 'x-served': 'mock' } });
  };
  const withOutbound = new IsolateExecutor({ workers: 1, globalOutbound: handler });
  try {
    const out = await withOutbound.execute(`async () => {
      const a = await fetch("https://api.example.com/data", { method: "POST", headers: { "x-key": "k1" }, body: JSON.stringify({ q: 1 }) });
      const b = await fetch(new Request("https://api.example.com/binary"));
      let failure; try { await fetch("https://api.example.com/fail"); } catch (e) { failure = e.message; }
      return [a.status, a.ok, a.statusText, a.headers.get("x-served"), await a.json(), [...new Uint8Array(await b.arrayBuffer())], b.headers.get("content-type"), failure];
    }`, []);
    assert.deepEqual(out.result, [200, true, 'OK', 'mock', { ok: true, got: 'POST' }, [0, 1, 255], 'application/octet-stream', 'upstream down']);
    assert.deepEqual(seen[0], { method: 'POST', url: 'https://api.example.com/data', header: 'k1', body: '{"q":1}', isRequest: true });
    // The Fetcher shape, per request in the native form, and null to refuse.
    const fetcher = await withOutbound.execute({ code: 'async () => (await fetch("https://x.example/")).text()', outbound: { fetch: async () => new Response('from fetcher') } });
    assert.equal(fetcher.result, 'from fetcher');
    const refused = await withOutbound.execute({ code: 'async () => { try { await fetch("https://x.example/") } catch (e) { return e.message } }', outbound: null });
    assert.match(refused.result, /not permitted to access the internet/);
  } finally {
    await withOutbound.dispose();
  }
});

test('an oversized outbound response is refused, and aborting a fetch rejects with AbortError', async () => {
  const big = new IsolateExecutor({ workers: 1, limits: { maxReplyBytes: 64 * 1024 }, globalOutbound: async (request) => {
    if (request.url.endsWith('/slow')) return new Promise((r) => setTimeout(() => r(new Response('late')), 500));
    return new Response('x'.repeat(1024 * 1024));
  } });
  try {
    const out = await big.execute(`async () => {
      let large; try { await fetch("https://x.example/large"); large = "accepted"; } catch (e) { large = e.message; }
      const c = new AbortController();
      const pending = fetch("https://x.example/slow", { signal: c.signal });
      setTimeout(() => c.abort(), 10);
      let aborted; try { await pending; } catch (e) { aborted = e.name; }
      return [large, aborted];
    }`, []);
    assert.match(out.result[0], /response body exceeds \d+ bytes \(maxReplyBytes\)/);
    assert.equal(out.result[1], 'AbortError');
  } finally {
    await big.dispose();
  }
});
