'use strict';
// A connector's refusal inside a durable run is the program's business, not a fault: a call of
// a tool the connector does not have, or of one without an execute function, reaches the
// program as an error with the message alone (the connector's ERR_INVALID_ARGUMENT code, which
// the host sees when it calls executeTool itself, changes nothing of that), the program may
// catch it, and the run ends as an outcome (completed or error), never interrupted.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector, ErrorCodes } = require('../../lib/index.js');
const { storeOptions } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

class Partial extends CodemodeConnector {
  name() { return 'partial'; }
  tools() { return { ping: { execute: () => 'pong' }, docsOnly: { description: 'no execute' } }; }
}

function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-outcomes-'));
  const connector = new Partial();
  return { connector, runtime: createCodemodeRuntime({ executor, connectors: [connector], ...storeOptions(dir) }) };
}

test('a tool not there, or without execute: the program sees the message, catches it, and the run completes', async () => {
  const { connector, runtime } = setup();
  // The host calling the connector directly sees the code.
  await assert.rejects(connector.executeTool('nope', {}), { code: ErrorCodes.INVALID_ARGUMENT, message: 'Tool "nope" not found on partial' });
  const errors = console.error;
  console.error = () => {};
  let out;
  try {
    out = await runtime.execute({
      code: `async () => {
        const seen = [];
        for (const f of [() => partial.nope({}), () => partial.docsOnly({})]) {
          try { await f(); seen.push('no error'); } catch (e) { seen.push({ message: e.message, code: e.code }); }
        }
        return { seen, ping: await partial.ping({}) };
      }`,
    });
  } finally {
    console.error = errors;
  }
  assert.equal(out.status, 'completed', JSON.stringify(out));
  assert.deepEqual(out.result, {
    seen: [
      { message: 'Tool "nope" not found on partial', code: undefined },
      { message: 'Tool "docsOnly" on partial has no execute function', code: undefined },
    ],
    ping: 'pong',
  });
});

test('a tool not there, uncaught: the run ends as an error with the message, not interrupted', async () => {
  const { runtime } = setup();
  const errors = console.error;
  console.error = () => {};
  let out;
  try {
    out = await runtime.execute({ code: 'async () => partial.nope({})' });
  } finally {
    console.error = errors;
  }
  assert.equal(out.status, 'error', JSON.stringify(out));
  assert.equal('interrupted' in out, false);
  assert.match(out.error, /Tool "nope" not found on partial/);
});
