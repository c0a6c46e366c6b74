// Types of `@supolka/codemode-executor/mcp`: Cloudflare's `@cloudflare/codemode/mcp` on Node,
// and runtimeMcpServer. Needs `@modelcontextprotocol/sdk`.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Executor, CodemodeRuntimeHandle } from '../index'

/** A connected MCP client (the SDK's `Client`, over any transport), as codeMcpServer uses it. */
export interface McpClientLike {
  listTools(params?: unknown, options?: unknown): Promise<{ tools: Array<{ name: string; description?: string; inputSchema: Record<string, unknown>; annotations?: Record<string, unknown> }> }>
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: unknown, options?: { signal?: AbortSignal; timeout?: number; maxTotalTimeout?: number }): Promise<unknown>
}
interface CodeMcpServerCommon {
  executor: Executor
  /** Replaces the description template (`{{types}}`, `{{example}}` are substituted). */
  description?: string
  /** Bounds each upstream call, in milliseconds (default: the MCP SDK's, 60 000). */
  callTimeoutMs?: number
}
/**
 * Exactly one of: `server`, an in-process McpServer (its in-memory client is made once and
 * shared, so one server may back a codeMcpServer per HTTP session); `client`, a connected MCP
 * client over any transport (a server that runs elsewhere); `clients`, several by name, whose
 * tool `t` of client `n` programs call as `codemode.n_t(args)`.
 */
export type CodeMcpServerOptions = CodeMcpServerCommon & (
  | { server: McpServer; client?: never; clients?: never }
  | { client: McpClientLike; server?: never; clients?: never }
  | { clients: Record<string, McpClientLike>; server?: never; client?: never }
)
/**
 * An MCP server with one `code` tool over every upstream tool. Its annotations follow the
 * upstream tools': read-only when every one is, destructive or open-world when any may be.
 * Cancelling the `code` call cancels the program and the upstream calls it has in flight.
 */
export declare function codeMcpServer(options: CodeMcpServerOptions): Promise<McpServer>

export interface OpenApiRequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  query?: Record<string, string | number | boolean | undefined>
  body?: unknown
  contentType?: string
  rawBody?: boolean
}
export interface OpenApiMcpServerOptions {
  /** An OpenAPI 3.x document. */
  spec: Record<string, unknown>
  executor: Executor
  /** Makes the API call on the host (credentials never enter the sandbox); gets the MCP request context. */
  request: (options: OpenApiRequestOptions, context: unknown) => unknown
  name?: string
  version?: string
  /** Appended to the execute tool's description. */
  description?: string
}
/**
 * An MCP server with `search` (annotated read-only) and `execute` (not read-only, destructive,
 * open world) tools for an OpenAPI spec.
 */
export declare function openApiMcpServer(options: OpenApiMcpServerOptions): McpServer

export interface RuntimeMcpServerOptions {
  runtime: CodemodeRuntimeHandle
  /** Register the tools on this server instead of a new one. */
  server?: McpServer
  name?: string
  version?: string
  /** Replaces the code tool's description. */
  description?: string
  /**
   * Also offer `approve`, `reject` and `rollback` as tools (default `false`). Any tool can be
   * called by the model, so with `true` the model can approve its own actions: only a client
   * that confirms every tool call with its person (and a person who never clicks "always
   * allow") keeps the decision theirs. By default the model cannot list or call them: a person
   * decides through MCP elicitation (when the client declares it), or the application calls
   * `runtime.approve()` / `reject()` / `rollback()` out of band.
   */
  approvalTools?: boolean
  /**
   * How long the person has to answer an approval form (MCP elicitation) before the run is
   * left paused (default 600 000 ms; the MCP SDK's own default would be 60 s).
   */
  elicitationTimeoutMs?: number
  /**
   * Runs each call of `code` (and `approve`) as `withRequest(extra, run)`: the host sets up what
   * the run needs of the MCP request (its `extra.signal`, progress token) around `run()`.
   */
  /**
   * Whether a connector's method only reads (a rollback answer lists its calls as "nothing to
   * undo" instead of "still in force"). Without it every call without a revert stays in force.
   */
  readOnly?: (connector: string, method: string) => boolean
  withRequest?: <T>(extra: { signal: AbortSignal; sendNotification: (n: any) => Promise<void>; _meta?: { progressToken?: string | number } }, run: () => Promise<T>) => Promise<T>
}
/**
 * The durable runtime as MCP tools: `code`, `pending`, `search`, `describe` (and `approve`,
 * `reject`, `rollback` with `approvalTools: true`), each with MCP annotations
 * (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`).
 *
 * When a run pauses and the connected client declares the elicitation capability, the `code`
 * tool asks the person through `elicitation/create`: a form naming the pending action
 * (`connector.method`), its arguments and the program's code, or, for a program awaiting
 * approval before it runs, "Run this program?" with its code. Accept approves it
 * (`runtime.approve({ executionId, seq })`) and the run goes on, asking again at its next pause;
 * decline rejects it (`runtime.reject`); cancel, a failed request or no answer in
 * `elicitationTimeoutMs` leaves it paused. Without the capability the answer says the run is
 * paused and the decision is the application's.
 */
export declare function runtimeMcpServer(options: RuntimeMcpServerOptions): McpServer
