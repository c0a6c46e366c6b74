/** Options of an executor. Every bound is per run unless said otherwise. */
export interface IsolateExecutorOptions {
  /**
   * Where the isolates run. 'process' (default): in engine processes this executor supervises,
   * so a V8 fatal error or an OOM kill costs only the runs that engine held (ERR_WORKER_LOST).
   * 'thread': in this process, a little faster, but such an input ends the host process.
   * The environment variable CODEMODE_EXECUTOR_ISOLATION sets the default.
   */
  isolation?: 'process' | 'thread'
  /** 'process' isolation: engine processes (each with `workers` threads). Default 1. */
  processes?: number
  /** 'process' isolation: resident MB an engine may use before it is killed and replaced. Default: room for every worker's heap and buffers plus 1.5 GB. */
  processMemoryLimitMb?: number
  /** 'process' isolation: ms between pings to each engine. Default 1 000. */
  heartbeatIntervalMs?: number
  /** 'process' isolation: an engine silent this long (ms) is killed and replaced. Default 10 000. */
  heartbeatTimeoutMs?: number
  /** Retained isolates (retainHandles) alive at once; beyond it a run completes without a handle. Default 64. */
  maxRetained?: number
  /** A retained isolate idle this long (ms) is disposed. Default 60 000. */
  retainedIdleMs?: number
  /** Nice value (0–19) of the worker threads: programs yield the CPU to the host. Default 10. */
  workerNice?: number
  /** Worker threads (per engine process), each running one isolate at a time. Default: available parallelism. */
  workers?: number
  /** Runs waiting for a worker; one more rejects at once with ERR_QUEUE_FULL. Default 10 000. */
  maxQueue?: number
  /** Wall-clock budget of one run in ms, including time spent awaiting tools. Default 60 000. */
  timeout?: number
  /** V8 heap budget of one isolate in MB (16–16384); ArrayBuffer memory has the same budget. Default 128. */
  memoryLimitMb?: number
  /** Sandbox `fetch` goes to this handler; omitted or null: fetch rejects (no network). */
  globalOutbound?: OutboundHandler | null
  /** Extra ES modules loadable with dynamic `import(specifier)`; the key `executor.js` is ignored. */
  modules?: Record<string, string>
  /** Message bounds; a breach ends the run with an `error` naming the bound. */
  limits?: {
    /** Bytes of one tool call's argument JSON. Default 8 MiB. */
    maxArgsBytes?: number
    /** Bytes of one dispatch reply. Default 32 MiB. */
    maxReplyBytes?: number
    /** Bytes of the result's JSON. Default 32 MiB. */
    maxResultBytes?: number
    /** Console lines per run. Default 10 000. */
    maxLogLines?: number
    /** Bytes of all console lines of a run. Default 4 MiB. */
    maxLogBytes?: number
    /** Tool calls per run. Default 10 000. */
    maxToolCalls?: number
    /** Bytes of program source. Default 4 MiB. */
    maxCodeBytes?: number
  }
}

/** A provider: a global namespace in the sandbox whose listed tools are async functions. */
export interface NativeProvider {
  name: string
  tools: string[]
}

/**
 * Answers one tool call: `argsJson` is the JSON text of the argument array; the reply is the
 * JSON text `{"result": ...}` or `{"error": "message"}` (or a promise of it).
 */
export type Dispatch = (provider: string, tool: string, argsJson: string) => string | Promise<string>

export interface NativeExecuteRequest {
  /** An expression evaluating to a function (usually `async () => { ... }`), called with no arguments. */
  code: string
  providers?: NativeProvider[]
  dispatch?: Dispatch
  /** Overrides the executor's timeout for this run (ms). */
  timeout?: number
  /** Overrides the executor's memory limit for this run (MB). */
  memoryLimitMb?: number
  /** Overrides the executor's globalOutbound for this run; null refuses the network. */
  outbound?: OutboundHandler | null
  /** Keep the isolate after the run and return a `handle` for further code in the same global scope. */
  retainHandles?: boolean
}

/** A retained execution: further runs share its global scope, providers, dispatch and outbound. */
export interface ExecutionHandle {
  readonly id: number
  /** Runs more code in the retained isolate. Rejects with ERR_HANDLE_CLOSED once the handle is closed. */
  execute(code: string, options?: { timeout?: number }): Promise<NativeExecuteResult>
  /** Drops the isolate; resolves true if it was still alive. */
  dispose(): Promise<boolean>
}

export interface NativeExecuteResult {
  /** The program's value (JSON data); `undefined` when it returned nothing or failed. */
  result: unknown
  /** Present only when the program failed: its message, or the bound it broke. */
  error?: string
  /** Captured console lines; `warn` prefixed `[warn] `, `error` prefixed `[error] `. */
  logs: string[]
  timing: { queuedMs: number; runMs: number; totalMs: number }
  stats: { toolCalls: number; heapUsedBytes: number }
  /**
   * With retainHandles: the retained isolate. Absent when the run was ended by a bound (timeout,
   * memory) or maxRetained isolates are already retained.
   */
  handle?: ExecutionHandle
}

export interface ExecutorLimits {
  workers: number
  maxQueue: number
  timeout: number
  memoryLimitMb: number
  maxArgsBytes: number
  maxReplyBytes: number
  maxResultBytes: number
  maxLogLines: number
  maxLogBytes: number
  maxToolCalls: number
  maxCodeBytes: number
  /** Longest receiver a guarded Array.prototype method accepts (memory / 16 elements). */
  maxArrayLikeLength: number
  maxRetained: number
  retainedIdleMs: number
  isolation: 'process' | 'thread'
  processes: number
  processMemoryLimitMb: number
  heartbeatIntervalMs: number
  heartbeatTimeoutMs: number
  workerNice: number
}

export interface ExecutorStats {
  workers: number
  busy: number
  queued: number
  completed: number
  /** Runs whose worker panicked (rejected with ERR_WORKER_LOST). */
  lost: number
  /** Runs whose thread could not be stopped and was given up. */
  abandoned: number
  /** Workers started to replace lost or abandoned ones. */
  replaced: number
  isolatesCreated: number
  liveRuns: number
  /** Retained isolates alive now. */
  retained: number
  isolation: 'process' | 'thread'
  /** 'process' isolation: engine processes ready now (0 in 'thread'). */
  processes: number
  /** 'process' isolation: engine processes started and lost since the executor was created. */
  enginesStarted: number
  enginesLost: number
  /** 'process' isolation: set while engines keep failing to start. */
  crashLoop?: string
  /** 'process' isolation: the pids of the engine processes. */
  enginePids?: number[]
}

// ---- Cloudflare's executor contract (spec §2.1), for code written against @cloudflare/codemode ----

/** The outcome of the Cloudflare form: `error` only on failure; `logs` absent only for pre-flight errors. */
export interface ExecuteResult {
  result: unknown
  error?: string
  logs?: string[]
}

/** A provider: `name` becomes a global namespace; each fn is callable as `name.<sanitized key>(...)`. */
export interface ResolvedProvider {
  name: string
  fns: Record<string, (...args: any[]) => unknown>
  /** Sandbox-side JavaScript evaluated after the namespaces exist (own properties win over tools). */
  prelude?: string
}

/** A connector binding: `name.method(arg)` calls `binding.callTool(method, arg)`. */
export interface ConnectorBinding {
  name: string
  binding: { callTool(method: string, args: unknown): Promise<unknown> }
}

export interface ExecuteOptions {
  connectors?: ConnectorBinding[]
}

/** What @cloudflare/codemode's runtime and runCode call. */
export interface Executor {
  execute(code: string, providersOrFns: ResolvedProvider[] | Record<string, (...args: any[]) => unknown>, options?: ExecuteOptions): Promise<ExecuteResult>
}

/** An outbound handler: a function, or an object with `fetch` (the Fetcher shape). */
export type OutboundHandler = ((request: Request) => Response | Promise<Response>) | { fetch(request: Request): Response | Promise<Response> }

export declare class IsolateExecutor implements Executor {
  constructor(options?: IsolateExecutorOptions)
  /**
   * Cloudflare form (drop-in for DynamicWorkerExecutor): the code is normalized, providers are
   * validated with Cloudflare's messages, and the result keeps structured-clone fidelity.
   * Never rejects for anything the program does; machinery faults reject with a `code`.
   */
  execute(code: string, providersOrFns: ResolvedProvider[] | Record<string, (...args: any[]) => unknown>, options?: ExecuteOptions): Promise<ExecuteResult>
  /** Native form: tool calls reach `dispatch` as JSON text. Rejects only for machinery faults (see ErrorCodes). */
  execute(request: NativeExecuteRequest): Promise<NativeExecuteResult>
  readonly limits: ExecutorLimits
  stats(): ExecutorStats
  /** Queued runs reject with ERR_DISPOSED; started runs finish; later calls reject with ERR_DISPOSED. */
  dispose(): Promise<void>
}

export declare const ErrorCodes: {
  readonly QUEUE_FULL: 'ERR_QUEUE_FULL'
  readonly DISPOSED: 'ERR_DISPOSED'
  readonly WORKER_LOST: 'ERR_WORKER_LOST'
  readonly INVALID_ARGUMENT: 'ERR_INVALID_ARGUMENT'
  readonly HANDLE_CLOSED: 'ERR_HANDLE_CLOSED'
}

export declare class CodemodeExecutorError extends Error {
  readonly code: 'ERR_QUEUE_FULL' | 'ERR_DISPOSED' | 'ERR_WORKER_LOST' | 'ERR_INVALID_ARGUMENT' | 'ERR_HANDLE_CLOSED'
}

/** Turns raw model output (fences, bare expressions, statement blocks) into an async arrow function source. */
export declare function normalizeCode(code: string): string
/** The identifier a host tool name is called by in the sandbox (`get-weather` → `get_weather`). */
export declare function sanitizeToolName(name: string): string
/** Cloudflare's runCode: normalize, execute, throw `Code execution failed: ...` on error. */
export declare function runCode(options: {
  code: string
  executor: Executor
  providers: ResolvedProvider[]
  connectors?: ConnectorBinding[]
}): Promise<{ result: unknown; logs?: string[] }>
/** `type <typeName> = ...` for a JSON Schema. */
export declare function jsonSchemaToType(schema: unknown, typeName: string): string
/** The `declare const codemode: { ... }` block the model reads, from tool schemas. */
export declare function generateTypesFromJsonSchema(tools: Record<string, { description?: string; inputSchema: unknown; outputSchema?: unknown }>): string
/** Options of the truncation helpers: a token budget (4 characters a token) or an explicit character budget. */
export interface TruncateOptions {
  /** Default 6 000. */
  maxTokens?: number
  /** Default maxTokens × 4 (24 000). */
  maxChars?: number
}
/** Cuts a long text to the budget and says so (`--- TRUNCATED ---`). */
export declare function truncateResponse(text: string, options?: TruncateOptions): string
/** Shrinks a value structurally so its JSON fits the budget; returns the same reference when it already fits. */
export declare function truncateResult<T>(value: T, options?: TruncateOptions): T | unknown
