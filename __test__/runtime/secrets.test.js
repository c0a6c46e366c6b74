'use strict';
// A secret's value never reaches the durable log (issue 39): a connector whose result or error
// echoes the value, and an outbound response that echoes it, are redacted before the runtime
// records or emits anything. Read back through the runtime (outcomes, execution(),
// executions(), pending(), events) and, over SQLite, from the raw bytes of the store's files.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector } = require('../../lib/index.js');
const { KIND, storeOptions } = require('./stores.js');

const TOKEN = 'sk_live_Durable5ecret_0123456789abcdef';
const PLACEHOLDER = '{{secret:API}}';

// An echoing server: the request's URL and Authorization header come back in the body.
async function echo(request) {
  return Response.json({ url: request.url, auth: request.headers.get('authorization') });
}

// A connector that holds the same credential as the host and lets it slip: in a result, in an
// error, and in the result of a call that needs approval (recorded on the approving pass).
class Vault extends CodemodeConnector {
  name() { return 'vault'; }
  tools() {
    return {
      whoami: { description: 'Who the token is', execute: async () => ({ token: TOKEN, note: `Bearer ${TOKEN}`, [TOKEN]: 1 }) },
      broken: { description: 'Fails', idempotent: true, execute: async () => { throw new Error(`upstream refused token ${TOKEN}`); } },
      save: { description: 'Save', requiresApproval: true, execute: async (args) => ({ saved: args, key: TOKEN }) },
    };
  }
}

const executor = new IsolateExecutor({
  workers: 1,
  timeout: 10_000,
  globalOutbound: echo,
  secrets: { API: { value: TOKEN, hosts: ['api.example.com'] } },
});
test.after(() => executor.dispose());

function storeBytes(dir) {
  return fs.readdirSync(dir).filter((f) => f.startsWith('runtime.db')).map((f) => fs.readFileSync(path.join(dir, f)));
}

test('a durable run whose connector and fetch echo a secret records and emits only the placeholder', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-runtime-secrets-'));
  const events = [];
  const runtime = createCodemodeRuntime({ executor, connectors: [new Vault()], onEvent: (e) => events.push(e), ...storeOptions(dir) });
  const errors = [];
  const consoleError = console.error;
  console.error = (...args) => errors.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '));
  let paused;
  let done;
  try {
    paused = await runtime.execute({
      code: `async () => {
        const who = await vault.whoami({});
        const r = await fetch("https://api.example.com/me?t={{secret:API}}", { headers: { authorization: "Bearer {{secret:API}}" } });
        const echoed = await r.json();
        let failed;
        try { await vault.broken({}); } catch (e) { failed = e.message; }
        console.log("seen", JSON.stringify(who), failed);
        const saved = await vault.save({ who, echoed });
        return { who, echoed, failed, saved };
      }`,
    });
    assert.equal(paused.status, 'paused', paused.error);
    done = await runtime.approve({ executionId: paused.executionId });
  } finally {
    console.error = consoleError;
  }
  assert.equal(done.status, 'completed', JSON.stringify(done));

  // What the program got is the placeholder where the value was: the test sees the echoes.
  assert.deepEqual(done.result.who, { token: PLACEHOLDER, note: `Bearer ${PLACEHOLDER}`, [PLACEHOLDER]: 1 });
  assert.equal(done.result.echoed.auth, `Bearer ${PLACEHOLDER}`);
  assert.equal(done.result.failed, `upstream refused token ${PLACEHOLDER}`);
  assert.equal(done.result.saved.key, PLACEHOLDER);

  // Everything the runtime answers, holds and emits.
  const execution = await runtime.execution(paused.executionId);
  assert.equal(execution.log.length, 3, JSON.stringify(execution.log));
  const seen = JSON.stringify({ paused, done, execution, list: await runtime.executions(), pending: await runtime.pending(), events, errors });
  assert.ok(seen.includes(PLACEHOLDER));
  assert.ok(!seen.includes(TOKEN), `the value was recorded or emitted: ${seen}`);
  assert.ok(errors.some((e) => e.includes(`upstream refused token ${PLACEHOLDER}`)), JSON.stringify(errors));

  // The store's own files (SQLite: the database and its write-ahead log).
  if (KIND === 'sqlite') {
    const files = storeBytes(dir);
    assert.ok(files.length > 0);
    const needle = Buffer.from(TOKEN);
    assert.ok(files.some((bytes) => bytes.includes(Buffer.from(PLACEHOLDER))), 'the store holds the placeholder');
    for (const bytes of files) assert.equal(bytes.indexOf(needle), -1, 'the value is in the store file');
  }
});
