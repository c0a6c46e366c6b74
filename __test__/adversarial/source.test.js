'use strict';
// Adversarial corpus, program source: oversized source must be refused before the host parses
// or copies it, and program text must not be able to close the expression it is compiled in
// (statements spliced around the harness). Judged on host RSS and on the tool calls the host
// received, never on what the program says.
const test = require('node:test');
const assert = require('node:assert/strict');
const { runChild, IsolateExecutor } = require('../helpers.js');

const MB = 1024 * 1024;

test('source (child): 6 MB of source through either form is refused by maxCodeBytes before the host parses it', async () => {
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ timeout: 2000, memoryLimitMb: 64, workers: 1 });
    // Token-heavy source: parsing it would build millions of syntax-tree nodes.
    const huge = 'async () => [' + '1,'.repeat(3 * 1024 * 1024) + ']';
    let peak = 0;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 2);
    const rss0 = process.memoryUsage().rss;
    const cf = await ex.execute(huge, []);
    const native = await ex.execute({ code: huge });
    // A statement body (not a function) is what normalizeCode parses and rewraps.
    const body = await ex.execute('const a = [' + '2,'.repeat(3 * 1024 * 1024) + '];\\nreturn a.length;', []);
    clearInterval(sampler);
    const next = await ex.execute('async () => 2', []);
    report({ cf: cf.error, native: native.error, body: body.error, peakGrowth: Math.max(peak, process.memoryUsage().rss) - rss0, next: next.result });
    await ex.dispose();
    process.exit(0);
  `, { timeoutMs: 120_000 });
  assert.equal(child.code, 0, child.stderr);
  const r = child.report;
  for (const form of ['cf', 'native', 'body']) assert.match(r[form] || '', /The program source is too large \(\d+ bytes > 4194304 byte limit, maxCodeBytes\)/, form);
  assert.ok(r.peakGrowth < 150 * MB, `host RSS peaked ${(r.peakGrowth / MB).toFixed(0)} MB above its start for 6 MB of source`);
  assert.equal(r.next, 2);
});

test('source: program text cannot close the harness around it, in either form', async () => {
  const ex = new IsolateExecutor({ workers: 1, timeout: 2000 });
  try {
    const leaks = [];
    const providers = [{ name: 'tools', tools: ['leak'] }];
    const dispatch = (p, t, args) => { leaks.push(args); return JSON.stringify({ result: 1 }); };
    const attacks = [
      'async () => 1); tools.leak("native"); (async () => 2',
      'async () => 1)\n;tools.leak("newline"); (async () => 2',
      'async () => 1) /* */ , tools.leak("comma"), (async () => 2',
      '1); tools.leak("call"); (async () => 3',
    ];
    for (const code of attacks) {
      const out = await ex.execute({ code, providers, dispatch });
      assert.equal(out.result, undefined, `${code} resolved with ${JSON.stringify(out.result)}`);
      assert.match(out.error || '', /SyntaxError/, code);
    }
    // The Cloudflare form: normalizeCode wraps unparseable text in a function body.
    for (const code of ['}); codemode.leak("cf"); (async () => {', '})\n;codemode.leak("cf2");\n(async () => {']) {
      const out = await ex.execute(code, [{ name: 'codemode', fns: { leak: (x) => { leaks.push(x); return 1; } } }]);
      assert.equal(out.result, undefined, code);
      assert.match(out.error || '', /SyntaxError/, code);
    }
    assert.deepEqual(leaks, [], 'no spliced statement ran');
    // Legitimate single expressions still run: a comma expression, a parenthesised one, comments.
    assert.equal((await ex.execute({ code: '(0, async () => 4)' })).result, 4);
    assert.equal((await ex.execute({ code: '((async () => 5)) // trailing comment' })).result, 5);
    assert.equal((await ex.execute({ code: 'async () => [1, 2].map((x) => ({ x }))' })).result.length, 2);
  } finally {
    await ex.dispose();
  }
});
