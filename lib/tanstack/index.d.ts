// Types of `@supolka/codemode-executor/tanstack`: this engine as a TanStack AI code-mode isolate
// driver. The shapes are `@tanstack/ai-code-mode`'s IsolateDriver contract, written out here so
// this module needs no TanStack package to type-check.
import type { IsolateExecutor } from '../index'

/** A tool as the code-mode tool hands it to a driver: called by `name` in the program. */
export interface TanStackToolBinding {
  name: string
  description: string
  inputSchema: Record<string, unknown>
  outputSchema?: Record<string, unknown> | undefined
  /** Called with the program's input alone (TanStack's event context is not passed on). */
  execute: (args: unknown) => Promise<unknown>
}

export interface TanStackIsolateConfig {
  /** Each binding is a function of that name in the program, taking one input object. */
  bindings: Record<string, TanStackToolBinding>
  /** This context's runs' time bound (ms). */
  timeout?: number
  /** This context's runs' memory bound (MB). */
  memoryLimit?: number
}

export interface TanStackNormalizedError {
  /** `SyntaxError`, `TimeoutError`, `MemoryLimitError`, `LimitError`, `UnsettleableError`, `ExecutorError`, `DisposedError` or `Error`. */
  name: string
  message: string
  stack?: string
  /** What ended the run (`timeout`, `memory`, `syntax`, `program`, …), the bound's option name for `LimitError`, or the executor's error code for `ExecutorError`. */
  code?: string
}

export interface TanStackExecutionResult<T = unknown> {
  success: boolean
  value?: T
  error?: TanStackNormalizedError
  /** Console lines; `console.error` lines start `ERROR: `, `console.warn` lines `WARN: `. */
  logs?: string[]
}

export interface TanStackIsolateContext {
  /** Runs `code`, the body of an async function, in a fresh isolate of the executor. */
  execute<T = unknown>(code: string): Promise<TanStackExecutionResult<T>>
  dispose(): Promise<void>
}

export interface TanStackIsolateDriver {
  createContext(config: TanStackIsolateConfig): Promise<TanStackIsolateContext>
}

export interface CreateIsolateDriverOptions {
  executor: IsolateExecutor
  /** The time bound (ms) of a context whose config names none; default the executor's. */
  timeout?: number
  /** The memory bound (MB) of a context whose config names none; default the executor's. */
  memoryLimit?: number
}

/** An isolate driver for `createCodeModeTool({ driver, tools })` of `@tanstack/ai-code-mode`. */
export declare function createIsolateDriver(options: CreateIsolateDriverOptions): TanStackIsolateDriver
