'use strict';
// Cloudflare's `createCodeTool` from `@supolka/codemode-executor/ai`, in an AI SDK
// `generateText` loop with a mock model (no network): the model writes one program that calls
// two tools of a plain AI SDK ToolSet; the program runs in a fresh V8 isolate; the model gets
// `{ result, logs? }` back and answers. For a file written for Cloudflare, only the import
// lines and the executor's constructor change:
//
//   import { createCodeTool } from '@cloudflare/codemode/ai';        // before
//   import { createCodeTool } from '@supolka/codemode-executor/ai';  // after
//
//   node examples/ai-code-tool.js
const { generateText, tool, jsonSchema, stepCountIs } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { IsolateExecutor } = require('..');
const { createCodeTool } = require('../lib/ai/index.js'); // '@supolka/codemode-executor/ai' once installed

const calls = { getWeather: 0, convert: 0 };
const tools = {
  getWeather: tool({
    description: 'Current temperature in a city, in Celsius',
    inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] }),
    execute: async ({ city }) => { calls.getWeather++; return { city, celsius: city === 'Oslo' ? 4 : 19 }; },
  }),
  toFahrenheit: tool({
    description: 'Convert Celsius to Fahrenheit',
    inputSchema: jsonSchema({ type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] }),
    execute: async ({ celsius }) => { calls.convert++; return celsius * 9 / 5 + 32; },
  }),
};

const CODE = `async () => {
  const out = [];
  for (const city of ["Oslo", "Lisbon"]) {
    const { celsius } = await codemode.getWeather({ city });
    out.push({ city, fahrenheit: await codemode.toFahrenheit({ celsius }) });
  }
  console.log("checked", out.length, "cities");
  return out;
}`;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};
let description;
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt, tools: offered }) => {
    description = offered && offered[0] && offered[0].description;
    const result = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content).find((p) => p.type === 'tool-result');
    if (result === undefined) {
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'codemode', input: JSON.stringify({ code: CODE }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }
    const rows = result.output.value.result.map((r) => `${r.city} ${r.fahrenheit}°F`).join(', ');
    return { content: [{ type: 'text', text: `Right now: ${rows}.` }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});

async function main() {
  const executor = new IsolateExecutor({ timeout: 10_000 });
  try {
    const codemode = createCodeTool({ tools, executor });
    const turn = await generateText({ model, tools: { codemode }, prompt: 'How warm is it in Oslo and Lisbon, in Fahrenheit?', stopWhen: stepCountIs(3) });
    const [toolResult] = turn.steps.flatMap((step) => step.toolResults);
    console.log(`the tool description declares: ${description.includes('getWeather: (input: GetWeatherInput)') ? 'getWeather' : '?'}, ${description.includes('toFahrenheit') ? 'toFahrenheit' : '?'}`);
    console.log(`tool result: ${JSON.stringify(toolResult.output)}`);
    console.log(`tool calls on the host: getWeather=${calls.getWeather} toFahrenheit=${calls.convert}`);
    console.log(`the model said: "${turn.text}"`);
  } finally {
    await executor.dispose();
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
