// A realistic TypeScript program against the installed package, checked by the install test
// with `tsc --strict --noEmit` (never run). It uses both execute forms, the durable runtime,
// runtime.tool() with the AI SDK, connectors that return AI SDK tool() objects, and the stats.
// It also holds the types to what the code does: a runtime migrated from Cloudflare keeps its
// `ctx` (accepted and ignored), and `errorKind` has no value no run resolves with
// (`@ts-expect-error` lines fail the check when the types allow what they should refuse).
import {
  IsolateExecutor,
  createCodemodeRuntime,
  CodemodeConnector,
  toolSetConnector,
  ToolSetConnector,
  CodemodeExecutorError,
  ErrorCodes,
  type ConnectorTools,
  type ErrorKind,
  type ExecutorStats,
  type ProxyToolOutput,
  type CodemodeRollbackResult,
  type RollbackCall,
  type RollbackFate,
} from '@supolka/codemode-executor';
import { tool, jsonSchema, type ToolSet } from 'ai';
import { consoleHandler, type ConsoleHandler } from '@supolka/codemode-executor/console';
import { createServer, type IncomingMessage } from 'node:http';

const executor = new IsolateExecutor({
  isolation: 'process',
  workers: 2,
  timeout: 5_000,
  memoryLimitMb: 64,
  limits: { maxToolCalls: 100, maxResultBytes: 1 << 20 },
  globalOutbound: null,
});

// A connector whose tools are the AI SDK's own tool() objects.
class Weather extends CodemodeConnector {
  name(): string {
    return 'weather';
  }
  protected tools(): ConnectorTools {
    return {
      forecast: tool({
        description: 'The forecast for a city',
        inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
        execute: async ({ city }) => ({ city, celsius: 21 }),
      }),
      report: {
        description: 'File a report',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        requiresApproval: true,
        execute: async (args: { text: string }) => ({ filed: args.text.length }),
        revert: async () => undefined,
      },
    };
  }
}

const aiTools: ToolSet = {
  add: tool({
    description: 'Adds two numbers',
    inputSchema: jsonSchema<{ a: number; b: number }>({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }),
    execute: async ({ a, b }) => a + b,
  }),
};
const math: ToolSetConnector = toolSetConnector({ tools: aiTools, name: 'math' });
const math2: ToolSetConnector = toolSetConnector(undefined, { tools: aiTools });

// A Durable Object's runtime as written for Cloudflare, moved here as it is: `ctx` stays.
class Agent {
  constructor(private readonly ctx: { id: { toString(): string } }) {}
  runtime() {
    return createCodemodeRuntime({ ctx: this.ctx, executor, connectors: [new Weather()], path: ':memory:' });
  }
}

// What ended a failed run; a cancelled run rejects instead, so `cancelled` is not among them.
function describeFailure(kind: ErrorKind): string {
  switch (kind) {
    case 'syntax': case 'program': case 'timeout': case 'memory': case 'bound': case 'unsettleable': return kind;
  }
  const never: never = kind;
  return never;
}
// @ts-expect-error no run resolves with errorKind 'cancelled'
const cancelled: ErrorKind = 'cancelled';

async function main(): Promise<void> {
  // Native form: tool calls as JSON text.
  const native = await executor.execute({
    code: 'async () => (await tools.echo({ x: 1 })).x',
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: async (_provider: string, _tool: string, argsJson: string) => JSON.stringify({ result: JSON.parse(argsJson)[0] }),
    timeout: 1_000,
    retainHandles: true,
  });
  const n: unknown = native.result;
  const ms: number = native.timing.totalMs;
  if (native.handle) await native.handle.dispose();

  // Cloudflare form: DynamicWorkerExecutor's execute(code, fns).
  const cf = await executor.execute('async () => await codemode.double(21)', { double: (x: number) => x * 2 });
  const logs: string[] = cf.logs ?? [];

  // The durable runtime, and its AI SDK tool.
  const runtime = createCodemodeRuntime({ executor, connectors: [new Weather(), math, math2], path: ':memory:', maxExecutions: 10 });
  const codeTool = tool(runtime.tool({ connectorHints: { weather: 'forecasts' } }));
  const out: ProxyToolOutput = await runtime.execute({ code: 'async () => weather.forecast({ city: "Oslo" })' });
  if (out.status === 'paused') await runtime.approve({ executionId: out.executionId });
  try {
    const rolled: CodemodeRollbackResult = await runtime.rollback({ executionId: out.executionId });
    // What stays in force although nothing failed: calls whose tool has no revert.
    const stays: RollbackCall[] = rolled.calls.filter((c) => c.fate === 'no_revert');
    const fate: RollbackFate = rolled.calls[0]?.fate ?? 'reverted';
    // @ts-expect-error: a fate the answer never has
    const wrong: RollbackFate = 'rolled_back';
    void [stays, fate, wrong];
  } catch (error) {
    // A revert that failed, or a run a pass holds: shown to a person, and tried again later.
    if (error instanceof CodemodeExecutorError && error.code === ErrorCodes.ROLLBACK_INCOMPLETE) void error.message;
  }
  const pending = await runtime.pending();
  // The console, mounted under the application's admin path, behind its own check.
  const admin: ConsoleHandler = consoleHandler({ runtime, basePath: '/admin/codemode', auth: (req: IncomingMessage) => req.headers['x-admin'] === 'yes', token: false });
  const adminPath: string = admin.path;
  const token: string | undefined = consoleHandler({ runtime, label: 'agents' }).token;
  createServer((req, res) => (req.url?.startsWith(adminPath) ? admin(req, res) : res.end())).close();
  // @ts-expect-error: the runtime is required
  consoleHandler({ token: 'a-token-of-sixteen-chars' });
  void token;
  // The same runtime over PostgreSQL (typed only here: nothing connects until it is used).
  const shared = createCodemodeRuntime({ executor, connectors: [new Weather()], store: { url: 'postgres://app@db.internal/codemode', maxConnections: 8, schema: 'agents' } });
  try {
    await shared.executions();
  } catch (error) {
    if (error instanceof Error && (error as CodemodeExecutorError).code === ErrorCodes.STORE_UNAVAILABLE) void error.message;
  }
  const stats: ExecutorStats = executor.stats();
  const retired: number | undefined = stats.enginesRetired;
  try {
    await executor.execute({ code: 'async () => 1', timeout: -1 });
  } catch (error) {
    if (error instanceof CodemodeExecutorError && error.code === ErrorCodes.INVALID_ARGUMENT) void error.message;
  }
  void [n, ms, logs, codeTool, pending, retired, new Agent({ id: 'agent-1' }).runtime(), describeFailure, cancelled];

  // Programs as models write them: a TypeScript module with params, live logs, the phases.
  {
    await using scoped = new IsolateExecutor({ typescript: true, codeCacheMb: 8 });
    const lines: string[] = [];
    const run = await scoped.execute({
      code: 'export default async function main(p: { n: number }): Promise<number> { return p.n }',
      params: { n: 1 },
      onLog: (line, { level, runId }) => lines.push(`${level} ${runId} ${line}`),
      retainHandles: true,
    });
    const phases: number = run.timing.phases.reduce((sum, phase) => sum + phase.durationMs, 0);
    const cached: boolean = run.stats.codeCacheHit;
    const cpu: number = run.stats.cpuMs;
    if (run.handle) {
      await using handle = run.handle;
      await handle.execute('async (p) => p', { params: 2, onLog: (line) => lines.push(line) });
    }
    using scopedRuntime = createCodemodeRuntime({ executor: scoped, connectors: [], path: ':memory:' });
    void [phases, cached, cpu, scopedRuntime];
  }
  await executor.dispose();
}

void main();
