'use strict';
// The upstream MCP servers of `codemode-executor mcp` (lib/cli/mcp.js): one connector per entry of
// an mcp.json file, each with its own connection that starts, fails and reconnects on its own.
// A server that cannot be reached costs only the programs that call it: they get an error naming
// the server and why; describe() lists what is reachable now; a failed start is tried again on
// the next use once its backoff has passed (doubling, up to MAX_BACKOFF_MS), never cached.
//
// Per call: the timeout configured for the server (no hidden default of the SDK's), the outer
// request's AbortSignal (cancelling the `code` call cancels the upstream calls in flight) and its
// progress (relayed to the outer client), read from the request context (requestContext).

const { AsyncLocalStorage } = require('node:async_hooks');
const { CodemodeConnector, setOwn } = require('../connectors/base.js');
const { sanitizeToolName } = require('../cloudflare/names.js');
const { messageOf, isObject } = require('../util.js');

/** The outer request a run belongs to: `{ signal?, progress?(text) }`, for the calls it makes. */
const requestContext = new AsyncLocalStorage();

// The SDK's McpError code for a connection that closed under a request.
const CONNECTION_CLOSED = -32000;
// A Streamable HTTP server answers 404 to a session it does not know (it restarted).
const sessionExpired = (error) => error?.constructor?.name === 'StreamableHTTPError' && error.code === 404;
// The SDK's RequestTimeout: a call that ran past the server's call timeout.
const REQUEST_TIMEOUT = -32001;
const timedOut = (error) => error?.constructor?.name === 'McpError' && error.code === REQUEST_TIMEOUT;

const FIRST_BACKOFF_MS = 500;
// The most pages of resources read from one server for one listing.
const MAX_PAGES = 20;
const MAX_BACKOFF_MS = 30_000;
// How much of a stdio server's stderr is kept, to say why it failed.
const STDERR_TAIL_CHARS = 2_000;

function sdkParts() {
  return {
    Client: require('@modelcontextprotocol/sdk/client/index.js').Client,
    StdioClientTransport: require('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport,
    getDefaultEnvironment: require('@modelcontextprotocol/sdk/client/stdio.js').getDefaultEnvironment,
    StreamableHTTPClientTransport: require('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport,
    SSEClientTransport: require('@modelcontextprotocol/sdk/client/sse.js').SSEClientTransport,
    types: require('@modelcontextprotocol/sdk/types.js'),
  };
}

// The last line of a stdio server's stderr worth quoting (what it said before it exited).
function lastLine(text) {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.length > 0 ? lines[lines.length - 1].slice(0, 300) : '';
}

/**
 * One upstream MCP server. `options`: { name (the sandbox namespace), server (the mcp.json key),
 * entry (the mcp.json entry), approve (tool names that wait for a person), timeoutMs (per call),
 * startTimeoutMs }.
 */
class UpstreamConnector extends CodemodeConnector {
  #name;
  #server;
  #entry;
  #approve;
  #timeoutMs;
  #startTimeoutMs;
  #state = 'idle'; // idle | connecting | ready | failed | closed
  #connecting;
  #client;
  #tools = []; // the last tools/list of the server
  #byName = new Map(); // sandbox name → MCP tool name
  #instructions;
  #lastError;
  #failures = 0;
  #retryAt = 0;
  #stderr = '';
  #active = []; // the request contexts of the calls of this server in flight (one per call)
  #roots; // { list(timeoutMs) }: the real client's roots, when the host relays them

  constructor({ name, server, entry, approve = [], timeoutMs, startTimeoutMs, roots }) {
    super();
    this.#roots = roots;
    this.#name = name;
    this.#server = server;
    this.#entry = entry;
    this.#approve = new Set(approve.map((t) => sanitizeToolName(t)));
    this.#timeoutMs = timeoutMs;
    this.#startTimeoutMs = startTimeoutMs;
  }

  name() {
    return this.#name;
  }

  /** The mcp.json key of the server. */
  get server() {
    return this.#server;
  }

  /** `{ server, name, state, error?, retryInMs?, tools }`: how this upstream stands now. */
  status() {
    const out = { server: this.#server, name: this.#name, state: this.#state, tools: this.#tools.length };
    if (this.#state === 'failed') {
      out.error = this.#lastError;
      out.retryInMs = Math.max(0, this.#retryAt - Date.now());
    }
    return out;
  }

  instructions() {
    if (this.#state === 'ready') return this.#instructions;
    const why = this.#lastError ? `: ${this.#lastError}` : '';
    return `The MCP server "${this.#server}" is not reachable now${why}. Its tools are not listed; a call to it fails until it is back.`;
  }

  #transport() {
    const sdk = sdkParts();
    const entry = this.#entry;
    if (typeof entry.command === 'string') {
      const transport = new sdk.StdioClientTransport({
        command: entry.command,
        args: entry.args ?? [],
        env: { ...sdk.getDefaultEnvironment(), ...process.env, ...entry.env },
        cwd: entry.cwd,
        stderr: 'pipe',
      });
      this.#stderr = '';
      transport.stderr?.on('data', (chunk) => {
        this.#stderr = (this.#stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS);
      });
      return [transport];
    }
    const url = new URL(entry.url);
    const requestInit = entry.headers ? { headers: entry.headers } : undefined;
    const type = entry.type;
    if (type === 'sse') return [new sdk.SSEClientTransport(url, { requestInit })];
    const streamable = () => new sdk.StreamableHTTPClientTransport(url, { requestInit });
    if (type === 'http' || type === 'streamable-http' || type === 'streamableHttp') return [streamable()];
    // No type: Streamable HTTP, then the older HTTP+SSE transport (the MCP spec's fallback).
    return [streamable(), () => new sdk.SSEClientTransport(url, { requestInit })];
  }

  // Why a start failed, in a few words: the SDK's message, and the last line the server wrote.
  #why(error) {
    const said = lastLine(this.#stderr);
    const message = messageOf(error);
    return said && !message.includes(said) ? `${message} (stderr: ${said})` : message;
  }

  // Sampling and elicitation requests of the server, forwarded to the client whose code call
  // is running (the latest one with a call of this server in flight), when it supports them.
  #forward(capability, method, params, schema) {
    const { McpError, ErrorCode } = sdkParts().types;
    const request = this.#active[this.#active.length - 1];
    if (request === undefined || typeof request.forward !== 'function') {
      throw new McpError(ErrorCode.InvalidRequest, `codemode-executor: no client request is running to forward ${method} to`);
    }
    if (!request.capabilities?.[capability]) {
      throw new McpError(ErrorCode.MethodNotFound, `codemode-executor: the client does not support ${capability}`);
    }
    return request.forward(method, params, schema, this.#timeoutMs);
  }

  #client0() {
    const { Client, types } = sdkParts();
    const capabilities = { sampling: {}, elicitation: {}, ...(this.#roots ? { roots: { listChanged: true } } : {}) };
    const client = new Client({ name: 'codemode-executor', version: '1.0.0' }, { capabilities });
    client.setRequestHandler(types.CreateMessageRequestSchema, (req) => this.#forward('sampling', 'sampling/createMessage', req.params, types.CreateMessageResultSchema));
    client.setRequestHandler(types.ElicitRequestSchema, (req) => this.#forward('elicitation', 'elicitation/create', req.params, types.ElicitResultSchema));
    // Roots are the real client's: asked of it whenever the server asks (no code call needed).
    if (this.#roots) client.setRequestHandler(types.ListRootsRequestSchema, () => this.#roots.list(this.#timeoutMs));
    // A server whose tools change says so: search and describe list the new ones.
    client.setNotificationHandler(types.ToolListChangedNotificationSchema, async () => {
      if (this.#client !== client) return;
      try {
        this.#setTools((await client.listTools(undefined, { timeout: this.#startTimeoutMs })).tools);
      } catch {
        // Kept as it was; a call of a tool not listed asks again.
      }
    });
    return client;
  }

  async #start() {
    const candidates = this.#transport();
    let lastError;
    for (const candidate of candidates) {
      const transport = typeof candidate === 'function' ? candidate() : candidate;
      const client = this.#client0();
      try {
        await client.connect(transport, { timeout: this.#startTimeoutMs });
        const { tools } = await client.listTools(undefined, { timeout: this.#startTimeoutMs });
        client.onclose = () => this.#lost(client, 'the server closed the connection');
        client.onerror = () => {};
        return { client, tools };
      } catch (error) {
        lastError = error;
        await client.close().catch(() => {});
      }
    }
    throw lastError;
  }

  // A connection that ended: the next use reconnects (at once the first time).
  #lost(client, why) {
    if (this.#client !== client || this.#state === 'closed') return;
    this.#client = undefined;
    this.#state = 'failed';
    const said = lastLine(this.#stderr);
    this.#lastError = said ? `${why} (stderr: ${said})` : why;
    this.#retryAt = Date.now();
  }

  /** The real client's roots changed (or a client with roots arrived): tells the server, if connected. */
  async rootsChanged() {
    if (this.#state !== 'ready' || this.#roots === undefined) return;
    await this.#client.sendRootsListChanged().catch(() => {});
  }

  /** Connects unless connected or within a failed start's backoff; resolves the client or throws. */
  connect() {
    if (this.#state === 'ready') return Promise.resolve(this.#client);
    if (this.#state === 'closed') return Promise.reject(new Error(`MCP server "${this.#server}" is shut down`));
    if (this.#connecting) return this.#connecting;
    if (this.#state === 'failed' && Date.now() < this.#retryAt) {
      const seconds = Math.ceil((this.#retryAt - Date.now()) / 1000);
      return Promise.reject(new Error(`MCP server "${this.#server}" is unavailable: ${this.#lastError} (next try in ${seconds} s)`));
    }
    this.#state = 'connecting';
    this.#connecting = this.#start().then(({ client, tools }) => {
      this.#connecting = undefined;
      if (this.#state === 'closed') {
        client.close().catch(() => {});
        throw new Error(`MCP server "${this.#server}" is shut down`);
      }
      this.#client = client;
      this.#state = 'ready';
      this.#failures = 0;
      this.#lastError = undefined;
      this.#setTools(tools);
      this.#instructions = client.getInstructions?.();
      return client;
    }, (error) => {
      this.#connecting = undefined;
      if (this.#state === 'closed') throw error;
      this.#state = 'failed';
      this.#failures++;
      this.#lastError = this.#why(error);
      this.#retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.#failures - 1));
      throw new Error(`MCP server "${this.#server}" is unavailable: ${this.#lastError}`);
    });
    return this.#connecting;
  }

  #setTools(tools) {
    this.#tools = tools;
    this.#byName = new Map();
    for (const tool of tools) this.#byName.set(sanitizeToolName(tool.name), tool.name);
  }

  /** Tools of the server as the runtime describes them; none while it cannot be reached. */
  async describe() {
    try {
      await this.connect();
    } catch {
      // Listed as unreachable (instructions say why); approvals still apply by name.
    }
    const descriptors = {};
    const annotations = {};
    for (const tool of this.#state === 'ready' ? this.#tools : []) {
      if (taskOnly(tool)) continue; // not callable here (see executeTool)
      setOwn(descriptors, sanitizeToolName(tool.name), {
        description: tool.description,
        inputSchema: isObject(tool.inputSchema) ? tool.inputSchema : { type: 'object' },
        outputSchema: tool.outputSchema,
      });
    }
    // Approvals come from the config, so they hold whether or not the server was reachable.
    for (const name of this.#approve) setOwn(annotations, name, { requiresApproval: true });
    return { name: this.#name, instructions: this.instructions(), descriptors, annotations };
  }

  async resolvedTools() {
    const { descriptors } = await this.describe();
    return descriptors;
  }

  /** Calls the tool on the server, under the server's timeout and the request's signal. */
  async executeTool(method, args, _ctx) {
    const client = await this.connect();
    let mcpName = this.#byName.get(method);
    if (mcpName === undefined) {
      // Listed since (tools/list_changed), or a name the program got wrong.
      this.#setTools((await client.listTools(undefined, { timeout: this.#startTimeoutMs })).tools);
      mcpName = this.#byName.get(method);
      if (mcpName === undefined) throw new Error(`Tool "${method}" not found on MCP server "${this.#server}"`);
    }
    if (taskOnly(this.#tools.find((t) => t.name === mcpName))) {
      throw new Error(`MCP server "${this.#server}", tool "${mcpName}": it runs only as an MCP task, which codemode-executor does not support`);
    }
    const request = requestContext.getStore() ?? {};
    const options = { timeout: this.#timeoutMs, maxTotalTimeout: this.#timeoutMs };
    if (request.signal) options.signal = request.signal;
    if (typeof request.progress === 'function') {
      options.onprogress = (p) => request.progress(`${this.#server}.${mcpName}: ${p.message ?? `${p.progress}${p.total !== undefined ? `/${p.total}` : ''}`}`);
    }
    let result;
    this.#active.push(request);
    try {
      result = await client.callTool({ name: mcpName, arguments: args ?? {} }, undefined, options);
    } catch (error) {
      if (sessionExpired(error) && !request.signal?.aborted) {
        // The server no longer knows the session (it restarted): the request did not run, and
        // the MCP spec has the client start a new session, so it is sent again on one.
        this.#lost(client, 'the server ended the session');
        const again = await this.connect();
        try {
          result = await again.callTool({ name: mcpName, arguments: args ?? {} }, undefined, options);
        } catch (retryError) {
          this.#dropIfBroken(again, retryError);
          throw new Error(`MCP server "${this.#server}", tool "${mcpName}": ${messageOf(retryError)}`);
        }
        return unwrapResult(result);
      }
      if (!request.signal?.aborted) this.#dropIfBroken(client, error);
      // A timeout names the bound that cut the call and where it is set, so a person whose
      // tool is merely slow knows what to raise.
      const hint = timedOut(error)
        ? ` (after ${this.#timeoutMs} ms, this server's call timeout: "codemode": { "timeout": MS } in its mcp.json entry, or --call-timeout)`
        : '';
      throw new Error(`MCP server "${this.#server}", tool "${mcpName}": ${messageOf(error)}${hint}`);
    } finally {
      this.#active.splice(this.#active.indexOf(request), 1);
    }
    return unwrapResult(result);
  }

  // A call that failed in the transport (not an answer of the server's, a timeout or a cancel):
  // the connection is dropped, and the next use reconnects.
  #dropIfBroken(client, error) {
    if (error?.name === 'AbortError') return;
    const code = error?.code;
    const answered = error?.constructor?.name === 'McpError' && code !== CONNECTION_CLOSED;
    if (!answered) {
      this.#lost(client, messageOf(error));
      client.close().catch(() => {});
    }
  }

  // The connected client when the server offers `capability` (resources, prompts), else undefined.
  async #offering(capability) {
    try {
      const client = await this.connect();
      return client.getServerCapabilities()?.[capability] ? client : undefined;
    } catch {
      return undefined;
    }
  }

  /** The server's resources (every page), none while it cannot be reached or has none. */
  async listResources() {
    const client = await this.#offering('resources');
    if (!client) return [];
    const out = [];
    let cursor;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await client.listResources(cursor ? { cursor } : undefined, { timeout: this.#startTimeoutMs });
      out.push(...answer.resources);
      cursor = answer.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  /** The server's resource templates, as listResources. */
  async listResourceTemplates() {
    const client = await this.#offering('resources');
    if (!client) return [];
    return (await client.listResourceTemplates(undefined, { timeout: this.#startTimeoutMs })).resourceTemplates;
  }

  /** Reads `uri` from the server; throws when it cannot be reached or does not know it. */
  async readResource(uri) {
    const client = await this.#offering('resources');
    if (!client) throw new Error(`MCP server "${this.#server}" offers no resources now`);
    return client.readResource({ uri }, { timeout: this.#timeoutMs });
  }

  /** The server's prompts, none while it cannot be reached or has none. */
  async listPrompts() {
    const client = await this.#offering('prompts');
    if (!client) return [];
    return (await client.listPrompts(undefined, { timeout: this.#startTimeoutMs })).prompts;
  }

  /** Gets the server's prompt `name` with `args`. */
  async getPrompt(name, args) {
    const client = await this.#offering('prompts');
    if (!client) throw new Error(`MCP server "${this.#server}" offers no prompts now`);
    return client.getPrompt({ name, arguments: args }, { timeout: this.#timeoutMs });
  }

  /** Whether the server marks the tool `method` (its sandbox name) read-only (readOnlyHint). */
  isReadOnly(method) {
    const mcpName = this.#byName.get(method);
    const tool = this.#tools.find((t) => t.name === mcpName);
    return tool?.annotations?.readOnlyHint === true;
  }

  /** Upstream MCP tools have no undo: nothing is reverted (the rollback answer says so). */
  async revertAction() {
    return false;
  }

  /** Closes the connection (a stdio server is stopped). */
  async close() {
    this.#state = 'closed';
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.close().catch(() => {});
  }
}

// A tool that can only run as an MCP task (execution.taskSupport "required").
const taskOnly = (tool) => tool?.execution?.taskSupport === 'required';

const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'resource_link', 'resource']);
const isContentBlock = (c) => isObject(c) && CONTENT_TYPES.has(c.type);

// A CallToolResult as the program sees it: an error thrown; `structuredContent`; all-text
// content parsed as JSON (or kept as text); other content (images, audio, resources) as
// `{ content: [...] }` with every block intact, which a program may return as it is.
function unwrapResult(result) {
  if (!isObject(result)) return result;
  if (result.toolResult !== undefined) return result.toolResult;
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.isError) {
    const text = content.filter((c) => isObject(c) && c.type === 'text').map((c) => c.text ?? '').join('\n');
    throw new Error(text || 'Tool call failed');
  }
  if (result.structuredContent !== null && result.structuredContent !== undefined) return result.structuredContent;
  if (content.length > 0 && content.every((c) => isObject(c) && c.type === 'text')) {
    const text = content.map((c) => c.text ?? '').join('\n');
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return { content: content.filter(isContentBlock) };
}

module.exports = { UpstreamConnector, requestContext, isContentBlock };
