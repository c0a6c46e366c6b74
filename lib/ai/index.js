'use strict';
// `@supolka/codemode-executor/ai`: Cloudflare's `@cloudflare/codemode/ai` on plain Node
// (docs/cloudflare-compat.md §8.4, §14): createCodeTool, aiTools, resolveProvider,
// generateTypes, ToolSetConnector and toolSetConnector. It needs the AI SDK (`ai`, which
// whoever imports this entry has), loaded on first use; nothing of Workers, and no zod (the code
// tool's input schema is the AI SDK's `jsonSchema()`).

const { runCode } = require('../cloudflare/run-code.js');
const { AI_DESCRIPTION, CODE_FIELD } = require('../cloudflare/code-tool-text.js');
const { sanitizeToolName } = require('../cloudflare/names.js');
const { jsonSchemaToType, pascalCase, escapeComment, oneLine } = require('../cloudflare/schema-types.js');
const { ToolSetConnector, toolSetConnector } = require('../connectors/toolset.js');
const { isObject } = require('../util.js');
const { invalidArgument } = require('../executor/errors.js');

const DEFAULT_DESCRIPTION = AI_DESCRIPTION;


let aiSdk;
function ai() {
  if (aiSdk === undefined) {
    try {
      aiSdk = require('ai');
    } catch (error) {
      const fault = invalidArgument(`@supolka/codemode-executor/ai needs the AI SDK (npm install ai), which could not be loaded: ${error.message}`);
      // The loader's error as `cause`, as `new Error(message, { cause })` gives it.
      Object.defineProperty(fault, 'cause', { value: error, writable: true, configurable: true });
      throw fault;
    }
  }
  return aiSdk;
}

// ---- Schemas of AI SDK tools ------------------------------------------------------------------

const isZod = (s) => isObject(s) && s._zod !== undefined;
const isStandard = (s) => isObject(s) && s['~standard'] !== undefined;

// The JSON Schema inside an AI SDK `jsonSchema()` wrapper (as a property, or behind one of its
// symbols), or null.
function wrappedJsonSchema(s) {
  if (!isObject(s)) return null;
  if ('jsonSchema' in s) return s.jsonSchema;
  for (const symbol of Object.getOwnPropertySymbols(s)) {
    const inner = s[symbol];
    if (isObject(inner) && 'jsonSchema' in inner) return inner.jsonSchema;
  }
  return null;
}
const isWrapper = (s) => isObject(s) && ('jsonSchema' in s || Object.getOwnPropertySymbols(s).some((k) => isObject(s[k]) && 'jsonSchema' in s[k]));

// `type <name> = …` for a tool's input: zod and Standard Schemas through the AI SDK's
// `asSchema`, `jsonSchema()` wrappers as they are; anything else (or a failure) is `unknown`.
function inputType(schema, name) {
  try {
    if (isZod(schema) || isStandard(schema)) {
      const json = ai().asSchema(schema).jsonSchema;
      if (json) return jsonSchemaToType(json, name);
    }
    if (isWrapper(schema)) {
      const json = wrappedJsonSchema(schema);
      if (json) return jsonSchemaToType(json, name);
    }
  } catch {
    // unknown, below
  }
  return `type ${name} = unknown`;
}

// The type of the value an output schema *produces*: from its Standard JSON Schema output
// converter where it has one (the input side gets `.default()` and `.pipe()` wrong); an output
// that cannot be represented is `unknown`, never the input type.
function outputType(schema, name) {
  let json;
  try {
    const converter = isStandard(schema) ? schema['~standard'].jsonSchema : undefined;
    json = converter !== undefined && typeof converter.output === 'function' ? converter.output({ target: 'draft-07' }) : undefined;
  } catch {
    return `type ${name} = unknown`;
  }
  return json ? jsonSchemaToType(json, name) : inputType(schema, name);
}

// `@param input.<field> - <description>` for the described top-level fields: a zod object's
// shape (through optional/default wrappers), or a wrapper's JSON Schema properties.
function paramLines(schema) {
  const found = [];
  const shape = schema.shape;
  if (shape && typeof shape === 'object') {
    for (const [field, fieldSchema] of Object.entries(shape)) {
      let s = fieldSchema;
      while (!s.description && typeof s.unwrap === 'function') s = s.unwrap();
      if (s.description) found.push([field, s.description]);
    }
  } else if (isWrapper(schema)) {
    const json = wrappedJsonSchema(schema);
    for (const [field, prop] of Object.entries((json && json.properties) || {})) {
      if (prop && typeof prop === 'object' && prop.description) found.push([field, prop.description]);
    }
  }
  return found.map(([field, description]) => `@param input.${field} - ${description}`);
}

/**
 * TypeScript declarations of an AI SDK ToolSet (or tool descriptors) for the model: an
 * Input/Output alias pair per tool and `declare const <namespace>: { … }` with a JSDoc each.
 */
function generateTypes(tools, namespace = 'codemode') {
  let aliases = '';
  let members = '';
  for (const [toolName, t] of Object.entries(tools)) {
    const safe = sanitizeToolName(toolName);
    const typeName = pascalCase(safe);
    const member = (lines) => `\n\t/**\n${lines.map((l) => `\t * ${l}`).join('\n')}\n\t */\n\t${safe}: (input: ${typeName}Input) => Promise<${typeName}Output>;\n`;
    try {
      const input = 'inputSchema' in t ? t.inputSchema : t.parameters;
      const output = 'outputSchema' in t ? t.outputSchema : undefined;
      // Appended before the JSDoc is built: a description that is not a string then adds a
      // second, `unknown` pair, as Cloudflare's does.
      aliases += `\n${inputType(input, `${typeName}Input`).trim()}`;
      aliases += `\n${(output ? outputType(output, `${typeName}Output`) : `type ${typeName}Output = unknown`).trim()}`;
      let params;
      try {
        params = input ? paramLines(input) : [];
      } catch {
        params = [];
      }
      const description = t.description;
      const lines = [escapeComment(description?.trim() ? oneLine(description.trim()) : toolName)];
      for (const line of params) lines.push(escapeComment(oneLine(line)));
      members += member(lines);
    } catch {
      aliases += `\ntype ${typeName}Input = unknown\ntype ${typeName}Output = unknown`;
      members += member([escapeComment(toolName)]);
    }
  }
  return `\n${aliases}\n\ndeclare const ${namespace}: {${members}}\n  `.trim();
}

// ---- Providers -----------------------------------------------------------------------------

// Tools that need approval cannot run inside a program (there is no one to ask): left out.
function withoutApprovalTools(tools) {
  const kept = {};
  for (const [name, t] of Object.entries(tools)) {
    if (!(t.needsApproval === true || typeof t.needsApproval === 'function')) kept[name] = t;
  }
  return kept;
}

// Each tool's execute, behind validation by its own input schema (the AI SDK's `asSchema`):
// invalid input throws the schema's error into the program; valid input reaches execute as
// the schema's parsed value.
function toolFns(tools) {
  const fns = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = 'execute' in t ? t.execute : undefined;
    if (!execute) continue;
    const raw = 'inputSchema' in t ? t.inputSchema : 'parameters' in t ? t.parameters : undefined;
    const schema = raw !== null && raw !== undefined ? ai().asSchema(raw) : undefined;
    fns[name] = schema && schema.validate
      ? async (args) => {
        const checked = await schema.validate(args);
        if (!checked.success) throw checked.error;
        return execute(checked.value);
      }
      : execute;
  }
  return fns;
}

/** A ToolSet as a provider under the default `codemode` namespace: `{ tools }`. */
function aiTools(tools) {
  return { tools };
}

/** `{ name: provider.name ?? "codemode", fns }` ready for `executor.execute(code, [..])`. */
function resolveProvider(provider) {
  return { name: provider.name ?? 'codemode', fns: toolFns(withoutApprovalTools(provider.tools)) };
}

// The code tool's input: `{ code: string }`, as JSON Schema (what zod's gives), validated.
function codeSchema() {
  const { jsonSchema } = ai();
  return jsonSchema({
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { code: { type: 'string', description: CODE_FIELD } },
    required: ['code'],
    additionalProperties: false,
  }, {
    validate: (value) => (isObject(value) && typeof value.code === 'string'
      ? { success: true, value: { code: value.code } }
      : { success: false, error: new TypeError('Invalid input: expected { code: string }') }),
  });
}

/**
 * The AI SDK tool that runs model-written code: `createCodeTool({ tools, executor,
 * description? })`, `tools` a ToolSet or an array of providers (`aiTools(set)`, `{ name,
 * tools, types? }`). Its description carries the generated types; `execute({ code })` resolves
 * `{ result, logs? }` and throws `Code execution failed: …` to the AI SDK.
 */
function createCodeTool(options) {
  const providers = Array.isArray(options.tools) ? options.tools : [{ tools: options.tools }];
  const blocks = [];
  const resolved = [];
  for (const provider of providers) {
    const name = provider.name ?? 'codemode';
    const tools = withoutApprovalTools(provider.tools);
    blocks.push(provider.types ?? generateTypes(tools, name));
    resolved.push({ name, fns: toolFns(tools) });
  }
  const executor = options.executor;
  return ai().tool({
    description: (options.description ?? DEFAULT_DESCRIPTION).replace('{{types}}', blocks.filter(Boolean).join('\n\n')),
    inputSchema: codeSchema(),
    // The AI SDK's abortSignal (not honoured by Cloudflare's) cancels the run.
    execute: async ({ code }, callOptions) => runCode({ code, executor, providers: resolved, signal: callOptions && callOptions.abortSignal }),
  });
}

/**
 * AI SDK 7's code mode on this engine (what `experimental_codeModeTool` of `@ai-sdk/code-mode`
 * offers): a tool caller for `generateText({ experimental_toolCallers })`. Its program calls
 * the tools the generation binds to it as `tools.<name>(input)`; each run gets a fresh
 * isolate of `executor`, and the AI SDK's abortSignal cancels it. Needs AI SDK 7.
 */
function codeModeTool({ executor, description } = {}) {
  const { experimental_toolCaller: toolCaller } = ai();
  if (typeof toolCaller !== 'function') {
    throw invalidArgument('codeModeTool needs AI SDK 7 (experimental_toolCaller); with AI SDK 6 use createCodeTool({ tools, executor })');
  }
  if (!executor || typeof executor.execute !== 'function') throw invalidArgument('codeModeTool: executor must implement execute(code, providers, options)');
  const text = description ?? DEFAULT_DESCRIPTION.replace('codemode.searchWeb', 'tools.searchWeb');
  const bound = (tools) => createCodeTool({ tools: [{ name: 'tools', tools }], executor, description: text });
  return toolCaller(bound({}), { type: 'local', bind: (tools) => bound(tools) });
}

module.exports = {
  createCodeTool,
  codeModeTool,
  aiTools,
  resolveProvider,
  generateTypes,
  ToolSetConnector,
  toolSetConnector,
};
