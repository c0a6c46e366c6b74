// Checked by __test__/compat/tanstack.test.js with `tsc --strict --noEmit` (never run): the
// driver this package's types describe is assignable to the published `@tanstack/ai-code-mode`
// IsolateDriver, and is accepted where `createCodeMode` takes one. (skipLibCheck: @tanstack/ai
// 0.39.0's own declarations name a file it does not ship; the install test checks ours strictly.)
import type { IsolateDriver } from '@tanstack/ai-code-mode';
import { createCodeMode } from '@tanstack/ai-code-mode';
import { toolDefinition } from '@tanstack/ai';
import { z } from 'zod';
import { IsolateExecutor } from '@supolka/codemode-executor';
import { createIsolateDriver } from '@supolka/codemode-executor/tanstack';

const executor = new IsolateExecutor({ workers: 1 });
const driver: IsolateDriver = createIsolateDriver({ executor, timeout: 5_000, memoryLimit: 64 });
const weather = toolDefinition({
  name: 'fetchWeather',
  description: 'Get weather for a city',
  inputSchema: z.object({ location: z.string() }),
}).server(async ({ location }) => ({ temperature: location.length }));
export const mode = createCodeMode({ driver: createIsolateDriver({ executor }), tools: [weather] });
export { driver };
// @ts-expect-error an executor is required
createIsolateDriver({});
