'use strict';
// The base connector (docs/cloudflare-compat.md §8.1) and the helpers the other connectors share:
// the derived surface the runtime uses is written once here, subclasses only list tools.
//
// Cloudflare's connectors extend `WorkerEntrypoint` and are constructed with `(ctx, env)`; here
// they are plain classes. The arguments are accepted and kept as `this.ctx` / `this.env` (what
// `WorkerEntrypoint` does), so a subclass written for Workers that reads `this.env` still works;
// nothing in lib/connectors uses them.

const { generateTypesFromJsonSchema } = require('../cloudflare/schema-types.js');
const { isObject } = require('../util.js');
const { invalidArgument } = require('../errors.js');

const hasOwn = (obj, key) => isObject(obj) && Object.prototype.hasOwnProperty.call(obj, key);

// Assigns an own, enumerable property even for the name "__proto__" (a plain assignment would
// replace the prototype instead). Tool names come from tool authors, MCP servers and API specs.
function setOwn(obj, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
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

/**
 * Base class for connectors. Subclasses implement `name()` and `tools()`, and optionally
 * `instructions()` and the `tool(name, t)` decoration hook. Everything else is derived.
 *
 * A tool (`ConnectorTool`) is `{ description?, inputSchema?, outputSchema?, requiresApproval?,
 * replay?: "log" | "reexecute", idempotent?, execute(args, ctx?), revert?(args, result, ctx?) }`,
 * where `ctx` is `{ executionId, seq, idempotencyKey }`, the same on every pass of one
 * execution. `idempotent: true` promises that running the call twice with the same
 * `idempotencyKey` has the effect of running it once: a call left in doubt by a crash is then
 * retried by recovery instead of waiting for a person.
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
    throw invalidArgument(`${className(this)} must implement name() — it returns the namespace the sandbox sees`);
  }

  /** Extra guidance for the model, shown with the connector's types. Optional. */
  instructions() {
    return undefined;
  }

  /** The tools record, `Record<name, ConnectorTool>` (may be async). Required. */
  tools() {
    throw invalidArgument(`${className(this)} must implement tools() — it returns the connector's tools record`);
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
          throw invalidArgument(`tools() of connector "${this.name()}" must return an object of tools (got ${tools === null ? 'null' : typeof tools})`);
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
   * annotations }`; `annotations` holds only the tools that require approval, are re-executed
   * on replay, or are idempotent.
   */
  async describe() {
    const tools = await this.resolvedTools();
    const descriptors = {};
    const annotations = {};
    for (const [name, t] of Object.entries(tools)) {
      const reexecute = t.replay === 'reexecute';
      if (t.requiresApproval && reexecute) {
        throw invalidArgument(`Connector "${this.name()}" tool "${name}" cannot combine requiresApproval with replay: "reexecute" — approved actions must be logged, not re-executed.`);
      }
      setOwn(descriptors, name, {
        description: t.description,
        inputSchema: toolInputSchema(t),
        outputSchema: t.outputSchema,
      });
      if (t.requiresApproval || reexecute || t.idempotent === true) {
        const annotation = {};
        if (t.requiresApproval) annotation.requiresApproval = true;
        if (reexecute) annotation.replay = 'reexecute';
        if (t.idempotent === true) annotation.idempotent = true;
        setOwn(annotations, name, annotation);
      }
    }
    return { name: this.name(), instructions: this.instructions(), descriptors, annotations };
  }

  /** Runs one tool: `await tool.execute(args, ctx)`. An unknown tool rejects. */
  async executeTool(method, args, ctx) {
    const tools = await this.resolvedTools();
    const tool = hasOwn(tools, method) ? tools[method] : undefined;
    if (!tool) throw invalidArgument(`Tool "${method}" not found on ${this.name()}`);
    if (typeof tool.execute !== 'function') {
      throw invalidArgument(`Tool "${method}" on ${this.name()} has no execute function`);
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

module.exports = {
  CodemodeConnector,
  className,
  hasOwn,
  setOwn,
};
