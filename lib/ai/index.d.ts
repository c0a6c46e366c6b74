// Types of `@supolka/codemode-executor/ai`: Cloudflare's `@cloudflare/codemode/ai` on Node.
import type { Tool, ToolSet } from 'ai'
import type { Executor, CreateCodemodeRuntimeOptions, CodemodeApprovalDescriptor, CodemodeApprovalAction } from '../index'
export { ToolSetConnector, toolSetConnector } from '../index'
export type { CodemodeApprovalDescriptor, CodemodeApprovalAction } from '../index'

/**
 * Tools to expose to programs: an AI SDK ToolSet. Tools with `needsApproval` are kept: a program
 * that calls one pauses durably and the code tool asks through the AI SDK's approval flow.
 */
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

/**
 * Where a code tool's durable runs live: createCodemodeRuntime's options without `executor` and
 * `connectors` (the code tool's own). Without it, runs of programs that need approval live in an
 * in-memory SQLite database of this process, which a restart loses.
 */
export type CodeToolRuntimeOptions = Omit<CreateCodemodeRuntimeOptions, 'executor' | 'connectors'>

export interface CreateCodeToolOptions {
  /** A ToolSet (the `codemode` namespace) or providers (`aiTools(set)`, `{ name, tools }`). */
  tools: CodeToolTools | ToolProvider[]
  executor: Executor
  /** Replaces the default description; `{{types}}` is replaced by the generated declarations. */
  description?: string
  /**
   * Runs every program durably in a runtime over this store (`{ path }` or `{ store }`, `name`,
   * `approveProgram`, …): paused runs outlive the process. Not a runtime handle: the code tool
   * makes its runtime, with its tools as connectors (for a runtime you made, use
   * `runtime.tool({ approvals: 'ai-sdk' })`).
   */
  runtime?: CodeToolRuntimeOptions
}

/** The code tool's input. */
export interface CodeToolInput {
  code: string
}
/**
 * The code tool's output: the program's result, and its console lines when there were any; or,
 * when the run stopped at another action that needs approval (after an approved one), what waits
 * and a message asking the model to call the tool again with the same code to ask for it.
 */
export type CodeToolOutput =
  | { result: unknown; logs?: string[] }
  | { status: 'paused'; executionId: string; pending: CodemodeApprovalAction[]; message: string }

/** The members a code tool with approvals has beside the AI SDK's. */
export interface CodeToolApprovals {
  /** What the call's approval request is for (the inner tool and its input, or the program); undefined when none. */
  approvalDescriptor?(toolCallId: string): Promise<CodemodeApprovalDescriptor | undefined>
  /** Rejects the run awaiting the call's approval (what a declined request does); false when none awaits it. */
  decline?(toolCallId: string): Promise<boolean>
}

/**
 * The AI SDK tool that runs model-written code against the tools: its description carries the
 * generated TypeScript declarations; `execute({ code })` throws `Code execution failed: …`. With
 * tools marked `needsApproval` (or `runtime`), programs run durably and the tool takes part in
 * the AI SDK's approval flow: it has `needsApproval`, `approvalDescriptor` and `decline`.
 */
export declare function createCodeTool(options: CreateCodeToolOptions): Tool<CodeToolInput, CodeToolOutput> & CodeToolApprovals
export interface CodeModeToolOptions {
  executor: Executor
  /** Replaces the default description; `{{types}}` is replaced by the bound tools' declarations. */
  description?: string
  /** Where the durable runs of programs that need approval live (default: in memory). */
  runtime?: CodeToolRuntimeOptions
  /** Tools a durable run may call before the AI SDK binds any (it continues an approved call from earlier messages with the unbound tool, as after a restart). */
  tools?: CodeToolTools
}
/**
 * AI SDK 7's code mode on this engine: a tool caller for `generateText({ experimental_toolCallers })`;
 * programs call the bound tools as `tools.<name>(input)`, and the AI SDK's abortSignal cancels the run.
 * Needs AI SDK 7 (`experimental_toolCaller`): with AI SDK 6, or without an executor, it throws
 * `ERR_INVALID_ARGUMENT`.
 */
export declare function codeModeTool(options: CodeModeToolOptions): Tool<CodeToolInput, CodeToolOutput> & CodeToolApprovals
/**
 * A response's UI message stream (`result.toUIMessageStream()`) with each code tool's approval
 * request carrying what it is for as the AI SDK's `approvalDescriptor` (`part.approval.descriptor`
 * in the UI), and each declined request's run rejected as the stream reports it. `tools`: the
 * ToolSet given to streamText.
 */
export declare function withApprovalDescriptors<T>(stream: ReadableStream<T>, tools: ToolSet | Record<string, unknown>): ReadableStream<T>
/** A ToolSet under the default `codemode` namespace. */
export declare function aiTools(tools: CodeToolTools): ToolProvider
/** Drops `needsApproval` tools and wraps each execute with validation by its input schema. */
export declare function resolveProvider(provider: ToolProvider): ResolvedProvider
/** TypeScript declarations of a ToolSet for a model: `declare const <namespace>: { … }`. */
export declare function generateTypes(tools: CodeToolTools, namespace?: string): string
