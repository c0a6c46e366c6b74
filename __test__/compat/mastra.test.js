'use strict';
// `@supolka/codemode-executor/mastra` (issue 37): this engine as a Mastra Code Mode transport,
// driven by the published `@mastra/core` (pinned) as its docs do: tools made with `createTool`,
// `createCodeMode({ tools }, transport)`, and an `Agent` whose model (the AI SDK's mock: no
// model can run here) calls `execute_typescript` with a program; then the transport's contract
// alone (errors, timeout, cancellation, tracing hooks).
const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const { typeCheck } = require('./type-check.js');
const { IsolateExecutor } = require('../../lib/index.js');
const { IsolateCodeModeTransport } = require('../../lib/mastra/index.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

async function mastraTools() {
  const { createTool } = await import('@mastra/core/tools');
  const calls = [];
  const getWeather = createTool({
    id: 'get-weather',
    description: 'Weather of a city',
    inputSchema: z.object({ city: z.string() }),
    outputSchema: z.object({ temperature: z.number() }),
    execute: async (input) => {
      calls.push(input.city);
      if (input.city === 'Atlantis') throw new Error('no such city: Atlantis');
      return { temperature: input.city.length * 10 };
    },
  });
  return { getWeather, calls };
}

const USAGE = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

// A mock model that calls execute_typescript with `code`, then says what came back.
async function modelRunning(code) {
  const { MockLanguageModelV3 } = await import('ai/test');
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      step += 1;
      if (step === 1) {
        return { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'execute_typescript', input: JSON.stringify({ code }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage: USAGE, warnings: [] };
      }
      const last = prompt[prompt.length - 1];
      return { content: [{ type: 'text', text: JSON.stringify(last.content[0].output.value) }], finishReason: { unified: 'stop', raw: undefined }, usage: USAGE, warnings: [] };
    },
  });
}

test('a Mastra Agent with createCodeMode over this transport: the model\'s TypeScript calls external_* tools in parallel, and the answer comes back', async () => {
  const { Agent } = await import('@mastra/core/agent');
  const { createCodeMode } = await import('@mastra/core/tools');
  const { getWeather, calls } = await mastraTools();
  const transport = new IsolateCodeModeTransport({ executor });
  assert.equal(transport.requiresSandbox, false);
  // No sandbox given: the transport needs none.
  const { tool, instructions } = createCodeMode({ tools: { getWeather } }, transport);
  assert.match(instructions, /declare function external_get_weather\(input: \{ city: string \}\)/);
  const model = await modelRunning(`type W = { temperature: number }
const cities: string[] = ['Oslo', 'Paris']
const results: W[] = await Promise.all(cities.map((city) => external_get_weather({ city })))
console.log('fetched', results.length)
console.warn('careful')
return results.map((r) => r.temperature)`);
  const agent = new Agent({ id: 'analyst', name: 'analyst', instructions: ['You are helpful.', instructions], model, tools: { execute_typescript: tool } });
  const answer = await agent.generate('How warm is it in Oslo and Paris?', { maxSteps: 3 });
  assert.deepEqual(JSON.parse(answer.text), { success: true, result: [40, 50], logs: ['fetched 2', 'careful'] });
  assert.deepEqual(calls.sort(), ['Oslo', 'Paris']);
});

test('through the Agent: a tool that throws and input Mastra\'s schema refuses reach the program as errors; a program error names its line', async () => {
  const { Agent } = await import('@mastra/core/agent');
  const { createCodeMode } = await import('@mastra/core/tools');
  const { getWeather } = await mastraTools();
  const { tool, instructions } = createCodeMode({ tools: { getWeather } }, new IsolateCodeModeTransport({ executor }));
  const ask = async (code) => {
    const agent = new Agent({ id: 'a', name: 'a', instructions, model: await modelRunning(code), tools: { execute_typescript: tool } });
    return JSON.parse((await agent.generate('go', { maxSteps: 3 })).text);
  };
  assert.deepEqual(await ask("try { await external_get_weather({ city: 'Atlantis' }) } catch (e) { return e.message }"), { success: true, result: 'no such city: Atlantis', logs: [] });
  const invalid = await ask('return await external_get_weather({ city: 5 })');
  assert.equal(invalid.success, false);
  assert.match(invalid.error.message, /city/);
  const thrown = await ask('const o: any = null\nreturn o.x');
  assert.deepEqual([thrown.success, thrown.error.name, thrown.error.line], [false, 'Error', 2]);
});

test('the transport alone: timeout, syntax error, cancellation, memory, tracing hooks, bad options', async () => {
  const transport = new IsolateCodeModeTransport({ executor, memoryLimitMb: 64 });
  const seen = [];
  const base = {
    toolIds: ['get-weather', '9lives'],
    dispatch: async (tool, args) => ({ tool, args }),
    timeout: 5_000,
    onExternalCall: (tool, args) => seen.push(['call', tool, args]),
    onExternalResult: (tool, ms, error) => { seen.push(['result', tool, typeof ms, error === undefined]); throw new Error('a hook that throws changes nothing'); },
  };
  // Ids that are not identifiers are named as Mastra's stubs name them.
  assert.deepEqual(await transport.run({ ...base, program: 'return [await external_get_weather({ a: 1 }), await external__9lives()]' }), {
    success: true, result: [{ tool: 'get-weather', args: { a: 1 } }, { tool: '9lives', args: {} }], logs: [],
  });
  assert.deepEqual(seen, [['call', 'get-weather', { a: 1 }], ['result', 'get-weather', 'number', true], ['call', '9lives', {}], ['result', '9lives', 'number', true]]);
  const spin = await transport.run({ ...base, program: 'while (true) {}', timeout: 300 });
  assert.deepEqual([spin.success, spin.error.name], [false, 'TimeoutError']);
  const syntax = await transport.run({ ...base, program: 'return (' });
  assert.deepEqual([syntax.success, syntax.error.name], [false, 'SyntaxError']);
  const big = await transport.run({ ...base, program: 'const a = []; while (true) a.push(new Array(1e6).fill(1))' });
  assert.deepEqual([big.success, big.error.name], [false, 'MemoryLimitError']);
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('the user stopped it')), 200);
  const started = Date.now();
  const aborted = await transport.run({ ...base, program: 'while (true) {}', abortSignal: controller.signal });
  assert.deepEqual([aborted.success, aborted.error.name, aborted.error.message], [false, 'AbortError', 'the user stopped it']);
  assert.ok(Date.now() - started < 4_000, 'cancelled before its timeout');
  assert.throws(() => new IsolateCodeModeTransport({}), { code: 'ERR_INVALID_ARGUMENT' });
  assert.throws(() => new IsolateCodeModeTransport({ executor, memoryLimitMb: 0 }), { code: 'ERR_INVALID_ARGUMENT' });
});

test('the types: IsolateCodeModeTransport is a @mastra/core CodeModeTransport (tsc --strict on mastra-types.mts)', () => {
  const { status, output } = typeCheck('mastra-types.mts');
  assert.equal(status, 0, output);
});
