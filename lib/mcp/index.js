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
const { invalidArgument } = require('../executor/errors.js');

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

/**
 * An MCP server with one `code` tool over every tool of `server` (an McpServer, reached
 * through an in-memory client): programs call them as `codemode.<tool>(args)`.
 */
async function codeMcpServer({ server, executor, description }) {
  const { McpServer, Client, InMemoryTransport, z } = sdk();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'codemode-proxy', version: '1.0.0' });
  await client.connect(clientSide);
  const { tools } = await client.listTools();
  const descriptors = {};
  const fns = {};
  for (const t of tools) {
    descriptors[t.name] = { description: t.description, inputSchema: t.inputSchema };
    fns[t.name] = async (args) => plainValue(await client.callTool({ name: t.name, arguments: args }));
  }
  const text = (description ?? MCP_TEMPLATE)
    .replace('{{types}}', generateTypesFromJsonSchema(descriptors))
    .replace('{{example}}', exampleLine(tools[0]));
  const proxy = new McpServer({ name: 'codemode', version: '1.0.0' });
  proxy.registerTool('code', {
    description: text,
    inputSchema: { code: z.string().describe(CODE_FIELD) },
  }, async ({ code }) => executorAnswer(() => executor.execute(code, [{ name: 'codemode', fns }])));
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
  }, async ({ code }) => executorAnswer(() => executor.execute(openApiProgram(code, spec, false), [])));
  const executeDescription = `Execute API calls using JavaScript code. First use 'search' to find the right endpoints.

Available in your code:
${REQUEST_TYPES}

Your code must be an async arrow function that returns the result.

Example:
async () => {
  return await codemode.request({ method: "GET", path: "/your/endpoint" });
}${description ? `\n\n${description}` : ''}`;
  server.registerTool('execute', {
    description: executeDescription,
    inputSchema: { code: z.string().describe(CODE_FIELD) },
  }, async ({ code }, context) => executorAnswer(() => executor.execute(openApiProgram(code, spec, true), [
    { name: '__openapiHost', fns: { request: (args) => request(args, context) } },
  ])));
  return server;
}

// ---- runtimeMcpServer (not in Cloudflare) --------------------------------------------------------

// What a model reads for a runtime outcome: the runtime's model output (§9.4, without the host's
// call log) as JSON, and, for a paused run, one plain sentence on what waits and how it goes on.
function outcomeText(output) {
  const json = JSON.stringify(toModelOutput(output).value, null, 2);
  if (!output || output.status !== 'paused') return json;
  const waiting = output.pending.map((p) => `${p.connector}.${p.method}(${JSON.stringify(p.args)}) (seq ${p.seq}${p.inDoubt ? ', in doubt: it may or may not have run' : ''})`);
  return `The run is paused: ${waiting.join('; ')} awaits a person's approval. It continues when the user approves it (tool "approve" with { executionId: "${output.executionId}", seq }); "reject" refuses it.\n\n${json}`;
}

// A runtime call as one tool answer: its outcome, or the thrown error as an MCP error.
async function runtimeAnswer(run, text = outcomeText) {
  try {
    const out = await run();
    const error = out && out.status === 'error';
    return { content: [{ type: 'text', text: text(out) }], ...(error ? { isError: true } : {}) };
  } catch (error) {
    return failure(`Error: ${messageOf(error)}`);
  }
}

/**
 * The durable runtime as MCP tools, so an MCP client drives runs, pauses and approvals with no
 * glue: `code` (a new durable run; its description is the runtime tool's), `pending`,
 * `approve`, `reject`, `rollback`, `search` and `describe`. Registers them on `server` when
 * given, else on a new McpServer (`name`, `version`), which it returns.
 */
function runtimeMcpServer({ runtime, server, name = 'codemode-runtime', version = '1.0.0', description }) {
  if (!runtime || typeof runtime.execute !== 'function' || typeof runtime.approve !== 'function') {
    throw invalidArgument('runtimeMcpServer: runtime must be a durable runtime (createCodemodeRuntime)');
  }
  const { McpServer, z } = sdk();
  const target = server ?? new McpServer({ name, version });
  const executionId = z.string().min(1).describe('The execution id, from the code tool\'s answer or pending');
  const seq = z.number().int().nonnegative().describe('The pending action\'s seq, as pending lists it');
  target.registerTool('code', {
    description: runtime.tool({ description }).description,
    inputSchema: { code: z.string().describe(CODE_FIELD) },
  }, async ({ code }) => runtimeAnswer(() => runtime.execute({ code })));
  target.registerTool('pending', {
    description: 'List the actions awaiting approval (of one execution, or of every paused one), with their executionId and seq.',
    inputSchema: { executionId: executionId.optional() },
  }, async (args) => runtimeAnswer(() => runtime.pending(args.executionId), (list) => JSON.stringify(list, null, 2)));
  target.registerTool('approve', {
    description: 'Approve the pending action (executionId and seq, as pending lists them) and continue the run; only a person\'s decision should call this.',
    inputSchema: { executionId, seq: seq.optional() },
  }, async (args) => runtimeAnswer(() => runtime.approve(args)));
  target.registerTool('reject', {
    description: 'Reject the pending action (executionId and seq), ending the run as rejected.',
    inputSchema: { executionId, seq },
  }, async (args) => runtimeAnswer(async () => ({ rejected: await runtime.reject(args) }), (out) => (out.rejected ? 'Rejected: the run ended as rejected.' : 'Nothing was rejected: that action is no longer pending.')));
  target.registerTool('rollback', {
    description: 'Undo the actions of a finished run, newest first, through their connectors\' revert.',
    inputSchema: { executionId },
  }, async (args) => runtimeAnswer(async () => {
    await runtime.rollback(args);
    return runtime.execution(args.executionId);
  }, (execution) => `Rolled back: the run is now ${execution ? execution.status : 'gone'}.`));
  target.registerTool('search', {
    description: 'Search the connectors\' methods and saved snippets by a query.',
    inputSchema: { query: z.string().describe('What to look for') },
  }, async ({ query }) => runtimeAnswer(() => runtime.search(query), (out) => JSON.stringify(out, null, 2)));
  target.registerTool('describe', {
    description: 'The TypeScript documentation of a connector, method (connector.method) or snippet.',
    inputSchema: { target: z.string().describe('A connector, connector.method or snippet name') },
  }, async ({ target: what }) => runtimeAnswer(() => runtime.describe(what), (out) => (typeof out === 'string' ? out : JSON.stringify(out, null, 2))));
  return target;
}

module.exports = { codeMcpServer, openApiMcpServer, runtimeMcpServer };
