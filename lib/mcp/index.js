'use strict';
// `@supolka/codemode-executor/mcp`: Cloudflare's `@cloudflare/codemode/mcp` on plain Node
// (docs/cloudflare-compat.md §14) — codeMcpServer and openApiMcpServer — and, beyond
// Cloudflare, runtimeMcpServer: the durable runtime as MCP tools. It needs the MCP SDK
// (`@modelcontextprotocol/sdk`, an optional peer; its own zod describes the tool inputs),
// loaded on first use. Unlike Cloudflare's, nothing here needs `@cfworker/json-schema`: the
// servers use the SDK's default validator.

const { sanitizeToolName } = require('../cloudflare/names.js');
const { generateTypesFromJsonSchema } = require('../cloudflare/schema-types.js');
const { normalizeCode } = require('../cloudflare/normalize.js');
const { truncateResult } = require('../cloudflare/truncate.js');
const { MCP_TEMPLATE, CODE_FIELD } = require('../cloudflare/code-tool-text.js');
const { toModelOutput } = require('../runtime/model-tool.js');
const { messageOf } = require('../util.js');
const { invalidArgument } = require('../errors.js');
const { withPackagesSection } = require('../packages.js');

let loaded;
function sdk() {
  if (loaded === undefined) {
    try {
      loaded = {
        McpServer: require('@modelcontextprotocol/sdk/server/mcp.js').McpServer,
        Client: require('@modelcontextprotocol/sdk/client/index.js').Client,
        InMemoryTransport: require('@modelcontextprotocol/sdk/inMemory.js').InMemoryTransport,
        z: require('zod').z,
      };
    } catch (error) {
      const fault = invalidArgument(`@supolka/codemode-executor/mcp needs the MCP SDK (npm install @modelcontextprotocol/sdk), which could not be loaded: ${error.message}`);
      // The loader's error as `cause`, as `new Error(message, { cause })` gives it.
      Object.defineProperty(fault, 'cause', { value: error, writable: true, configurable: true });
      throw fault;
    }
  }
  return loaded;
}

// A tool answer's text budget (about 6 000 tokens).
const MAX_RESPONSE_CHARS = 24_000;

// The text a model reads for a value: strings cut to the budget, structures truncated (largest
// values first) so the JSON stays valid; pretty-printed when that still fits.
function responseText(value) {
  const shaped = truncateResult(value, { maxChars: MAX_RESPONSE_CHARS });
  if (typeof shaped === 'string') return shaped;
  const pretty = JSON.stringify(shaped, null, 2) ?? 'undefined';
  return pretty.length <= MAX_RESPONSE_CHARS ? pretty : JSON.stringify(shaped) ?? 'undefined';
}

const errorText = (error) => (error instanceof Error ? error.message : String(error));
const failure = (text) => ({ content: [{ type: 'text', text }], isError: true });
const answer = (text) => ({ content: [{ type: 'text', text }] });

// Runs `run()` (an executor call resolving `{ result, error? }`) as one tool answer.
async function executorAnswer(run) {
  try {
    const out = await run();
    if (out.error) return failure(`Error: ${out.error}`);
    return answer(responseText(out.result));
  } catch (error) {
    return failure(`Error: ${errorText(error)}`);
  }
}

// A CallToolResult as the plain value a program expects: a compat `toolResult`; an error
// thrown; `structuredContent`; all-text content parsed as JSON (or kept as text); anything
// else (images, resources) as it is.
function plainValue(result) {
  if ('toolResult' in result) return result.toolResult;
  if (result.isError) {
    const text = result.content.filter((c) => c.type === 'text').map((c) => ('text' in c ? c.text : '')).join('\n');
    throw new Error(text || 'Tool call failed');
  }
  if (result.structuredContent !== null && result.structuredContent !== undefined) return result.structuredContent;
  if (result.content.length > 0 && result.content.every((c) => c.type === 'text')) {
    const text = result.content.map((c) => ('text' in c ? c.text : '')).join('\n');
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return result;
}

// `Example: …` calling the first tool with placeholder arguments of the right kinds.
function exampleLine(first) {
  if (!first) return '';
  const parts = Object.entries(first.inputSchema.properties ?? {}).map(([key, prop]) => {
    if (prop.type === 'number' || prop.type === 'integer') return `${key}: 0`;
    if (prop.type === 'boolean') return `${key}: true`;
    return `${key}: "..."`;
  });
  const args = parts.length > 0 ? `{ ${parts.join(', ')} }` : '{}';
  return `Example: async () => { const r = await codemode.${sanitizeToolName(first.name)}(${args}); return r; }`;
}

// MCP tool annotations (hints a client may use to gate or confirm a call; not in Cloudflare's).
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const EFFECTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

// The hints of a tool that runs programs over `tools` (MCP tool listings): read-only when every
// tool says it is; destructive, or reaching an open world, when any tool may be (the MCP
// defaults for a tool that says nothing: not read-only, destructive, open world).
function programHints(tools) {
  const hint = (t, key, fallback) => (typeof t.annotations?.[key] === 'boolean' ? t.annotations[key] : fallback);
  const readOnly = tools.every((t) => hint(t, 'readOnlyHint', false));
  return {
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && tools.some((t) => !hint(t, 'readOnlyHint', false) && hint(t, 'destructiveHint', true)),
    idempotentHint: readOnly,
    openWorldHint: tools.some((t) => hint(t, 'openWorldHint', true)),
  };
}

// The in-memory client of each wrapped McpServer: an McpServer connects to one transport only,
// so one client is made per server and shared by every codeMcpServer over it (one per HTTP
// session, say).
const wrappedClients = new WeakMap();
function wrappedClient(server) {
  let client = wrappedClients.get(server);
  if (client === undefined) {
    const { Client, InMemoryTransport } = sdk();
    client = (async () => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const c = new Client({ name: 'codemode-proxy', version: '1.0.0' });
      await c.connect(clientSide);
      return c;
    })();
    wrappedClients.set(server, client);
    client.catch(() => wrappedClients.delete(server));
  }
  return client;
}

// The upstream clients of codeMcpServer's options, as [prefix, client] pairs: `server` (an
// in-process McpServer), `client` (a connected MCP client, any transport), or `clients` (several,
// by name: their tools are named `<name>_<tool>`).
async function upstreamClients({ server, client, clients }) {
  const given = [server, client, clients].filter((x) => x !== undefined).length;
  if (given !== 1) throw invalidArgument('codeMcpServer: pass exactly one of server (an McpServer), client (a connected MCP client) or clients ({ name: client })');
  if (server !== undefined) return [['', await wrappedClient(server)]];
  const isClient = (c) => c !== null && typeof c === 'object' && typeof c.callTool === 'function' && typeof c.listTools === 'function';
  if (client !== undefined) {
    if (!isClient(client)) throw invalidArgument('codeMcpServer: client must be a connected MCP client (callTool, listTools)');
    return [['', client]];
  }
  if (clients === null || typeof clients !== 'object' || Object.keys(clients).length === 0) throw invalidArgument('codeMcpServer: clients must be an object of connected MCP clients by name');
  return Object.entries(clients).map(([name, c]) => {
    if (!isClient(c)) throw invalidArgument(`codeMcpServer: clients.${name} must be a connected MCP client (callTool, listTools)`);
    return [`${name}_`, c];
  });
}

/**
 * An MCP server with one `code` tool over every tool of `server` (an McpServer, reached through
 * an in-memory client), of `client` (a connected MCP client) or of `clients` (several by name;
 * tool `t` of client `n` is `codemode.n_t`): programs call them as `codemode.<tool>(args)`.
 * Cancelling the `code` call cancels the program and its calls in flight; `callTimeoutMs`
 * bounds each upstream call (default: the SDK's, 60 s).
 */
async function codeMcpServer({ server, client, clients, executor, description, callTimeoutMs }) {
  const { McpServer, z } = sdk();
  if (callTimeoutMs !== undefined && !(typeof callTimeoutMs === 'number' && callTimeoutMs > 0)) {
    throw invalidArgument('codeMcpServer: callTimeoutMs must be a positive number of milliseconds');
  }
  const upstreams = await upstreamClients({ server, client, clients });
  const tools = [];
  const descriptors = {};
  const fns = {};
  // The signal of the code call now running each program's calls belong to (one per program).
  for (const [prefix, c] of upstreams) {
    for (const t of (await c.listTools()).tools) {
      const name = `${prefix}${t.name}`;
      tools.push({ ...t, name });
      descriptors[name] = { description: t.description, inputSchema: t.inputSchema };
      fns[name] = async (args, signal) => plainValue(await c.callTool({ name: t.name, arguments: args }, undefined, {
        ...(signal ? { signal } : {}),
        ...(callTimeoutMs !== undefined ? { timeout: callTimeoutMs, maxTotalTimeout: callTimeoutMs } : {}),
      }));
    }
  }
  // The default text also lists the executor's allowed npm packages (lib/packages.js).
  const text = (description ?? withPackagesSection(MCP_TEMPLATE, executor))
    .replace('{{types}}', generateTypesFromJsonSchema(descriptors))
    .replace('{{example}}', exampleLine(tools[0]));
  const proxy = new McpServer({ name: 'codemode', version: '1.0.0' });
  proxy.registerTool('code', {
    description: text,
    inputSchema: { code: z.string().describe(CODE_FIELD) },
    annotations: programHints(tools),
  }, async ({ code }, extra) => {
    const signal = extra?.signal;
    // Each call carries this request's signal, so a cancelled code call cancels them too.
    const bound = {};
    for (const [name, fn] of Object.entries(fns)) bound[name] = (args) => fn(args, signal);
    return executorAnswer(() => executor.execute(code, [{ name: 'codemode', fns: bound }], signal ? { signal } : undefined));
  });
  return proxy;
}

// ---- openApiMcpServer --------------------------------------------------------------------------

const SPEC_TYPES = `
// OpenAPI 3.x spec with $refs resolved inline.
// The spec object follows the standard OpenAPI 3.x structure.

interface OperationObject {
  summary?: string;
  description?: string;
  operationId?: string;
  tags?: string[];
  parameters?: Array<{
    name: string;
    in: "query" | "header" | "path" | "cookie";
    required?: boolean;
    schema?: unknown;
    description?: string;
  }>;
  requestBody?: {
    required?: boolean;
    description?: string;
    content?: Record<string, { schema?: unknown }>;
  };
  responses?: Record<string, {
    description?: string;
    content?: Record<string, { schema?: unknown }>;
  }>;
  security?: Array<Record<string, string[]>>;
  deprecated?: boolean;
}

interface PathItem {
  summary?: string;
  description?: string;
  get?: OperationObject;
  post?: OperationObject;
  put?: OperationObject;
  patch?: OperationObject;
  delete?: OperationObject;
  head?: OperationObject;
  options?: OperationObject;
  trace?: OperationObject;
  parameters?: OperationObject["parameters"];
}

interface OpenApiSpec {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, PathItem>;
  servers?: Array<{ url: string; description?: string }>;
  components?: Record<string, unknown>;
  tags?: Array<{ name: string; description?: string }>;
}
`;

const SEARCH_TYPES = `${SPEC_TYPES}
declare const codemode: {
  spec(): Promise<OpenApiSpec>;
};
`;

const REQUEST_TYPES = `
interface RequestOptions {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  rawBody?: boolean;
}

${SPEC_TYPES}

declare const codemode: {
  spec(): Promise<OpenApiSpec>;
  request(options: RequestOptions): Promise<unknown>;
};
`;

const SEARCH_DESCRIPTION = `Search the OpenAPI spec. codemode.spec() returns $refs resolved inline.

Types:
${SEARCH_TYPES}

Your code must be an async arrow function that returns the result.

Examples:

// List all paths
async () => {
  const spec = await codemode.spec();
  return Object.keys(spec.paths);
}

// Find endpoints by tag
async () => {
  const spec = await codemode.spec();
  const results = [];
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.tags?.some(t => t.toLowerCase() === 'your_tag')) {
        results.push({ method: method.toUpperCase(), path, summary: op.summary });
      }
    }
  }
  return results;
}`;

// The program a model's code runs in: the spec embedded as JSON (`<` escaped), its local
// `$ref`s resolved inside the sandbox on first `codemode.spec()` (cycles become
// `{ $circular: ref }`), and `codemode.request` forwarded to the host when allowed.
function openApiProgram(code, spec, withRequest) {
  const specJson = JSON.stringify(spec).replace(/</g, '\\u003c');
  const request = withRequest ? ',\n  request: async (options) => await __openapiHost.request(options)' : '';
  return `async () => {
const __rawSpec = ${specJson};
const __refCache = new Map();
const __resolve = (node, root, seen = new Set()) => {
  if (node === null || node === undefined || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map((item) => __resolve(item, root, seen));
  if (Object.prototype.hasOwnProperty.call(node, "$ref") && typeof node.$ref === "string") {
    const ref = node.$ref;
    if (seen.has(ref)) return { $circular: ref };
    if (!ref.startsWith("#/")) return node;
    if (__refCache.has(ref)) return structuredClone(__refCache.get(ref));
    seen.add(ref);
    let target = root;
    for (const part of ref.slice(2).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))) target = target?.[part];
    const resolved = __resolve(target, root, seen);
    seen.delete(ref);
    __refCache.set(ref, resolved);
    return structuredClone(resolved);
  }
  const out = {};
  for (const [key, value] of Object.entries(node)) out[key] = __resolve(value, root, seen);
  return out;
};
let __resolvedSpec;
const codemode = {
  spec: async () => (__resolvedSpec ??= __resolve(__rawSpec, __rawSpec))${request}
};
return await (${normalizeCode(code)})();
}`;
}

/**
 * An MCP server with `search` (programs read the spec) and `execute` (programs call the API
 * through `request(options, context)`, which runs on the host: credentials never enter the
 * sandbox) tools for an OpenAPI 3 spec.
 */
function openApiMcpServer({ spec, executor, request, name = 'openapi', version = '1.0.0', description }) {
  const { McpServer, z } = sdk();
  const server = new McpServer({ name, version });
  server.registerTool('search', {
    description: SEARCH_DESCRIPTION,
    inputSchema: { code: z.string().describe('JavaScript async arrow function to search the spec') },
    annotations: READ_ONLY,
  }, async ({ code }) => executorAnswer(() => executor.execute(openApiProgram(code, spec, false), [])));
  // Cloudflare's text, then the executor's allowed npm packages (lib/packages.js), then the host's.
  const executeDescription = `${withPackagesSection(`Execute API calls using JavaScript code. First use 'search' to find the right endpoints.

Available in your code:
${REQUEST_TYPES}

Your code must be an async arrow function that returns the result.

Example:
async () => {
  return await codemode.request({ method: "GET", path: "/your/endpoint" });
}`, executor)}${description ? `\n\n${description}` : ''}`;
  server.registerTool('execute', {
    description: executeDescription,
    inputSchema: { code: z.string().describe(CODE_FIELD) },
    annotations: EFFECTS,
  }, async ({ code }, context) => executorAnswer(() => executor.execute(openApiProgram(code, spec, true), [
    { name: '__openapiHost', fns: { request: (args) => request(args, context) } },
  ])));
  return server;
}

// ---- runtimeMcpServer (not in Cloudflare) --------------------------------------------------------

// An entry of runtime.pending() / a paused outcome: a program awaiting approval before it runs
// (`kind: 'program'`, createCodemodeRuntime({ approveProgram })), else a call of a connector's
// method (`kind: 'call'`, or no kind from a runtime that predates it).
const isProgram = (p) => p.kind === 'program';

// One pending entry in a sentence: `tracker.create_issue({…}) (seq 1)`, or the program.
function pendingPhrase(p) {
  if (isProgram(p)) return 'the program';
  return `${p.connector}.${p.method}(${JSON.stringify(p.args)}) (seq ${p.seq}${p.inDoubt ? ', in doubt: it may or may not have run' : ''})`;
}

// What a model reads for a runtime outcome: the runtime's model output (§9.4, without the host's
// call log) as JSON, and, for a paused run, one plain sentence on what waits and who decides.
// With the approval tools the model is told how to call them; without them (the default) the
// decision is a person's, outside the conversation.
function outcomeText(output, { approvalTools = false, note } = {}) {
  const json = JSON.stringify(toModelOutput(output).value, null, 2);
  if (!output || output.status !== 'paused') return json;
  const pending = output.pending ?? [];
  const waiting = pending.length === 1 && isProgram(pending[0])
    ? 'the program awaits a person\'s approval before it runs'
    : `${pending.map(pendingPhrase).join('; ')} awaits a person's approval`;
  const next = approvalTools
    ? `It continues when the user approves it (tool "approve" with { executionId: "${output.executionId}", seq }); "reject" refuses it.`
    : 'A person approves or rejects it outside this conversation; the run continues, or ends, when they decide ("pending" lists what still waits).';
  return `The run is paused: ${waiting}. ${note ? `${note} ` : ''}${next}\n\n${json}`;
}

// MCP content blocks a result may carry to the client as they are (not as JSON text).
const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'resource_link', 'resource']);
const RESULT_KEYS = new Set(['content', 'structuredContent', 'isError', '_meta']);
const isBlock = (c) => c !== null && typeof c === 'object' && CONTENT_TYPES.has(c.type);

// The content blocks a program returned: `{ __mcpContent: [blocks] }`, or a tool result of
// blocks as an upstream MCP tool gives it (`{ content: [blocks] }`); undefined otherwise.
function returnedBlocks(result) {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return undefined;
  if (Array.isArray(result.__mcpContent) && result.__mcpContent.every(isBlock)) return result.__mcpContent;
  if (Array.isArray(result.content) && result.content.length > 0 && result.content.every(isBlock) &&
    Object.keys(result).every((key) => RESULT_KEYS.has(key)) && result.isError !== true) return result.content;
  return undefined;
}

// A runtime outcome as one tool answer: its text, then, for a completed run whose program
// returned content blocks, those blocks intact (the text says they follow).
function outcomeAnswer(out, text) {
  const blocks = out && out.status === 'completed' ? returnedBlocks(out.result) : undefined;
  if (blocks === undefined) {
    return { content: [{ type: 'text', text: text(out) }], ...(out && out.status === 'error' ? { isError: true } : {}) };
  }
  const kinds = blocks.map((b) => b.type).join(', ');
  const shown = { ...out, result: `(${blocks.length} content block(s) follow this text: ${kinds})` };
  return { content: [{ type: 'text', text: text(shown) }, ...blocks] };
}

// A runtime call as one tool answer: its outcome, or the thrown error as an MCP error.
async function runtimeAnswer(run, text = outcomeText) {
  try {
    return outcomeAnswer(await run(), text);
  } catch (error) {
    return failure(`Error: ${messageOf(error)}`);
  }
}

// What a rollback did, from its answer (or its error's): every call it found in force as
// reverted, still in force (its tool has no revert) or failed (its revert threw). Calls the host
// knows to be reads (an MCP tool's readOnlyHint) had no effect to undo.
function rollbackReport(executionId, status, answered, thrown, readOnly) {
  const calls = [...answered].sort((a, b) => a.seq - b.seq); // in the program's order
  const name = (c) => `${c.connector}.${c.method} (seq ${c.seq})${c.inDoubt ? ', in doubt' : ''}`;
  const isRead = (c) => c.fate === 'no_revert' && !c.inDoubt && readOnly !== undefined && readOnly(c.connector, c.method) === true;
  const reverted = calls.filter((c) => c.fate === 'reverted').map(name);
  const inForce = calls.filter((c) => c.fate === 'no_revert' && !isRead(c)).map(name);
  const failed = calls.filter((c) => c.fate === 'revert_failed').map((c) => `${name(c)}: ${c.error}`);
  const reads = calls.filter(isRead).map(name);
  const lines = [];
  if (reverted.length > 0) lines.push(`Reverted: ${reverted.join(', ')}.`);
  if (inForce.length > 0) lines.push(`Still in force (no revert: their effect was not undone): ${inForce.join(', ')}.`);
  if (failed.length > 0) lines.push(`Failed to revert (still in force): ${failed.join('; ')}.`);
  if (reads.length > 0) lines.push(`Read only (nothing to undo): ${reads.join(', ')}.`);
  if (thrown !== undefined) lines.push(`Nothing was reverted: ${messageOf(thrown)}`);
  else if (lines.length === 0) lines.push('Nothing in force to undo.');
  const complete = inForce.length === 0 && failed.length === 0 && thrown === undefined;
  const head = complete ? `Rolled back execution ${executionId}` : `Rollback of execution ${executionId} is incomplete`;
  const json = JSON.stringify({ executionId, status, reverted, leftInForce: [...inForce, ...failed], calls: answered }, null, 2);
  return { content: [{ type: 'text', text: `${head} (the run's status: ${status}).\n${lines.join('\n')}\n\n${json}` }], ...(complete ? {} : { isError: true }) };
}

// What a person sees of a value in an approval form: all of it up to this many characters.
const MAX_FORM_CHARS = 20_000;
function formText(text) {
  return text.length <= MAX_FORM_CHARS ? text : `${text.slice(0, MAX_FORM_CHARS)}\n… (${text.length - MAX_FORM_CHARS} more characters not shown)`;
}

// Arguments as a person reads them: on one line when short, else indented.
function argumentsText(args) {
  const line = JSON.stringify(args ?? null) ?? 'undefined';
  return line.length <= 120 ? line : `\n${formText(JSON.stringify(args, null, 2))}`;
}

// The `elicitation/create` form for the actions a paused run waits on: a message naming each
// pending action with its arguments, and the program's code; no fields (accept approves,
// decline rejects, cancel leaves the run paused).
function approvalForm(pending, code) {
  const program = pending.find(isProgram);
  const source = formText(program?.code ?? program?.args?.code ?? code);
  if (program) {
    return {
      message: `Run this program?\n\nA model wrote this program and asks to run it. Accept runs it; decline refuses it (the run ends as rejected).\n\n${source}`,
      requestedSchema: { type: 'object', properties: {} },
    };
  }
  const actions = pending.map((p) => [
    `${p.connector}.${p.method}`,
    `Arguments: ${argumentsText(p.args)}`,
    ...(p.inDoubt ? ['This call may or may not have run already (its process ended before recording it); accepting runs it again.'] : []),
  ].join('\n'));
  const title = pending.length === 1 ? `Approve ${pending[0].connector}.${pending[0].method}?` : `Approve these ${pending.length} actions?`;
  return {
    message: `${title}\n\nA program written by a model is paused before this action. Accept runs it and continues the program; decline refuses it (the run ends as rejected).\n\n${actions.join('\n\n')}\n\nThe program:\n${source}`,
    requestedSchema: { type: 'object', properties: {} },
  };
}

// Whether the client connected to `server` (an McpServer) takes form elicitation requests.
function canElicit(server) {
  const elicitation = server.server.getClientCapabilities()?.elicitation;
  if (!elicitation || typeof elicitation !== 'object') return false;
  // An empty capability means form (the MCP spec's backward compatibility), as the SDK reads it.
  return elicitation.form !== undefined || Object.keys(elicitation).length === 0;
}

// Runs `code` as a new durable run and, while it pauses, asks the person through elicitation
// (the client declared it): accept approves the pending action(s) and the run goes on (the next
// pause asks again); decline rejects it; cancel, or no answer, leaves it paused.
async function runAsking(runtime, server, code, extra, { approvalTools, elicitationTimeoutMs }) {
  let out = await runtime.execute({ code });
  const text = (o, note) => outcomeText(o, { approvalTools, note });
  while (out && out.status === 'paused' && !out.inProgress && Array.isArray(out.pending) && out.pending.length > 0) {
    const { executionId, pending } = out;
    let decision;
    try {
      decision = await server.server.elicitInput(approvalForm(pending, code), {
        relatedRequestId: extra.requestId,
        signal: extra.signal,
        timeout: elicitationTimeoutMs,
      });
    } catch (error) {
      return answer(text(out, `Asking the person failed (${messageOf(error)}); it stays paused.`));
    }
    if (decision.action === 'accept') {
      // One action: approve exactly it. Several at once: approve what waits (all of them).
      out = await runtime.approve(pending.length === 1 ? { executionId, seq: pending[0].seq } : { executionId });
      continue;
    }
    if (decision.action === 'decline') {
      const rejected = await runtime.reject({ executionId, seq: pending[0].seq });
      const what = pending.length === 1 && isProgram(pending[0]) ? 'the program' : pending.map(pendingPhrase).join('; ');
      if (!rejected) return answer(`The person declined ${what}, but it was no longer pending: nothing was rejected.`);
      return answer(`The person declined ${what}: it did not run, and the run ended as rejected.\n\n${JSON.stringify({ status: 'rejected', executionId }, null, 2)}`);
    }
    return answer(text(out, 'The person did not decide (the request was dismissed); it stays paused.'));
  }
  return outcomeAnswer(out, text);
}

// A person has this long to answer an approval form (the SDK's own default is 60 s).
const ELICITATION_TIMEOUT_MS = 10 * 60_000;

/**
 * The durable runtime as MCP tools, so an MCP client drives runs with no glue: `code` (a new
 * durable run; its description is the runtime tool's), `pending`, `search` and `describe`.
 * When a run pauses and the client declares elicitation, the person is asked through it
 * (accept approves and continues, decline rejects, cancel leaves the run paused); otherwise the
 * answer says "paused" and the application decides out of band (runtime.approve / reject).
 * `approve`, `reject` and `rollback` are tools only with `approvalTools: true`: the model could
 * call them. Registers them on `server` when given, else on a new McpServer (`name`, `version`),
 * which it returns.
 */
function runtimeMcpServer({ runtime, server, name = 'codemode-runtime', version = '1.0.0', description, approvalTools = false, elicitationTimeoutMs = ELICITATION_TIMEOUT_MS, withRequest, readOnly }) {
  if (readOnly !== undefined && typeof readOnly !== 'function') throw invalidArgument('runtimeMcpServer: readOnly must be a function (connector, method) => boolean');
  if (withRequest !== undefined && typeof withRequest !== 'function') throw invalidArgument('runtimeMcpServer: withRequest must be a function (extra, run) => run()');
  // Runs a tool call that runs programs inside the host's context for the request (its signal,
  // progress): `withRequest(extra, run)`.
  const around = withRequest ?? ((_extra, run) => run());
  if (!runtime || typeof runtime.execute !== 'function' || typeof runtime.approve !== 'function') {
    throw invalidArgument('runtimeMcpServer: runtime must be a durable runtime (createCodemodeRuntime)');
  }
  if (typeof approvalTools !== 'boolean') throw invalidArgument('runtimeMcpServer: approvalTools must be a boolean');
  if (typeof elicitationTimeoutMs !== 'number' || !(elicitationTimeoutMs > 0)) {
    throw invalidArgument('runtimeMcpServer: elicitationTimeoutMs must be a positive number of milliseconds');
  }
  const { McpServer, z } = sdk();
  const target = server ?? new McpServer({ name, version });
  const executionId = z.string().min(1).describe('The execution id, from the code tool\'s answer or pending');
  const seq = z.number().int().nonnegative().describe('The pending action\'s seq, as pending lists it');
  const options = { approvalTools, elicitationTimeoutMs };
  target.registerTool('code', {
    description: runtime.tool({ description }).description,
    inputSchema: { code: z.string().describe(CODE_FIELD) },
    annotations: EFFECTS,
  }, async ({ code }, extra) => around(extra, async () => {
    if (!canElicit(target)) return runtimeAnswer(() => runtime.execute({ code }), (out) => outcomeText(out, options));
    try {
      return await runAsking(runtime, target, code, extra, options);
    } catch (error) {
      return failure(`Error: ${messageOf(error)}`);
    }
  }));
  target.registerTool('pending', {
    description: 'List the actions awaiting a person\'s approval (of one execution, or of every paused one), with their executionId and seq.',
    inputSchema: { executionId: executionId.optional() },
    annotations: READ_ONLY,
  }, async (args) => runtimeAnswer(() => runtime.pending(args.executionId), (list) => JSON.stringify(list, null, 2)));
  if (approvalTools) {
    target.registerTool('approve', {
      description: 'Approve the pending action (executionId and seq, as pending lists them) and continue the run; only a person\'s decision should call this.',
      inputSchema: { executionId, seq: seq.optional() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    }, async (args, extra) => around(extra, () => runtimeAnswer(() => runtime.approve(args), (out) => outcomeText(out, options))));
    target.registerTool('reject', {
      description: 'Reject the pending action (executionId and seq), ending the run as rejected.',
      inputSchema: { executionId, seq },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    }, async (args) => runtimeAnswer(async () => ({ rejected: await runtime.reject(args) }), (out) => (out.rejected ? 'Rejected: the run ended as rejected.' : 'Nothing was rejected: that action is no longer pending.')));
    target.registerTool('rollback', {
      description: 'Undo the actions of a finished run, newest first, through their connectors\' revert.',
      inputSchema: { executionId },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    }, async (args) => {
      let answer;
      let thrown;
      try {
        answer = await runtime.rollback(args);
      } catch (error) {
        thrown = error;
      }
      try {
        const execution = await runtime.execution(args.executionId);
        if (execution === undefined) return failure(`Error: no execution "${args.executionId}"`);
        // An incomplete rollback throws with every call's fate; one that tried nothing, without.
        const calls = answer !== undefined ? answer.calls : (thrown && thrown.calls) || [];
        const refused = thrown !== undefined && thrown.calls === undefined ? thrown : undefined;
        return rollbackReport(args.executionId, execution.status, calls, refused, readOnly);
      } catch (error) {
        return failure(`Error: ${messageOf(thrown ?? error)}`);
      }
    });
  }
  target.registerTool('search', {
    description: 'Search the connectors\' methods and saved snippets by a query.',
    inputSchema: { query: z.string().describe('What to look for') },
    annotations: READ_ONLY,
  }, async ({ query }) => runtimeAnswer(() => runtime.search(query), (out) => JSON.stringify(out, null, 2)));
  target.registerTool('describe', {
    description: 'The TypeScript documentation of a connector, method (connector.method) or snippet.',
    inputSchema: { target: z.string().describe('A connector, connector.method or snippet name') },
    annotations: READ_ONLY,
  }, async ({ target: what }) => runtimeAnswer(() => runtime.describe(what), (out) => (typeof out === 'string' ? out : JSON.stringify(out, null, 2))));
  return target;
}

module.exports = { codeMcpServer, openApiMcpServer, runtimeMcpServer };
