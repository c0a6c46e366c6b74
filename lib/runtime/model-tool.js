'use strict';
// The model-facing parts of the runtime tool (`runtime.tool()`, docs/cloudflare-compat.md §9): the description
// the model reads, the Standard Schema of its `{ code }` input, and the projection of a run's
// output that goes back to the model. The description text is a contract with the model, so
// it is @cloudflare/codemode 0.5.6's text word for word.

const { truncateResult } = require('../cloudflare/truncate.js');
const { messageOf, isObject } = require('../util.js');
const { invalidArgument } = require('../errors.js');
const { AiSdkApprovals } = require('./ai-approvals.js');
const { packagesSection } = require('../packages.js');

// The fixed part of the description, before the connector list. `<globals>` is replaced by
// the connector names, each in backticks, joined by ", ".
const DESCRIPTION_LINES = [
  'Execute JavaScript in a sandbox with access to connector SDKs.',
  '',
  '## Workflow',
  '',
  '1. `const matches = await codemode.search("short intent phrase");`',
  '2. `const docs = await codemode.describe(matches.results[0].path);`',
  '3. Call the method: `await <connector>.<method>(args);`',
  '',
  '## Rules',
  '',
  '- The ONLY globals are <globals> and `codemode` (plus standard JavaScript). There is no `host`, `fs`, `require`, `process`, or Node.js API — all I/O goes through the connectors below.',
  '- Never guess method names. If you have not used a connector in this conversation, run a discovery pass first: `codemode.search(query)` returns ranked matches across connector methods and saved snippets.',
  '- `codemode.describe("connector.method")` returns TypeScript type declarations.',
  "- `codemode.step(name, fn)` wraps side-effectful or nondeterministic work (raw fetch, random, time) so it runs once and is replayed on resume. Use it for anything that isn't a connector call.",
  '- Some methods require approval. The run pauses until the user approves, then resumes automatically. Write code as if the call returns normally.',
  '- A result with `status: "paused"` means the run is awaiting human approval. Tell the user what is pending and wait — do NOT re-issue the code; the run resumes on its own once approved.',
  '- All code outside connector calls and `codemode.step` must be deterministic so resume can replay it.',
  '- Do not use `fetch` — use connector SDKs.',
  '',
  '## Snippets',
  '',
  'Snippets are saved scripts you can reuse.',
  '- `codemode.run("name", input)` runs a saved snippet. Snippets appear in `codemode.search` results.',
  '- If a script may be saved as a snippet later, write it as `async (input) => { ... }` so it can take input.',
  '',
  '## Available connectors',
  '',
];

// With `approvals: 'ai-sdk'` a paused run is continued through the AI SDK's approval flow, in
// which the model calls the tool again to ask for the next approval: this line takes the place
// of Cloudflare's "do NOT re-issue the code" one.
const PAUSED_LINE = DESCRIPTION_LINES.find((line) => line.startsWith('- A result with `status: "paused"`'));
const AI_SDK_PAUSED_LINE = '- A result with `status: "paused"` means the run stopped at another action that needs the user\'s approval. To ask for it, call this tool again with exactly the same code: the run continues where it stopped and does not repeat the calls it made.';

// A connector may be given by name or as the connector itself.
function connectorName(connector) {
  return typeof connector === 'string' ? connector : connector.name();
}

// The tool description (docs/cloudflare-compat.md §9.1). A non-empty custom description is used as it is (the
// hints are then ignored); otherwise the fixed text lists the connectors, each with its hint
// when `connectorHints[name]` is a non-empty string, and then the allowed packages, if any.
function buildDescription(connectorNames, customDescription, connectorHints, approvals, packages = []) {
  if (customDescription) return customDescription;
  const names = connectorNames.map(connectorName);
  const globals = names.map((name) => `\`${name}\``).join(', ');
  const list = names.map((name) => {
    const hint = connectorHints?.[name];
    return hint ? `- \`${name}\` — ${hint}` : `- \`${name}\``;
  });
  // A function replacement, so a `$` in a connector name is taken literally.
  const fixed = DESCRIPTION_LINES.map((line) => (approvals === 'ai-sdk' && line === PAUSED_LINE ? AI_SDK_PAUSED_LINE : line.replace('<globals>', () => globals)));
  return [...fixed, list.join('\n'), ...packagesSection(packages, { describe: true })].join('\n');
}

// What `jsonSchema.input()` and `.output()` describe: an object with one string `code`.
function codeJsonSchema() {
  return {
    type: 'object',
    properties: { code: { type: 'string' } },
    required: ['code'],
    additionalProperties: false,
  };
}

// The tool's input schema, a Standard Schema v1 object (docs/cloudflare-compat.md §9.2). `validate` keeps only
// `code`; the vendor is Cloudflare's, so consumers that key on it treat us the same.
// (Cloudflare's `types` member exists only in its TypeScript declarations, not at run time.)
const codeInputSchema = {
  '~standard': {
    version: 1,
    vendor: '@cloudflare/codemode',
    validate(value) {
      if (isObject(value) && 'code' in value && typeof value.code === 'string') {
        return { value: { code: value.code } };
      }
      return { issues: [{ message: 'Expected an object with a string code property' }] };
    },
    jsonSchema: {
      // A fresh object per call, so a consumer that decorates the schema changes only its copy.
      input: (_options) => codeJsonSchema(),
      output: (_options) => codeJsonSchema(),
    },
  },
};

function serializationError(err) {
  return { error: `Result could not be serialized for the model: ${messageOf(err)}` };
}

// `value` as plain JSON data: BigInt becomes its decimal string, `undefined` at the top
// becomes null, `undefined` members and functions disappear, a cycle becomes the error shape.
function toJSONValue(value) {
  try {
    const text = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v));
    return text === undefined ? null : JSON.parse(text);
  } catch (err) {
    return serializationError(err);
  }
}

// The model's view of a tool output (docs/cloudflare-compat.md §9.4): `{ type: "json", value }` with everything
// but `calls` (the durable call log stays with the host), `logs` bounded by truncateResult's
// default budget, and the value made JSON-safe. Non-object outputs pass through as JSON.
// `result` is not truncated here (that is transformResult's job). Never throws.
function toModelOutput(output) {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) {
    return { type: 'json', value: toJSONValue(output) };
  }
  let rest;
  try {
    const { calls: _calls, ...others } = output;
    if (Array.isArray(others.logs)) others.logs = truncateResult(others.logs);
    rest = others;
  } catch (err) {
    // Only a throwing getter (or proxy trap) on the output gets here; Cloudflare's version
    // throws in that case, which its own contract says it never does.
    return { type: 'json', value: serializationError(err) };
  }
  return { type: 'json', value: toJSONValue(rest) };
}

// ---- `approvals: 'ai-sdk'` -----------------------------------------------------------------------

const APPROVALS = [undefined, 'cloudflare', 'ai-sdk'];
// Internal options of the tools lib/ai builds on runtime.tool(): display names and shared state.
const AI_SDK_TOOL = Symbol('codemode.aiSdkTool');
// The flow behind an `approvals: 'ai-sdk'` tool (lib/ai reads its answers as they are).
const APPROVAL_FLOW = Symbol('codemode.approvalFlow');

/** `options.approvals`, checked: `'cloudflare'` (the default: `{ status: 'paused' }`) or `'ai-sdk'`. */
function approvalsOption(options) {
  const approvals = options.approvals;
  if (!APPROVALS.includes(approvals)) {
    throw invalidArgument(`runtime.tool({ approvals }): approvals must be "cloudflare" (the default: a paused run answers { status: "paused" }) or "ai-sdk" (the AI SDK's approval requests); got ${JSON.stringify(approvals)}`);
  }
  return approvals ?? 'cloudflare';
}

/**
 * `tool` (runtime.tool()'s object) in the AI SDK's approval flow (lib/runtime/ai-approvals.js):
 * `needsApproval` runs the program up to its first pause and asks when it paused for a person;
 * `execute` continues the run once the SDK approved, and answers Cloudflare's output (a paused
 * one with a `message` that asks the model to call again for the next approval);
 * `approvalDescriptor(toolCallId)` says what a request is for; `decline(toolCallId)` rejects the
 * run a declined request was for. `start(code, idempotencyKey)` begins a run as execute does.
 */
function withAiSdkApprovals(tool, runtime, start, options) {
  const internal = options[AI_SDK_TOOL] || {};
  const flow = new AiSdkApprovals({ runtime, start, display: internal.display, state: internal.state, onLost: internal.onLost });
  const out = {
    ...tool,
    needsApproval: (input, callOptions) => flow.needsApproval(input, callOptions),
    execute: async (input, callOptions) => {
      const { actions: _actions, ...answer } = await flow.execute(input, callOptions);
      return answer;
    },
    approvalDescriptor: (toolCallId) => flow.approvalDescriptor(toolCallId),
    decline: (toolCallId) => flow.decline(toolCallId),
  };
  Object.defineProperty(out, APPROVAL_FLOW, { value: flow });
  return out;
}

module.exports = {
  buildDescription, codeInputSchema, toModelOutput, toJSONValue, approvalsOption, withAiSdkApprovals, AI_SDK_TOOL, APPROVAL_FLOW,
};
