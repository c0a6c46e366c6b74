// Types of `@supolka/codemode-executor/mcp`: Cloudflare's `@cloudflare/codemode/mcp` on Node,
// and runtimeMcpServer. Needs `@modelcontextprotocol/sdk`.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Executor, CodemodeRuntimeHandle } from '../index'

export interface CodeMcpServerOptions {
  /** The upstream server whose tools programs call as `codemode.<tool>(args)`. */
  server: McpServer
  executor: Executor
  /** Replaces the description template (`{{types}}`, `{{example}}` are substituted). */
  description?: string
}
/** An MCP server with one `code` tool over every tool of `server`. */
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
/** An MCP server with `search` and `execute` tools for an OpenAPI spec. */
export declare function openApiMcpServer(options: OpenApiMcpServerOptions): McpServer

export interface RuntimeMcpServerOptions {
  runtime: CodemodeRuntimeHandle
  /** Register the tools on this server instead of a new one. */
  server?: McpServer
  name?: string
  version?: string
  /** Replaces the code tool's description. */
  description?: string
}
/** The durable runtime as MCP tools: code, pending, approve, reject, rollback, search, describe. */
export declare function runtimeMcpServer(options: RuntimeMcpServerOptions): McpServer
