'use strict';
// Adversarial corpus, ES modules: a program that imports a module while that module's top
// level is still evaluating (through an overridden builtin, or a module importing itself) must
// get what the language says, never a V8 abort (it used to end the engine, or in 'thread'
// isolation the host, with "Check failed: module_status == kLinked ..."). In a child process.
const test = require('node:test');
const assert = require('node:assert/strict');
const { runChild } = require('../helpers.js');

test('modules (child): import() of a module whose top level is still evaluating never aborts V8', async () => {
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ timeout: 2000, memoryLimitMb: 64, workers: 1, modules: {
      'util.js': 'export const xs = [1, 2, 3].map((x) => x * 2);',
      'self.js': 'import("self.js"); export const a = 1;',
      'selfawait.js': 'const me = await import("selfawait.js").catch((e) => e); export const b = 2;',
    } });
    const results = {};
    results.mapOverride = await ex.execute({ code: 'async () => { const orig = Array.prototype.map; Array.prototype.map = function (...a) { import("util.js"); return orig.apply(this, a); }; return (await import("util.js")).xs; }' });
    results.selfImport = await ex.execute({ code: 'async () => (await import("self.js")).a' });
    results.selfAwait = await ex.execute({ code: 'async () => (await Promise.race([import("selfawait.js").then((m) => m.b), new Promise((r) => setTimeout(() => r("pending"), 200))]))' });
    results.next = await ex.execute({ code: 'async () => 1 + 1' });
    report(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { result: v.result, error: v.error }])));
    await ex.dispose();
    process.exit(0);
  `, { timeoutMs: 60_000 });
  assert.equal(child.code, 0, `host died: code ${child.code} signal ${child.signal}\n${child.stderr}`);
  const r = child.report;
  assert.deepEqual(r.mapOverride, { result: [2, 4, 6] });
  assert.deepEqual(r.selfImport, { result: 1 });
  // A module awaiting its own import waits on itself: a cycle the language leaves pending.
  assert.deepEqual(r.selfAwait, { result: 'pending' });
  assert.deepEqual(r.next, { result: 2 });
});
