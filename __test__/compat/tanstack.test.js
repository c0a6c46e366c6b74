'use strict';
// `@supolka/codemode-executor/tanstack` (issue 37): this engine as the isolate driver of TanStack
// AI's code mode, driven by the published `@tanstack/ai-code-mode` (pinned) exactly as its
// README does with `@tanstack/ai-isolate-node`: tools made with `toolDefinition(...).server()`,
// `createCodeMode({ driver, tools })`, and its `execute_typescript` tool run on programs a model
// would write (TypeScript, parallel calls, a failing tool, console lines, a bound broken).
const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const { typeCheck } = require('./type-check.js');
const { IsolateExecutor } = require('../../lib/index.js');
const { createIsolateDriver } = require('../../lib/tanstack/index.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

// The TanStack packages are ES modules only.
const tanstack = async () => ({ ai: await import('@tanstack/ai'), codeMode: await import('@tanstack/ai-code-mode') });

async function codeModeTool(driver) {
  const { ai, codeMode } = await tanstack();
  const calls = [];
  const weather = ai.toolDefinition({
    name: 'fetchWeather',
    description: 'Get weather for a city',
    inputSchema: z.object({ location: z.string() }),
    outputSchema: z.object({ temperature: z.number(), condition: z.string() }),
  }).server(async ({ location }) => {
    calls.push(location);
    if (location === 'Atlantis') throw new Error('no such city: Atlantis');
    return { temperature: location.length * 10, condition: 'sunny' };
  });
  const { tool, systemPrompt } = codeMode.createCodeMode({ driver, tools: [weather], timeout: 2_000 });
  return { tool, systemPrompt, calls };
}

test('createCodeMode with this driver: a TypeScript program calls external_* tools in parallel and returns its value', async () => {
  const { tool, systemPrompt, calls } = await codeModeTool(createIsolateDriver({ executor }));
  assert.equal(tool.name, 'execute_typescript');
  assert.match(systemPrompt, /external_fetchWeather/);
  const out = await tool.execute({ typescriptCode: `
interface Weather { temperature: number; condition: string }
const cities: string[] = ['Tokyo', 'Paris', 'NYC']
const results: Weather[] = await Promise.all(cities.map((city) => external_fetchWeather({ location: city })))
console.log('fetched', results.length)
console.warn('careful')
console.error('oops')
const warmest = results.reduce((a, b) => (b.temperature > a.temperature ? b : a))
return { warmest: warmest.temperature, all: results.map((r) => r.temperature) }` });
  assert.deepEqual(out, { success: true, result: { warmest: 50, all: [50, 50, 30] }, logs: ['fetched 3', 'WARN: careful', 'ERROR: oops'] });
  assert.deepEqual(calls.sort(), ['NYC', 'Paris', 'Tokyo']);
});

test('a tool that throws, input the schema refuses, a program error, a syntax error and a timeout come back as TanStack errors, and the driver goes on', async () => {
  const { tool } = await codeModeTool(createIsolateDriver({ executor }));
  const failed = await tool.execute({ typescriptCode: "return await external_fetchWeather({ location: 'Atlantis' })" });
  assert.equal(failed.success, false);
  assert.equal(failed.error.name, 'Error');
  assert.match(failed.error.message, /no such city: Atlantis/);
  // The code-mode package validates the input with the tool's schema, on the host.
  const invalid = await tool.execute({ typescriptCode: 'return await external_fetchWeather({ location: 5 })' });
  assert.equal(invalid.success, false);
  assert.match(invalid.error.message, /Input validation failed for tool fetchWeather/);
  // Caught in the program, a tool's error is an Error with its message.
  const caught = await tool.execute({ typescriptCode: "try { await external_fetchWeather({ location: 'Atlantis' }) } catch (e) { return [e instanceof Error, e.message] }" });
  assert.deepEqual(caught.result, [true, 'no such city: Atlantis']);
  const thrown = await tool.execute({ typescriptCode: 'const o: any = null\nreturn o.x' });
  assert.equal(thrown.success, false);
  assert.match(thrown.error.message, /null/);
  // The program's own line numbers: nothing the driver adds comes before them.
  assert.match(thrown.error.message, /\(line 2, column \d+\)/);
  const syntax = await tool.execute({ typescriptCode: 'return (' });
  assert.equal(syntax.success, false);
  const spin = await tool.execute({ typescriptCode: 'while (true) {}' });
  assert.deepEqual([spin.success, spin.error.name], [false, 'TimeoutError']);
  assert.match(spin.error.message, /timed out/i);
  const after = await tool.execute({ typescriptCode: "return (await external_fetchWeather({ location: 'Oslo' })).temperature" });
  assert.deepEqual(after, { success: true, result: 40, logs: [] });
});

test('the driver alone: the IsolateDriver contract (bindings in scope, fresh runs, dispose, bounds, bad bindings refused)', async () => {
  const driver = createIsolateDriver({ executor, timeout: 5_000 });
  const seen = [];
  const context = await driver.createContext({
    bindings: {
      external_echo: { name: 'external_echo', description: 'Echo', inputSchema: {}, execute: async (input) => { seen.push(input); return { echoed: input }; } },
    },
    memoryLimit: 64,
  });
  // No input is an empty object, as the isolated-vm driver sends; a program may shadow a binding.
  assert.deepEqual(await context.execute('return await external_echo()'), { success: true, value: { echoed: {} }, logs: [] });
  assert.deepEqual(await context.execute('const external_echo = 1; return external_echo'), { success: true, value: 1, logs: [] });
  assert.deepEqual(await context.execute('return undefined'), { success: true, value: undefined, logs: [] });
  // Each execute is a fresh run: a global set by one is gone in the next.
  await context.execute('globalThis.kept = 1');
  assert.deepEqual((await context.execute('return typeof kept')).value, 'undefined');
  // The context's memory bound applies.
  const big = await context.execute('const a = []; while (true) a.push(new Array(1e6).fill(1))');
  assert.deepEqual([big.success, big.error.name, big.error.code], [false, 'MemoryLimitError', 'memory']);
  await context.dispose();
  assert.deepEqual(await context.execute('return 1'), { success: false, error: { name: 'DisposedError', message: 'Context has been disposed' }, logs: [] });
  assert.deepEqual(seen, [{}]);
  await assert.rejects(driver.createContext({ bindings: { 'not-a-name': { execute: async () => 1 } } }), { code: 'ERR_INVALID_ARGUMENT', message: /not a JavaScript identifier/ });
  await assert.rejects(driver.createContext({ bindings: { fine: {} } }), { code: 'ERR_INVALID_ARGUMENT', message: /no execute function/ });
  assert.throws(() => createIsolateDriver({}), { code: 'ERR_INVALID_ARGUMENT' });
  assert.throws(() => createIsolateDriver({ executor, timeout: -1 }), { code: 'ERR_INVALID_ARGUMENT' });
});

test('the types: createIsolateDriver\'s driver is a @tanstack/ai-code-mode IsolateDriver (tsc --strict on tanstack-types.mts)', () => {
  const { status, output } = typeCheck('tanstack-types.mts');
  assert.equal(status, 0, output);
});
