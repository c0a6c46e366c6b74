'use strict';
// `codemode-executor console --store <file>`, the standalone console, in a process of its own
// beside the application's (shop-app.js), both over one store file. The console has no
// connectors: an approval there is recorded (the run resumed and let go), and the application's
// runtime runs the approved call when it recovers runs. Judged on the application's ledger
// file and on what the page shows, in a real headless Chromium.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { skipBrowser, launch, openPage, screenshot, until } = require('./browser.js');

const BIN = path.join(__dirname, '..', '..', 'bin', 'codemode-executor.js');

// A child process whose stdout lines can be waited for.
function start(args, options = {}) {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  const lines = [];
  const waiters = [];
  let stderr = '';
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\n')) !== -1) {
      lines.push(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      for (const w of waiters.slice()) w();
    }
  });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  function line(pattern, from = 0) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} in 20 s; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`)), 20_000);
      const look = () => {
        const found = lines.slice(from).find((l) => pattern.test(l));
        if (found === undefined) return;
        clearTimeout(timer);
        waiters.splice(waiters.indexOf(look), 1);
        resolve(found);
      };
      waiters.push(look);
      look();
    });
  }
  return { child, lines, line, exited, stderr: () => stderr };
}

const readLedger = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

test('standalone: approve and reject from the console process; the application\'s runtime runs the approval when it recovers', { skip: skipBrowser, timeout: 60_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-console-cli-'));
  const store = path.join(dir, 'runtime.db');
  const ledger = path.join(dir, 'ledger.jsonl');
  const app = start([path.join(__dirname, 'shop-app.js'), store, ledger]);
  let cli;
  let browser;
  try {
    const first = (await app.line(/^PAUSED /)).split(' ')[1];
    const second = (await app.line(/^PAUSED /, app.lines.indexOf(`PAUSED ${first}`) + 1)).split(' ')[1];

    cli = start([BIN, 'console', '--store', store]);
    const url = (await cli.line(/^\s+http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}\/$/)).trim();
    assert.match(cli.lines[0], /^codemode console for runtime "default" in /);

    browser = await launch();
    const page = await openPage(browser);
    await page.goto(`${url}#run/${first}`);
    await until(page, () => document.querySelector('#run #pending button.approve') !== null, 'the pending action');
    assert.equal(await page.$eval('#mode-note', (e) => e.hidden), false, 'the page says it has no connectors');
    assert.equal(await page.$eval('#run button.rollback', (b) => b.disabled), true, 'no rollback without the connectors');
    assert.match(await page.$eval('#rollback', (e) => e.textContent), /does not have: roll back from the application/);
    await page.click('#run #pending button.approve');
    // Recorded: the run is running again, held by nobody, and nothing has run yet.
    await until(page, () => document.querySelector('#awaiting-runtime') !== null, 'the approval recorded');
    assert.match(await page.$eval('#notice', (e) => e.textContent), /Approved step 1 of exec_\S+: approved\. Approval recorded\./);
    assert.equal(await page.$eval('#run', (e) => e.getAttribute('data-status')), 'running');
    assert.deepEqual(readLedger(ledger), [], 'the console ran nothing');
    await screenshot(page, '09-standalone-approved.png');

    // The application recovers: the approved order runs there, once.
    const from = app.lines.length;
    app.child.stdin.write('recover\n');
    const recovered = JSON.parse((await app.line(/^RECOVERED /, from)).slice('RECOVERED '.length));
    assert.deepEqual(recovered, [{ status: 'completed', executionId: first, result: { ordered: 'tea' } }]);
    await until(page, () => document.querySelector('#run')?.getAttribute('data-status') === 'completed', 'the run completed on the page');
    assert.deepEqual(JSON.parse(await page.$eval('#outcome pre', (e) => e.textContent)), { ordered: 'tea' });
    await screenshot(page, '10-standalone-completed.png');

    // A rejection needs no connector: it is final from the console.
    await page.goto(`${url}#run/${second}`);
    await until(page, (id) => document.querySelector('#run')?.getAttribute('data-id') === id && document.querySelector('#run #pending button.reject') !== null, 'the second run', second);
    await page.click('#run #pending button.reject');
    await until(page, () => document.querySelector('#run')?.getAttribute('data-status') === 'rejected', 'the second run rejected');
    const after = app.lines.length;
    app.child.stdin.write('recover\n');
    assert.equal(await app.line(/^RECOVERED /, after), 'RECOVERED []', 'nothing left to recover');
    assert.deepEqual(readLedger(ledger), [{ item: 'tea', executionId: first }], 'exactly the approved order, once');

    // The console's rollback refuses, naming where it can be done.
    const csrf = await page.$eval('meta[name="codemode-csrf"]', (m) => m.getAttribute('content'));
    const refused = await fetch(`${url}api/executions/${first}/rollback`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-codemode-csrf': csrf }, body: '{}' });
    assert.equal(refused.status, 409);
    assert.match((await refused.json()).error, /Rollback calls the connectors' revert functions/);
    assert.deepEqual(page.problems.filter((p) => !/favicon/.test(p)), []);

    cli.child.kill('SIGTERM');
    assert.deepEqual(await cli.exited, { code: 0, signal: null }, 'the console stops on SIGTERM');
  } finally {
    if (browser) await browser.close();
    if (cli) cli.child.kill('SIGKILL');
    app.child.stdin.end();
    app.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('standalone: usage errors answer one line with a code and exit 2; a store file is never created', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-console-usage-'));
  const run = (...args) => spawnSync(process.execPath, [BIN, 'console', ...args], { encoding: 'utf8', timeout: 20_000 });
  try {
    const missing = path.join(dir, 'nope.db');
    for (const [args, message] of [
      [[], /--store is required/],
      [['--store', missing], /no store file at .*nope\.db/],
      [['--store', ':memory:'], /:memory: would be a new, empty store/],
      [['--store', __filename, '--port', 'http'], /--port must be a number/],
      [['--store', __filename, '--name', 'no spaces'], /is not a runtime name/],
      [['--stor', 'x'], /Unknown option '--stor'/],
      [['--store', __filename, '--schema', 's'], /--schema applies to a postgres:\/\/ store only/],
    ]) {
      const r = run(...args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^codemode-executor console: ERR_CLI_USAGE: /);
      assert.match(r.stderr.split('\n')[0], message);
    }
    assert.equal(fs.existsSync(missing), false);
    const help = run('--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: codemode-executor console --store/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
