// Types of `@supolka/codemode-executor/ai`: Cloudflare's `@cloudflare/codemode/ai` on Node.
import type { Tool, ToolSet } from 'ai'
import type { Executor } from '../index'
export { ToolSetConnector, toolSetConnector } from '../index'

/** Tools to expose to programs: an AI SDK ToolSet (tools with `needsApproval` are left out). */
export type CodeToolTools = ToolSet | Record<string, Tool<any, any>>

/** A namespace of tools: `codemode` unless named; `types` replaces the generated declarations. */
export interface ToolProvider {
  name?: string
  tools: CodeToolTools
  types?: string
}

/** A provider ready for `executor.execute(code, [provider])`. */
export interface ResolvedProvider {
  name: string
  fns: Record<string, (args: unknown) => Promise<unknown>>
}

export interface CreateCodeToolOptions {
  /** A ToolSet (the `codemode` namespace) or providers (`aiTools(set)`, `{ name, tools }`). */
  tools: CodeToolTools | ToolProvider[]
  executor: Executor
  /** Replaces the default description; `{{types}}` is replaced by the generated declarations. */
  description?: string
}

/** The code tool's input. */
export interface CodeToolInput {
  code: string
}
/** The code tool's output: the program's result, and its console lines when there were any. */
export interface CodeToolOutput {
  result: unknown
  logs?: string[]
}

/**
 * The AI SDK tool that runs model-written code against the tools: its description carries the
 * generated TypeScript declarations; `execute({ code })` throws `Code execution failed: …`.
 */
export declare function createCodeTool(options: CreateCodeToolOptions): Tool<CodeToolInput, CodeToolOutput>
export interface CodeModeToolOptions {
  executor: Executor
  /** Replaces the default description; `{{types}}` is replaced by the bound tools' declarations. */
  description?: string
}
/**
 * AI SDK 7's code mode on this engine: a tool caller for `generateText({ experimental_toolCallers })`;
 * programs call the bound tools as `tools.<name>(input)`, and the AI SDK's abortSignal cancels the run.
 * Needs AI SDK 7 (`experimental_toolCaller`): with AI SDK 6, or without an executor, it throws
 * `ERR_INVALID_ARGUMENT`.
 */
export declare function codeModeTool(options: CodeModeToolOptions): Tool<CodeToolInput, CodeToolOutput>
/** A ToolSet under the default `codemode` namespace. */
export declare function aiTools(tools: CodeToolTools): ToolProvider
/** Drops `needsApproval` tools and wraps each execute with validation by its input schema. */
export declare function resolveProvider(provider: ToolProvider): ResolvedProvider
/** TypeScript declarations of a ToolSet for a model: `declare const <namespace>: { … }`. */
export declare function generateTypes(tools: CodeToolTools, namespace?: string): string
