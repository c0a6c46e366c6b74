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
  /** 'process' isolation: resident memory (MiB) an engine may use before it is killed and replaced. Default: derived, (workers + overflowWorkers + min(maxRetained, workers)) × 2 × memoryLimitMb (each thread's heap and ArrayBuffers), plus codeCacheMb, plus 1 536 MiB. */
  processMemoryLimitMb?: number
  /** 'process' isolation: ms between pings to each engine. Default 1 000. */
  heartbeatIntervalMs?: number
  /** 'process' isolation: an engine silent this long (ms) is killed and replaced. Default 10 000. */
  heartbeatTimeoutMs?: number
  /** Retained isolates (retainHandles) alive at once (per engine process in 'process' isolation); beyond it a run completes without a handle. Default 64. */
  maxRetained?: number
  /** A retained isolate idle this long (ms) is disposed. Default 60 000. */
  retainedIdleMs?: number
  /** Nice value (0–19) of the worker threads. Default 0 (the host's own); a run that has used 100 ms of CPU drops to 10. */
  workerNice?: number
  /** Worker threads (per engine process), each running one isolate at a time. Default: available parallelism. */
  workers?: number
  /**
   * Extra worker threads (per engine process) started for waiting runs while every worker has
   * held its run for 250 ms (runaways, slow tools); the long runs drop to the lowest priority,
   * and an extra worker leaves after 1 s idle. Each can hold a run's memory. Default 8.
   */
  overflowWorkers?: number
  /**
   * The most standby threads (per engine process): threads the pool starts on demand, each
   * holding a warm isolate for the next run, so a worker that has answered hands its place on
   * at once instead of making the next run wait while it builds its next isolate. One starts
   * when a run waits for an isolate while a core is free; one that waits 1 s unused leaves.
   * They add no concurrency: at most `workers` runs at once (plus overflow workers). About
   * 2 MB each while waiting; see the bounds guide. Default 4; 0 turns them off.
   */
  standbyIsolates?: number
  /** Runs waiting for a worker; one more rejects at once with ERR_QUEUE_FULL. Default 10 000. */
  maxQueue?: number
  /** Wall-clock budget of one run in ms, including time spent awaiting tools. Default 60 000. */
  timeout?: number
  /** CPU time of one run in ms, on its own thread (time awaiting tools is not billed). Default 10 000. */
  cpuTimeMs?: number
  /** V8 heap budget of one isolate in MiB (16–16384); ArrayBuffer memory has the same budget. Default 128. */
  memoryLimitMb?: number
  /** Sandbox `fetch` goes to this handler; omitted or null: fetch rejects (no network). */
  globalOutbound?: OutboundHandler | null
  /** Extra ES modules loadable with dynamic `import(specifier)` (and statically from a module program); the key `executor.js` is ignored. */
  modules?: Record<string, string>
  /**
   * Secrets a program may name as `{{secret:NAME}}` in a `fetch` URL's query, headers or body:
   * the host substitutes the value only for the secret's `hosts` (exact, or `*.` for
   * subdomains) over https, refuses any other host, and redacts the value from everything that
   * comes back. The value never enters the isolate.
   */
  secrets?: Secrets
  /**
   * Programs may be TypeScript: types are stripped (off this thread) before compiling, keeping
   * positions in errors those of the program as written. `false` compiles them as JavaScript.
   * Default true.
   */
  typescript?: boolean
  /**
   * Every run's events (`run.queued`, `tool.started`, …; docs/guides/observability.md), in
   * order, on your event loop; what it throws is ignored. A run's own `onEvent` gets them too.
   */
  onEvent?: OnEvent
  /**
   * With `@opentelemetry/api` installed and a tracer provider registered: each run is a span
   * (`codemode.execute`, child of the context active at `execute()`) and each tool call a child
   * span (`execute_tool provider.tool`). `false` makes no spans. Default true.
   */
  tracing?: boolean
  /** MB of compiled programs kept between runs (per executor in 'thread', per engine process in 'process'); 0 keeps none. Default 32. */
  codeCacheMb?: number
  /**
   * npm packages programs may import (`import { z } from 'zod'`, `import('date-fns/format')`),
   * resolved in the node_modules of `packagesFrom` and bundled with esbuild into ES modules for
   * the isolate (no Node built-ins). Another bare import is refused, naming the package.
   */
  packages?: string[]
  /** The directory whose node_modules holds `packages`. Default: the working directory. */
  packagesFrom?: string
  /** Time the host may take to bundle one package, in ms. Default 30 000. */
  packageBuildTimeoutMs?: number
  /** MiB of package bundles kept between runs (0: none). Default 64. */
  packageCacheMb?: number
  /** Cloudflare's Worker Loader binding: accepted and ignored (the isolate pool replaces it). */
  loader?: unknown
  /** Cloudflare's extra `env` bindings: accepted and ignored (programs never see `env`). */
  bindings?: Record<string, unknown>
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
    /** Tool calls of one run awaiting replies at once (beyond it the run ends). Default 500. */
    maxToolCallsInFlight?: number
    /** Bytes of program source. Default 4 MiB. */
    maxCodeBytes?: number
    /** Bytes of the bundle of one allowed npm package (`packages`); a larger one is refused. Default 8 MiB. */
    maxPackageBytes?: number
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

/** A console line as `onLog` receives it, with the run it came from. */
export interface LogLineInfo {
  level: 'log' | 'warn' | 'error'
  runId: number
}

/**
 * Each console line of the run as it happens (the same lines as `logs`, same bounds), in order,
 * all of them before the run's promise settles. It runs on your event loop and never stalls the
 * program: lines queue while it is busy (at most the run's `maxLogLines` / `maxLogBytes`).
 * What it throws is ignored.
 */
export type OnLog = (line: string, info: LogLineInfo) => void

/** A secret for fetch: its value (or a function resolving it per request) and the hosts it may go to. */
export interface Secret {
  value: string | ((info: { name: string; host: string }) => string | Promise<string>)
  /** Host names such as `api.github.com`, or `*.example.com` for its subdomains. */
  hosts: string[]
}
export type Secrets = Record<string, Secret>
// ---- Events (lib/events.js; docs/guides/observability.md) ----

/** A run was handed to the pool (`runId` is undefined for a run refused before it, by `maxCodeBytes`). */
export interface RunQueuedEvent { type: 'run.queued'; at: number; runId?: number; executionId?: string }
/**
 * The run is running: delivered with the first thing the host hears of it (a tool call, a
 * console line, or its report; then `at` is the queue time plus the queue phase).
 */
export interface RunStartedEvent { type: 'run.started'; at: number; runId?: number; executionId?: string }
/**
 * The run ended. `outcome`: `completed`; `error` (the program failed: `error`, `errorKind`,
 * `errorBound` as in the result); `aborted` (its signal); `fault` (a machinery fault: `code`).
 */
export interface RunEndedEvent {
  type: 'run.ended'
  at: number
  runId?: number
  executionId?: string
  outcome: 'completed' | 'error' | 'aborted' | 'fault'
  error?: string
  errorKind?: ErrorKind
  errorBound?: string
  /** A machinery fault's code (`ERR_WORKER_LOST`, …). */
  code?: string
  /** Absent for a fault that came without a report. */
  timing?: RunTiming
  stats?: RunStats
}
/** A tool call reached the host; delivered right after its dispatch was called. `provider` is `#outbound` for `fetch`. */
export interface ToolStartedEvent {
  type: 'tool.started'; at: number; runId: number; executionId?: string; callId: number
  provider: string; tool: string
  /** Bytes of the arguments' JSON text. */
  argsBytes: number
}
/** The reply went back to the program. */
export interface ToolEndedEvent {
  type: 'tool.ended'; at: number; runId: number; executionId?: string; callId: number
  provider: string; tool: string; argsBytes: number
  /** Bytes of the reply's JSON text. */
  replyBytes: number
  /** From the call reaching the host to its reply. */
  durationMs: number
  /** The call failed: what the dispatch threw, or the error its reply carried. */
  error?: string
  /** A durable run's call that waits for approval (the run pauses). */
  paused?: boolean
  /** The run ended while awaiting this call (a timeout, an abort): ended with the run, `replyBytes` 0. */
  unanswered?: boolean
}
/** A console line (the same lines as `logs` and `onLog`). */
export interface LogEvent { type: 'log'; at: number; runId: number; executionId?: string; level: 'log' | 'warn' | 'error'; line: string }
/** The durable runtime's events (createCodemodeRuntime({ onEvent })), each naming its execution. */
export interface ExecutionPausedEvent {
  type: 'execution.paused'; at: number; executionId: string
  /** What awaits approval (seq, connector, method; `kind: 'program'` for a gated program). */
  pending: { seq: number; connector?: string; method?: string; kind?: string }[]
}
export interface ExecutionApprovedEvent { type: 'execution.approved'; at: number; executionId: string; seq?: number }
export interface ExecutionRejectedEvent { type: 'execution.rejected'; at: number; executionId: string; seq: number }
export interface ExecutionRolledBackEvent { type: 'execution.rolledBack'; at: number; executionId: string; reverted: number; leftInForce: number; error?: string }
export interface ExecutionCompletedEvent { type: 'execution.completed'; at: number; executionId: string }
export interface ExecutionFailedEvent { type: 'execution.failed'; at: number; executionId: string; error: string }

/** What `onEvent` receives; `at` is epoch ms. */
export type CodemodeEvent =
  | RunQueuedEvent | RunStartedEvent | RunEndedEvent | ToolStartedEvent | ToolEndedEvent | LogEvent
  | ExecutionPausedEvent | ExecutionApprovedEvent | ExecutionRejectedEvent | ExecutionRolledBackEvent
  | ExecutionCompletedEvent | ExecutionFailedEvent

/**
 * Receives a run's events in order, on your event loop, all of them before the run's promise
 * settles; never stalls the program. What it throws (or a promise it returns rejects with) is ignored.
 */
export type OnEvent = (event: CodemodeEvent) => void | Promise<void>

export interface NativeExecuteRequest {
  /**
   * The program: an expression evaluating to the entry function (`async (params) => { ... }`),
   * or an ES module whose default export is it (`export default async function main(params) { ... }`,
   * which may `import` the executor's `modules`). JavaScript or TypeScript.
   */
  code: string
  /** JSON data the entry function is called with (cloned in; bounded by `limits.maxArgsBytes`). */
  params?: unknown
  /** Each console line as it happens. */
  onLog?: OnLog
  /** This run's events (the executor's `onEvent` gets them too). */
  onEvent?: OnEvent
  /** The global namespaces of the run, each with the names of its tools. Default none. */
  providers?: NativeProvider[]
  /** Answers the program's tool calls. Default: every call fails (`No dispatch function`). */
  dispatch?: Dispatch
  /** Overrides the executor's timeout for this run (ms). */
  timeout?: number
  /** Overrides the executor's memory limit for this run (MiB). */
  memoryLimitMb?: number
  /** Overrides the executor's globalOutbound for this run; null refuses the network. */
  outbound?: OutboundHandler | null
  /** This run's secrets, over the executor's (by name). */
  secrets?: Secrets
  /** Keep the isolate after the run and return a `handle` for further code in the same global scope. */
  retainHandles?: boolean
  /**
   * Cancels the run: queued, awaiting or busy, it ends at once (its isolate is discarded) and
   * the promise rejects with `signal.reason`, as fetch() does. An aborted signal never starts it.
   */
  signal?: AbortSignal
}

/** A retained execution: further runs share its global scope, providers, dispatch and outbound. */
export interface ExecutionHandle {
  readonly id: number
  /** Runs more code in the retained isolate. Rejects with ERR_HANDLE_CLOSED once the handle is closed. */
  execute(code: string, options?: { timeout?: number; signal?: AbortSignal; params?: unknown; onLog?: OnLog; onEvent?: OnEvent }): Promise<NativeExecuteResult>
  /** Drops the isolate; resolves true if it was still alive. */
  dispose(): Promise<boolean>
  /** `await using handle = out.handle!`: the isolate is dropped when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>
  /** `using handle = out.handle!`: the same, synchronously. */
  [Symbol.dispose](): void
}

/** One phase of a run's time, in order: queue, isolate, compile, run, toolWait. They add up to `totalMs`. */
export interface TimingPhase {
  name: 'queue' | 'isolate' | 'compile' | 'run' | 'toolWait'
  durationMs: number
}

/** Where one run's time went (`result.timing`). */
export interface RunTiming {
  /** Milliseconds from the run entering the pool's queue to a worker taking it. */
  queuedMs: number
  /** Milliseconds from a worker taking the run to its report: isolate, compile, run and tool waits. */
  runMs: number
  /** Milliseconds from the run entering the pool's queue to its report (`queuedMs` + `runMs`). */
  totalMs: number
  /** The same time split into phases, in order; they add up to `totalMs` (`toolWait`: awaiting your dispatch; `compile`: stripping and compiling, or the code cache). */
  phases: TimingPhase[]
}

/** What one run used (`result.stats`). */
export interface RunStats {
  /** Tool calls the program made. */
  toolCalls: number
  /** Bytes of the isolate's V8 heap in use when the run ended. */
  heapUsedBytes: number
  /** CPU time of the run's own thread, in milliseconds (what `cpuTimeMs` bounds). */
  cpuMs: number
  /** The compiled program came from the code cache (`codeCacheMb`). */
  codeCacheHit: boolean
}

/**
 * What ended a failed run: `syntax` (does not compile), `program` (threw or rejected), `timeout`
 * (wall clock), `memory` (`memoryLimitMb`), `bound` (another bound, named in `errorBound`),
 * `unsettleable` (awaits what nothing can settle). A run cancelled through its `signal` is not
 * among them: it rejects with the signal's reason instead of resolving.
 */
export type ErrorKind = 'syntax' | 'program' | 'timeout' | 'memory' | 'bound' | 'unsettleable'

export interface NativeExecuteResult {
  /** The program's value (JSON data); `undefined` when it returned nothing or failed. */
  result: unknown
  /** Present only when the program failed: its message, or the bound it broke. */
  error?: string
  /** With `error`: what ended the run, decided where it happened (never read from the message). */
  errorKind?: ErrorKind
  /** With `errorKind: "bound"`: the bound's option name (`maxToolCalls`, `cpuTimeMs`, …). */
  errorBound?: string
  /** Captured console lines; `warn` prefixed `[warn] `, `error` prefixed `[error] `. */
  logs: string[]
  /** Where the time went (see RunTiming). */
  timing: RunTiming
  /** What the run used (see RunStats). */
  stats: RunStats
  /**
   * With retainHandles: the retained isolate. Absent when the run was ended by a bound (timeout,
   * memory) or maxRetained isolates are already retained.
   */
  handle?: ExecutionHandle
}

/** Every bound in force (the defaults with the executor's options applied, derived ones included) and the isolation mode. */
export interface ExecutorBounds {
  workers: number
  overflowWorkers: number
  standbyIsolates: number
  maxQueue: number
  timeout: number
  cpuTimeMs: number
  memoryLimitMb: number
  maxArgsBytes: number
  maxReplyBytes: number
  maxResultBytes: number
  maxLogLines: number
  maxLogBytes: number
  maxToolCalls: number
  maxToolCallsInFlight: number
  maxCodeBytes: number
  /** Longest receiver a guarded Array.prototype method accepts (memory / 16 elements). */
  maxArrayLikeLength: number
  maxRetained: number
  retainedIdleMs: number
  codeCacheMb: number
  isolation: 'process' | 'thread'
  processes: number
  processMemoryLimitMb: number
  heartbeatIntervalMs: number
  heartbeatTimeoutMs: number
  workerNice: number
  maxPackageBytes: number
  packageBuildTimeoutMs: number
  packageCacheMb: number
}
/** @deprecated The old name of `ExecutorBounds`. */
export type ExecutorLimits = ExecutorBounds

/** `executor.stats()`: the pool's counters now (engine-side counters lag by up to one heartbeat). */
export interface ExecutorStats {
  /** Worker threads serving runs: in 'process', `workers` × engines serving or starting; in 'thread', live worker threads, extra ones included. */
  workers: number
  /** Runs a worker (or engine) holds now. */
  busy: number
  /** Runs waiting: the host's queue plus the engines'. */
  queued: number
  /** Runs answered with an outcome (a program's own error included). */
  completed: number
  /** Runs rejected with ERR_WORKER_LOST: their worker panicked, or their engine process died. */
  lost: number
  /** Runs the watchdog answered because their thread could not be stopped (the thread was given up). */
  abandoned: number
  /** Worker threads started to replace lost or abandoned ones, plus (in 'process') engines lost. */
  replaced: number
  /** Isolates built, warm ones made ahead of demand included. */
  isolatesCreated: number
  /** Runs accepted and not answered; in 'process', the runs engines hold. */
  liveRuns: number
  /** Retained isolates alive now. */
  retained: number
  /** The executor's isolation. */
  isolation: 'process' | 'thread'
  /** 'process' isolation: engine processes ready and not retiring (0 in 'thread'). */
  processes: number
  /** 'process' isolation: engine processes started since the executor was created (failed starts included). */
  enginesStarted: number
  /** 'process' isolation: engine processes that died or were killed. */
  enginesLost: number
  /** 'process' isolation: engines drained and replaced after giving up a thread they could not stop. */
  enginesRetired: number
  /** 'process' isolation: frames the engines sent (0 in 'thread'). */
  engineFrames: number
  /**
   * 'process' isolation: of `engineFrames`, those the host's event loop read itself (on Node;
   * the rest went through the engines' reader threads, which read what the loop leaves waiting
   * for 10-20 ms while it is busy, and all of it off Node). 0 in 'thread'.
   */
  engineFramesOnLoop: number
  /** 'process' isolation: set while engines keep failing to start. */
  crashLoop?: string
  /** 'process' isolation: the pids of the engine processes. */
  enginePids?: number[]
}

// ---- Cloudflare's executor contract (docs/cloudflare-compat.md §2.1), for code written against @cloudflare/codemode ----

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
  /** Connector bindings: `name.method(arg)` in the program calls `binding.callTool(method, arg)`. */
  connectors?: ConnectorBinding[]
  /** Not in Cloudflare's form: cancels the run (the promise rejects with `signal.reason`). */
  signal?: AbortSignal
  /** Not in Cloudflare's form: JSON data a module program's default export (or the function) is called with. */
  params?: unknown
  /** Not in Cloudflare's form: each console line as it happens. */
  onLog?: OnLog
  /** Not in Cloudflare's form: this run's secrets for fetch, over the executor's (by name). */
  secrets?: Secrets
  /** Not in Cloudflare's form: this run's events. */
  onEvent?: OnEvent
  /**
   * Not in Cloudflare's form: time and randomness that repeat (the durable runtime sets it on
   * every pass). The program's clock starts at `start` (ms since the epoch) and moves only when a
   * connector reply carrying its recorded time reaches it; `Math.random()` and `crypto` random
   * values come from a stream keyed by `seed` (16 to 128 hex digits).
   */
  replay?: { seed: string; start: number }
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
  /** Every bound in force, flat (top-level options and `limits` alike), and `isolation`. */
  readonly bounds: ExecutorBounds
  /** @deprecated The old name of `bounds` (which holds more than the `limits` option takes): still there, with a warning once per process. */
  readonly limits: ExecutorBounds
  stats(): ExecutorStats
  /** Queued runs reject with ERR_DISPOSED; started runs finish; later calls reject with ERR_DISPOSED. */
  dispose(): Promise<void>
  /** `await using executor = new IsolateExecutor()`: `dispose()` when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>
}

export declare const ErrorCodes: {
  readonly QUEUE_FULL: 'ERR_QUEUE_FULL'
  readonly DISPOSED: 'ERR_DISPOSED'
  readonly WORKER_LOST: 'ERR_WORKER_LOST'
  readonly INVALID_ARGUMENT: 'ERR_INVALID_ARGUMENT'
  readonly HANDLE_CLOSED: 'ERR_HANDLE_CLOSED'
  /** The durable runtime's store (a SQLite file, a PostgreSQL database) could not be read or written. */
  readonly STORE: 'ERR_STORE'
  /** The durable runtime's PostgreSQL database could not be reached or did not answer in time; nothing was written. */
  readonly STORE_UNAVAILABLE: 'ERR_STORE_UNAVAILABLE'
  /** The durable runtime's `rollback()` left a call in force (a revert failed, a call in doubt has no revert) or found the run held by a pass. */
  readonly ROLLBACK_INCOMPLETE: 'ERR_ROLLBACK_INCOMPLETE'
  /** A pass of a durable run would import another version of an allowed package than the run began with (an outcome's `interrupted`). */
  readonly PACKAGE_VERSION: 'ERR_PACKAGE_VERSION'
}

export declare class CodemodeExecutorError extends Error {
  readonly code: 'ERR_QUEUE_FULL' | 'ERR_DISPOSED' | 'ERR_WORKER_LOST' | 'ERR_INVALID_ARGUMENT' | 'ERR_HANDLE_CLOSED' | 'ERR_STORE' | 'ERR_STORE_UNAVAILABLE' | 'ERR_ROLLBACK_INCOMPLETE' | 'ERR_PACKAGE_VERSION'
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

// ---- The durable runtime (docs/cloudflare-compat.md §6–§11): createCodemodeRuntime, connectors, snippets ----

/** A JSON Schema object (Cloudflare types these as `JSONSchema7`). */
export type JSONSchema = { [key: string]: unknown }

/** Plain JSON data, as the model is given it (the AI SDK's `JSONValue`). */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue }

/** A tool's description for type generation and search. */
export interface JsonSchemaToolDescriptor {
  description?: string
  inputSchema: JSONSchema
  outputSchema?: JSONSchema
}
export type JsonSchemaToolDescriptors = Record<string, JsonSchemaToolDescriptor>

/** How the runtime treats calls of one tool (only tools that need either appear in `annotations`). */
export interface ToolAnnotations {
  /** The call pauses the run until the host approves it. */
  requiresApproval?: boolean
  /** `"reexecute"`: an ephemeral read — logged for sequencing, its result never stored, re-run on every replay. */
  replay?: 'log' | 'reexecute'
  /** Running the call twice with the same `idempotencyKey` has the effect of running it once. */
  idempotent?: boolean
}

/** Passed to a tool's `execute`/`revert`: which call this is, the same on every pass of the execution. */
export interface ToolExecuteContext {
  executionId: string
  /** The call's place in the execution's log. */
  seq: number
  /** `<executionId>:<seq>`: a retried call carries the key of its first attempt. */
  idempotencyKey: string
  /** Set for `revert` of a call in doubt: it may or may not have taken effect, and no result is known. */
  resultUnknown?: true
}

/** A terminal outcome, passed to `disposeExecution`. */
export type ExecutionEndStatus = 'completed' | 'error' | 'rejected' | 'rolled_back'
/** The outcome of one pass, passed to `onPassEnd` (a pass may end paused). */
export type PassEndStatus = ExecutionEndStatus | 'paused'

/** What a connector tells the runtime about itself (`connector.describe()`). */
export interface ConnectorDescription {
  name: string
  instructions?: string
  descriptors: JsonSchemaToolDescriptors
  annotations?: Record<string, ToolAnnotations>
}

/**
 * One connector tool: docs, schema, approval, execution and (optionally) how to undo it.
 * AI SDK tool objects are shape-compatible at run time (`parameters` is accepted as the schema;
 * a schema that is not JSON Schema, such as a zod object, is described as an open object).
 */
export interface ConnectorTool {
  description?: string
  /** JSON Schema of the input. Default: an open object. */
  inputSchema?: JSONSchema
  outputSchema?: JSONSchema
  /** Pause for the host's approval before executing. Not combinable with `replay: "reexecute"`. */
  requiresApproval?: boolean
  /** `"reexecute"` for idempotent reads whose results should stay out of the durable log. Default `"log"`. */
  replay?: 'log' | 'reexecute'
  /**
   * The tool applies a call once per `ctx.idempotencyKey`, however often it is run: a call left
   * in doubt by a crash is then retried by recovery with the same key, instead of pausing the
   * run for a person.
   */
  idempotent?: boolean
  execute: (args: any, ctx?: ToolExecuteContext) => unknown
  /** Compensation used by `runtime.rollback()`: undo an applied call, given its recorded args and result. */
  revert?: (args: any, result: any, ctx?: ToolExecuteContext) => unknown
}
/**
 * What `tools()` returns: connector tools, or AI SDK `tool()` objects as they are (their
 * `inputSchema` may be a zod or `jsonSchema()` schema; one without `execute` cannot be called).
 */
export type ConnectorTools = Record<string, ConnectorTool | ToolSetTool>

/**
 * Base class of connectors: implement `name()` and `tools()` (optionally `instructions()` and the
 * `tool(name, t)` decoration hook); the runtime uses only the derived surface. Cloudflare's
 * constructor is `(ctx, env)` (a WorkerEntrypoint); here both are optional and only stored.
 */
export declare abstract class CodemodeConnector<Env = unknown> {
  constructor(ctx?: unknown, env?: Env)
  protected ctx: unknown
  protected env: Env
  /** The namespace the sandbox sees (a JavaScript identifier; `codemode` is reserved). */
  abstract name(): string
  protected instructions(): string | undefined
  protected abstract tools(): ConnectorTools | Promise<ConnectorTools>
  /** Decoration hook, called once per tool (e.g. to mark a derived tool as requiring approval). */
  protected tool(name: string, t: ConnectorTool | ToolSetTool): ConnectorTool | ToolSetTool
  /** `tools()` resolved once per instance and passed through `tool(name, t)`. */
  protected resolvedTools(): Promise<ConnectorTools>
  describe(): Promise<ConnectorDescription>
  executeTool(method: string, args: unknown, ctx?: ToolExecuteContext): Promise<unknown>
  /** Whether a revert ran: `false` for a tool without `revert` (a read). */
  revertAction(method: string, args: unknown, result: unknown, ctx?: ToolExecuteContext): Promise<boolean>
  /** End of every pass, a pause included. Be idempotent; do not rely on instance memory. */
  onPassEnd(executionId: string, status: PassEndStatus): Promise<void>
  /** Every terminal transition (may fire twice: completed, then rolled back). Not on pause. */
  disposeExecution(executionId: string, status: ExecutionEndStatus): Promise<void>
  /** `declare const <name>: { ... }` for the connector's tools. */
  getTypeScriptTypes(): Promise<string>
}

/** What an MCP client's `callTool` resolves to. */
export interface CallToolResult {
  toolResult?: unknown
  isError?: boolean
  structuredContent?: unknown
  content?: Array<{ type: string; text?: string; [key: string]: unknown }>
}
/** An MCP tool, as listed by MCP SDK v1 and v2 clients. */
export interface McpTool {
  name: string
  description?: string
  inputSchema: JSONSchema
  outputSchema?: JSONSchema
  [key: string]: unknown
}
/** The structural MCP connection both MCP SDK clients satisfy. */
export interface McpConnectionLike {
  name?: string
  client: { callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<CallToolResult> }
  instructions?: string
  tools?: McpTool[]
  fetchTools?: () => Promise<McpTool[]>
}
/** A connector over one MCP connection: each MCP tool becomes a connector tool. */
export declare abstract class McpConnector<Env = unknown> extends CodemodeConnector<Env> {
  /** Called once per instance; the result is kept. */
  protected abstract createConnection(): McpConnectionLike | Promise<McpConnectionLike>
  /** The connector tool name of an MCP tool (sanitized by default). */
  protected toolName(tool: McpTool): string
  protected getConnection(): Promise<McpConnectionLike>
  protected fetchTools(): Promise<McpTool[]>
  describe(): Promise<ConnectorDescription>
  protected tools(): Promise<ConnectorTools>
}

/** What a derived OpenAPI tool hands `request()`: path parameters already substituted. */
export interface OpenApiRequestOptions {
  path: string
  method?: string
  params?: Record<string, unknown>
  body?: unknown
  headers?: Record<string, string>
}
/** A connector with one tool per OpenAPI operation, plus the `request` escape hatch. */
export declare abstract class OpenApiConnector<Env = unknown> extends CodemodeConnector<Env> {
  protected abstract spec(): Record<string, unknown> | Promise<Record<string, unknown>>
  protected abstract request(options: OpenApiRequestOptions): Promise<unknown>
  /** Also expose the document as a `spec` tool. Default false. */
  protected exposeSpec(): boolean
  protected tools(): Promise<ConnectorTools>
}

/** An AI SDK tool, structurally (the `ai` package is not a dependency). */
export interface ToolSetTool {
  description?: unknown
  inputSchema?: unknown
  parameters?: unknown
  outputSchema?: unknown
  /** `true` or a function: the call requires approval. */
  needsApproval?: unknown
  /** Tools without `execute` are skipped (with one warning). */
  execute?: (...args: any[]) => unknown
  [key: string]: unknown
}
/** An AI SDK `ToolSet`, structurally. */
export type ToolSet = Record<string, ToolSetTool>
export interface ToolSetConnectorOptions {
  /** The sandbox namespace. Default `"tools"`. */
  name?: string
  instructions?: string
  tools: ToolSet
}
/** An AI SDK ToolSet as a connector (Cloudflare's `@cloudflare/codemode/ai` entry). */
export declare class ToolSetConnector extends CodemodeConnector {
  constructor(ctx: unknown, options: ToolSetConnectorOptions)
  constructor(options: ToolSetConnectorOptions)
  name(): string
  protected instructions(): string | undefined
  protected tools(): Promise<ConnectorTools>
  getTypeScriptTypes(): Promise<string>
}
/** `new ToolSetConnector(options)` or `new ToolSetConnector(ctx, options)`. */
export declare function toolSetConnector(options: ToolSetConnectorOptions): ToolSetConnector
export declare function toolSetConnector(ctx: unknown, options: ToolSetConnectorOptions): ToolSetConnector

export type ToolLogEntryState = 'executing' | 'applied' | 'pending' | 'reverted' | 'error' | 'in_doubt'
/** One connector call or `codemode.step` of an execution (steps: `connector` is `"__step"`). */
export interface ToolLogEntry {
  seq: number
  connector: string
  method: string
  args: unknown
  /** The recorded result, once applied (never for ephemeral entries). */
  result?: unknown
  requiresApproval: boolean
  /** `true` only for `replay: "reexecute"` tools; otherwise absent. */
  ephemeral?: boolean
  state: ToolLogEntryState
  /** Why the last `rollback()` could not revert it, while its effect is or may be in force; otherwise absent. */
  revertError?: string
}
/** A call a `rollback()` could not revert: its effect is (or, `inDoubt`, may be) still in force. */
export interface LeftInForce {
  seq: number
  connector: string
  method: string
  /** Why: the revert's error, or that a call in doubt has no revert (or no connector here). */
  error: string
  /** The call was in doubt (its result unknown). */
  inDoubt?: true
}
export type ExecutionStatus = 'running' | 'paused' | 'completed' | 'error' | 'rejected' | 'rolled_back'
/** An execution as stored: its raw code, status and call log (indexed by `seq`; holes possible). */
export interface ExecutionState {
  /** `exec_<16-digit creation ms>_<uuid>`: ids sort by creation time. */
  id: string
  code: string
  status: ExecutionStatus
  log: ToolLogEntry[]
  result?: unknown
  error?: string
  logs?: string[]
  /** The connector names configured when it started. */
  connectors?: string[]
  /** Epoch ms. */
  createdAt: number
  /** Epoch ms of the last state change. */
  updatedAt: number
  /** The pass holding the run (`host/pid/id`) and until when (epoch ms); absent when none does. */
  owner?: string
  leaseUntil?: number
  idempotencyKey?: string
  /** What rollbacks left in force, newest first; absent when nothing (the status stays the contract's, `rolled_back` once one call was reverted). */
  leftInForce?: LeftInForce[]
}
/** A call awaiting a decision: an approval, or (with `inDoubt`) a person's word on a call in doubt. */
export interface PendingAction {
  /** `'program'`: the run's program itself, awaiting approval before it starts (`approveProgram`); absent for a call. */
  kind?: 'program'
  /** With `kind: 'program'`: the program's code (also `args.code`). */
  code?: string
  executionId: string
  seq: number
  connector: string
  method: string
  args: unknown
  /**
   * The pass that ran this call ended before recording it: it may or may not have taken effect.
   * `approve({ executionId, seq })` retries it; `markDone({ executionId, seq, result })` records
   * that it did.
   */
  inDoubt?: true
}

/** A saved script the sandbox can run with `codemode.run(name, input)`. */
export interface Snippet {
  name: string
  description: string
  /** The execution's raw code. */
  code: string
  /** Epoch ms. */
  savedAt: number
  /** JSON Schema of the input. */
  inputSchema?: unknown
  /** The connector names the source execution ran with. */
  connectors?: string[]
}
export interface SaveSnippetOptions {
  /** The execution whose code is saved (from the tool output or `executions()`). */
  executionId: string
  description?: string
  inputSchema?: unknown
}

export interface SearchResult {
  path: string
  connector: string
  method: string
  description?: string
  /** Present (true) only for methods that pause for approval. */
  requiresApproval?: boolean
  kind: 'method' | 'snippet'
  score: number
}
export interface SearchOutput {
  /** The best 50, by score. */
  results: SearchResult[]
  total: number
  truncated: boolean
}
export interface DescribeOutput {
  path: string
  description?: string
  requiresApproval?: boolean
  types: string
  /** `package`: an allowed npm package's specifier (the executor's `packages`), with its declarations. */
  kind: 'connector' | 'method' | 'snippet' | 'package'
  /** The installed version, for `kind: 'package'`. */
  version?: string
}

export interface ProxyToolInput {
  code: string
}
/** What a pass returns (the tool's `execute`, `execute()`, `approve()`): outcomes are returned, never thrown. */
export type ProxyToolOutput =
  | { status: 'completed'; executionId: string; result: unknown; logs?: string[]; calls?: ToolLogEntry[]; replayed?: true }
  | { status: 'paused'; executionId: string; pending: PendingAction[]; calls?: ToolLogEntry[]; inProgress?: true }
  /** `interrupted` (a fault code): the pass was cut short with the run still running; it was let go, and `recover()` takes it up. */
  | { status: 'error'; executionId: string; error: string; logs?: string[]; calls?: ToolLogEntry[]; interrupted?: string; replayed?: true }
  /** Only from `execute({ idempotencyKey })` while the keyed run is under way in another pass. */
  | { status: 'running'; executionId: string; calls?: ToolLogEntry[]; inProgress: true }

/** Reshapes a completed run's result for the model (the stored result keeps the raw value). */
export type TransformResult = (result: unknown) => unknown | Promise<unknown>

export interface StandardSchemaIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey>
}
/** The tool's input schema: a Standard Schema v1 (with Standard JSON Schema) for `{ code }`. */
export interface ProxyToolInputSchema {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: '@cloudflare/codemode'
    readonly types?: { readonly input: ProxyToolInput; readonly output: ProxyToolInput }
    readonly validate: (value: unknown) => { readonly value: ProxyToolInput } | { readonly issues: ReadonlyArray<StandardSchemaIssue> }
    readonly jsonSchema: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>
      readonly output: (options: { readonly target: string }) => Record<string, unknown>
    }
  }
}
/** The model-facing tool, in the AI SDK's shape (pass it to `tool()` or put it in `tools`). */
export interface CodemodeTool {
  description: string
  inputSchema: ProxyToolInputSchema
  /** The second argument (the AI SDK's call options) is ignored. */
  execute: (input: ProxyToolInput, options?: unknown) => Promise<ProxyToolOutput>
  /** What the model sees: the output without `calls`, `logs` truncated, as JSON. Never throws. */
  toModelOutput: (options: { output: unknown }) => { type: 'json'; value: JSONValue }
}

export interface CreateCodemodeRuntimeOptions {
  /** Runs each pass of a program (an IsolateExecutor, or any `Executor`). Required. */
  executor: Executor
  /** The connectors programs may call, each a global namespace of the program (names unique, not `codemode`). */
  connectors: CodemodeConnector<any>[]
  /**
   * Cloudflare's Durable Object state, accepted and ignored so that a runtime written for
   * Cloudflare compiles and runs unchanged: the store is `path` or `store` here.
   */
  ctx?: unknown
  /**
   * The SQLite file that holds executions, call logs and snippets. Default `.codemode/runtime.db`
   * under the working directory; `':memory:'` for a private store. Processes that open the same
   * file share the runtime: any of them can approve, reject, resume or roll back any run.
   */
  path?: string
  /**
   * A PostgreSQL database instead of a SQLite file, for hosts on several machines: a
   * `postgres://` URL, or the URL with settings. Not with `path` or `durability`. Nothing
   * connects until the first operation; a database that cannot be reached rejects operations
   * with `ERR_STORE_UNAVAILABLE` and interrupts a pass (`interrupted: 'ERR_STORE_UNAVAILABLE'`,
   * the run kept for `recover()`).
   */
  store?: string | PostgresStoreOptions
  /** The runtime's identity within the store, file or database (`^[a-zA-Z0-9_.-]+$`). Default `"default"`. */
  name?: string
  /** Terminal executions kept; older ones are pruned when a run begins. Default 50. */
  maxExecutions?: number
  /** Reshapes a completed run's result for the model; the stored result keeps the raw value. */
  transformResult?: TransformResult
  /**
   * How long a pass holds its run without renewing (it renews every third of this). A process
   * that dies leaves its runs to `recover()` after this at most; at once on the same host. Default 30 000.
   */
  leaseMs?: number
  /** Opt-in: call `recover()` this often (ms, at least 100); `close()` stops it. */
  recoverEveryMs?: number
  /** @deprecated The old name of `recoverEveryMs`: still taken, with a warning once per process. */
  recoverEvery?: number
  /**
   * `"normal"` (default): every committed change survives a crash of the process; a power loss
   * or OS crash may lose the last ones. `"full"`: a power loss too (each commit waits for the disk).
   */
  durability?: 'normal' | 'full'
  /**
   * A person approves each program before it runs (`true`), or the programs this function
   * picks (it gets the code and the connectors' names; `false` lets the program run, anything
   * else gates it, and so does a throw). A gated run starts `paused` before its first statement,
   * its program the pending action `{ kind: 'program', seq: 0, code, ... }`:
   * `approve({ executionId, seq: 0 })` runs it, `reject` ends it with nothing of it run. The gate
   * is stored with the run, so a restart or another process keeps it.
   */
  approveProgram?: boolean | ((run: { code: string; connectors: string[] }) => boolean | Promise<boolean>)
  /**
   * The runtime's events: `execution.paused` / `approved` / `rejected` / `rolledBack` /
   * `completed` / `failed`, and (with an IsolateExecutor) the run events of each pass, all
   * carrying `executionId`. What it throws is ignored.
   */
  onEvent?: OnEvent
}
export interface PostgresStoreOptions {
  /**
   * `postgres://user:password@host:port/database` (or `postgresql://`). With `?sslmode=require`
   * (or a `ca`) every connection uses TLS and the server's certificate is verified; otherwise
   * the connection is plain TCP.
   */
  url: string
  /** Connections the store may hold (each on a thread of its own). Default 4, 1–64. */
  maxConnections?: number
  /** How long connecting may take. Default 5 000 ms, 100–60 000. */
  connectTimeoutMs?: number
  /** How long one statement may run, waits for another host's lock included. Default 10 000 ms, 100–600 000. */
  statementTimeoutMs?: number
  /** A schema of its own for the store's tables, made when missing (letters, digits, `_`; at most 63). Default: the server's search_path. */
  schema?: string
  /** PEM certificates of the authorities to trust for the server's certificate, beside the public ones (a managed database's CA bundle); given, TLS is required. */
  ca?: string
}
export interface CodemodeRuntimeToolOptions {
  /** Replaces the default description (the hints are then ignored). */
  description?: string
  /** One-line hints shown next to each connector in the default description, by connector name. */
  connectorHints?: Record<string, string>
  /**
   * How a run that pauses for approval is answered. `'cloudflare'` (the default): `{ status:
   * 'paused', executionId, pending }`, and the host approves with `approve()`. `'ai-sdk'`: the tool
   * takes part in the AI SDK's approval flow (it gets `needsApproval`): the call gets a
   * `tool-approval-request`, and the SDK's `tool-approval-response` (useChat's
   * addToolApprovalResponse) continues the run or, declined, rejects it. See `CodemodeAiSdkTool`.
   */
  approvals?: 'cloudflare' | 'ai-sdk'
}
/** What an approval request of an `approvals: 'ai-sdk'` code tool asks for. */
export type CodemodeApprovalAction =
  | { kind: 'call'; seq: number; /** `namespace.method`, as the program calls it. */ tool: string; input: unknown; /** A call whose outcome a crash left unknown: approving retries it. */ inDoubt?: true }
  | { kind: 'program'; seq: 0; /** The program itself (createCodemodeRuntime({ approveProgram })). */ code: string }
/** `approvalDescriptor()`: the run, and what waits in it (the UI part's `approval.descriptor` via withApprovalDescriptors). */
export interface CodemodeApprovalDescriptor {
  executionId: string
  actions: CodemodeApprovalAction[]
}
/** `runtime.tool({ approvals: 'ai-sdk' })`: the tool in the AI SDK's approval flow. */
export interface CodemodeAiSdkTool extends Omit<CodemodeTool, 'execute'> {
  /** Runs the program up to its first pause (the run keyed by the call's toolCallId); true when it paused for a person. */
  needsApproval: (input: ProxyToolInput, options: { toolCallId: string; messages: unknown[] }) => Promise<boolean>
  /**
   * Continues the run when the SDK approved the call (and the action it asked about still waits);
   * a run that pauses again answers `{ status: 'paused', …, message }`, which asks the model to call
   * again with the same code for the next approval.
   */
  execute: (input: ProxyToolInput, options: { toolCallId: string; messages: unknown[] }) => Promise<ProxyToolOutput & { message?: string }>
  /** What the call's approval request is for; undefined when it asked for none. */
  approvalDescriptor(toolCallId: string): Promise<CodemodeApprovalDescriptor | undefined>
  /** Rejects the run awaiting the call's approval (a declined request); false when none awaits it. */
  decline(toolCallId: string): Promise<boolean>
}
export interface CodemodeApproveOptions {
  executionId: string
  /** The action the approver saw: refused (naming what waits now) when it is not the one waiting. Without it the approval is racy. */
  seq?: number
}
export interface CodemodeMarkDoneOptions {
  executionId: string
  seq: number
  /** What the call returned (replayed to the program when the run continues). */
  result?: unknown
}
export interface CodemodeExecuteInput extends ProxyToolInput {
  /** A retry with the same key starts nothing: it answers the recorded outcome (`replayed`), or `inProgress`. */
  idempotencyKey?: string
}
export interface CodemodeRejectOptions {
  seq: number
  executionId: string
}
export interface CodemodeRollbackOptions {
  executionId: string
}
/**
 * The fate of one call a `rollback()` found in force (applied, or in doubt): `'reverted'` (its
 * connector's `revert` undid it), `'no_revert'` (its tool has no `revert`: the effect stays in force;
 * a read has nothing to undo) or `'revert_failed'` (the revert threw, or its connector is not
 * configured here: the effect stays in force; `error` says why).
 */
export type RollbackFate = 'reverted' | 'no_revert' | 'revert_failed'
export interface RollbackCall {
  seq: number
  connector: string
  method: string
  fate: RollbackFate
  /** Why the revert failed (`'revert_failed'` only). */
  error?: string
  /** The call was in doubt (its result unknown). */
  inDoubt?: true
}
/** What `rollback()` did; an incomplete rollback throws instead, with these on the error. */
export interface CodemodeRollbackResult {
  /** Calls reverted. */
  reverted: number
  /** Calls it could not revert (empty when it resolves). */
  leftInForce: LeftInForce[]
  /**
   * Every call the rollback found in force, newest first, with its fate: what was reverted and what
   * remains (calls an earlier rollback reverted are not listed again). It resolves although calls
   * whose tool has no revert remain (Cloudflare's rule): read `calls` to know what stays in force.
   */
  calls: RollbackCall[]
}
export interface CodemodeExpireOptions {
  /** Default 86 400 000 (24 h). */
  maxAgeMs?: number
}

/** The durable runtime. No run lives in memory: every method addresses the store. */
export interface CodemodeRuntimeHandle {
  /** The AI SDK tool. */
  tool(options: CodemodeRuntimeToolOptions & { approvals: 'ai-sdk' }): CodemodeAiSdkTool
  tool(options?: CodemodeRuntimeToolOptions): CodemodeTool
  /** Runs code as a new durable execution (as the default tool's `execute`). */
  execute(input: CodemodeExecuteInput): Promise<ProxyToolOutput>
  /** Connector methods and snippets, ranked. */
  search(query: string): Promise<SearchOutput>
  /** TypeScript documentation of a connector, method or snippet. */
  describe(target: string): Promise<DescribeOutput>
  /** Calls awaiting approval: of one paused execution, or of every paused execution (newest first). */
  pending(executionId?: string): Promise<PendingAction[]>
  /** Approves the paused run's pending call (retries a call in doubt) and runs the next pass (earlier calls replay from the log). */
  approve(options: CodemodeApproveOptions): Promise<ProxyToolOutput>
  /** Records that the call in doubt at `seq` took effect; `approve` then continues the run. `false` when it is not in doubt. */
  markDone(options: CodemodeMarkDoneOptions): Promise<boolean>
  /** Runs again the runs no live process holds (their pass died); one outcome per run taken up. */
  recover(): Promise<ProxyToolOutput[]>
  /** Stops `recoverEveryMs`. */
  close(): void
  /** `using runtime = createCodemodeRuntime(...)`: `close()` when the scope ends. */
  [Symbol.dispose](): void
  /** `await using runtime = ...`: `close()` when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>
  /** Rejects the pending call, ending the run (`rejected`); `false` when it was no longer pending. Applied calls are not undone. */
  reject(options: CodemodeRejectOptions): Promise<boolean>
  /**
   * Reverts the run's calls that are or may be in force (applied, or in doubt), newest first, through
   * their connectors' `revert`, and marks it `rolled_back` when at least one was reverted. Throws after
   * trying all if any failed (or a call in doubt has no revert), with `reverted`, `leftInForce` and
   * `calls` on the error; the execution's `leftInForce` lists them too. `calls` gives every call's
   * fate, including those that stay in force because their tool has no revert. A run a pass holds
   * is refused.
   */
  rollback(options: CodemodeRollbackOptions): Promise<CodemodeRollbackResult>
  /** Ends paused (→ `rejected`) and orphaned running (→ `error`) runs not updated within `maxAgeMs`; returns their ids. Never a run a live pass holds. */
  expirePaused(options?: CodemodeExpireOptions): Promise<string[]>
  /** The audit trail, newest first. */
  executions(limit?: number): Promise<ExecutionState[]>
  execution(executionId: string): Promise<ExecutionState | undefined>
  /** Whether it existed. */
  deleteExecution(executionId: string): Promise<boolean>
  /** Deletes terminal executions beyond the newest `keep` (default 50); returns how many. */
  pruneExecutions(keep?: number): Promise<number>
  /** Saves the execution's code as a snippet (replacing one of the same name). */
  saveSnippet(name: string, options: SaveSnippetOptions): Promise<Snippet>
  /** By name. */
  snippets(): Promise<Snippet[]>
  /** Whether it existed. */
  deleteSnippet(name: string): Promise<boolean>
}

/**
 * The durable Code Mode runtime over a SQLite file (`path`) or a PostgreSQL database (`store`):
 * Cloudflare's `createCodemodeRuntime` with the store in place of the Durable Object's `ctx`
 * (which is accepted and ignored). Throws at once (`ERR_INVALID_ARGUMENT`) for a connector named
 * `codemode` or a repeated name; an invalid `name` throws so at the first method that touches the store.
 */
export declare function createCodemodeRuntime(options: CreateCodemodeRuntimeOptions): CodemodeRuntimeHandle

/** Terminal executions retained per runtime by default: 50. */
export declare const DEFAULT_MAX_EXECUTIONS: 50
/** The default age after which `expirePaused` ends a run: 86 400 000 ms (24 h). */
export declare const DEFAULT_PAUSED_TTL_MS: number
/** How long a pass holds its run without renewing, by default: 30 000 ms. */
export declare const DEFAULT_LEASE_MS: number
/** The cap (serialized string length) on any value recorded durably: 1 000 000. */
export declare const MAX_DURABLE_VALUE_BYTES: 1000000
