'use strict';
// Adversarial corpus, CPU time: a spinning program is ended by its CPU-time budget
// (`cpuTimeMs`, billed on its own thread's CPU clock) long before its wall-clock timeout, so a
// few runaways cannot hold the workers for everyone; time spent waiting on tools is not billed.
// Judged on host wall time and on what the healthy runs got.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');
const { runChild, assertChildSurvived, assertStep } = require('./harness.js');

const CPU_MESSAGE = /^CPU time exceeded: the program computed for more than 300 ms \(cpuTimeMs\)$/;

test('cpu budget: a busy loop, in a microtask or a regex, ends with the CPU message well before the timeout', async () => {
  const ex = new IsolateExecutor({ workers: 1, timeout: 20_000, cpuTimeMs: 300 });
  try {
    for (const code of [
      'async () => { while (true) {} }',
      'async () => { await null; for (;;) {} }',
      'async () => /(a+)+b/.test("a".repeat(40))',
    ]) {
      const started = Date.now();
      const out = await ex.execute({ code });
      const ms = Date.now() - started;
      assert.match(out.error || '', CPU_MESSAGE, `${code}: ${out.error}`);
      assert.ok(ms < 5_000, `${code} held the worker ${ms} ms with a 300 ms CPU budget`);
    }
    assert.equal((await ex.execute({ code: 'async () => 1 + 1' })).result, 2);
  } finally {
    await ex.dispose();
  }
});

test('cpu budget: time spent awaiting tools is not billed', async () => {
  const ex = new IsolateExecutor({ workers: 1, timeout: 20_000, cpuTimeMs: 300 });
  try {
    const out = await ex.execute({
      code: 'async () => { let n = 0; for (let i = 0; i < 4; i++) n += await tools.slow(); return n; }',
      providers: [{ name: 'tools', tools: ['slow'] }],
      dispatch: () => new Promise((resolve) => setTimeout(() => resolve(JSON.stringify({ result: 1 })), 250)),
    });
    assert.equal(out.error, undefined);
    assert.equal(out.result, 4);
  } finally {
    await ex.dispose();
  }
});

test('cpu budget: runaways queued ahead of a healthy run delay it by their CPU budgets, not their timeouts', async () => {
  const ex = new IsolateExecutor({ workers: 1, timeout: 20_000, cpuTimeMs: 300 });
  try {
    const runaways = Array.from({ length: 3 }, () => ex.execute({ code: 'async () => { for (;;) {} }' }));
    const started = Date.now();
    const healthy = await ex.execute({ code: 'async () => "served"' });
    const waited = Date.now() - started;
    assert.equal(healthy.result, 'served');
    // Three runaways at 300 ms of CPU each; at their 20 s timeouts it would be a minute.
    assert.ok(waited < 8_000, `the healthy run waited ${waited} ms behind 3 runaways`);
    for (const r of await Promise.all(runaways)) assert.match(r.error, CPU_MESSAGE);
  } finally {
    await ex.dispose();
  }
});

test('cpu budget (child): a TurboFan loop that ignores termination is answered with the CPU message, not a timeout', async () => {
  const child = await runChild({
    executor: { workers: 2, timeout: 20_000, memoryLimitMb: 64, cpuTimeMs: 300 },
    steps: [{
      name: 'tf-hole-cpu',
      code: 'async () => { const keep = []; for (let i = 0; ; i++) { keep[i & 1023] = new Array(300); } }',
    }],
    exit: 'exit',
  });
  assertChildSurvived(child);
  // The run is stopped at its CPU budget; if its thread ignores that, it is given up 2 s later.
  const step = assertStep(child, 'tf-hole-cpu', { boundMs: 10_000 });
  assert.match(step.out.error, CPU_MESSAGE, JSON.stringify(step.out));
});
