// Checked by __test__/compat/mastra.test.js with `tsc --strict --noEmit` (never run): the
// transport this package's types describe is assignable to the published `@mastra/core/tools`
// CodeModeTransport, and is accepted where `createCodeMode` takes one. (skipLibCheck: Mastra's
// declarations are checked by Mastra; the install test checks ours strictly.)
import type { CodeModeTransport } from '@mastra/core/tools';
import { createCodeMode, createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { IsolateExecutor } from '@supolka/codemode-executor';
import { IsolateCodeModeTransport } from '@supolka/codemode-executor/mastra';

const executor = new IsolateExecutor({ workers: 1 });
const transport: CodeModeTransport = new IsolateCodeModeTransport({ executor, memoryLimitMb: 64 });
const getWeather = createTool({
  id: 'get-weather',
  description: 'Weather of a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async (input) => ({ temperature: input.city.length }),
});
export const mode = createCodeMode({ tools: { getWeather } }, new IsolateCodeModeTransport({ executor }));
export { transport };
// @ts-expect-error an executor is required
new IsolateCodeModeTransport({});
