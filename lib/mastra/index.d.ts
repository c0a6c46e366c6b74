// Types of `@supolka/codemode-executor/mastra`: this engine as a Mastra Code Mode transport.
// The shapes are `@mastra/core/tools`' CodeModeTransport contract, written out here so this
// module needs no Mastra package to type-check.
import type { IsolateExecutor } from '../index'

export interface MastraCodeModeResult {
  success: boolean
  result?: unknown
  /** Console lines (log, info, warn, error), the message alone, in order. */
  logs?: string[]
  /**
   * `name`: `SyntaxError`, `TimeoutError`, `MemoryLimitError`, `LimitError`, `UnsettleableError`,
   * `AbortError`, `ExecutorError` or `Error`; `line`: the program's line the error names.
   */
  error?: { message: string; name?: string; line?: number }
}

export interface MastraCodeModeRunOptions {
  /** Unused: the program runs in the executor's isolates. */
  sandbox?: unknown
  /** The program: the body of an async function (JavaScript or TypeScript). */
  program: string
  /** Each is `external_<id>` in the program (characters an identifier cannot hold made `_`). */
  toolIds: string[]
  dispatch: (tool: string, args: unknown) => Promise<unknown>
  /** The run's time bound (ms). */
  timeout: number
  /** Cancels the run: it ends at once, answering `AbortError`. */
  abortSignal?: AbortSignal
  onExternalCall?: (tool: string, args: unknown) => void
  onExternalResult?: (tool: string, durationMs: number, error?: unknown) => void
}

export interface IsolateCodeModeTransportOptions {
  executor: IsolateExecutor
  /** Each program's memory bound (MB); default the executor's. */
  memoryLimitMb?: number
}

/** A transport for `createCodeMode({ tools }, transport)` of `@mastra/core/tools`. */
export declare class IsolateCodeModeTransport {
  constructor(options: IsolateCodeModeTransportOptions)
  /** Always false: no workspace sandbox is needed. */
  readonly requiresSandbox: boolean
  run(options: MastraCodeModeRunOptions): Promise<MastraCodeModeResult>
}
