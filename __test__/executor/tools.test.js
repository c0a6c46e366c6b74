'use strict';
// Tool calls: providers become namespaces, calls reach dispatch as JSON, replies come back.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor, tableDispatch } = require('../helpers.js');

const ex = new IsolateExecutor({ workers: 2 });
test.after(() => ex.dispose());

test('a tool call sends (provider, tool, argsJson) and returns the result', async () => {
  const calls = [];
  const out = await ex.execute({
    code: 'async () => { const a = await math.add(2, 3); const b = await text.upper({ s: "hi" }); const c = await math.none(); return [a, b, c] }',
    providers: [{ name: 'math', tools: ['add', 'none'] }, { name: 'text', tools: ['upper'] }],
    dispatch: (provider, tool, argsJson) => {
      calls.push([provider, tool, argsJson]);
      const args = JSON.parse(argsJson);
      if (tool === 'add') return JSON.stringify({ result: args[0] + args[1] });
      if (tool === 'upper') return JSON.stringify({ result: args[0].s.toUpperCase() });
      return JSON.stringify({});
    },
  });
  assert.equal(out.error, undefined);
  assert.deepEqual(out.result, [5, 'HI', null]);
  assert.deepEqual(calls, [['math', 'add', '[2,3]'], ['text', 'upper', '[{"s":"hi"}]'], ['math', 'none', '[]']]);
  assert.equal(out.stats.toolCalls, 3);
});

test('async dispatch works, and calls may run concurrently', async () => {
  const out = await ex.execute({
    code: 'async () => Promise.all([1, 2, 3, 4].map((n) => slow.double(n)))',
    providers: [{ name: 'slow', tools: ['double'] }],
    dispatch: tableDispatch({ slow: { double: (n) => new Promise((r) => setTimeout(() => r(n * 2), 40 - n * 5)) } }),
  });
  assert.deepEqual(out.result, [2, 4, 6, 8]);
});

test('an error reply throws a catchable Error with that message', async () => {
  const out = await ex.execute({
    code: `async () => {
      try { await api.fail(); } catch (e) { return [e instanceof Error, e.message]; }
    }`,
    providers: [{ name: 'api', tools: ['fail'] }],
    dispatch: () => JSON.stringify({ error: 'host says no' }),
  });
  assert.deepEqual(out.result, [true, 'host says no']);
});

test('an uncaught error reply ends the run with its message', async () => {
  const out = await ex.execute({
    code: 'async () => { await api.fail(); return "unreachable" }',
    providers: [{ name: 'api', tools: ['fail'] }],
    dispatch: () => JSON.stringify({ error: 'denied' }),
  });
  assert.equal(out.error, 'denied');
});

test('dispatch that throws, rejects or answers garbage fails only that call', async () => {
  const out = await ex.execute({
    code: `async () => {
      const results = [];
      for (const t of ["throws", "rejects", "number", "badjson", "ok"]) {
        try { results.push(await api[t]()); } catch (e) { results.push("E:" + e.message); }
      }
      return results;
    }`,
    providers: [{ name: 'api', tools: ['throws', 'rejects', 'number', 'badjson', 'ok'] }],
    dispatch: (p, tool) => {
      if (tool === 'throws') throw new Error('sync boom');
      if (tool === 'rejects') return Promise.reject(new Error('async boom'));
      if (tool === 'number') return 42;
      if (tool === 'badjson') return '{not json';
      return JSON.stringify({ result: 'fine' });
    },
  });
  assert.deepEqual(out.result, [
    'E:sync boom',
    'E:async boom',
    'E:dispatch for api.number must return a JSON string (got number)',
    "E:The host's reply to api.badjson is not valid JSON",
    'fine',
  ]);
});

test('a tool that was not listed fails with a clear message, without reaching dispatch', async () => {
  let reached = false;
  const out = await ex.execute({
    code: 'async () => { try { await api.secret(); } catch (e) { return e.message } }',
    providers: [{ name: 'api', tools: ['public'] }],
    dispatch: () => { reached = true; return '{}'; },
  });
  assert.equal(out.result, 'Tool "secret" not found');
  assert.equal(reached, false);
});

test('arguments travel as JSON (undefined dropped, Date as ISO text)', async () => {
  let seen;
  await ex.execute({
    code: 'async () => api.f({ a: undefined, d: new Date(0), n: NaN }, undefined)',
    providers: [{ name: 'api', tools: ['f'] }],
    dispatch: (p, t, argsJson) => { seen = argsJson; return '{}'; },
  });
  assert.equal(seen, '[{"d":"1970-01-01T00:00:00.000Z","n":null},null]');
});

test('a BigInt argument rejects the call inside the program', async () => {
  const out = await ex.execute({
    code: 'async () => { try { await api.f(1n) } catch (e) { return e instanceof TypeError } }',
    providers: [{ name: 'api', tools: ['f'] }],
    dispatch: () => '{}',
  });
  assert.equal(out.result, true);
});

test('provider namespaces are not thenable and have no symbol-keyed tools', async () => {
  const out = await ex.execute({
    code: 'async () => { const ns = await api; return [ns === api, api[Symbol.iterator], typeof api.anything] }',
    providers: [{ name: 'api', tools: [] }],
  });
  assert.deepEqual(out.result, [true, null, 'function']);
});

test('late replies after the run ended are ignored and the host function still completes', async () => {
  let finished = false;
  const out = await ex.execute({
    code: 'async () => { api.slow(); await api.fast(); return 1 }',
    providers: [{ name: 'api', tools: ['slow', 'fast'] }],
    dispatch: async (p, tool) => {
      if (tool === 'slow') {
        await new Promise((r) => setTimeout(r, 150));
        finished = true;
      }
      return JSON.stringify({ result: tool });
    },
  });
  assert.equal(out.result, 1);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(finished, true);
  assert.equal(ex.stats().liveRuns, 0);
});

test('invalid provider names are rejected with ERR_INVALID_ARGUMENT', async () => {
  const cases = [
    [[{ name: 'console', tools: [] }], 'Provider name "console" is reserved'],
    [[{ name: '1abc', tools: [] }], 'Provider name "1abc" is not a valid JavaScript identifier'],
    [[{ name: 'class', tools: [] }], 'Provider name "class" is a JavaScript reserved word'],
    [[{ name: 'a', tools: [] }, { name: 'a', tools: [] }], 'Duplicate provider name "a"'],
    [[{ name: 'a', tools: [1] }], 'provider "a": tools must be an array of strings'],
    // The Cloudflare form's provider shape was accepted here, then every call failed.
    [[{ name: 'math', fns: { add: ({ a, b }) => a + b } }], 'provider "math": fns belongs to the Cloudflare form, execute(code, [{ name, fns }]); the native form takes { name, tools: [tool names] } and answers calls in dispatch'],
    ['nope', 'providers must be an array of { name, tools }'],
  ];
  for (const [providers, message] of cases) {
    await assert.rejects(ex.execute({ code: 'async () => 1', providers }), (e) => {
      assert.equal(e.code, 'ERR_INVALID_ARGUMENT');
      assert.equal(e.message, message);
      return true;
    });
  }
  await assert.rejects(ex.execute(42), { code: 'ERR_INVALID_ARGUMENT' });
  await assert.rejects(ex.execute(null), { code: 'ERR_INVALID_ARGUMENT' });
  await assert.rejects(ex.execute({ code: 1 }), { code: 'ERR_INVALID_ARGUMENT' });
  await assert.rejects(ex.execute({ code: 'async () => 1', dispatch: 'x' }), { code: 'ERR_INVALID_ARGUMENT' });
  await assert.rejects(ex.execute({ code: 'async () => 1', timeout: -5 }), { code: 'ERR_INVALID_ARGUMENT' });
  await assert.rejects(ex.execute({ code: 'async () => 1', memoryLimitMb: 1 }), { code: 'ERR_INVALID_ARGUMENT' });
});

test('1000 concurrent executions with 10 tool calls each all get their own results', async () => {
  const big = new IsolateExecutor({ workers: 2, maxQueue: 2000 });
  try {
    const dispatch = async (provider, tool, argsJson) => {
      const [run, step] = JSON.parse(argsJson);
      await Promise.resolve();
      return JSON.stringify({ result: run * 100 + step });
    };
    const runs = [];
    for (let i = 0; i < 1000; i++) {
      runs.push(big.execute({
        code: `async () => { let acc = []; for (let s = 0; s < 10; s++) acc.push(await svc.step(${i}, s)); return { run: ${i}, acc } }`,
        providers: [{ name: 'svc', tools: ['step'] }],
        dispatch,
      }));
    }
    const results = await Promise.all(runs);
    for (let i = 0; i < 1000; i++) {
      assert.equal(results[i].error, undefined, `run ${i}: ${results[i].error}`);
      assert.deepEqual(results[i].result, { run: i, acc: Array.from({ length: 10 }, (_, s) => i * 100 + s) });
      assert.equal(results[i].stats.toolCalls, 10);
    }
    assert.equal(big.stats().liveRuns, 0);
  } finally {
    await big.dispose();
  }
});
