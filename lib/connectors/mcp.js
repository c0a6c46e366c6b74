'use strict';
// McpConnector (docs/cloudflare-compat.md §8.2): the tools of one MCP connection. Any object
// shaped like an MCP client works; @modelcontextprotocol/sdk is never loaded here.

const { sanitizeToolName } = require('../cloudflare/names.js');
const { isObject } = require('../util.js');
const { invalidArgument } = require('../errors.js');
const { CodemodeConnector, className, setOwn } = require('./base.js');

// What a tool call of an MCP client returns, as the program sees it.
function unwrapMcpResult(result) {
  if (!isObject(result)) return result;
  if (result.toolResult !== undefined) return result.toolResult;
  const content = Array.isArray(result.content) ? result.content : undefined;
  if (result.isError) {
    const text = (content || [])
      .filter((part) => isObject(part) && part.type === 'text')
      .map((part) => part.text ?? '')
      .join('\n');
    throw new Error(text || 'Tool call failed');
  }
  if (result.structuredContent != null) return result.structuredContent;
  if (!content || content.length === 0 || !content.every((part) => isObject(part) && part.type === 'text')) {
    return result;
  }
  const text = content.map((part) => part.text ?? '').join('\n');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A connector over one MCP connection. Subclasses implement `createConnection()`, returning
 * (or resolving to) `{ client: { callTool({ name, arguments }) }, tools?, fetchTools?,
 * instructions? }` — the shape of an MCP SDK client connection, v1 or v2. It is called once
 * per instance and kept once it has succeeded; a failed connection is tried again on next use.
 */
class McpConnector extends CodemodeConnector {
  #connectionPromise;
  #resolved;

  createConnection() {
    throw invalidArgument(`${className(this)} must implement createConnection() — it returns { client, tools?, fetchTools?, instructions? }`);
  }

  /** The connector tool name for an MCP tool; sanitized by default. */
  toolName(tool) {
    return sanitizeToolName(tool.name);
  }

  /**
   * The connection, created on first use and kept; a failed one is not kept (the next use tries
   * again), so one failed start does not fail every later run of a long-lived process.
   */
  getConnection() {
    if (!this.#connectionPromise) {
      const connecting = Promise.resolve().then(() => this.createConnection());
      this.#connectionPromise = connecting;
      connecting.catch(() => {
        if (this.#connectionPromise === connecting) this.#connectionPromise = undefined;
      });
    }
    return this.#connectionPromise;
  }

  /** As the base's, but a failure (the connection's, most often) is not kept: the next use tries again. */
  resolvedTools() {
    if (!this.#resolved) {
      const resolving = (async () => {
        const tools = await this.tools();
        const out = {};
        for (const [name, t] of Object.entries(tools)) {
          if (isObject(t)) setOwn(out, name, this.tool(name, t));
        }
        return out;
      })();
      this.#resolved = resolving;
      resolving.catch(() => {
        if (this.#resolved === resolving) this.#resolved = undefined;
      });
    }
    return this.#resolved;
  }

  /** The connection's `tools` when non-empty, else `fetchTools()`, else none. */
  async fetchTools() {
    const connection = await this.getConnection();
    if (Array.isArray(connection.tools) && connection.tools.length > 0) return connection.tools;
    if (typeof connection.fetchTools === 'function') return connection.fetchTools();
    return [];
  }

  /** As the base, with the connection's instructions before the connector's own. */
  async describe() {
    const description = await super.describe();
    const connection = await this.getConnection();
    if (connection.instructions) {
      description.instructions = [connection.instructions, description.instructions].filter(Boolean).join('\n\n');
    }
    return description;
  }

  async tools() {
    const mcpTools = await this.fetchTools();
    const out = {};
    const sources = new Map(); // connector tool name → MCP tool name
    for (const mcpTool of mcpTools || []) {
      const name = this.toolName(mcpTool);
      if (sources.has(name)) {
        throw invalidArgument(`MCP tools "${sources.get(name)}" and "${mcpTool.name}" on ${this.name()} both map to "${name}". Override toolName() to disambiguate.`);
      }
      sources.set(name, mcpTool.name);
      const mcpName = mcpTool.name;
      setOwn(out, name, {
        description: mcpTool.description,
        inputSchema: mcpTool.inputSchema,
        outputSchema: mcpTool.outputSchema,
        // The server knows the tool by its original name, not the sanitized one.
        execute: async (args) => {
          const connection = await this.getConnection();
          return unwrapMcpResult(await connection.client.callTool({ name: mcpName, arguments: args }));
        },
      });
    }
    return out;
  }
}

module.exports = { McpConnector };
