'use strict';
// Connectors: the runtime's unit of integration (docs/cloudflare-compat.md §8). A connector names a sandbox
// namespace (`name()`), may add guidance for the model (`instructions()`), and lists its tools
// (`tools()`); the runtime only ever uses the derived surface — `describe()`, `executeTool()`,
// `revertAction()`, `onPassEnd()`, `disposeExecution()`, `getTypeScriptTypes()` (§6.1).
//
// Four classes, written from the contract and checked against Cloudflare's published 0.5.6
// classes in __test__/compat/connectors.test.js:
//   CodemodeConnector  the base (§8.1)
//   McpConnector       tools of an MCP connection (§8.2); any object shaped like an MCP client
//                      works, @modelcontextprotocol/sdk is never loaded here
//   OpenApiConnector   one tool per operation of an OpenAPI document (§8.3)
//   ToolSetConnector   an AI SDK ToolSet (§8.4; Cloudflare's `/ai` entry), without loading `ai`
//
// Cloudflare's connectors extend `WorkerEntrypoint` and are constructed with `(ctx, env)`; here
// they are plain classes. The arguments are accepted and kept as `this.ctx` / `this.env` (what
// `WorkerEntrypoint` does), so a subclass written for Workers that reads `this.env` still works;
// nothing in this file uses them.

const { sanitizeToolName } = require('../cloudflare/names.js');
const { generateTypesFromJsonSchema } = require('../cloudflare/schema-types.js');

const hasOwn = (obj, key) => obj !== null && typeof obj === 'object' && Object.prototype.hasOwnProperty.call(obj, key);

// Assigns an own, enumerable property even for the name "__proto__" (a plain assignment would
// replace the prototype instead). Tool names come from tool authors, MCP servers and API specs.
function setOwn(obj, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

function isObject(value) {
  return value !== null && typeof value === 'object';
}

// A tool's input schema as the runtime describes it: the first of `inputSchema` and
// `parameters` (the AI SDK v4 field) that looks like JSON Schema — it has `type`, `properties`
// or `$ref` — else an open object. A zod schema (or anything else) is therefore described as
// `{ type: "object" }`.
function toolInputSchema(t) {
  for (const candidate of [t.inputSchema, t.parameters]) {
    if (isObject(candidate) && ('type' in candidate || 'properties' in candidate || '$ref' in candidate)) {
      return candidate;
    }
  }
  return { type: 'object' };
}

function className(obj) {
  return (obj && obj.constructor && obj.constructor.name) || 'CodemodeConnector';
}

// ───────────────────────────────────────────────────────────── CodemodeConnector (§8.1) ──

/**
 * Base class for connectors. Subclasses implement `name()` and `tools()`, and optionally
 * `instructions()` and the `tool(name, t)` decoration hook. Everything else is derived.
 *
 * A tool (`ConnectorTool`) is `{ description?, inputSchema?, outputSchema?, requiresApproval?,
 * replay?: "log" | "reexecute", execute(args, ctx?), revert?(args, result, ctx?) }`, where
 * `ctx` is `{ executionId }`, stable across the passes of one execution.
 */
class CodemodeConnector {
  #toolsPromise;

  /**
   * Cloudflare's signature is `(ctx, env)`; both are optional here and only stored.
   * @param {unknown} [ctx]
   * @param {unknown} [env]
   */
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }

  /** The namespace the sandbox sees (a JavaScript identifier, not "codemode"). Required. */
  name() {
    throw new Error(`${className(this)} must implement name() — it returns the namespace the sandbox sees`);
  }

  /** Extra guidance for the model, shown with the connector's types. Optional. */
  instructions() {
    return undefined;
  }

  /** The tools record, `Record<name, ConnectorTool>` (may be async). Required. */
  tools() {
    throw new Error(`${className(this)} must implement tools() — it returns the connector's tools record`);
  }

  /** Decoration hook, called once per tool when the tools are first resolved. */
  tool(_name, t) {
    return t;
  }

  /**
   * `tools()` resolved once per instance (the promise is kept, a rejection included): entries
   * that are not objects are skipped, the rest pass through `tool(name, t)`.
   * @returns {Promise<Record<string, object>>}
   */
  resolvedTools() {
    if (!this.#toolsPromise) {
      this.#toolsPromise = (async () => {
        const tools = await this.tools();
        if (!isObject(tools)) {
          throw new TypeError(`tools() of connector "${this.name()}" must return an object of tools (got ${tools === null ? 'null' : typeof tools})`);
        }
        const out = {};
        for (const [name, t] of Object.entries(tools)) {
          if (!isObject(t)) continue;
          setOwn(out, name, this.tool(name, t));
        }
        return out;
      })();
    }
    return this.#toolsPromise;
  }

  /**
   * `{ name, instructions, descriptors: { <tool>: { description, inputSchema, outputSchema } },
   * annotations }`; `annotations` holds only the tools that require approval and/or are
   * re-executed on replay.
   */
  async describe() {
    const tools = await this.resolvedTools();
    const descriptors = {};
    const annotations = {};
    for (const [name, t] of Object.entries(tools)) {
      const reexecute = t.replay === 'reexecute';
      if (t.requiresApproval && reexecute) {
        throw new Error(`Connector "${this.name()}" tool "${name}" cannot combine requiresApproval with replay: "reexecute" — approved actions must be logged, not re-executed.`);
      }
      setOwn(descriptors, name, {
        description: t.description,
        inputSchema: toolInputSchema(t),
        outputSchema: t.outputSchema,
      });
      if (t.requiresApproval || reexecute) {
        const annotation = {};
        if (t.requiresApproval) annotation.requiresApproval = true;
        if (reexecute) annotation.replay = 'reexecute';
        setOwn(annotations, name, annotation);
      }
    }
    return { name: this.name(), instructions: this.instructions(), descriptors, annotations };
  }

  /** Runs one tool: `await tool.execute(args, ctx)`. An unknown tool rejects. */
  async executeTool(method, args, ctx) {
    const tools = await this.resolvedTools();
    const tool = hasOwn(tools, method) ? tools[method] : undefined;
    if (!tool) throw new Error(`Tool "${method}" not found on ${this.name()}`);
    if (typeof tool.execute !== 'function') {
      throw new TypeError(`Tool "${method}" on ${this.name()} has no execute function`);
    }
    return await tool.execute(args, ctx);
  }

  /**
   * Undoes an applied call. `false` when the tool or its `revert` is missing (nothing ran),
   * `true` once `revert(args, result, ctx)` has settled; a throwing revert rejects.
   */
  async revertAction(method, args, result, ctx) {
    const tools = await this.resolvedTools();
    const tool = hasOwn(tools, method) ? tools[method] : undefined;
    if (!tool || typeof tool.revert !== 'function') return false;
    await tool.revert(args, result, ctx);
    return true;
  }

  /** End of every pass (`paused`, `completed`, `error`). No-op by default. */
  async onPassEnd(_executionId, _status) {}

  /** Terminal transition (`completed`, `error`, `rejected`, `rolled_back`). No-op by default. */
  async disposeExecution(_executionId, _status) {}

  /** The connector's type block: `declare const <name>: { … }`. */
  async getTypeScriptTypes() {
    const { descriptors } = await this.describe();
    return generateTypesFromJsonSchema(descriptors).replace('declare const codemode', `declare const ${this.name()}`);
  }
}

// ─────────────────────────────────────────────────────────────────── McpConnector (§8.2) ──

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
 * per instance and kept.
 */
class McpConnector extends CodemodeConnector {
  #connectionPromise;

  createConnection() {
    throw new Error(`${className(this)} must implement createConnection() — it returns { client, tools?, fetchTools?, instructions? }`);
  }

  /** The connector tool name for an MCP tool; sanitized by default. */
  toolName(tool) {
    return sanitizeToolName(tool.name);
  }

  /** The connection, created on first use and kept (a rejection included). */
  getConnection() {
    if (!this.#connectionPromise) this.#connectionPromise = Promise.resolve(this.createConnection());
    return this.#connectionPromise;
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
        throw new Error(`MCP tools "${sources.get(name)}" and "${mcpTool.name}" on ${this.name()} both map to "${name}". Override toolName() to disambiguate.`);
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

// ─────────────────────────────────────────────────────────────── OpenApiConnector (§8.3) ──

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];
const OPENAPI_RESERVED = new Set(['request', 'spec']);

const REQUEST_TOOL_DESCRIPTION = 'Escape hatch: perform an authenticated request to a path (and optional method, params, body, headers). Prefer the per-operation tools.';
const SPEC_TOOL_DESCRIPTION = 'Return the raw OpenAPI document.';

// Operations derived from one spec object, kept as long as the object lives.
const derivedOperations = new WeakMap();

function operationsOf(spec) {
  if (!isObject(spec)) return [];
  let operations = derivedOperations.get(spec);
  if (!operations) {
    operations = deriveOperations(spec);
    derivedOperations.set(spec, operations);
  }
  return operations;
}

// Paths in document order, methods in HTTP_METHODS order; a name that is reserved or already
// taken skips the operation, with a warning on the host console.
function deriveOperations(doc) {
  const operations = [];
  const used = new Set();
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const name = sanitizeToolName(operation.operationId ? operation.operationId : `${method}_${path}`);
      const reserved = OPENAPI_RESERVED.has(name);
      if (reserved || used.has(name)) {
        console.warn(`[OpenApiConnector] operation ${method.toUpperCase()} ${path} maps to tool name "${name}", which is ${reserved ? 'reserved' : 'already used'} — skipping. Set a unique operationId to expose it.`);
        continue;
      }
      used.add(name);
      operations.push(deriveOperation(doc, path, method, operation, name));
    }
  }
  return operations;
}

function deriveOperation(doc, path, method, operation, name) {
  const parameters = (Array.isArray(operation.parameters) ? operation.parameters : [])
    .filter((p) => isObject(p) && !!p.name);
  const requestBody = isObject(operation.requestBody) ? operation.requestBody : undefined;
  const jsonContent = requestBody && isObject(requestBody.content) ? requestBody.content['application/json'] : undefined;
  const bodySchema = inlineRefs(isObject(jsonContent) ? jsonContent.schema : undefined, doc);

  const properties = {};
  const required = [];
  for (const param of parameters) {
    setOwn(properties, param.name, withDescription(inlineRefs(param.schema, doc) ?? {}, param.description));
    if (param.required) required.push(param.name);
  }
  if (bodySchema !== undefined) {
    properties.body = bodySchema;
    if (requestBody.required === true) required.push('body');
  }
  const inputSchema = { type: 'object', properties };
  if (required.length > 0) inputSchema.required = required;

  return {
    name,
    description: operation.summary || operation.description || `${method.toUpperCase()} ${path}`,
    inputSchema,
    path,
    method,
    parameters,
  };
}

// A parameter's description is copied onto its schema when the schema has none.
function withDescription(schema, description) {
  if (!description || !isObject(schema)) return schema;
  return { ...schema, description: schema.description ?? description };
}

// Inlines local `#/…` references, recursively through properties, items, additionalProperties
// and allOf/oneOf/anyOf. An external, unresolvable or cyclic reference becomes an open object;
// a reference's sibling keywords are dropped. `seen` holds the references on the current path.
function inlineRefs(schema, root, seen = new Set()) {
  if (!isObject(schema)) return schema;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (!ref.startsWith('#/') || seen.has(ref)) return { type: 'object' };
    const target = jsonPointer(root, ref.slice(2).split('/'));
    if (!isObject(target) && typeof target !== 'boolean') return { type: 'object' };
    return inlineRefs(target, root, new Set(seen).add(ref));
  }
  const out = { ...schema };
  if (schema.properties) {
    out.properties = {};
    for (const [key, value] of Object.entries(schema.properties)) {
      setOwn(out.properties, key, inlineRefs(value, root, seen) ?? {});
    }
  }
  if (schema.items && !Array.isArray(schema.items)) out.items = inlineRefs(schema.items, root, seen);
  if (isObject(schema.additionalProperties)) {
    out.additionalProperties = inlineRefs(schema.additionalProperties, root, seen);
  }
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    if (Array.isArray(schema[key])) out[key] = schema[key].map((s) => inlineRefs(s, root, seen) ?? {});
  }
  return out;
}

function jsonPointer(root, segments) {
  let current = root;
  for (const segment of segments) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

// A derived tool's input → the `request()` options: path parameters substituted (URI-encoded),
// query parameters → `params`, header parameters → `headers` (as strings), `body` when given.
function toRequest(op, args) {
  const input = isObject(args) ? args : {};
  let path = op.path;
  const params = {};
  const headers = {};
  for (const param of op.parameters) {
    const value = input[param.name];
    if (value === undefined) continue;
    if (param.in === 'path') path = path.replace(`{${param.name}}`, encodeURIComponent(String(value)));
    else if (param.in === 'query') setOwn(params, param.name, value);
    else if (param.in === 'header') setOwn(headers, param.name, String(value));
  }
  const request = { path, method: op.method.toUpperCase() };
  if (Object.keys(params).length > 0) request.params = params;
  if ('body' in input) request.body = input.body;
  if (Object.keys(headers).length > 0) request.headers = headers;
  return request;
}

/**
 * A connector over an OpenAPI document. Subclasses implement `spec()` (the document, or a
 * promise of it) and `request({ path, method?, params?, body?, headers? })` (the authenticated
 * HTTP call); `exposeSpec()` (default false) adds a `spec` tool returning the document.
 *
 * Tools: `spec` (when exposed), `request` (the escape hatch, passing its input straight to
 * `request()`), then one per operation, named by its sanitized operationId (else
 * `<method>_<path>`), taking `{ ...parameters, body? }`. The derivation is cached per spec object.
 */
class OpenApiConnector extends CodemodeConnector {
  spec() {
    throw new Error(`${className(this)} must implement spec() — it returns the OpenAPI document`);
  }

  request(_options) {
    throw new Error(`${className(this)} must implement request({ path, method, params, body, headers })`);
  }

  exposeSpec() {
    return false;
  }

  async tools() {
    const operations = operationsOf(await this.spec());
    const tools = {};
    if (this.exposeSpec()) {
      tools.spec = {
        description: SPEC_TOOL_DESCRIPTION,
        inputSchema: { type: 'object', properties: {} },
        execute: () => this.spec(),
      };
    }
    tools.request = {
      description: REQUEST_TOOL_DESCRIPTION,
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          method: { type: 'string' },
          params: { type: 'object', additionalProperties: true },
          body: {},
          headers: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['path'],
      },
      execute: (args) => this.request(args),
    };
    for (const op of operations) {
      setOwn(tools, op.name, {
        description: op.description,
        inputSchema: op.inputSchema,
        execute: (args) => this.request(toRequest(op, args)),
      });
    }
    return tools;
  }
}

// ───────────────────────────────────────────────────────────── ToolSetConnector (§8.4) ──
//
// Cloudflare converts each tool's schema with the AI SDK's `asSchema` (so it needs the `ai`
// package). This file loads nothing; it reads the schema shapes the AI SDK produces directly:
//   - an AI SDK `Schema` (what `jsonSchema()`, `zodSchema()` and `tool()` give: an object with
//     a `jsonSchema` property — a value, a promise, or a getter — and an optional `validate`):
//     its JSON Schema (awaited), validated with its `validate` when present;
//   - a Standard Schema (zod 3.24+/4, Valibot, ArkType, …: a `~standard` property, on an object
//     or, as ArkType's, on a function): JSON Schema from its Standard JSON Schema converter
//     (`~standard.jsonSchema.input({ target: "draft-07" })`, zod 4.2+ and others) when it has
//     one, else an open object; validated with zod's `safeParseAsync` for zod (the ZodError is
//     thrown, as the AI SDK does) and with `~standard.validate` otherwise (an error named
//     AI_TypeValidationError with the AI SDK's message is thrown);
//   - any other function (an AI SDK lazy schema): called, and its result read as above;
//   - a schema with `safeParseAsync` but no `~standard` (older zod 3): an open object, validated;
//   - any other object: taken as a plain JSON Schema (the AI SDK would reject it); the base
//     class describes it as an open object unless it has `type`, `properties` or `$ref`.

const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema');

function errorText(value) {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

// The AI SDK's TypeValidationError, by name and message (its class is not available here).
function typeValidationError(value, cause) {
  let shown;
  try {
    shown = JSON.stringify(value);
  } catch {
    shown = String(value);
  }
  const error = new Error(`Type validation failed: Value: ${shown}.\nError message: ${errorText(cause)}`, { cause });
  error.name = 'AI_TypeValidationError';
  error.value = value;
  return error;
}

// `{ jsonSchema(): Promise<object|undefined>, validate?(value) }` for a raw tool schema.
function asToolSchema(raw) {
  const callable = typeof raw === 'function';
  if (!isObject(raw) && !callable) return { jsonSchema: async () => raw, validate: undefined };

  if (raw[AI_SDK_SCHEMA] === true || ('jsonSchema' in raw && !('~standard' in raw))) {
    return {
      jsonSchema: async () => await raw.jsonSchema,
      validate: typeof raw.validate === 'function' ? (value) => raw.validate(value) : undefined,
    };
  }

  const standard = isObject(raw['~standard']) ? raw['~standard'] : undefined;
  if (standard) {
    const converter = standard.jsonSchema;
    const jsonSchema = async () => (isObject(converter) && typeof converter.input === 'function'
      ? converter.input({ target: 'draft-07' })
      : { type: 'object' });
    if (standard.vendor === 'zod' && typeof raw.safeParseAsync === 'function') {
      return { jsonSchema, validate: zodValidator(raw) };
    }
    if (typeof standard.validate === 'function') {
      return {
        jsonSchema,
        validate: async (value) => {
          const result = await standard.validate(value);
          return isObject(result) && 'value' in result && !result.issues
            ? { success: true, value: result.value }
            : { success: false, error: typeValidationError(value, result && result.issues) };
        },
      };
    }
    return { jsonSchema, validate: undefined };
  }

  // A function that is not a Standard Schema (ArkType types are callable ones) is lazy.
  if (callable) return asToolSchema(raw());

  if (typeof raw.safeParseAsync === 'function') {
    return { jsonSchema: async () => ({ type: 'object' }), validate: zodValidator(raw) };
  }

  return { jsonSchema: async () => raw, validate: undefined };
}

function zodValidator(schema) {
  return async (value) => {
    const result = await schema.safeParseAsync(value);
    return result.success ? { success: true, value: result.data } : { success: false, error: result.error };
  };
}

// The JSON Schema of what an output schema produces: the output side of a Standard JSON Schema
// converter when there is one, else the schema read as an input schema. A schema that cannot be
// converted is left out (the output type is advisory).
async function outputJsonSchema(raw) {
  if (raw == null) return undefined;
  try {
    const converter = (isObject(raw) || typeof raw === 'function') && isObject(raw['~standard'])
      ? raw['~standard'].jsonSchema
      : undefined;
    if (isObject(converter) && typeof converter.output === 'function') {
      const schema = converter.output({ target: 'draft-07' });
      if (schema) return schema;
    }
    return await asToolSchema(raw).jsonSchema();
  } catch {
    return undefined;
  }
}

/**
 * Adapts an AI SDK `ToolSet` to the connector model, under the namespace `name` (default
 * `"tools"`). As Cloudflare: `new ToolSetConnector(ctx, { tools, name?, instructions? })`;
 * on Node the context may be left out: `new ToolSetConnector({ tools, name?, instructions? })`.
 *
 * Tools without an `execute` function are skipped (one warning naming them); names are
 * sanitized; inputs are validated before `execute` runs when the schema can validate;
 * `needsApproval` (true or a function — a function cannot be evaluated ahead of time) becomes
 * `requiresApproval: true`.
 */
class ToolSetConnector extends CodemodeConnector {
  #options;
  #warnedSkipped = false;

  constructor(ctx, options) {
    if (options === undefined && isObject(ctx) && isObject(ctx.tools)) {
      options = ctx;
      ctx = undefined;
    }
    super(ctx, {});
    if (!isObject(options) || !isObject(options.tools)) {
      throw new TypeError('ToolSetConnector needs options with a `tools` record (an AI SDK ToolSet): new ToolSetConnector(ctx, { tools, name?, instructions? })');
    }
    this.#options = options;
  }

  name() {
    return this.#options.name ?? 'tools';
  }

  instructions() {
    return this.#options.instructions;
  }

  // The tools the sandbox can call: those with an execute function.
  #executableTools() {
    const executable = [];
    const skipped = [];
    for (const [toolName, t] of Object.entries(this.#options.tools)) {
      if (isObject(t) && typeof t.execute === 'function') executable.push([toolName, t]);
      else skipped.push(toolName);
    }
    if (skipped.length > 0 && !this.#warnedSkipped) {
      this.#warnedSkipped = true;
      console.warn(`[codemode] ToolSetConnector "${this.name()}" skipped tools without an execute function (client-side or provider-executed): ${skipped.join(', ')}. They are not callable from sandboxed code.`);
    }
    return executable;
  }

  async tools() {
    const out = {};
    const sources = new Map(); // sanitized name → ToolSet key
    for (const [toolName, t] of this.#executableTools()) {
      const execute = t.execute;
      const name = sanitizeToolName(toolName);
      if (sources.has(name)) {
        throw new Error(`Tools "${sources.get(name)}" and "${toolName}" on ${this.name()} both map to "${name}" — rename one of them.`);
      }
      sources.set(name, toolName);

      const rawSchema = 'inputSchema' in t ? t.inputSchema : t.parameters;
      const schema = rawSchema != null ? asToolSchema(rawSchema) : undefined;
      const inputSchema = schema ? await schema.jsonSchema() : undefined;
      const outputSchema = await outputJsonSchema(t.outputSchema);
      const requiresApproval = t.needsApproval !== undefined && t.needsApproval !== false;
      const validate = schema && schema.validate;

      const connectorTool = {
        description: typeof t.description === 'function' ? undefined : t.description,
        inputSchema,
      };
      if (outputSchema) connectorTool.outputSchema = outputSchema;
      if (requiresApproval) connectorTool.requiresApproval = true;
      connectorTool.execute = validate
        ? async (args) => {
          const result = await validate(args);
          if (!result.success) throw result.error;
          return execute(result.value);
        }
        : (args) => execute(args);
      setOwn(out, name, connectorTool);
    }
    return out;
  }

  /**
   * The type block, built (as Cloudflare does) from the ToolSet itself rather than from
   * `describe()`: the executable tools in ToolSet order, documented under their original
   * names when they have no description, a tool without an input schema typed `unknown`,
   * and no collision check.
   */
  async getTypeScriptTypes() {
    const descriptors = {};
    for (const [toolName, t] of this.#executableTools()) {
      const rawSchema = 'inputSchema' in t ? t.inputSchema : t.parameters;
      let inputSchema = true; // `unknown`
      if (rawSchema != null) {
        try {
          const schema = await asToolSchema(rawSchema).jsonSchema();
          if (isObject(schema) || typeof schema === 'boolean') inputSchema = schema;
        } catch {
          // an unconvertible schema is typed `unknown`
        }
      }
      setOwn(descriptors, toolName, {
        description: typeof t.description === 'string' ? t.description : undefined,
        inputSchema,
        outputSchema: await outputJsonSchema(t.outputSchema),
      });
    }
    return generateTypesFromJsonSchema(descriptors).replace('declare const codemode', `declare const ${this.name()}`);
  }
}

/** `new ToolSetConnector(ctx, options)`, as Cloudflare's `toolSetConnector`. */
function toolSetConnector(ctx, options) {
  return new ToolSetConnector(ctx, options);
}

module.exports = {
  CodemodeConnector,
  McpConnector,
  OpenApiConnector,
  ToolSetConnector,
  toolSetConnector,
};
