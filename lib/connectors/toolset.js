'use strict';
// ToolSetConnector (docs/cloudflare-compat.md §8.4; Cloudflare's `/ai` entry): an AI SDK ToolSet
// as a connector, read without loading the `ai` package.
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

const { sanitizeToolName } = require('../cloudflare/names.js');
const { generateTypesFromJsonSchema } = require('../cloudflare/schema-types.js');
const { isObject } = require('../util.js');
const { invalidArgument } = require('../errors.js');
const { CodemodeConnector, setOwn } = require('./base.js');

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
      throw invalidArgument('ToolSetConnector needs options with a `tools` record (an AI SDK ToolSet): new ToolSetConnector(ctx, { tools, name?, instructions? })');
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
        throw invalidArgument(`Tools "${sources.get(name)}" and "${toolName}" on ${this.name()} both map to "${name}" — rename one of them.`);
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

module.exports = { ToolSetConnector, toolSetConnector };
