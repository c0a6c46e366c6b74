'use strict';
// The console mounted in an application (consoleHandler over the application's runtime), in a
// real headless Chromium: the list, a run's detail, approve, reject, rollback with its report,
// a live update while a run progresses, and an XSS corpus that must render as text. Judged on
// what the page shows and on what the connectors did (the shop's ledger), never on the page's
// own word alone. Screenshots: test-artifacts/console/.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, CodemodeConnector, createCodemodeRuntime } = require('../../lib/index.js');
const { consoleHandler } = require('../../lib/console/index.js');
const { skipBrowser, launch, openPage, screenshot, until } = require('./browser.js');

const MOUNT = '/admin/codemode';

// What a run can do to the shop: every effect and revert lands in `ledger`.
const ledger = [];
let gate; // shop.wait() resolves when the test releases it
class Shop extends CodemodeConnector {
  name() {
    return 'shop';
  }

  tools() {
    return {
      list: { description: 'Items', execute: async () => [{ id: 1, name: 'tea' }, { id: 2, name: 'cake' }] },
      echo: { description: 'Echo', execute: async (args) => args },
      order: {
        description: 'Order an item',
        requiresApproval: true,
        execute: async ({ item }) => {
          ledger.push({ op: 'order', item });
          return { ordered: item };
        },
        revert: async ({ item }) => {
          ledger.push({ op: 'cancel', item });
        },
      },
      // Its revert always fails: a rollback leaves it in force and says why.
      note: {
        description: 'Write a note',
        execute: async ({ text }) => {
          ledger.push({ op: 'note', text });
          return { noted: true };
        },
        revert: async ({ text }) => {
          throw new Error(`cannot unwrite ${text}`);
        },
      },
      // Needs approval, then takes as long as the test wants.
      slowOrder: {
        description: 'Order slowly',
        requiresApproval: true,
        execute: async ({ item }) => {
          await gate.promise;
          ledger.push({ op: 'order', item });
          return { ordered: item };
        },
      },
      wait: {
        description: 'Waits for the test',
        execute: async () => {
          await gate.promise;
          return 'released';
        },
      },
    };
  }
}

let dir;
let executor;
let runtime;
let server;
let base; // http://127.0.0.1:<port>/admin/codemode/<token>/
let handler;
let browser;

function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

test.before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-console-'));
  executor = new IsolateExecutor({ isolation: 'thread', workers: 2 });
  runtime = createCodemodeRuntime({ executor, connectors: [new Shop()], path: path.join(dir, 'runtime.db') });
  handler = consoleHandler({ runtime, basePath: MOUNT, label: 'shop app' });
  // The application's own server: the console under its admin path, everything else its own.
  server = http.createServer((req, res) => {
    if (req.url === MOUNT || req.url.startsWith(`${MOUNT}/`)) return handler(req, res);
    res.writeHead(404).end('the application');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}${handler.path}`;
  if (!skipBrowser) browser = await launch();
});

test.after(async () => {
  if (browser) await browser.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await executor.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

const rowIds = (page) => page.$$eval('tr.run', (rows) => rows.map((r) => r.getAttribute('data-id')));
const runStatus = (page) => page.$eval('#run', (e) => e.getAttribute('data-status'));
const text = (page, selector) => page.$eval(selector, (e) => e.textContent);

test('the list: executions newest first, with status, calls and program; a filter by status', { skip: skipBrowser }, async () => {
  const done = await runtime.execute({ code: 'async () => (await shop.list()).length' });
  assert.equal(done.status, 'completed');
  const failed = await runtime.execute({ code: 'async () => { await shop.list(); throw new Error("out of tea"); }' });
  assert.equal(failed.status, 'error');
  const paused = await runtime.execute({ code: 'async () => shop.order({ item: "tea" })' });
  assert.equal(paused.status, 'paused');

  const page = await openPage(browser);
  await page.goto(base);
  await until(page, () => document.querySelectorAll('tr.run').length >= 3, 'three rows');
  const expected = (await runtime.executions(100)).map((e) => e.id);
  assert.deepEqual(await rowIds(page), expected, 'the rows are the runtime\'s executions, newest first');
  const ids = await rowIds(page);
  assert.deepEqual(ids.slice(0, 3), [paused.executionId, failed.executionId, done.executionId]);
  const row = (id) => page.$eval(`tr.run[data-id="${id}"]`, (r) => r.innerText);
  assert.match(await row(failed.executionId), /error[\s\S]*out of tea/);
  assert.match(await row(paused.executionId), /paused[\s\S]*step 0 waiting[\s\S]*shop\.order/);
  // The pending action is listed at the top, with its exact step.
  assert.match(await text(page, '#pending'), /shop\.order — step 0/);
  await screenshot(page, '01-list.png');

  await page.click('button[data-filter="paused"]');
  await until(page, () => [...document.querySelectorAll('tr.run')].every((r) => r.getAttribute('data-status') === 'paused'), 'only paused rows');
  assert.deepEqual(await rowIds(page), (await runtime.executions(100)).filter((e) => e.status === 'paused').map((e) => e.id));
  await page.click('button[data-filter="rejected"]');
  await until(page, () => document.querySelector('#empty') !== null, 'the empty filter');
  assert.equal(await text(page, '#empty'), 'No rejected executions.');
  assert.deepEqual(page.problems.filter((p) => !/favicon/.test(p)), []);
  await page.close();
});

test('a run: its program, outcome, timing and call log, long values cut with a way to expand', { skip: skipBrowser }, async () => {
  const long = 'x'.repeat(1500);
  const code = `async () => {
  console.log("starting");
  const echoed = await shop.echo({ text: "${long}" });
  return { length: echoed.text.length };
}`;
  const run = await runtime.execute({ code });
  assert.equal(run.status, 'completed');

  const page = await openPage(browser);
  await page.goto(base);
  await until(page, (id) => document.querySelector(`tr.run[data-id="${id}"] a`) !== null, 'the run\'s row', run.executionId);
  await page.click(`tr.run[data-id="${run.executionId}"] a`);
  await until(page, (id) => document.querySelector('#run')?.getAttribute('data-id') === id, 'the run\'s page', run.executionId);
  assert.equal(await runStatus(page), 'completed');
  assert.equal(await text(page, '#program pre'), code, 'the program, exactly');
  assert.deepEqual(JSON.parse(await text(page, '#outcome pre')), { length: 1500 });
  assert.equal(await text(page, '#logs pre'), 'starting');
  assert.match(await text(page, '#took'), /^\d+(\.\d)? m?s$/);
  // The call: its arguments cut at 400 characters, all of them one click away.
  const argsCell = 'tr.call[data-seq="0"] td.args';
  const cut = await text(page, `${argsCell} pre`);
  assert.ok(cut.length <= 401 && cut.endsWith('…'), `cut: ${cut.length} characters`);
  assert.match(await text(page, `${argsCell} button.expand`), /Show all \(\d+ characters\)/);
  assert.match(await text(page, 'tr.call[data-seq="0"] td.result pre'), /"text": "xxx/);
  await screenshot(page, '02-detail.png');
  await page.click(`${argsCell} button.expand`);
  await until(page, (sel) => document.querySelector(sel).textContent.includes('x'.repeat(1500)), 'the expanded arguments', `${argsCell} pre`);
  assert.deepEqual(JSON.parse(await text(page, `${argsCell} pre`)), { text: long });
  // A refresh of the page's data keeps it expanded.
  await new Promise((resolve) => setTimeout(resolve, 1300));
  assert.match(await text(page, `${argsCell} button.expand`), /Show less/);
  await page.close();
});

test('approve: the exact step is approved through the application\'s runtime and the run completes', { skip: skipBrowser }, async () => {
  const run = await runtime.execute({ code: 'async () => { const items = await shop.list(); return shop.order({ item: items[1].name }); }' });
  assert.equal(run.status, 'paused');
  assert.equal(run.pending[0].seq, 1);

  const page = await openPage(browser);
  await page.goto(`${base}#run/${run.executionId}`);
  await until(page, () => document.querySelector('#run #pending button.approve') !== null, 'the approve button');
  assert.equal(await runStatus(page), 'paused');
  assert.equal(await page.$eval('#run #pending button.approve', (b) => b.getAttribute('data-seq')), '1');
  assert.match(await text(page, '#run #pending'), /shop\.order — step 1[\s\S]*"item": "cake"/);
  assert.equal(ledger.filter((e) => e.op === 'order' && e.item === 'cake').length, 0, 'nothing ordered before the approval');
  await screenshot(page, '03-approve-pending.png');

  await page.click('#run #pending button.approve');
  await until(page, () => document.querySelector('#run')?.getAttribute('data-status') === 'completed', 'the run completed');
  assert.deepEqual(JSON.parse(await text(page, '#outcome pre')), { ordered: 'cake' });
  assert.match(await text(page, '#notice'), /Approved step 1 of exec_\S+: completed\./);
  assert.equal(await page.$eval('tr.call[data-seq="1"]', (r) => r.getAttribute('data-state')), 'applied');
  assert.equal(ledger.filter((e) => e.op === 'order' && e.item === 'cake').length, 1, 'the approved order ran once');
  assert.equal((await runtime.execution(run.executionId)).status, 'completed');
  await screenshot(page, '04-approve-completed.png');
  await page.close();
});

test('reject: the run ends rejected and the action never runs', { skip: skipBrowser }, async () => {
  const run = await runtime.execute({ code: 'async () => shop.order({ item: "scone" })' });
  assert.equal(run.status, 'paused');
  const page = await openPage(browser);
  await page.goto(`${base}#run/${run.executionId}`);
  await until(page, () => document.querySelector('#run #pending button.reject') !== null, 'the reject button');
  await page.click('#run #pending button.reject');
  await until(page, () => document.querySelector('#run')?.getAttribute('data-status') === 'rejected', 'the run rejected');
  assert.match(await text(page, '#notice'), /Rejected step 0 of /);
  assert.equal((await runtime.execution(run.executionId)).status, 'rejected');
  assert.equal(ledger.filter((e) => e.item === 'scone').length, 0);
  assert.equal(await page.$('#run #pending'), null, 'nothing waits any more');
  await page.close();
});

test('rollback: reverts through the connectors and shows its report, what stayed in force included', { skip: skipBrowser }, async () => {
  const paused = await runtime.execute({ code: 'async () => { await shop.note({ text: "<b>memo</b>" }); return shop.order({ item: "pie" }); }' });
  const done = await runtime.approve({ executionId: paused.executionId, seq: 1 });
  assert.equal(done.status, 'completed');
  const page = await openPage(browser);
  await page.goto(`${base}#run/${paused.executionId}`);
  await until(page, () => document.querySelector('#run button.rollback:not([disabled])') !== null, 'the rollback button');
  await page.click('#run button.rollback');
  await until(page, () => document.querySelector('#rollback-report') !== null, 'the rollback report');
  assert.match(await text(page, '#rollback-report'), /^Incomplete: 1 action\(s\) reverted\./);
  const section = await text(page, '#rollback');
  assert.match(section, /Left in force:shop\.note \(step 0\): cannot unwrite <b>memo<\/b>/);
  assert.match(await text(page, '#notice'), /Rollback of exec_\S+ incomplete: 1 reverted, 1 left in force\./);
  await until(page, () => document.querySelector('#run')?.getAttribute('data-status') === 'rolled_back', 'the run rolled back');
  assert.deepEqual(ledger.filter((e) => e.item === 'pie').map((e) => e.op), ['order', 'cancel']);
  const execution = await runtime.execution(paused.executionId);
  assert.equal(execution.status, 'rolled_back');
  assert.deepEqual(execution.leftInForce.map((l) => l.method), ['note']);
  await screenshot(page, '05-rollback.png');
  await page.close();
});

test('rollback: a call whose tool has no revert is shown as still in force, though nothing failed', { skip: skipBrowser }, async () => {
  const paused = await runtime.execute({ code: 'async () => { await shop.echo({ text: "sent" }); return shop.order({ item: "bread" }); }' });
  const done = await runtime.approve({ executionId: paused.executionId, seq: 1 });
  assert.equal(done.status, 'completed');
  const page = await openPage(browser);
  await page.goto(`${base}#run/${paused.executionId}`);
  await until(page, () => document.querySelector('#run button.rollback:not([disabled])') !== null, 'the rollback button');
  await page.click('#run button.rollback');
  await until(page, () => document.querySelector('#rollback-report') !== null, 'the rollback report');
  assert.match(await text(page, '#rollback-report'), /^Incomplete: 1 action\(s\) reverted\./);
  assert.equal(await text(page, '#no-revert'), 'In force (their tool has no revert):shop.echo (step 0)');
  assert.match(await text(page, '#notice'), /Rolled back exec_\S+: 1 action\(s\) reverted; 1 stay in force \(no revert\)\./);
  assert.deepEqual(ledger.filter((e) => e.item === 'bread').map((e) => e.op), ['order', 'cancel']);
  await page.close();
});

test('live: the page follows a run as it progresses, without a reload', { skip: skipBrowser }, async () => {
  gate = deferred();
  const page = await openPage(browser);
  await page.goto(base);
  await until(page, () => document.querySelector('#runs') !== null, 'the list');
  await page.evaluate(() => { window.__sameDocument = true; });
  const running = runtime.execute({ code: 'async () => { await shop.echo({ step: 1 }); const w = await shop.wait(); return { w }; }' });
  await until(page, () => document.querySelector('tr.run[data-status="running"]') !== null, 'a running row to appear');
  const id = await page.$eval('tr.run[data-status="running"]', (r) => r.getAttribute('data-id'));
  await page.click(`tr.run[data-id="${id}"] a`);
  await until(page, () => document.querySelector('tr.call[data-seq="1"]')?.getAttribute('data-state') === 'executing', 'the second call in progress');
  assert.equal(await page.$eval('tr.call[data-seq="0"]', (r) => r.getAttribute('data-state')), 'applied');
  assert.equal(await runStatus(page), 'running');
  await screenshot(page, '06-live-running.png');
  gate.resolve();
  const outcome = await running;
  assert.equal(outcome.status, 'completed');
  await until(page, () => document.querySelector('#run')?.getAttribute('data-status') === 'completed', 'the run completed on the page');
  assert.deepEqual(JSON.parse(await text(page, '#outcome pre')), { w: 'released' });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded');
  await page.close();
});

// Markup and script in every place a program or a tool puts text the console shows.
const CORPUS = [
  '<script>window.__xss = "script"</script>',
  '<img src=x onerror="window.__xss = \'img\'">',
  '<svg onload="window.__xss = \'svg\'"><circle r=1></circle></svg>',
  '"><iframe srcdoc="<script>parent.__xss = \'iframe\'</script>"></iframe>',
  '</pre><b class="injected">bold</b><pre>',
  '<a href="javascript:window.__xss = \'href\'" class="injected">link</a>',
];

test('XSS corpus: markup in code, arguments, results, logs, errors, pending actions and snippet names renders as text', { skip: skipBrowser }, async () => {
  const literal = JSON.stringify(CORPUS);
  const code = `async () => {
  // ${CORPUS[0]} ${CORPUS[1]}
  const corpus = ${literal};
  for (const line of corpus) console.log(line);
  const echoed = await shop.echo({ corpus });
  return { echoed, html: corpus.join("") };
}`;
  const run = await runtime.execute({ code });
  assert.equal(run.status, 'completed');
  const failing = await runtime.execute({ code: `async () => { throw new Error(${JSON.stringify(CORPUS.join(' '))}); }` });
  assert.equal(failing.status, 'error');
  const pausing = await runtime.execute({ code: `async () => shop.order({ item: ${JSON.stringify(CORPUS.join(''))} })` });
  assert.equal(pausing.status, 'paused');
  for (const [i, payload] of CORPUS.entries()) {
    await runtime.saveSnippet(`${payload}#${i}`, { executionId: run.executionId, description: payload });
  }

  const page = await openPage(browser);
  const inert = async (where) => {
    const seen = await page.evaluate(() => ({
      flag: window.__xss === undefined ? 'unset' : String(window.__xss),
      scripts: [...document.scripts].map((s) => s.getAttribute('src')),
      injected: document.querySelectorAll('img, svg, iframe, b, .injected, a[href^="javascript"]').length,
    }));
    assert.deepEqual(seen, { flag: 'unset', scripts: ['console.js'], injected: 0 }, `${where}: nothing of the corpus became markup or ran`);
  };
  const shows = async (where, selector, expected) => {
    const shown = await text(page, selector);
    for (const payload of expected) assert.ok(shown.includes(payload), `${where}: ${JSON.stringify(payload)} is shown literally`);
  };

  await page.goto(base);
  await until(page, (id) => document.querySelector(`tr.run[data-id="${id}"]`) !== null, 'the list', pausing.executionId);
  await inert('the list');
  // Arguments are shown as JSON: the corpus with its quotes escaped.
  await shows('the pending action', '#pending', [JSON.stringify(CORPUS.join('')).slice(1, -1)]);

  await page.goto(`${base}#run/${run.executionId}`);
  await until(page, (id) => document.querySelector('#run')?.getAttribute('data-id') === id, 'the run', run.executionId);
  // Every cut value expanded (each click draws the page again).
  await until(page, () => {
    const next = [...document.querySelectorAll('#run button.expand')].find((b) => b.textContent.startsWith('Show all'));
    if (next === undefined) return true;
    next.click();
    return false;
  }, 'every value expanded');
  await inert('the run');
  await shows('the program', '#program', [CORPUS[0], CORPUS[1]]);
  await shows('the logs', '#logs pre', CORPUS);
  await shows('the result', '#outcome pre', [JSON.stringify(CORPUS.join('')).slice(1, -1)]);
  await shows('the call\'s result', 'tr.call[data-seq="0"] td.result', [JSON.stringify(CORPUS[4]).slice(1, -1)]);
  await screenshot(page, '07-xss-run.png');

  await page.goto(`${base}#run/${failing.executionId}`);
  await until(page, (id) => document.querySelector('#run')?.getAttribute('data-id') === id, 'the failed run', failing.executionId);
  await inert('the failed run');
  await shows('the error', '#outcome', [CORPUS.join(' ')]);

  await page.goto(`${base}#snippets`);
  await until(page, () => document.querySelectorAll('.snippet').length >= 6, 'the snippets');
  await inert('the snippets');
  await shows('the snippet names', '#snippets', CORPUS.map((payload, i) => `${payload}#${i}`));
  await screenshot(page, '08-xss-snippets.png');
  assert.deepEqual(page.problems.filter((p) => !/favicon/.test(p)), [], 'no script error, no blocked resource');
  await page.close();
});

// ---- Without a browser: what the server refuses -------------------------------------------------

async function request(url, init = {}) {
  const response = await fetch(url, { redirect: 'manual', ...init });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

test('every request without the console\'s token is refused (403), each answer with the CSP', async () => {
  const origin = base.slice(0, base.indexOf(MOUNT));
  const wrong = 'A'.repeat(handler.token.length);
  for (const url of [
    `${origin}${MOUNT}/`,
    `${origin}${MOUNT}/console.js`,
    `${origin}${MOUNT}/api/overview`,
    `${origin}${MOUNT}/${wrong}/`,
    `${origin}${MOUNT}/${wrong}/api/overview`,
    `${origin}${MOUNT}/${handler.token.slice(0, -1)}/api/overview`,
    `${origin}${MOUNT}/${handler.token}x/api/overview`,
    `${origin}${MOUNT}/api/${handler.token}/overview`,
  ]) {
    const r = await request(url);
    assert.equal(r.status, 403, url);
    assert.match(r.headers.get('content-security-policy'), /default-src 'none'/);
    assert.doesNotMatch(r.body, /exec_/);
  }
  const page = await request(base);
  assert.equal(page.status, 200);
  const csp = page.headers.get('content-security-policy');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
  // No inline script and nothing from elsewhere in the page itself.
  assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc="console\.js")/);
  assert.doesNotMatch(page.body, /(src|href)="(https?:)?\/\//);
  const script = await request(`${base}console.js`);
  assert.equal(script.status, 200);
  assert.match(script.headers.get('content-type'), /^text\/javascript/);
  // The page's URLs are relative: the token's segment without its slash redirects to it.
  const bare = await request(base.slice(0, -1));
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get('location'), `${handler.token}/`);
  // The application's own routes stay its own.
  assert.equal((await request(`${origin}/elsewhere`)).status, 404);
});

test('a POST without the page\'s CSRF token, or from another site, changes nothing (403)', async () => {
  const run = await runtime.execute({ code: 'async () => shop.order({ item: "jam" })' });
  assert.equal(run.status, 'paused');
  const page = await request(base);
  const csrf = /<meta name="codemode-csrf" content="([^"]+)">/.exec(page.body)[1];
  const url = `${base}api/executions/${run.executionId}/reject`;
  const json = { 'content-type': 'application/json' };
  const body = JSON.stringify({ seq: 0 });
  const refused = [
    { what: 'no CSRF token', headers: json },
    // The right token with its last character changed (to another one, whatever it was).
    { what: 'a wrong CSRF token', headers: { ...json, 'x-codemode-csrf': `${csrf.slice(0, -1)}${csrf.endsWith('x') ? 'y' : 'x'}` } },
    { what: 'a form post', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-codemode-csrf': csrf } },
    { what: 'another site', headers: { ...json, 'x-codemode-csrf': csrf, 'sec-fetch-site': 'cross-site' } },
    { what: 'another origin', headers: { ...json, 'x-codemode-csrf': csrf, origin: 'http://evil.example' } },
  ];
  for (const { what, headers } of refused) {
    const r = await request(url, { method: 'POST', headers, body });
    assert.equal(r.status, 403, what);
    assert.equal((await runtime.execution(run.executionId)).status, 'paused', `${what}: nothing changed`);
  }
  // A GET changes nothing either.
  assert.equal((await request(url)).status, 404);
  // An approval of a step that is not the one waiting is refused, naming what waits.
  const stale = await request(`${base}api/executions/${run.executionId}/approve`, { method: 'POST', headers: { ...json, 'x-codemode-csrf': csrf }, body: JSON.stringify({ seq: 3 }) });
  assert.equal(stale.status, 200);
  assert.match(JSON.parse(stale.body).error, /no single action 3 awaiting approval: awaiting now: shop\.order \(seq 0\)/);
  // With the token, from the page's origin: accepted.
  const ok = await request(url, { method: 'POST', headers: { ...json, 'x-codemode-csrf': csrf, origin: new URL(base).origin, 'sec-fetch-site': 'same-origin' }, body });
  assert.equal(ok.status, 200);
  assert.deepEqual(JSON.parse(ok.body), { rejected: true });
  assert.equal((await runtime.execution(run.executionId)).status, 'rejected');
  assert.equal(ledger.filter((e) => e.item === 'jam').length, 0);
});

test('an approval whose pass outlasts the wait is answered "running", and the run goes on in the application', async () => {
  gate = deferred();
  const run = await runtime.execute({ code: 'async () => shop.slowOrder({ item: "bun" })' });
  assert.equal(run.status, 'paused');
  const csrf = /<meta name="codemode-csrf" content="([^"]+)">/.exec((await request(base)).body)[1];
  const started = Date.now();
  const answer = await request(`${base}api/executions/${run.executionId}/approve`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-codemode-csrf': csrf }, body: JSON.stringify({ seq: 0 }),
  });
  assert.equal(answer.status, 200);
  assert.equal(JSON.parse(answer.body).status, 'running');
  assert.ok(Date.now() - started >= 2_500, 'it waited for the pass first');
  assert.equal((await runtime.execution(run.executionId)).status, 'running');
  gate.resolve();
  const deadline = Date.now() + 10_000;
  while ((await runtime.execution(run.executionId)).status !== 'completed') {
    assert.ok(Date.now() < deadline, 'the run completed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(ledger.filter((e) => e.item === 'bun').map((e) => e.op), ['order']);
});

test('consoleHandler: an auth hook instead of the token, and its options checked', async () => {
  const withAuth = consoleHandler({ runtime, token: false, auth: (req) => req.headers['x-admin'] === 'yes' });
  assert.equal(withAuth.token, undefined);
  assert.equal(withAuth.path, '/');
  const throwing = consoleHandler({ runtime, token: false, auth: () => { throw new Error('no session'); } });
  const s = http.createServer((req, res) => (req.url.startsWith('/t/') ? throwing(req, res) : withAuth(req, res)));
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const at = `http://127.0.0.1:${s.address().port}`;
  try {
    assert.equal((await request(`${at}/api/overview`)).status, 403);
    assert.equal((await request(`${at}/api/overview`, { headers: { 'x-admin': 'no' } })).status, 403);
    const ok = await request(`${at}/api/overview`, { headers: { 'x-admin': 'yes' } });
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).mode, 'runtime');
    const origError = console.error;
    console.error = () => {};
    try {
      assert.equal((await request(`${at}/t/api/overview`)).status, 403, 'an auth hook that throws refuses');
    } finally {
      console.error = origError;
    }
  } finally {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
  const invalid = (options) => assert.throws(() => consoleHandler(options), { code: 'ERR_INVALID_ARGUMENT' });
  invalid({});
  invalid({ runtime: {} });
  invalid({ runtime, token: 'short' });
  invalid({ runtime, token: 'has a space in it, sixteen+' });
  invalid({ runtime, token: false });
  invalid({ runtime, auth: 'yes' });
  invalid({ runtime, basePath: 'admin' });
  invalid({ runtime, tokn: 'x'.repeat(20) });
  const fixed = consoleHandler({ runtime, token: 'a-fixed-token-of-24-chars', basePath: '/ops/' });
  assert.equal(fixed.path, '/ops/a-fixed-token-of-24-chars/');
  assert.match(consoleHandler({ runtime }).token, /^[A-Za-z0-9_-]{32}$/);
});
