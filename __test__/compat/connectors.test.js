'use strict';
// Connectors (docs/cloudflare-compat.md §8): CodemodeConnector, McpConnector, OpenApiConnector, ToolSetConnector.
// Each rule is checked on lib/connectors/index.js, and wherever Cloudflare's published 0.5.6 classes
// can run in Node the same subclass is built on both and every observable result — describe(),
// tool results, error messages, host warnings, type blocks — is compared (`sameOnBoth`).
//
// Cloudflare's `/ai` entry imports the `ai` and `zod` packages, which are not installed here.
// The oracle for ToolSetConnector therefore runs it over small stand-ins (AI_STUB, ZOD_STUB)
// that reproduce what it uses of them: `asSchema` as in the AI SDK (a `Schema` object marked
// with Symbol.for('vercel.ai.schema') as is; a Standard Schema of vendor "zod" → JSON Schema
// plus `safeParseAsync` validation; any other Standard Schema → `~standard.validate`; a
// function → called), `tool` as identity, and the few `z` calls its module body makes.
const test = require('node:test');
const assert = require('node:assert/strict');
const { register } = require('node:module');
const { loadCloudflare } = require('../fixtures/cloudflare-oracle.js');
const ours = require('../../lib/connectors/index.js');
const { CodemodeConnector, McpConnector, OpenApiConnector, ToolSetConnector, toolSetConnector } = ours;
const { sanitizeToolName } = require('../../lib/cloudflare/names.js');

// ─────────────────────────────────────────────────────────────────────────── harness ──

const dataUrl = (source) => 'data:text/javascript,' + encodeURIComponent(source);

const AI_STUB = `
const schemaSymbol = Symbol.for('vercel.ai.schema');
export function jsonSchema(value, { validate } = {}) {
  return {
    [schemaSymbol]: true,
    _type: undefined,
    get jsonSchema() { if (typeof value === 'function') value = value(); return value; },
    validate,
  };
}
function isSchema(v) {
  return typeof v === 'object' && v !== null && schemaSymbol in v && v[schemaSymbol] === true
    && 'jsonSchema' in v && 'validate' in v;
}
export function asSchema(schema) {
  if (schema == null) return jsonSchema({ properties: {}, additionalProperties: false });
  if (isSchema(schema)) return schema;
  if ('~standard' in schema) {
    const std = schema['~standard'];
    const convert = () => std.jsonSchema.input({ target: 'draft-07' });
    if (std.vendor === 'zod') {
      return jsonSchema(convert, { validate: async (value) => {
        const r = await schema.safeParseAsync(value);
        return r.success ? { success: true, value: r.data } : { success: false, error: r.error };
      } });
    }
    return jsonSchema(convert, { validate: async (value) => {
      const r = await std.validate(value);
      return 'value' in r ? { success: true, value: r.value }
        : { success: false, error: new Error('Type validation failed: Value: ' + JSON.stringify(value) + '.\\nError message: ' + JSON.stringify(r.issues)) };
    } });
  }
  return schema();
}
export function tool(t) { return t; }
`;
const ZOD_STUB = `
const chain = () => new Proxy(function () {}, { get: () => chain(), apply: () => chain() });
export const z = chain();
`;
const AI_HOOKS = `
const map = ${JSON.stringify({ ai: dataUrl(AI_STUB), zod: dataUrl(ZOD_STUB) })};
export async function resolve(specifier, context, next) {
  if (Object.hasOwn(map, specifier)) return { url: map[specifier], shortCircuit: true };
  return next(specifier, context);
}
`;

let cfAiPromise;
function loadCloudflareAi() {
  if (!cfAiPromise) {
    cfAiPromise = (async () => {
      await loadCloudflare();
      register(dataUrl(AI_HOOKS));
      return import('@cloudflare/codemode/ai');
    })();
  }
  return cfAiPromise;
}

// The two implementations, as `{ label, CodemodeConnector, McpConnector, … }`.
async function implementations() {
  const cf = await loadCloudflare();
  const cfAi = await loadCloudflareAi();
  return [
    { label: 'ours', ...ours },
    { label: 'cloudflare', ...cf, ToolSetConnector: cfAi.ToolSetConnector, toolSetConnector: cfAi.toolSetConnector },
  ];
}

// Runs `scenario(impl)` on both implementations and asserts they give the same data.
async function sameOnBoth(scenario) {
  const [mine, theirs] = await implementations();
  const a = await scenario(mine);
  const b = await scenario(theirs);
  assert.deepEqual(a, b);
  return a;
}

// What a call produced: its value, or the message (and name) of what it threw.
async function outcome(fn) {
  try {
    return { value: await fn() };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

// Runs fn with console.warn captured; returns [result, warnings].
async function withWarnings(fn) {
  const warnings = [];
  const original = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(' '));
  try {
    return [await fn(), warnings];
  } finally {
    console.warn = original;
  }
}

const CTX = { executionId: 'exec_0000000000000001_abc' };

// ─────────────────────────────────────────────────────────────── CodemodeConnector ──

// One connector exercising every rule of §8.1; `log` records what the tools saw.
function makeFiles(Base, log) {
  return class Files extends Base {
    name() { return 'files'; }
    instructions() { return 'Paths are relative to the workspace root.'; }
    async tools() {
      log.push(['tools()']);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return {
        read: {
          description: 'Read a file.\nReturns its text.',
          inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'File path' } }, required: ['path'] },
          outputSchema: { type: 'object', properties: { text: { type: 'string' } } },
          replay: 'reexecute',
          execute: async (args, ctx) => ({ text: `contents of ${args.path}`, ctx }),
        },
        write: {
          description: 'Write a file.',
          inputSchema: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } },
          requiresApproval: true,
          execute: (args) => { log.push(['write', args]); return { written: args.text.length }; },
          revert: async (args, result, ctx) => { log.push(['revert write', args, result, ctx]); },
        },
        legacy: {
          description: 'AI SDK v4 shape: parameters as JSON Schema',
          parameters: { type: 'object', properties: { q: { type: 'string' } } },
          execute: () => 'legacy',
        },
        zodish: {
          // an inputSchema that is not JSON Schema falls through to `parameters`
          inputSchema: { _def: { typeName: 'ZodObject' }, parse() {} },
          parameters: { properties: { n: { type: 'number' } } },
          execute: () => 'zodish',
        },
        zodOnly: {
          inputSchema: { _def: { typeName: 'ZodObject' }, parse() {} },
          execute: () => 'zodOnly',
        },
        refOnly: {
          inputSchema: { $ref: '#/definitions/Id', definitions: { Id: { type: 'string' } } },
          execute: () => 'refOnly',
        },
        emptySchema: { inputSchema: {}, execute: () => undefined },
        logged: { replay: 'log', requiresApproval: false, execute: () => 'logged' },
        'delete-file': { description: 'Delete a file.', execute: () => 'deleted' },
        throws: { execute: () => { throw new Error('disk on fire'); } },
        rejects: { execute: async () => { throw new TypeError('bad path'); } },
        revertThrows: { execute: () => 1, revert: () => { throw new Error('cannot undo'); } },
        skippedNull: null,
        skippedString: 'not a tool',
        skippedFn: () => 'functions are not tool objects',
        skippedNumber: 7,
      };
    }
    tool(name, t) {
      log.push(['tool()', name]);
      if (name === 'delete-file') return { ...t, requiresApproval: true, revert: () => log.push(['revert delete']) };
      return t;
    }
  };
}

test('CodemodeConnector: describe() follows every rule of §8.1, identical to Cloudflare', async () => {
  const description = await sameOnBoth(async (impl) => {
    const Files = makeFiles(impl.CodemodeConnector, []);
    return new Files({}, {}).describe();
  });
  assert.equal(description.name, 'files');
  assert.equal(description.instructions, 'Paths are relative to the workspace root.');
  assert.deepEqual(Object.keys(description.descriptors), [
    'read', 'write', 'legacy', 'zodish', 'zodOnly', 'refOnly', 'emptySchema', 'logged', 'delete-file',
    'throws', 'rejects', 'revertThrows',
  ]);
  const d = description.descriptors;
  assert.deepEqual(d.read.inputSchema, { type: 'object', properties: { path: { type: 'string', description: 'File path' } }, required: ['path'] });
  assert.deepEqual(d.read.outputSchema, { type: 'object', properties: { text: { type: 'string' } } });
  assert.equal(d.read.description, 'Read a file.\nReturns its text.');
  assert.deepEqual(d.legacy.inputSchema, { type: 'object', properties: { q: { type: 'string' } } });
  assert.deepEqual(d.zodish.inputSchema, { properties: { n: { type: 'number' } } });
  assert.deepEqual(d.zodOnly.inputSchema, { type: 'object' });
  assert.deepEqual(d.refOnly.inputSchema.$ref, '#/definitions/Id');
  assert.deepEqual(d.emptySchema.inputSchema, { type: 'object' });
  assert.deepEqual(d.throws, { description: undefined, inputSchema: { type: 'object' }, outputSchema: undefined });
  // only approval / reexecute tools are annotated; the tool() hook's decoration counts
  assert.deepEqual(description.annotations, {
    read: { replay: 'reexecute' },
    write: { requiresApproval: true },
    'delete-file': { requiresApproval: true },
  });
});

test('CodemodeConnector: tools() runs once per instance and tool() once per tool, even under concurrent calls', async () => {
  const counts = await sameOnBoth(async (impl) => {
    const log = [];
    const Files = makeFiles(impl.CodemodeConnector, log);
    const c = new Files();
    await Promise.all([c.describe(), c.executeTool('read', { path: 'a' }, CTX), c.revertAction('write', {}, {}, CTX), c.getTypeScriptTypes()]);
    await c.describe();
    const other = new Files();
    await other.describe();
    return {
      toolsCalls: log.filter(([what]) => what === 'tools()').length,
      hookCalls: log.filter(([what]) => what === 'tool()').map(([, name]) => name),
    };
  });
  assert.equal(counts.toolsCalls, 2, 'one tools() call per instance (two instances)');
  const perInstance = ['read', 'write', 'legacy', 'zodish', 'zodOnly', 'refOnly', 'emptySchema', 'logged', 'delete-file', 'throws', 'rejects', 'revertThrows'];
  assert.deepEqual(counts.hookCalls, [...perInstance, ...perInstance], 'non-object entries never reach tool()');
});

test('CodemodeConnector: executeTool passes (args, ctx), awaits, and rejects for unknown tools — same as Cloudflare', async () => {
  const results = await sameOnBoth(async (impl) => {
    const log = [];
    const c = new (makeFiles(impl.CodemodeConnector, log))();
    const out = {};
    out.read = await outcome(() => c.executeTool('read', { path: 'src/a.js' }, CTX));
    out.readNoCtx = await outcome(() => c.executeTool('read', { path: 'b' }));
    out.write = await outcome(() => c.executeTool('write', { path: 'x', text: 'hello' }, CTX));
    out.legacy = await outcome(() => c.executeTool('legacy', {}));
    out.deleteFile = await outcome(() => c.executeTool('delete-file', {}));
    out.throws = await outcome(() => c.executeTool('throws', {}));
    out.rejects = await outcome(() => c.executeTool('rejects', {}));
    out.unknown = await outcome(() => c.executeTool('nope', {}));
    out.sanitizedName = await outcome(() => c.executeTool('delete_file', {}));
    out.skipped = await outcome(() => c.executeTool('skippedNull', {}));
    out.emptyName = await outcome(() => c.executeTool('', {}));
    out.log = log.filter(([what]) => what === 'write');
    return out;
  });
  assert.deepEqual(results.read, { value: { text: 'contents of src/a.js', ctx: CTX } });
  assert.deepEqual(results.readNoCtx, { value: { text: 'contents of b', ctx: undefined } });
  assert.deepEqual(results.write, { value: { written: 5 } });
  assert.deepEqual(results.deleteFile, { value: 'deleted' });
  assert.deepEqual(results.throws, { error: 'disk on fire' });
  assert.deepEqual(results.rejects, { error: 'bad path' });
  assert.deepEqual(results.unknown, { error: 'Tool "nope" not found on files' });
  assert.deepEqual(results.sanitizedName, { error: 'Tool "delete_file" not found on files' });
  assert.deepEqual(results.skipped, { error: 'Tool "skippedNull" not found on files' });
  assert.deepEqual(results.emptyName, { error: 'Tool "" not found on files' });
});

test('CodemodeConnector: a name inherited from Object.prototype is not a tool (ours; Cloudflare crashes with a TypeError)', async () => {
  const c = new (makeFiles(CodemodeConnector, []))();
  for (const method of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
    await assert.rejects(c.executeTool(method, {}), { message: `Tool "${method}" not found on files` });
    assert.equal(await c.revertAction(method, {}, {}), false);
  }
});

test('CodemodeConnector: a tool object without execute is explained (ours; Cloudflare: "tool.execute is not a function")', async () => {
  class Partial extends CodemodeConnector {
    name() { return 'partial'; }
    tools() { return { docsOnly: { description: 'no execute' }, revertNotFn: { execute: () => 1, revert: true } }; }
  }
  const c = new Partial();
  await assert.rejects(c.executeTool('docsOnly', {}), { name: 'CodemodeExecutorError', code: 'ERR_INVALID_ARGUMENT', message: 'Tool "docsOnly" on partial has no execute function' });
  assert.equal(await c.revertAction('revertNotFn', {}, 1), false);
});

test('CodemodeConnector: revertAction is false without tool or revert, else awaits revert(args, result, ctx) and is true', async () => {
  const results = await sameOnBoth(async (impl) => {
    const log = [];
    const c = new (makeFiles(impl.CodemodeConnector, log))();
    return {
      write: await outcome(() => c.revertAction('write', { path: 'x' }, { written: 1 }, CTX)),
      decorated: await outcome(() => c.revertAction('delete-file', {}, 'deleted', CTX)),
      noRevert: await outcome(() => c.revertAction('read', {}, {}, CTX)),
      unknown: await outcome(() => c.revertAction('nope', {}, {}, CTX)),
      throws: await outcome(() => c.revertAction('revertThrows', {}, 1, CTX)),
      log: log.filter(([what]) => what.startsWith('revert')),
    };
  });
  assert.deepEqual(results.write, { value: true });
  assert.deepEqual(results.decorated, { value: true });
  assert.deepEqual(results.noRevert, { value: false });
  assert.deepEqual(results.unknown, { value: false });
  assert.deepEqual(results.throws, { error: 'cannot undo' });
  assert.deepEqual(results.log, [['revert write', { path: 'x' }, { written: 1 }, CTX], ['revert delete']]);
});

test('CodemodeConnector: getTypeScriptTypes declares the connector name, identical to Cloudflare', async () => {
  const types = await sameOnBoth(async (impl) => new (makeFiles(impl.CodemodeConnector, []))().getTypeScriptTypes());
  assert.match(types, /^type ReadInput = \{/);
  assert.match(types, /\ndeclare const files: \{\n/);
  assert.doesNotMatch(types, /declare const codemode/);
  assert.match(types, /\tdelete_file: \(input: DeleteFileInput\) => Promise<DeleteFileOutput>;/);
  assert.match(types, /@param input\.path - File path/);

  const empty = await sameOnBoth(async (impl) => {
    class Empty extends impl.CodemodeConnector {
      name() { return 'nothing'; }
      tools() { return {}; }
    }
    const c = new Empty();
    return { types: await c.getTypeScriptTypes(), description: await c.describe() };
  });
  assert.equal(empty.types, 'declare const nothing: {}');
  assert.deepEqual(empty.description, { name: 'nothing', instructions: undefined, descriptors: {}, annotations: {} });
});

test('CodemodeConnector: requiresApproval with replay "reexecute" is refused with the exact message', async () => {
  const results = await sameOnBoth(async (impl) => {
    class Bad extends impl.CodemodeConnector {
      name() { return 'shell'; }
      tools() {
        return {
          ok: { execute: () => 1 },
          run: { requiresApproval: true, replay: 'reexecute', execute: () => 2 },
        };
      }
    }
    const c = new Bad();
    return {
      describe: await outcome(() => c.describe()),
      types: await outcome(() => c.getTypeScriptTypes()),
      // executing does not go through describe()
      execute: await outcome(() => c.executeTool('run', {})),
    };
  });
  const message = 'Connector "shell" tool "run" cannot combine requiresApproval with replay: "reexecute" — approved actions must be logged, not re-executed.';
  assert.deepEqual(results, { describe: { error: message }, types: { error: message }, execute: { value: 2 } });
});

test('CodemodeConnector: defaults — instructions undefined, tool() identity, hooks no-ops, a failed tools() stays failed', async () => {
  const results = await sameOnBoth(async (impl) => {
    let calls = 0;
    class Minimal extends impl.CodemodeConnector {
      name() { return 'm'; }
      async tools() { calls += 1; throw new Error(`tools failed ${calls}`); }
    }
    const c = new Minimal();
    const t = { execute() {} };
    return {
      instructions: c.instructions(),
      identity: c.tool('x', t) === t,
      onPassEnd: await outcome(() => c.onPassEnd('e', 'paused')),
      dispose: await outcome(() => c.disposeExecution('e', 'completed')),
      first: await outcome(() => c.describe()),
      second: await outcome(() => c.executeTool('x', {})),
      calls,
    };
  });
  assert.deepEqual(results, {
    instructions: undefined,
    identity: true,
    onPassEnd: { value: undefined },
    dispose: { value: undefined },
    first: { error: 'tools failed 1' },
    second: { error: 'tools failed 1' },
    calls: 1,
  });
});

test('CodemodeConnector: a sync tools() works; constructor arguments are optional and only stored', async () => {
  class Sync extends CodemodeConnector {
    name() { return 'sync'; }
    tools() { return { ping: { execute: () => 'pong' } }; }
  }
  assert.equal(await new Sync().executeTool('ping'), 'pong');
  const ctx = { storage: {} };
  const env = { TOKEN: 't' };
  const c = new Sync(ctx, env, 'extra');
  assert.equal(c.ctx, ctx);
  assert.equal(c.env, env);
  assert.equal(await c.executeTool('ping'), 'pong');
  assert.ok(c instanceof CodemodeConnector);
});

test('CodemodeConnector: missing name() or tools() fail with a clear message', async () => {
  class NoName extends CodemodeConnector {
    tools() { return {}; }
  }
  assert.throws(() => new NoName().name(), { message: /NoName must implement name\(\)/ });
  await assert.rejects(new NoName().describe(), { message: /must implement name\(\)/ });
  class NoTools extends CodemodeConnector {
    name() { return 'nt'; }
  }
  await assert.rejects(new NoTools().describe(), { message: /NoTools must implement tools\(\)/ });
  await assert.rejects(new NoTools().executeTool('x'), { message: /must implement tools\(\)/ });
  class NullTools extends CodemodeConnector {
    name() { return 'nul'; }
    tools() { return null; }
  }
  await assert.rejects(new NullTools().describe(), { message: 'tools() of connector "nul" must return an object of tools (got null)' });
});

test('CodemodeConnector: a tool named "__proto__" is an own tool, not a prototype', async () => {
  class Proto extends CodemodeConnector {
    name() { return 'p'; }
    tools() { return JSON.parse('{"__proto__": {"description": "odd"}, "ok": {}}'); }
    tool(name, t) { return { ...t, execute: () => `ran ${name}` }; }
  }
  const c = new Proto();
  const { descriptors } = await c.describe();
  assert.deepEqual(Object.keys(descriptors), ['__proto__', 'ok']);
  assert.equal(Object.getPrototypeOf(descriptors), Object.prototype);
  assert.equal(await c.executeTool('__proto__', {}), 'ran __proto__');
});

// ─────────────────────────────────────────────────────────────────────── McpConnector ──

// MCP results by tool name, and what each unwraps to (§8.2).
const MCP_RESULTS = {
  'echo-tool': { toolResult: { legacy: true }, content: [{ type: 'text', text: 'ignored' }] },
  toolResultFalse: { toolResult: false },
  toolResultNull: { toolResult: null, structuredContent: { no: 1 } },
  errorWins: { toolResult: 'the tool result wins', isError: true },
  error: { isError: true, content: [{ type: 'text', text: 'first line' }, { type: 'image', data: 'AAA' }, { type: 'text', text: 'second line' }] },
  errorNoText: { isError: true, content: [{ type: 'image', data: 'AAA' }] },
  errorEmptyText: { isError: true, content: [{ type: 'text', text: '' }] },
  errorNoContent: { isError: true },
  structured: { structuredContent: { temp: 21 }, content: [{ type: 'text', text: '{"temp": 21}' }] },
  structuredNull: { structuredContent: null, content: [{ type: 'text', text: '{"y":2}' }] },
  structuredFalse: { structuredContent: false },
  jsonText: { content: [{ type: 'text', text: '[1,' }, { type: 'text', text: '2]' }] },
  numberText: { content: [{ type: 'text', text: '42' }] },
  plainText: { content: [{ type: 'text', text: 'hello world' }] },
  multiText: { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
  missingText: { content: [{ type: 'text' }] },
  mixed: { content: [{ type: 'text', text: '1' }, { type: 'resource', resource: { uri: 'x' } }] },
  emptyContent: { content: [] },
  nothing: {},
  'get.repo': { content: [{ type: 'text', text: '"dotted"' }] },
};

function mcpTool(name, extra = {}) {
  return { name, description: `MCP tool ${name}`, inputSchema: { type: 'object', properties: { q: { type: 'string', description: 'query' } } }, ...extra };
}

function makeMcp(Base, options) {
  const log = options.log || [];
  return class Server extends Base {
    name() { return options.name || 'server'; }
    instructions() { return options.ownInstructions; }
    async createConnection() {
      log.push(['createConnection']);
      await new Promise((resolve) => setTimeout(resolve, 2));
      return {
        client: {
          async callTool(params) {
            log.push(['callTool', params]);
            return MCP_RESULTS[params.name];
          },
        },
        tools: options.tools,
        fetchTools: options.fetchTools && (async () => { log.push(['fetchTools']); return options.fetchTools; }),
        instructions: options.connectionInstructions,
      };
    }
    toolName(tool) {
      return options.toolName ? options.toolName(tool, super.toolName(tool)) : super.toolName(tool);
    }
  };
}

test('McpConnector: results unwrap exactly as Cloudflare (toolResult, isError, structuredContent, text, raw)', async () => {
  const results = await sameOnBoth(async (impl) => {
    const log = [];
    const Server = makeMcp(impl.McpConnector, { tools: Object.keys(MCP_RESULTS).map((n) => mcpTool(n)), log });
    const c = new Server();
    const out = {};
    for (const name of Object.keys(MCP_RESULTS)) {
      const method = sanitizeToolName(name);
      out[name] = await outcome(() => c.executeTool(method, { q: name }, CTX));
    }
    out.calls = log.filter(([what]) => what === 'callTool').map(([, params]) => params);
    out.connections = log.filter(([what]) => what === 'createConnection').length;
    return out;
  });
  assert.deepEqual(results['echo-tool'], { value: { legacy: true } });
  assert.deepEqual(results.toolResultFalse, { value: false });
  assert.deepEqual(results.toolResultNull, { value: null });
  assert.deepEqual(results.errorWins, { value: 'the tool result wins' });
  assert.deepEqual(results.error, { error: 'first line\nsecond line' });
  assert.deepEqual(results.errorNoText, { error: 'Tool call failed' });
  assert.deepEqual(results.errorEmptyText, { error: 'Tool call failed' });
  assert.deepEqual(results.errorNoContent, { error: 'Tool call failed' });
  assert.deepEqual(results.structured, { value: { temp: 21 } });
  assert.deepEqual(results.structuredNull, { value: { y: 2 } });
  assert.deepEqual(results.structuredFalse, { value: false });
  assert.deepEqual(results.jsonText, { value: [1, 2] });
  assert.deepEqual(results.numberText, { value: 42 });
  assert.deepEqual(results.plainText, { value: 'hello world' });
  assert.deepEqual(results.multiText, { value: 'a\nb' });
  assert.deepEqual(results.missingText, { value: '' });
  assert.deepEqual(results.mixed, { value: MCP_RESULTS.mixed });
  assert.deepEqual(results.emptyContent, { value: { content: [] } });
  assert.deepEqual(results.nothing, { value: {} });
  // the server is called with the original MCP name and the arguments as given; one connection
  assert.deepEqual(results.calls[0], { name: 'echo-tool', arguments: { q: 'echo-tool' } });
  assert.equal(results.calls.length, Object.keys(MCP_RESULTS).length);
  assert.equal(results.connections, 1);
});

test('McpConnector: describe() carries MCP schemas and joins connection and connector instructions', async () => {
  const tools = [
    mcpTool('search-issues', { outputSchema: { type: 'object', properties: { total: { type: 'integer' } } } }),
    { name: 'no.description', inputSchema: { type: 'object' } },
    mcpTool('class'),
  ];
  const cases = {
    both: { connectionInstructions: 'Server says hi.', ownInstructions: 'Connector notes.' },
    connectionOnly: { connectionInstructions: 'Server says hi.' },
    ownOnly: { ownInstructions: 'Connector notes.' },
    neither: {},
    emptyConnection: { connectionInstructions: '', ownInstructions: 'Connector notes.' },
  };
  const results = await sameOnBoth(async (impl) => {
    const out = {};
    for (const [label, options] of Object.entries(cases)) {
      const c = new (makeMcp(impl.McpConnector, { tools, name: 'gh', ...options }))();
      out[label] = await c.describe();
    }
    out.types = await new (makeMcp(impl.McpConnector, { tools, name: 'gh' }))().getTypeScriptTypes();
    return out;
  });
  assert.equal(results.both.instructions, 'Server says hi.\n\nConnector notes.');
  assert.equal(results.connectionOnly.instructions, 'Server says hi.');
  assert.equal(results.ownOnly.instructions, 'Connector notes.');
  assert.equal(results.neither.instructions, undefined);
  assert.equal(results.emptyConnection.instructions, 'Connector notes.');
  assert.deepEqual(Object.keys(results.both.descriptors), ['search_issues', 'no_description', 'class_']);
  assert.deepEqual(results.both.descriptors.search_issues, {
    description: 'MCP tool search-issues',
    inputSchema: tools[0].inputSchema,
    outputSchema: tools[0].outputSchema,
  });
  assert.deepEqual(results.both.annotations, {});
  assert.match(results.types, /declare const gh: \{/);
});

test('McpConnector: tools come from `tools` when non-empty, else fetchTools(), else none', async () => {
  const results = await sameOnBoth(async (impl) => {
    const out = {};
    for (const [label, options] of Object.entries({
      listed: { tools: [mcpTool('a')], fetchTools: [mcpTool('fetched')] },
      emptyList: { tools: [], fetchTools: [mcpTool('fetched')] },
      fetchOnly: { fetchTools: [mcpTool('fetched')] },
      none: {},
    })) {
      const log = [];
      const c = new (makeMcp(impl.McpConnector, { ...options, log }))();
      const { descriptors } = await c.describe();
      await c.describe();
      out[label] = { tools: Object.keys(descriptors), log: log.map(([what]) => what) };
    }
    return out;
  });
  assert.deepEqual(results, {
    listed: { tools: ['a'], log: ['createConnection'] },
    emptyList: { tools: ['fetched'], log: ['createConnection', 'fetchTools'] },
    fetchOnly: { tools: ['fetched'], log: ['createConnection', 'fetchTools'] },
    none: { tools: [], log: ['createConnection'] },
  });
});

test('McpConnector: colliding names fail with the exact message; toolName() can disambiguate', async () => {
  const tools = [mcpTool('get-repo'), mcpTool('list'), mcpTool('get.repo')];
  const results = await sameOnBoth(async (impl) => {
    const clash = new (makeMcp(impl.McpConnector, { tools, name: 'github' }))();
    const renamed = new (makeMcp(impl.McpConnector, {
      tools,
      name: 'github',
      toolName: (tool, fallback) => (tool.name === 'get.repo' ? 'getRepoDotted' : fallback),
    }))();
    return {
      clash: await outcome(() => clash.describe()),
      clashExecute: await outcome(() => clash.executeTool('list', {})),
      renamed: Object.keys((await renamed.describe()).descriptors),
      renamedCall: await outcome(() => renamed.executeTool('getRepoDotted', {})),
    };
  });
  const message = 'MCP tools "get-repo" and "get.repo" on github both map to "get_repo". Override toolName() to disambiguate.';
  assert.deepEqual(results.clash, { error: message });
  assert.deepEqual(results.clashExecute, { error: message });
  assert.deepEqual(results.renamed, ['get_repo', 'list', 'getRepoDotted']);
  assert.deepEqual(results.renamedCall, { value: 'dotted' });
});

test('McpConnector: the tool() hook decorates derived tools (approval, revert)', async () => {
  const results = await sameOnBoth(async (impl) => {
    const reverted = [];
    class Decorated extends makeMcp(impl.McpConnector, { tools: [mcpTool('plainText'), mcpTool('structured')] }) {
      tool(name, t) {
        if (name === 'structured') return { ...t, requiresApproval: true, revert: (args, result) => { reverted.push([args, result]); } };
        return t;
      }
    }
    const c = new Decorated();
    return {
      annotations: (await c.describe()).annotations,
      result: await c.executeTool('structured', { q: 1 }),
      reverted: await c.revertAction('structured', { q: 1 }, { temp: 21 }),
      notReverted: await c.revertAction('plainText', {}, 'x'),
      log: reverted,
    };
  });
  assert.deepEqual(results, {
    annotations: { structured: { requiresApproval: true } },
    result: { temp: 21 },
    reverted: true,
    notReverted: false,
    log: [[{ q: 1 }, { temp: 21 }]],
  });
});

test('McpConnector: any client of the MCP shape works (no SDK needed); a missing createConnection() is explained', async () => {
  class Plain extends McpConnector {
    name() { return 'plain'; }
    createConnection() {
      return { client: { callTool: async ({ name, arguments: args }) => ({ content: [{ type: 'text', text: JSON.stringify({ name, args }) }] }) }, tools: [{ name: 'x-y', inputSchema: { type: 'object' } }] };
    }
  }
  assert.deepEqual(await new Plain().executeTool('x_y', { a: 1 }), { name: 'x-y', args: { a: 1 } });
  class Unfinished extends McpConnector {
    name() { return 'u'; }
  }
  await assert.rejects(new Unfinished().describe(), { message: /Unfinished must implement createConnection\(\)/ });
  // a non-object result is returned as it is
  class Odd extends McpConnector {
    name() { return 'odd'; }
    createConnection() { return { client: { callTool: async () => 'just a string' }, tools: [{ name: 'o', inputSchema: {} }] }; }
  }
  assert.equal(await new Odd().executeTool('o', {}), 'just a string');
  // (Cloudflare fails with a TypeError when callTool resolves to nothing)
  class Nothing extends McpConnector {
    name() { return 'nothing'; }
    createConnection() { return { client: { callTool: async () => undefined }, tools: [{ name: 'n', inputSchema: {} }] }; }
  }
  assert.equal(await new Nothing().executeTool('n', {}), undefined);
});

// ─────────────────────────────────────────────────────────────────── OpenApiConnector ──

// A small document with every derivation rule in it: $refs through every keyword, a cycle,
// an external and a dangling ref, pointer escapes, parameters in each location, required and
// optional JSON bodies, operations without operationId, clashes with reserved and used names.
function makeSpec() {
  return {
    openapi: '3.1.0',
    info: { title: 'Repos', version: '1' },
    paths: {
      '/repos/{owner}/{repo}': {
        parameters: [{ name: 'pathLevel', in: 'query', schema: { type: 'string' } }], // not read
        summary: 'path item fields are not operations',
        get: {
          operationId: 'getRepo',
          summary: 'Get a repository',
          description: 'Long description loses to the summary',
          parameters: [
            { name: 'owner', in: 'path', required: true, schema: { type: 'string' }, description: 'Account login' },
            { name: 'repo', in: 'path', required: true, schema: { $ref: '#/components/schemas/RepoName', description: 'sibling dropped' } },
            { name: 'page', in: 'query', schema: { type: 'integer', description: 'Own description' }, description: 'Parameter description' },
            { name: 'X-Trace-Id', in: 'header', schema: { type: 'string' } },
            { name: 'session', in: 'cookie', schema: { type: 'string' } },
            { name: 'noSchema', in: 'query', description: 'Schema-less parameter' },
            { $ref: '#/components/parameters/Limit' }, // parameter refs are not followed: no name
            null,
            { in: 'query', schema: { type: 'string' } }, // nameless
          ],
        },
        patch: {
          operationId: 'update-repo',
          description: 'Update a repository',
          parameters: [
            { name: 'owner', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'repo', in: 'path', required: true, schema: { type: 'string' } },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/RepoPatch' } } } },
        },
        delete: {
          parameters: [
            { name: 'owner', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'repo', in: 'path', required: true, schema: { type: 'string' } },
          ],
        },
        trace: { operationId: 'notAnExposedMethod' },
      },
      '/trees': {
        post: {
          summary: 'Create a tree',
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { root: { $ref: '#/components/schemas/Node' } } } } } },
        },
        get: { operationId: 'getRepo', summary: 'clashes with an earlier operationId' },
        put: { operationId: 'request' },
        options: { operationId: 'spec' },
        head: { summary: '', description: '' },
      },
      '/refs': {
        get: {
          operationId: 'list.refs-v2',
          parameters: [
            { name: 'ext', in: 'query', schema: { $ref: 'other.yaml#/components/schemas/X' } },
            { name: 'dangling', in: 'query', schema: { $ref: '#/components/schemas/Missing' } },
            { name: 'slash', in: 'query', schema: { $ref: '#/components/schemas/a~1b' } },
            { name: 'tilde', in: 'query', schema: { $ref: '#/components/schemas/t~0x' } },
            { name: 'root', in: 'query', schema: { $ref: '#' } },
            { name: 'user', in: 'query', schema: { $ref: '#/components/schemas/User' }, description: 'A user' },
            { name: 'tuple', in: 'query', schema: { type: 'array', items: [{ $ref: '#/components/schemas/RepoName' }] } },
            { name: 'flag', in: 'query', schema: true },
          ],
          requestBody: { content: { 'text/plain': { schema: { type: 'string' } } } },
        },
      },
      '/items/{id}/sub/{id}': {
        get: {
          operationId: 'get-item',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        },
        post: { operationId: 'get.item' }, // sanitizes to an already used name
      },
      '/orders': {
        // written post-first: tools follow get, put, post, delete, patch, options, head
        head: { operationId: 'countOrders' },
        post: { operationId: 'createOrder', requestBody: { required: 'true', content: { 'application/json': { schema: { type: 'object' } } } } },
        patch: { operationId: 'patchOrders' },
        put: { operationId: 'replaceOrders' },
        options: { operationId: 'orderOptions' },
        delete: { operationId: 'deleteOrders' },
        get: { operationId: 'listOrders' },
      },
      '/empty': null,
      '/3d/render': { get: {} },
    },
    components: {
      parameters: { Limit: { name: 'limit', in: 'query', schema: { type: 'integer' } } },
      schemas: {
        RepoName: { type: 'string', minLength: 1 },
        RepoPatch: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { $ref: '#/components/schemas/RepoName' },
            topics: { type: 'array', items: { $ref: '#/components/schemas/Topic' } },
            labels: { type: 'object', additionalProperties: { $ref: '#/components/schemas/RepoName' } },
            owner: { allOf: [{ $ref: '#/components/schemas/User' }, { type: 'object', properties: { extra: { type: 'boolean' } } }] },
            visibility: { anyOf: [{ const: 'public' }, { const: 'private' }] },
          },
        },
        Topic: { oneOf: [{ type: 'string' }, { $ref: '#/components/schemas/RepoName' }] },
        User: { type: 'object', description: 'An account', properties: { login: { type: 'string' }, friend: { $ref: '#/components/schemas/User' } } },
        Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } },
        'a/b': { type: 'number' },
        't~x': { type: 'boolean' },
      },
    },
  };
}

function makeApi(Base, spec, log, { exposeSpec = false, name = 'github' } = {}) {
  return class Api extends Base {
    name() { return name; }
    async spec() { log.push(['spec()']); return spec; }
    exposeSpec() { return exposeSpec; }
    async request(options) {
      log.push(['request', options]);
      return { status: 200, echo: options };
    }
  };
}

test('OpenApiConnector: derivation (names, order, descriptions, schemas, $refs, warnings) is identical to Cloudflare', async () => {
  const results = await sameOnBoth(async (impl) => {
    const [description, warnings] = await withWarnings(() => new (makeApi(impl.OpenApiConnector, makeSpec(), []))().describe());
    const types = await new (makeApi(impl.OpenApiConnector, makeSpec(), []))().getTypeScriptTypes();
    return { description, warnings, types };
  });
  const { descriptors, annotations } = results.description;
  assert.deepEqual(Object.keys(descriptors), [
    'request', 'getRepo', 'delete_reposownerrepo', 'update_repo', 'post_trees', 'head_trees', 'list_refs_v2', 'get_item',
    'listOrders', 'replaceOrders', 'createOrder', 'deleteOrders', 'patchOrders', 'orderOptions', 'countOrders', 'get_3drender',
  ]);
  assert.deepEqual(annotations, {});
  assert.deepEqual(results.warnings, [
    '[OpenApiConnector] operation GET /trees maps to tool name "getRepo", which is already used — skipping. Set a unique operationId to expose it.',
    '[OpenApiConnector] operation PUT /trees maps to tool name "request", which is reserved — skipping. Set a unique operationId to expose it.',
    '[OpenApiConnector] operation OPTIONS /trees maps to tool name "spec", which is reserved — skipping. Set a unique operationId to expose it.',
    '[OpenApiConnector] operation POST /items/{id}/sub/{id} maps to tool name "get_item", which is already used — skipping. Set a unique operationId to expose it.',
  ]);

  assert.equal(descriptors.getRepo.description, 'Get a repository');
  assert.equal(descriptors.update_repo.description, 'Update a repository');
  assert.equal(descriptors.delete_reposownerrepo.description, 'DELETE /repos/{owner}/{repo}');
  assert.equal(descriptors.head_trees.description, 'HEAD /trees');
  assert.deepEqual(descriptors.getRepo.inputSchema, {
    type: 'object',
    properties: {
      owner: { type: 'string', description: 'Account login' },
      repo: { type: 'string', minLength: 1 },
      page: { type: 'integer', description: 'Own description' },
      'X-Trace-Id': { type: 'string' },
      session: { type: 'string' },
      noSchema: { description: 'Schema-less parameter' },
    },
    required: ['owner', 'repo'],
  });
  const user = { type: 'object', description: 'An account', properties: { login: { type: 'string' }, friend: { type: 'object' } } };
  assert.deepEqual(descriptors.update_repo.inputSchema, {
    type: 'object',
    properties: {
      owner: { type: 'string' },
      repo: { type: 'string' },
      body: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1 },
          topics: { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'string', minLength: 1 }] } },
          labels: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
          owner: { allOf: [user, { type: 'object', properties: { extra: { type: 'boolean' } } }] },
          visibility: { anyOf: [{ const: 'public' }, { const: 'private' }] },
        },
      },
    },
    required: ['owner', 'repo', 'body'],
  });
  // optional body: present, not required; the cycle ends in an open object
  assert.deepEqual(descriptors.post_trees.inputSchema, {
    type: 'object',
    properties: {
      body: {
        type: 'object',
        properties: {
          root: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { type: 'object' } } } },
        },
      },
    },
  });
  assert.deepEqual(descriptors.head_trees.inputSchema, { type: 'object', properties: {} });
  // only `required: true` makes the body required
  assert.deepEqual(descriptors.createOrder.inputSchema, { type: 'object', properties: { body: { type: 'object' } } });
  assert.deepEqual(descriptors.list_refs_v2.inputSchema, {
    type: 'object',
    properties: {
      ext: { type: 'object' },
      dangling: { type: 'object' },
      slash: { type: 'number' },
      tilde: { type: 'boolean' },
      root: { type: 'object' },
      user: { ...user, description: 'An account' },
      tuple: { type: 'array', items: [{ $ref: '#/components/schemas/RepoName' }] },
      flag: true,
    },
  });
  assert.deepEqual(descriptors.request.inputSchema.required, ['path']);
  assert.match(results.types, /declare const github: \{/);
  assert.match(results.types, /\tgetRepo: \(input: GetRepoInput\) => Promise<GetRepoOutput>;/);
});

test('OpenApiConnector: calls map onto request() exactly as Cloudflare', async () => {
  const results = await sameOnBoth(async (impl) => {
    const log = [];
    const c = new (makeApi(impl.OpenApiConnector, makeSpec(), log))();
    const calls = [
      ['getRepo', { owner: 'cloudflare', repo: 'agents', page: 2 }],
      ['getRepo', { owner: 'a b/c', repo: 'ü?#', 'X-Trace-Id': 123, session: 'cookie-ignored', noSchema: false, extra: 'dropped' }],
      ['getRepo', { owner: 'o', repo: 'r', page: undefined, 'X-Trace-Id': null }],
      ['getRepo', { owner: 0 }],
      ['update_repo', { owner: 'o', repo: 'r', body: { name: 'n' } }],
      ['update_repo', { owner: 'o', repo: 'r', body: undefined }],
      ['delete_reposownerrepo', { owner: 'o', repo: 'r' }],
      ['post_trees', null],
      ['post_trees', 'not an object'],
      ['post_trees', { body: { root: { name: 'x' } } }],
      ['get_item', { id: 'z' }],
      ['list_refs_v2', { ext: { nested: true }, flag: true }],
      ['request', { path: '/raw', method: 'delete', params: { a: 1 }, body: 'b', headers: { h: 'v' }, extra: 1 }],
      ['request', undefined],
      ['spec', {}],
      ['getrepo', {}],
    ];
    const out = [];
    for (const [method, args] of calls) out.push(await outcome(() => c.executeTool(method, args, CTX)));
    return { out, requests: log.filter(([what]) => what === 'request').map(([, o]) => o) };
  });
  const r = results.requests;
  assert.deepEqual(r[0], { path: '/repos/cloudflare/agents', method: 'GET', params: { page: 2 } });
  assert.deepEqual(r[1], { path: '/repos/a%20b%2Fc/%C3%BC%3F%23', method: 'GET', params: { noSchema: false }, headers: { 'X-Trace-Id': '123' } });
  assert.deepEqual(r[2], { path: '/repos/o/r', method: 'GET', headers: { 'X-Trace-Id': 'null' } });
  assert.deepEqual(r[3], { path: '/repos/0/{repo}', method: 'GET' });
  assert.deepEqual(r[4], { path: '/repos/o/r', method: 'PATCH', body: { name: 'n' } });
  assert.ok('body' in r[5] && r[5].body === undefined);
  assert.deepEqual(r[6], { path: '/repos/o/r', method: 'DELETE' });
  assert.deepEqual(r[7], { path: '/trees', method: 'POST' });
  assert.deepEqual(r[8], { path: '/trees', method: 'POST' });
  assert.deepEqual(r[9], { path: '/trees', method: 'POST', body: { root: { name: 'x' } } });
  assert.deepEqual(r[10], { path: '/items/z/sub/{id}', method: 'GET' });
  assert.deepEqual(r[11], { path: '/refs', method: 'GET', params: { ext: { nested: true }, flag: true } });
  assert.deepEqual(r[12], { path: '/raw', method: 'delete', params: { a: 1 }, body: 'b', headers: { h: 'v' }, extra: 1 });
  assert.equal(r[13], undefined);
  assert.deepEqual(results.out[0], { value: { status: 200, echo: r[0] } });
  assert.deepEqual(results.out[14], { error: 'Tool "spec" not found on github' });
  assert.deepEqual(results.out[15], { error: 'Tool "getrepo" not found on github' });
});

test('OpenApiConnector: exposeSpec() adds a spec tool first that returns the document', async () => {
  const results = await sameOnBoth(async (impl) => {
    const spec = makeSpec();
    const log = [];
    const c = new (makeApi(impl.OpenApiConnector, spec, log, { exposeSpec: true, name: 'api' }))();
    const { descriptors } = await withWarnings(() => c.describe()).then(([d]) => d);
    const returned = await c.executeTool('spec', {});
    return {
      first: Object.keys(descriptors).slice(0, 2),
      spec: descriptors.spec,
      same: returned === spec,
      specCalls: log.filter(([what]) => what === 'spec()').length,
    };
  });
  assert.deepEqual(results, {
    first: ['spec', 'request'],
    spec: { description: 'Return the raw OpenAPI document.', inputSchema: { type: 'object', properties: {} }, outputSchema: undefined },
    same: true,
    specCalls: 2,
  });
});

test('OpenApiConnector: derivation is cached per spec object (warnings once), fresh for a new object', async () => {
  const results = await sameOnBoth(async (impl) => {
    const spec = makeSpec();
    const [, warnings] = await withWarnings(async () => {
      await new (makeApi(impl.OpenApiConnector, spec, []))().describe();
      await new (makeApi(impl.OpenApiConnector, spec, []))().describe();
    });
    const [, again] = await withWarnings(() => new (makeApi(impl.OpenApiConnector, makeSpec(), []))().describe());
    return { sameObject: warnings.length, newObject: again.length };
  });
  assert.deepEqual(results, { sameObject: 4, newObject: 4 });
});

test('OpenApiConnector: a spec without paths, or not an object, gives only the request tool', async () => {
  const results = await sameOnBoth(async (impl) => {
    const out = {};
    for (const [label, spec] of Object.entries({ noPaths: { openapi: '3.0.0' }, nullSpec: null, string: 'openapi: 3.0.0', pathsNull: { paths: null } })) {
      out[label] = Object.keys((await new (makeApi(impl.OpenApiConnector, spec, []))().describe()).descriptors);
    }
    return out;
  });
  assert.deepEqual(results, { noPaths: ['request'], nullSpec: ['request'], string: ['request'], pathsNull: ['request'] });
});

test('OpenApiConnector: missing spec()/request() are explained', async () => {
  class NoSpec extends OpenApiConnector {
    name() { return 'n'; }
  }
  await assert.rejects(new NoSpec().describe(), { message: /NoSpec must implement spec\(\)/ });
  class NoRequest extends OpenApiConnector {
    name() { return 'n'; }
    spec() { return { paths: { '/x': { get: { operationId: 'x' } } } }; }
  }
  await assert.rejects(new NoRequest().executeTool('x', {}), { message: /NoRequest must implement request\(/ });
});

// ─────────────────────────────────────────────────────────────────── ToolSetConnector ──

const SCHEMA = Symbol.for('vercel.ai.schema');

// The AI SDK's `jsonSchema(schema, { validate })`.
function aiJsonSchema(value, { validate } = {}) {
  return {
    [SCHEMA]: true,
    _type: undefined,
    get jsonSchema() {
      if (typeof value === 'function') value = value();
      return value;
    },
    validate,
  };
}

// A zod-4-like schema: Standard Schema of vendor "zod" with a Standard JSON Schema converter,
// safeParseAsync (what the AI SDK validates with) and a shape with field descriptions.
function fakeZod(inputJsonSchema, check, { outputJsonSchema, shape } = {}) {
  return {
    _zod: { def: {} },
    shape,
    '~standard': {
      version: 1,
      vendor: 'zod',
      validate: (value) => (check(value) ? { value } : { issues: [{ message: 'Invalid input' }] }),
      jsonSchema: {
        input: () => inputJsonSchema,
        output: () => outputJsonSchema ?? inputJsonSchema,
      },
    },
    async safeParseAsync(value) {
      if (check(value)) return { success: true, data: { ...value, parsed: true } };
      const error = new Error(`[{"code":"invalid_type","path":["city"],"message":"Invalid input: expected string, received ${typeof value?.city}"}]`);
      error.name = 'ZodError';
      return { success: false, error };
    },
  };
}

const citySchema = { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] };

function makeToolSet(log) {
  const run = (label) => async (input, options) => {
    log.push([label, input, options]);
    return { label, input };
  };
  return {
    getWeather: {
      description: 'Weather for a city',
      inputSchema: fakeZod(citySchema, (v) => typeof v?.city === 'string', { shape: { city: { description: 'City name' } } }),
      outputSchema: fakeZod({ type: 'object', properties: { temp: { type: 'number' } } }, () => true, {
        outputJsonSchema: { type: 'object', properties: { temp: { type: 'number' }, unit: { type: 'string' } }, required: ['temp', 'unit'] },
      }),
      execute: run('getWeather'),
    },
    'send-email': {
      description: 'Send an email',
      inputSchema: aiJsonSchema({ type: 'object', properties: { to: { type: 'string', description: 'Recipient' } } }, {
        validate: (value) => (typeof value?.to === 'string'
          ? { success: true, value: { to: value.to.toLowerCase() } }
          : { success: false, error: new Error('to must be a string') }),
      }),
      needsApproval: true,
      execute: run('send-email'),
    },
    'maybe.approve': {
      inputSchema: aiJsonSchema(() => ({ type: 'object', properties: { n: { type: 'number' } } })),
      needsApproval: async () => false,
      execute: run('maybe.approve'),
    },
    noApproval: { description: 'Never asks', needsApproval: false, inputSchema: aiJsonSchema({ type: 'object' }), execute: run('noApproval') },
    lazy: { inputSchema: () => aiJsonSchema({ type: 'object', properties: { l: { type: 'boolean' } } }), execute: run('lazy') },
    legacyParams: { description: 'AI SDK v4', parameters: aiJsonSchema({ type: 'object', properties: { p: { type: 'string' } } }), execute: run('legacyParams') },
    noSchema: { description: 'No schema at all', execute: run('noSchema') },
    descriptionFn: { description: () => 'dynamic', inputSchema: aiJsonSchema({ type: 'object' }), execute: run('descriptionFn') },
    clientSide: { description: 'Runs in the browser', inputSchema: aiJsonSchema({ type: 'object' }) },
    providerExecuted: { type: 'provider-defined', id: 'openai.web_search', args: {} },
  };
}

test('ToolSetConnector: describe(), warnings, approval mapping and types match Cloudflare', async () => {
  const results = await sameOnBoth(async (impl) => {
    const log = [];
    const [out, warnings] = await withWarnings(async () => {
      const c = new impl.ToolSetConnector({}, { tools: makeToolSet(log), instructions: 'Prefer metric units.' });
      const description = await c.describe();
      await c.describe();
      await c.getTypeScriptTypes();
      // Types are compared without the two tools where we deliberately differ (next test).
      const typed = makeToolSet(log);
      delete typed.lazy;
      delete typed.descriptionFn;
      const types = await new impl.ToolSetConnector({}, { tools: typed }).getTypeScriptTypes();
      return { description, types };
    });
    return { ...out, warnings };
  });
  const { description } = results;
  assert.equal(description.name, 'tools');
  assert.equal(description.instructions, 'Prefer metric units.');
  assert.deepEqual(Object.keys(description.descriptors), [
    'getWeather', 'send_email', 'maybe_approve', 'noApproval', 'lazy', 'legacyParams', 'noSchema', 'descriptionFn',
  ]);
  assert.deepEqual(description.descriptors.getWeather, {
    description: 'Weather for a city',
    inputSchema: citySchema,
    outputSchema: { type: 'object', properties: { temp: { type: 'number' }, unit: { type: 'string' } }, required: ['temp', 'unit'] },
  });
  assert.deepEqual(description.descriptors.maybe_approve.inputSchema, { type: 'object', properties: { n: { type: 'number' } } });
  assert.deepEqual(description.descriptors.lazy.inputSchema, { type: 'object', properties: { l: { type: 'boolean' } } });
  assert.deepEqual(description.descriptors.legacyParams.inputSchema, { type: 'object', properties: { p: { type: 'string' } } });
  assert.deepEqual(description.descriptors.noSchema.inputSchema, { type: 'object' });
  assert.equal(description.descriptors.descriptionFn.description, undefined);
  assert.deepEqual(description.annotations, { send_email: { requiresApproval: true }, maybe_approve: { requiresApproval: true } });
  assert.deepEqual(results.warnings, [
    '[codemode] ToolSetConnector "tools" skipped tools without an execute function (client-side or provider-executed): clientSide, providerExecuted. They are not callable from sandboxed code.',
    '[codemode] ToolSetConnector "tools" skipped tools without an execute function (client-side or provider-executed): clientSide, providerExecuted. They are not callable from sandboxed code.',
  ], 'one warning per connector instance (two instances)');
  assert.match(results.types, /^type GetWeatherInput = \{/);
  assert.match(results.types, /declare const tools: \{/);
  assert.match(results.types, /@param input\.city - City name/);
  assert.match(results.types, /\tsend_email: \(input: SendEmailInput\) => Promise<SendEmailOutput>;/);
  assert.match(results.types, /type NoSchemaInput = unknown/);
  assert.match(results.types, /type GetWeatherOutput = \{\n {4}temp: number;\n {4}unit: string;\n\}/);
  assert.doesNotMatch(results.types, /clientSide|providerExecuted/);
});

test('ToolSetConnector (ours): a lazy schema and a function description still get real types', async () => {
  // Cloudflare types a function-valued (lazy) schema as `unknown` although describe() shows
  // its JSON Schema, and a function description makes it emit the tool's aliases twice; here
  // the type block agrees with describe().
  const c = new ToolSetConnector({ tools: makeToolSet([]) });
  const types = await c.getTypeScriptTypes();
  assert.match(types, /type LazyInput = \{\n {4}l\?: boolean;\n\}/);
  assert.equal(types.match(/type DescriptionFnInput/g).length, 1);
  assert.match(types, /\t \* descriptionFn\n/);
});

test('ToolSetConnector: arguments are validated before execute, and execute gets the parsed value — as Cloudflare', async () => {
  const results = await sameOnBoth(async (impl) => {
    const log = [];
    const c = new impl.ToolSetConnector({}, { tools: makeToolSet(log), name: 'ai' });
    const out = {};
    out.valid = await outcome(() => c.executeTool('getWeather', { city: 'Lisbon' }, CTX));
    out.invalid = await outcome(() => c.executeTool('getWeather', { city: 7 }, CTX));
    out.emailValid = await outcome(() => c.executeTool('send_email', { to: 'A@B.C' }));
    out.emailInvalid = await outcome(() => c.executeTool('send_email', {}));
    out.unvalidated = await outcome(() => c.executeTool('maybe_approve', 'anything goes'));
    out.noSchema = await outcome(() => c.executeTool('noSchema', { free: 1 }, CTX));
    out.original = await outcome(() => c.executeTool('send-email', {}));
    out.skipped = await outcome(() => c.executeTool('clientSide', {}));
    return { out, log };
  });
  assert.deepEqual(results.out.valid, { value: { label: 'getWeather', input: { city: 'Lisbon', parsed: true } } });
  assert.match(results.out.invalid.error, /Invalid input: expected string, received number/);
  assert.deepEqual(results.out.emailValid, { value: { label: 'send-email', input: { to: 'a@b.c' } } });
  assert.deepEqual(results.out.emailInvalid, { error: 'to must be a string' });
  assert.deepEqual(results.out.unvalidated, { value: { label: 'maybe.approve', input: 'anything goes' } });
  assert.deepEqual(results.out.original, { error: 'Tool "send-email" not found on ai' });
  assert.deepEqual(results.out.skipped, { error: 'Tool "clientSide" not found on ai' });
  // invalid calls never reach execute; execute gets the input alone (no AI SDK options)
  assert.deepEqual(results.log.map(([label, , options]) => [label, options]), [
    ['getWeather', undefined], ['send-email', undefined], ['maybe.approve', undefined], ['noSchema', undefined],
  ]);
});

test('ToolSetConnector: colliding names fail with the exact message; name option; warning only once', async () => {
  const results = await sameOnBoth(async (impl) => {
    const execute = () => 1;
    const [out, warnings] = await withWarnings(async () => {
      const clash = impl.toolSetConnector({}, { name: 'kit', tools: { 'get-x': { execute }, other: { execute }, 'get.x': { execute }, ghost: {} } });
      return {
        name: clash.name(),
        describe: await outcome(() => clash.describe()),
        execute: await outcome(() => clash.executeTool('other', {})),
        types: await outcome(() => clash.getTypeScriptTypes()),
      };
    });
    return { ...out, warnings };
  });
  assert.equal(results.name, 'kit');
  const message = 'Tools "get-x" and "get.x" on kit both map to "get_x" — rename one of them.';
  assert.deepEqual(results.describe, { error: message });
  assert.deepEqual(results.execute, { error: message });
  // type generation does not check collisions (neither does Cloudflare's)
  assert.ok(results.types.value.includes('declare const kit: {'));
  assert.deepEqual(results.warnings, [
    '[codemode] ToolSetConnector "kit" skipped tools without an execute function (client-side or provider-executed): ghost. They are not callable from sandboxed code.',
  ]);
});

test('ToolSetConnector: an async JSON Schema is awaited', async () => {
  const results = await sameOnBoth(async (impl) => {
    const c = new impl.ToolSetConnector({}, {
      tools: {
        later: { inputSchema: aiJsonSchema(Promise.resolve({ type: 'object', properties: { id: { type: 'integer' } } })), execute: (x) => x },
        laterFn: { inputSchema: aiJsonSchema(async () => ({ type: 'object', properties: { s: { type: 'string' } } })), execute: (x) => x },
      },
    });
    const { descriptors } = await c.describe();
    return { later: descriptors.later.inputSchema, laterFn: descriptors.laterFn.inputSchema };
  });
  assert.deepEqual(results, {
    later: { type: 'object', properties: { id: { type: 'integer' } } },
    laterFn: { type: 'object', properties: { s: { type: 'string' } } },
  });
});

test('ToolSetConnector (ours): schema shapes without the AI SDK — plain JSON Schema, loose wrappers, Standard Schema, old zod', async () => {
  const seen = [];
  const execute = (input) => { seen.push(input); return input; };
  const valibotLike = {
    '~standard': {
      version: 1,
      vendor: 'valibot',
      validate: (v) => (Number.isInteger(v?.n) ? { value: { n: v.n * 2 } } : { issues: [{ message: 'n must be an integer' }] }),
      jsonSchema: { input: ({ target }) => ({ type: 'object', properties: { n: { type: 'integer' } }, $comment: target }) },
    },
  };
  const noConverter = { '~standard': { version: 1, vendor: 'arktype', validate: (v) => ({ value: v }) } };
  // ArkType types are callable Standard Schemas: not lazy schemas
  const arkLike = Object.assign(() => { throw new Error('an ArkType type is not a lazy schema'); }, {
    '~standard': {
      version: 1,
      vendor: 'arktype',
      validate: (v) => (typeof v?.s === 'string' ? { value: v } : { issues: [{ message: 's must be a string' }] }),
      jsonSchema: { input: () => ({ type: 'object', properties: { s: { type: 'string' } } }), output: () => ({ type: 'string' }) },
    },
  });
  const oldZod = { _def: { typeName: 'ZodObject' }, safeParseAsync: async (v) => (v?.ok ? { success: true, data: 'parsed' } : { success: false, error: new Error('old zod says no') }) };
  const c = new ToolSetConnector({
    name: 'local',
    tools: {
      plain: { inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, outputSchema: { type: 'string' }, execute },
      plainNotSchema: { inputSchema: { foo: 1 }, execute },
      looseWrapper: { inputSchema: { jsonSchema: { type: 'object', properties: { w: { type: 'number' } } } }, execute },
      looseWrapperValidates: { inputSchema: { jsonSchema: { type: 'object' }, validate: (v) => ({ success: false, error: new Error(`rejected ${JSON.stringify(v)}`) }) }, execute },
      valibot: { inputSchema: valibotLike, execute },
      arktype: { inputSchema: noConverter, execute },
      oldZod: { inputSchema: oldZod, execute },
      ark: { inputSchema: arkLike, outputSchema: arkLike, execute },
      failingOutput: { outputSchema: { '~standard': { jsonSchema: { output: () => { throw new Error('no'); } } } }, execute },
    },
  });
  const { descriptors } = await c.describe();
  assert.deepEqual(descriptors.plain, { description: undefined, inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, outputSchema: { type: 'string' } });
  assert.deepEqual(descriptors.plainNotSchema.inputSchema, { type: 'object' });
  assert.deepEqual(descriptors.looseWrapper.inputSchema, { type: 'object', properties: { w: { type: 'number' } } });
  assert.deepEqual(descriptors.valibot.inputSchema, { type: 'object', properties: { n: { type: 'integer' } }, $comment: 'draft-07' });
  assert.deepEqual(descriptors.arktype.inputSchema, { type: 'object' });
  assert.deepEqual(descriptors.oldZod.inputSchema, { type: 'object' });
  assert.equal(descriptors.failingOutput.outputSchema, undefined);
  assert.deepEqual(descriptors.ark, { description: undefined, inputSchema: { type: 'object', properties: { s: { type: 'string' } } }, outputSchema: { type: 'string' } });

  assert.deepEqual(await c.executeTool('plain', 'unvalidated'), 'unvalidated');
  await assert.rejects(c.executeTool('looseWrapperValidates', { a: 1 }), { message: 'rejected {"a":1}' });
  assert.deepEqual(await c.executeTool('valibot', { n: 4 }), { n: 8 });
  await assert.rejects(c.executeTool('valibot', { n: 1.5 }), (error) => {
    assert.equal(error.name, 'AI_TypeValidationError');
    assert.equal(error.message, 'Type validation failed: Value: {"n":1.5}.\nError message: [{"message":"n must be an integer"}]');
    assert.deepEqual(error.cause, [{ message: 'n must be an integer' }]);
    return true;
  });
  assert.deepEqual(await c.executeTool('arktype', { any: 1 }), { any: 1 });
  assert.equal(await c.executeTool('oldZod', { ok: true }), 'parsed');
  assert.deepEqual(await c.executeTool('ark', { s: 'x' }), { s: 'x' });
  await assert.rejects(c.executeTool('ark', {}), { name: 'AI_TypeValidationError' });
  await assert.rejects(c.executeTool('oldZod', {}), { message: 'old zod says no' });

  const types = await c.getTypeScriptTypes();
  assert.match(types, /declare const local: \{/);
  assert.match(types, /type PlainInput = \{\n {4}q\?: string;\n\}/);
  assert.match(types, /type PlainOutput = string/);
});

test('ToolSetConnector (ours): constructor forms and options checking', async () => {
  const tools = { hi: { execute: () => 'hello' } };
  const withoutCtx = new ToolSetConnector({ tools });
  assert.equal(withoutCtx.name(), 'tools');
  assert.equal(await withoutCtx.executeTool('hi', {}), 'hello');
  assert.equal(withoutCtx.ctx, undefined);
  const ctx = { id: 'ctx' };
  const withCtx = new ToolSetConnector(ctx, { tools, name: 'greet', instructions: 'Be nice.' });
  assert.equal(withCtx.ctx, ctx);
  assert.deepEqual(await withCtx.describe(), {
    name: 'greet',
    instructions: 'Be nice.',
    descriptors: { hi: { description: undefined, inputSchema: { type: 'object' }, outputSchema: undefined } },
    annotations: {},
  });
  assert.ok(toolSetConnector(undefined, { tools }) instanceof ToolSetConnector);
  assert.ok(withCtx instanceof CodemodeConnector);
  assert.throws(() => new ToolSetConnector({}, {}), { name: 'CodemodeExecutorError', code: 'ERR_INVALID_ARGUMENT', message: /needs options with a `tools` record/ });
  assert.throws(() => new ToolSetConnector(), { code: 'ERR_INVALID_ARGUMENT' });
  // the options object is read when the tools resolve, as Cloudflare does
  const options = { tools: {} };
  const late = new ToolSetConnector(options);
  options.tools = { added: { execute: () => 'late' } };
  assert.equal(await late.executeTool('added', {}), 'late');
});

test('exports: the four connector classes (and the toolSetConnector helper)', () => {
  assert.deepEqual(Object.keys(ours).sort(), ['CodemodeConnector', 'McpConnector', 'OpenApiConnector', 'ToolSetConnector', 'toolSetConnector']);
  for (const Derived of [McpConnector, OpenApiConnector, ToolSetConnector]) {
    assert.equal(Object.getPrototypeOf(Derived), CodemodeConnector);
  }
});

test('McpConnector: a failed connection is not kept; the next use connects again (issue 37)', async () => {
  let attempts = 0;
  class Flaky extends McpConnector {
    name() { return 'flaky'; }
    async createConnection() {
      attempts++;
      if (attempts === 1) throw new Error('spawn no-such-binary ENOENT');
      return { client: { async callTool() { return { content: [{ type: 'text', text: '"ok"' }] }; } }, tools: [mcpTool('ping')] };
    }
  }
  const connector = new Flaky();
  await assert.rejects(connector.describe(), /ENOENT/);
  const { descriptors } = await connector.describe();
  assert.deepEqual(Object.keys(descriptors), ['ping']);
  assert.equal(await connector.executeTool('ping', {}, CTX), 'ok');
  assert.equal(attempts, 2);
});
