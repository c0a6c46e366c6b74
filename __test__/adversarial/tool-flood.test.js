'use strict';
// Adversarial corpus, tool-call floods: a program that starts thousands of tool calls at once.
// Judged on what the host observed: how many calls reached dispatch after execute() had
// settled (must be none), the host's RSS, and whether the next run works. In a child process,
// because an unbounded flood could exhaust the host.
const test = require('node:test');
const assert = require('node:assert/strict');
const { runChild } = require('../helpers.js');

const MB = 1024 * 1024;

test('tool-call flood (child): no call reaches dispatch after the run settled, and calls in flight are bounded', async () => {
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ timeout: 2000, memoryLimitMb: 64, workers: 1 });
    const reply = JSON.stringify({ result: 'x'.repeat(100_000) });
    let settled = false;
    let total = 0;
    let afterSettle = 0;
    let peak = 0;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
    const rss0 = process.memoryUsage().rss;
    const out = await ex.execute({
      code: 'async () => { const calls = []; for (let i = 0; i < 10000; i++) calls.push(tools.get({ i })); return (await Promise.all(calls)).length; }',
      providers: [{ name: 'tools', tools: ['get'] }],
      dispatch: () => { total++; if (settled) afterSettle++; return reply; },
    }).then((o) => { settled = true; return o; });
    const totalAtSettle = total;
    await new Promise((r) => setTimeout(r, 1500));
    clearInterval(sampler);
    const fanOut = await ex.execute({
      code: 'async () => (await Promise.all(Array.from({ length: 100 }, (_, i) => tools.get({ i })))).length',
      providers: [{ name: 'tools', tools: ['get'] }],
      dispatch: () => JSON.stringify({ result: 1 }),
    });
    report({ error: out.error, result: out.result, totalAtSettle, total, afterSettle, peakGrowth: peak - rss0, fanOut: fanOut.result, fanOutError: fanOut.error, limit: ex.bounds.maxToolCallsInFlight });
    await ex.dispose();
    process.exit(0);
  `, { timeoutMs: 60_000 });
  assert.equal(child.code, 0, child.stderr);
  const r = child.report;
  assert.equal(r.afterSettle, 0, `${r.afterSettle} calls reached dispatch after execute() settled (${r.totalAtSettle} before)`);
  assert.equal(r.result, undefined);
  assert.match(r.error, /in flight|Memory/);
  assert.ok(r.total <= r.limit, `${r.total} calls were dispatched; at most ${r.limit} can be in flight`);
  assert.ok(r.peakGrowth < 600 * MB, `host RSS peaked ${(r.peakGrowth / MB).toFixed(0)} MB above its start`);
  // Ordinary fan-out never meets the bound.
  assert.equal(r.fanOutError, undefined);
  assert.equal(r.fanOut, 100);
});

test('tool-call flood (child): calls left queued when a run times out never reach dispatch', async () => {
  const child = await runChild(`
    const ex = new lib.IsolateExecutor({ timeout: 300, workers: 1 });
    let settled = false;
    let afterSettle = 0;
    let total = 0;
    // A slow host: every dispatch holds the JavaScript thread for 5 ms, so most of the 200 calls
    // are still queued for it when the run ends at its deadline.
    const out = await ex.execute({
      code: 'async () => { for (let i = 0; i < 200; i++) tools.slow({ i }); await new Promise(() => {}); }',
      providers: [{ name: 'tools', tools: ['slow'] }],
      dispatch: () => { total++; if (settled) afterSettle++; const t = Date.now(); while (Date.now() - t < 5); return JSON.stringify({ result: 1 }); },
    }).then((o) => { settled = true; return o; });
    await new Promise((r) => setTimeout(r, 1000));
    report({ error: out.error, total, afterSettle });
    await ex.dispose();
    process.exit(0);
  `, { timeoutMs: 60_000 });
  assert.equal(child.code, 0, child.stderr);
  assert.match(child.report.error, /timed out|never settle/);
  assert.equal(child.report.afterSettle, 0, `${child.report.afterSettle} calls reached dispatch after settle`);
});
