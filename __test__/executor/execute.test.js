'use strict';
// The shape of a run's outcome: results, errors, logs, timing and stats.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');

const ex = new IsolateExecutor({ workers: 2 });
test.after(() => ex.dispose());

const run = (code, extra = {}) => ex.execute({ code, ...extra });

test('an async arrow function resolves with its value and no error key', async () => {
  const out = await run('async () => 1 + 1');
  assert.equal(out.result, 2);
  assert.equal('error' in out, false);
  assert.deepEqual(out.logs, []);
  assert.equal(typeof out.timing.queuedMs, 'number');
  assert.ok(out.timing.runMs >= 0 && out.timing.totalMs >= out.timing.runMs);
  assert.equal(out.stats.toolCalls, 0);
  assert.ok(out.stats.heapUsedBytes > 0);
});

test('sync functions and non-promise results work', async () => {
  assert.equal((await run('() => "plain"')).result, 'plain');
  assert.deepEqual((await run('function () { return { a: [1, "x", null, true] } }')).result, { a: [1, 'x', null, true] });
});

test('undefined stays undefined, null stays null', async () => {
  const none = await run('async () => {}');
  assert.equal(none.result, undefined);
  assert.equal('error' in none, false);
  assert.equal((await run('async () => null')).result, null);
});

test('JSON-compatible values come back deep-equal', async () => {
  const value = { s: 'héllo ☃ 𝄞', n: -1.5e300, i: 42, b: false, arr: [[], {}, [1, [2, [3]]]], nul: null };
  const out = await run(`async () => (${JSON.stringify(value)})`);
  assert.deepEqual(out.result, value);
});

test('a thrown Error resolves with its message', async () => {
  const out = await run('async () => { throw new TypeError("bad thing") }');
  assert.equal(out.result, undefined);
  // The native form says where in the program it was thrown, and shows that line.
  assert.equal(out.error, 'bad thing (line 1, column 21)\n   1 | async () => { throw new TypeError("bad thing") }\n     |                     ^');
});

test('a non-Error throw resolves with String(value)', async () => {
  assert.equal((await run('async () => { throw "just a string" }')).error, 'just a string');
  assert.equal((await run('async () => { throw 42 }')).error, '42');
  assert.equal((await run('async () => { throw null }')).error, 'null');
  assert.equal((await run('async () => { throw undefined }')).error, 'undefined');
  assert.equal((await run('async () => { throw { toString() { return "custom" } } }')).error, 'custom');
  assert.match((await run('async () => Promise.reject(new Error("rejected"))')).error, /^rejected \(line 1, column 28\)\n/);
});

test('an Error with an empty message still reports something', async () => {
  assert.match((await run('async () => { throw new Error() }')).error, /^Error \(line 1, column 21\)\n/);
});

test('syntax errors resolve with an error', async () => {
  const out = await run('async () => { let = ; }');
  assert.match(out.error, /Unexpected/);
  assert.equal(out.result, undefined);
});

test('code that is not a function is an error that says so', async () => {
  const out = await run('42');
  assert.match(out.error, /must evaluate to a function/);
  assert.match(out.error, /number/);
});

test('values that cannot be transferred are errors, not crashes', async () => {
  assert.match((await run('async () => { const o = {}; o.self = o; return o }')).error, /could not be transferred.*circular/s);
  assert.match((await run('async () => () => 1')).error, /could not be transferred.*function/);
  assert.match((await run('async () => Symbol("s")')).error, /could not be transferred.*symbol/);
  assert.match((await run('async () => ({ nested: [1n] })')).error, /could not be transferred.*bigint/);
  assert.equal((await run('async () => "still fine"')).result, 'still fine');
});

test('console lines are captured in order with level prefixes', async () => {
  const out = await run(`async () => {
    console.log("a", 1, { x: 1 }, [1, 2], undefined, null);
    console.info("info line");
    console.debug("debug line");
    console.warn("careful");
    console.error(new Error("boom"));
    await Promise.resolve();
    console.log("after await");
    return "ok";
  }`);
  assert.equal(out.result, 'ok');
  assert.deepEqual(out.logs, [
    'a 1 [object Object] 1,2 undefined null',
    'info line',
    'debug line',
    '[warn] careful',
    '[error] Error: boom',
    'after await',
  ]);
});

test('other console methods exist and do not throw', async () => {
  const out = await run(`async () => {
    for (const m of ["table", "trace", "dir", "dirxml", "group", "groupCollapsed", "groupEnd", "time", "timeLog", "timeEnd", "count", "countReset", "assert", "clear", "profile", "profileEnd", "timeStamp"]) {
      if (typeof console[m] !== "function") throw new Error("missing console." + m);
      console[m]();
    }
    console.assert(false, "it failed");
    console.log(Object.create(null));
    return "ok";
  }`);
  assert.equal(out.error, undefined);
  assert.ok(out.logs.includes('[error] Assertion failed: it failed'));
  assert.ok(out.logs.includes('[object Object]'));
});

test('logs are kept when the program fails', async () => {
  const out = await run('async () => { console.log("before"); throw new Error("after") }');
  assert.deepEqual(out.logs, ['before']);
  assert.match(out.error, /^after \(line 1, column \d+\)/);
});

test('a promise that can never settle ends the run at once with a clear error', async () => {
  const started = Date.now();
  const out = await run('async () => { await new Promise(() => {}) }', { timeout: 30_000 });
  assert.match(out.error, /can never settle/);
  assert.ok(Date.now() - started < 10_000);
});

test('Intl has real ICU data', async () => {
  const out = await run(`async () => [
    new Intl.NumberFormat("de-DE").format(1234567.891),
    new Intl.DateTimeFormat("en-US", { timeZone: "UTC" }).format(new Date(0)),
    (1234.5).toLocaleString("fr-FR"),
  ]`);
  assert.deepEqual(out.result, ['1.234.567,891', '1/1/1970', (1234.5).toLocaleString('fr-FR')]);
});
