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
const { CodemodeConnector, setOwn } = require('../connectors/base.js');
const { createCodemodeRuntime } = require('../runtime/index.js');
const { AI_SDK_TOOL, APPROVAL_FLOW } = require('../runtime/model-tool.js');
const { ApprovalState } = require('../runtime/ai-approvals.js');
const { READS_PROGRAMS } = require('../cloudflare/normalize.js');
const { withPackagesSection } = require('../packages.js');
const { stableStringify } = require('../runtime/durable.js');
const { isObject } = require('../util.js');
const { invalidArgument } = require('../errors.js');

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

const needsApproval = (t) => isObject(t) && (t.needsApproval === true || typeof t.needsApproval === 'function');

// resolveProvider's fns run in a plain executor, where a program cannot wait for a person:
// tools that need approval are left out there (as Cloudflare does). createCodeTool keeps them
// and runs its programs in a durable runtime (below).
function withoutApprovalTools(tools) {
  const kept = {};
  for (const [name, t] of Object.entries(tools)) {
    if (!needsApproval(t)) kept[name] = t;
  }
  return kept;
}

// A tool's input schema as the AI SDK reads it (`asSchema`), or undefined.
function schemaOf(t) {
  const raw = 'inputSchema' in t ? t.inputSchema : 'parameters' in t ? t.parameters : undefined;
  return raw !== null && raw !== undefined ? ai().asSchema(raw) : undefined;
}

// Each tool's execute, behind validation by its own input schema (the AI SDK's `asSchema`):
// invalid input throws the schema's error into the program; valid input reaches execute as
// the schema's parsed value.
function toolFns(tools) {
  const fns = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = 'execute' in t ? t.execute : undefined;
    if (!execute) continue;
    const schema = schemaOf(t);
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

// ---- Tools that need approval: programs in a durable runtime (issue 35) ---------------------------
//
// A program that calls a tool marked `needsApproval` has to stop there and wait for a person:
// across requests, and with a file or a database across restarts. So when a code tool has such
// tools (or the host gives it `runtime`), its programs run as durable runs of a runtime made for
// it (lib/runtime): the ToolSet becomes connectors, a run pauses before a call that needs
// approval, and the code tool takes part in the AI SDK's own approval flow through
// runtime.tool({ approvals: 'ai-sdk' }) — lib/runtime/ai-approvals.js explains that flow. Without
// `runtime` the runs live in an in-memory SQLite database of this process: a restart loses the
// paused runs (the program runs again from its start when the approval arrives, and pauses again
// before anything that needs approval). With `runtime: { path }` (or `{ store }`) they outlive it.
//
// Programs keep their names (`codemode.<tool>`, `tools.<tool>`, a provider's own name). A
// runtime's connector may not be called `codemode` (the platform's namespace), so each namespace
// is an internal connector `__<namespace>`, and a prelude added to the run's `codemode` provider
// puts the program's names in place:
//   - `needsApproval: true`: the name calls the connector method marked requiresApproval, where
//     the run pauses;
//   - `needsApproval` a function: the name first calls `<tool>$check`, a logged call (decided once,
//     replayed by later passes) that asks the function with the validated input and the code
//     tool call's options; then `<tool>` (pauses) or `<tool>$auto` (runs), which runs only for an
//     input a `$check` of this run let through, so a program cannot call it to skip the question;
//   - any other tool: the name calls the method.

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

// The sentence the default description gains when a tool may pause the program.
const APPROVAL_NOTE = '\n\nSome of these functions need a person\'s approval: the program waits at that call until the person answers. If the result has status "paused", call this tool again with exactly the same code to ask for the next approval; the run continues where it stopped.';

// Whether `args` may run unasked: a `$check` of this run before `seq` said so for these args, one
// `$check` per `$auto` call.
async function checkedBefore(runtime, ctx, method, args) {
  const execution = ctx && (await runtime.execution(ctx.executionId));
  if (execution === undefined) return false;
  const text = stableStringify(args);
  let allowed = 0;
  for (const entry of execution.log) {
    if (entry === undefined || entry.seq >= ctx.seq || stableStringify(entry.args) !== text) continue;
    if (entry.method === `${method}$check` && entry.result === false) allowed++;
    if (entry.method === `${method}$auto`) allowed--;
  }
  return allowed > 0;
}

// The connector tools of one namespace: see above. Read again on every use (codeModeTool's
// tools are bound per generation).
function connectorTools(set, namespace, holder) {
  const out = {};
  for (const [toolName, t] of Object.entries(set || {})) {
    if (!isObject(t) || typeof t.execute !== 'function') continue;
    const name = sanitizeToolName(toolName);
    const execute = toolFns({ [toolName]: t })[toolName];
    const description = typeof t.description === 'string' ? t.description : undefined;
    if (typeof t.needsApproval === 'function') {
      setOwn(out, name, { description, requiresApproval: true, execute });
      setOwn(out, `${name}$check`, {
        description: `Whether ${namespace}.${name} needs approval for this input`,
        execute: async (args, ctx) => {
          const schema = schemaOf(t);
          let input = args;
          if (schema && schema.validate) {
            const checked = await schema.validate(args);
            if (!checked.success) return false; // the call itself then fails on the same validation
            input = checked.value;
          }
          return Boolean(await t.needsApproval(input, await holder.calls.of(ctx && ctx.executionId)));
        },
      });
      setOwn(out, `${name}$auto`, {
        description,
        execute: async (args, ctx) => {
          if (!(await checkedBefore(holder.runtime, ctx, name, args))) {
            throw new Error(`${namespace}.${name} needs approval: call it as ${namespace}.${name}(input)`);
          }
          return execute(args);
        },
      });
    } else {
      setOwn(out, name, t.needsApproval === true ? { description, requiresApproval: true, execute } : { description, execute });
    }
  }
  return out;
}

class CodeToolConnector extends CodemodeConnector {
  #namespace;
  #holder;

  constructor(namespace, holder) {
    super();
    this.#namespace = namespace;
    this.#holder = holder;
  }

  name() {
    return this.#namespace.connector;
  }

  resolvedTools() {
    return Promise.resolve().then(() => connectorTools(this.#namespace.tools(), this.#namespace.namespace, this.#holder));
  }
}

// The prelude that gives a run the program's names (see above). A name that is no tool's rejects
// as in a plain run (`Tool "<name>" not found`), the platform's search, describe and run
// included, which createCodeTool's programs are not offered.
function preludeFor(namespaces) {
  const lines = [
    ';(() => {',
    '  const missing = (name) => () => Promise.reject(new Error(`Tool "${name}" not found`));',
    '  for (const name of ["search", "describe", "run"]) codemode[name] = missing(name);',
    '  const namespace = () => new Proxy({}, { get: (own, key) => (typeof key === "symbol" || key === "then" || Object.hasOwn(own, key) ? own[key] : missing(key)) });',
  ];
  for (const { namespace, connector, tools } of namespaces) {
    const target = namespace === 'codemode' ? 'codemode' : `(globalThis[${JSON.stringify(namespace)}] = namespace())`;
    lines.push(`  { const t = ${target}; const c = ${connector};`);
    for (const [toolName, t] of Object.entries(tools() || {})) {
      if (!isObject(t) || typeof t.execute !== 'function') continue;
      const name = sanitizeToolName(toolName);
      const at = JSON.stringify(name);
      lines.push(typeof t.needsApproval === 'function'
        ? `    t[${at}] = async (input) => ((await c[${JSON.stringify(`${name}$check`)}](input)) ? c[${at}](input) : c[${JSON.stringify(`${name}$auto`)}](input));`
        : `    t[${at}] = (input) => c[${at}](input);`);
    }
    lines.push('  }');
  }
  lines.push('})();');
  return lines.join('\n');
}

// `executor` with the prelude added to each run's `codemode` provider.
function withPrelude(executor, prelude) {
  const wrapped = {
    execute: (code, providers, options) => executor.execute(code, Array.isArray(providers)
      ? providers.map((p) => (isObject(p) && p.name === 'codemode' ? { ...p, prelude: `${p.prelude ?? ''}\n${prelude()}` } : p))
      : providers, options),
  };
  if (executor[READS_PROGRAMS] === true) wrapped[READS_PROGRAMS] = true;
  return wrapped;
}

/**
 * The durable runtime of a code tool: `namespaces` as `{ namespace, tools: () => ToolSet }`;
 * `runtime` createCodemodeRuntime's options for where the runs live (default: in memory).
 * Returns `tool()`, a fresh runtime.tool({ approvals: 'ai-sdk' }) sharing the approval state.
 */
function durableRuntime(executor, runtime, namespaces, caller) {
  if (runtime !== undefined) {
    if (!isObject(runtime) || typeof runtime.approve === 'function') {
      throw invalidArgument(`${caller}: runtime takes the durable runtime's options ({ path } or { store }, name, …), not a runtime: the code tool makes its runtime, with its own tools as connectors. To give the model a runtime you made, use runtime.tool({ approvals: 'ai-sdk' })`);
    }
    for (const own of ['executor', 'connectors']) {
      if (own in runtime) throw invalidArgument(`${caller}: runtime.${own} cannot be given: the code tool's runtime uses its executor and its tools`);
    }
  }
  const settings = runtime ?? {};
  const seen = new Set(namespaces.map((ns) => ns.namespace));
  const named = namespaces.map((ns) => {
    if (typeof ns.namespace !== 'string' || !IDENTIFIER.test(ns.namespace)) throw invalidArgument(`${caller}: the namespace ${JSON.stringify(ns.namespace)} is not a JavaScript identifier`);
    const connector = `__${ns.namespace}`;
    if (seen.has(connector)) throw invalidArgument(`${caller}: the namespaces "${ns.namespace}" and "${connector}" cannot both be used`);
    return { ...ns, connector };
  });
  const state = new ApprovalState();
  const holder = { runtime: undefined, calls: state.calls };
  const handle = createCodemodeRuntime({
    ...settings,
    path: settings.path ?? (settings.store === undefined ? ':memory:' : undefined),
    executor: withPrelude(executor, () => preludeFor(named)),
    connectors: named.map((ns) => new CodeToolConnector(ns, holder)),
  });
  holder.runtime = handle;
  const programName = new Map(named.map((ns) => [ns.connector, ns.namespace]));
  const display = (pending) => `${programName.get(pending.connector) ?? pending.connector}.${pending.method}`;
  // An approval for a run this in-memory runtime never saw: the process restarted, or the code
  // tool was made anew (per request) — said once, since the person is then asked again.
  let warned = runtime !== undefined;
  const onLost = () => {
    if (warned) return;
    warned = true;
    console.warn(`codemode: ${caller} received an approval for a run it does not have; the program runs again and asks again. Its paused runs live in this process's memory: make the code tool once (not per request), and give it runtime: { path } to keep them across restarts.`);
  };
  return { tool: () => handle.tool({ approvals: 'ai-sdk', [AI_SDK_TOOL]: { display, state, onLost } }) };
}

// The code tool's output for a durable run's answer: the program's `{ result, logs? }`, or
// `{ status: 'paused', … }` when it stopped at another action that needs approval; a failed run
// throws `Code execution failed: …`, as runCode does.
function codeToolOutput(answer) {
  switch (answer.status) {
    case 'completed':
      return Array.isArray(answer.logs) && answer.logs.length > 0 ? { result: answer.result, logs: answer.logs } : { result: answer.result };
    case 'paused':
      return { status: 'paused', executionId: answer.executionId, pending: answer.actions, message: answer.message };
    case 'running':
      throw new Error(`Code execution failed: run ${answer.executionId} is still in progress in another process`);
    default: {
      const error = String(answer.error ?? 'Codemode execution failed');
      throw new Error(error.startsWith('Code execution failed') ? error : `Code execution failed: ${error}`);
    }
  }
}

// An AI SDK tool over a runtime.tool({ approvals: 'ai-sdk' }) object: our description and input
// schema, its needsApproval, and the program's result as the output.
function durableCodeTool(inner, description) {
  const flow = inner[APPROVAL_FLOW];
  return ai().tool({
    description,
    inputSchema: codeSchema(),
    needsApproval: inner.needsApproval,
    execute: async (input, callOptions) => codeToolOutput(await flow.execute(input, callOptions)),
    approvalDescriptor: inner.approvalDescriptor,
    decline: inner.decline,
  });
}

function hasApprovalTools(providers) {
  return providers.some((p) => isObject(p.tools) && Object.values(p.tools).some(needsApproval));
}

// The code tool's description: `description` (the default, with the approval note when a tool
// may pause) with the providers' types in place of {{types}}; the default also lists the
// executor's allowed npm packages (lib/packages.js), a custom one says what it wants.
function codeToolDescription(providers, description, approvals, executor) {
  const blocks = providers.map((provider) => provider.types ?? generateTypes(provider.tools, provider.name ?? 'codemode'));
  const text = (description ?? (approvals ? DEFAULT_DESCRIPTION + APPROVAL_NOTE : DEFAULT_DESCRIPTION)).replace('{{types}}', blocks.filter(Boolean).join('\n\n'));
  return description === undefined ? withPackagesSection(text, executor) : text;
}


/**
 * The AI SDK tool that runs model-written code: `createCodeTool({ tools, executor,
 * description?, runtime? })`, `tools` a ToolSet or an array of providers (`aiTools(set)`, `{
 * name, tools, types? }`). Its description carries the generated types; `execute({ code })`
 * resolves `{ result, logs? }` and throws `Code execution failed: …` to the AI SDK. Tools marked
 * `needsApproval` are kept: their programs run durably and ask through the AI SDK's approval flow
 * (above); so do all its programs when `runtime` (createCodemodeRuntime's options: `path` or
 * `store`, `name`, …) says where their runs live.
 */
function createCodeTool(options = {}) {
  if (options === null || typeof options !== 'object' || !options.executor || typeof options.executor.execute !== 'function') {
    throw invalidArgument('createCodeTool: executor must implement execute(code, providers, options)');
  }
  if (options.tools === null || typeof options.tools !== 'object') {
    throw invalidArgument('createCodeTool: tools must be a ToolSet or an array of providers');
  }
  const providers = Array.isArray(options.tools) ? options.tools : [{ tools: options.tools }];
  const approvals = hasApprovalTools(providers);
  const executor = options.executor;
  const description = codeToolDescription(providers, options.description, approvals, executor);
  // Each tool's schema is read now, so a schema the AI SDK refuses fails here in both paths.
  const resolved = providers.map((provider) => ({ name: provider.name ?? 'codemode', fns: toolFns(provider.tools) }));
  if (approvals || options.runtime !== undefined) {
    const runtime = durableRuntime(executor, options.runtime, providers.map((p) => ({ namespace: p.name ?? 'codemode', tools: () => p.tools })), 'createCodeTool');
    return durableCodeTool(runtime.tool(), description);
  }
  return ai().tool({
    description,
    inputSchema: codeSchema(),
    // The AI SDK's abortSignal (not honoured by Cloudflare's) cancels the run.
    execute: async ({ code }, callOptions) => runCode({ code, executor, providers: resolved, signal: callOptions && callOptions.abortSignal }),
  });
}

/**
 * AI SDK 7's code mode on this engine (what `experimental_codeModeTool` of `@ai-sdk/code-mode`
 * offers): a tool caller for `generateText({ experimental_toolCallers })`. Its program calls
 * the tools the generation binds to it as `tools.<name>(input)`; each run gets a fresh
 * isolate of `executor`, and the AI SDK's abortSignal cancels it. Needs AI SDK 7. Bound tools
 * marked `needsApproval` pause the program and ask through the AI SDK's approval flow, as with
 * createCodeTool; `runtime` says where such runs live (default: in memory), and `tools` names the
 * tools a run may need before the SDK binds any (after a restart, the SDK continues an approved
 * call with the unbound tool).
 */
function codeModeTool({ executor, description, runtime, tools } = {}) {
  const { experimental_toolCaller: toolCaller } = ai();
  if (typeof toolCaller !== 'function') {
    throw invalidArgument('codeModeTool needs AI SDK 7 (experimental_toolCaller); with AI SDK 6 use createCodeTool({ tools, executor })');
  }
  if (!executor || typeof executor.execute !== 'function') throw invalidArgument('codeModeTool: executor must implement execute(code, providers, options)');
  const base = DEFAULT_DESCRIPTION.replace('codemode.searchWeb', 'tools.searchWeb');
  const text = description ?? withPackagesSection(base, executor);
  // What programs of the durable runs can call: `tools`, and every tool bound so far.
  const known = { ...tools };
  let durable;
  const durableTool = () => {
    durable ??= durableRuntime(executor, runtime, [{ namespace: 'tools', tools: () => known }], 'codeModeTool');
    return durable.tool();
  };
  const providers = (set) => [{ name: 'tools', tools: set }];
  const bound = (set) => {
    const approvals = hasApprovalTools(providers(set));
    if (!approvals && runtime === undefined) return createCodeTool({ tools: providers(set), executor, description: text });
    Object.assign(known, set);
    toolFns(set);
    return durableCodeTool(durableTool(), codeToolDescription(providers(set), description === undefined ? withPackagesSection(base + (approvals ? APPROVAL_NOTE : ''), executor) : description, false));
  };
  // The tool as given, before the SDK binds tools to it: the one the SDK asks and runs when it
  // continues an approved call from earlier messages. Its runtime is made on first use.
  let unbound;
  const lazy = () => (unbound ??= durableCodeTool(durableTool(), codeToolDescription(providers({}), text, false)));
  const first = createCodeTool({ tools: providers({}), executor, description: text });
  return toolCaller({
    ...first,
    needsApproval: (input, callOptions) => lazy().needsApproval(input, callOptions),
    execute: (input, callOptions) => lazy().execute(input, callOptions),
    approvalDescriptor: (toolCallId) => lazy().approvalDescriptor(toolCallId),
    decline: (toolCallId) => lazy().decline(toolCallId),
  }, { type: 'local', bind: bound });
}

/**
 * The UI message stream of a response (`result.toUIMessageStream()`), with each code tool's
 * approval request carrying what it is for as the AI SDK's `approvalDescriptor` (the UI part's
 * `approval.descriptor`: `{ executionId, actions: [{ kind, tool, input, … }] }`), and each
 * declined request's run rejected as the SDK reports it. `tools`: the ToolSet given to streamText.
 */
function withApprovalDescriptors(stream, tools) {
  const codeTools = Object.values(tools || {}).filter((t) => isObject(t) && typeof t.approvalDescriptor === 'function');
  return stream.pipeThrough(new TransformStream({
    async transform(chunk, controller) {
      if (isObject(chunk) && chunk.type === 'tool-approval-request' && chunk.approvalDescriptor === undefined) {
        for (const t of codeTools) {
          const descriptor = await t.approvalDescriptor(chunk.toolCallId);
          if (descriptor !== undefined) {
            chunk = { ...chunk, approvalDescriptor: descriptor };
            break;
          }
        }
      } else if (isObject(chunk) && chunk.type === 'tool-output-denied') {
        for (const t of codeTools) {
          if (typeof t.decline === 'function' && await t.decline(chunk.toolCallId)) break;
        }
      }
      controller.enqueue(chunk);
    },
  }));
}

module.exports = {
  createCodeTool,
  codeModeTool,
  withApprovalDescriptors,
  aiTools,
  resolveProvider,
  generateTypes,
  ToolSetConnector,
  toolSetConnector,
};
