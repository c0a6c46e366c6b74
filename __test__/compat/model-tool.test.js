'use strict';
// The model-facing tool's parts (docs/cloudflare-compat.md §9): description, input schema, toModelOutput.
//
// Fixed expectations for each rule, then a comparison with @cloudflare/codemode 0.5.6 used
// as a black box. Cloudflare keeps buildDescription, its Standard Schema object and
// toModelOutput private; all three are reached through `createCodemodeRuntime(...).tool()`,
// which returns { description, inputSchema, execute, toModelOutput }. tool() only needs a
// Durable Object `ctx` with `exports.CodemodeRuntime` (checked to exist) and
// `facets.get(name, factory)`; our fake builds the real CodemodeRuntime facet over a fake
// `storage.sql` whose `exec` returns no rows (tool() never reads it: execute is not called).
// Connectors are plain objects with `name()`, all that description building and name
// validation call.
const test = require('node:test');
const assert = require('node:assert/strict');

const { buildDescription, codeInputSchema, toModelOutput } = require('../../lib/runtime/model-tool.js');
const { truncateResult } = require('../../lib/cloudflare/truncate.js');
const { loadCloudflare } = require('../fixtures/cloudflare-oracle.js');

function cloudflareTool(cf, names, toolOptions) {
  const sql = { exec: () => ({ toArray: () => [] }) };
  const ctx = {
    exports: { CodemodeRuntime: cf.CodemodeRuntime },
    facets: { get: (_name, factory) => new (factory().class)({ storage: { sql } }, {}) },
  };
  const connectors = names.map((n) => ({ name: () => n }));
  const handle = cf.createCodemodeRuntime({ ctx, connectors, executor: { execute: () => { throw new Error('unused'); } } });
  return handle.tool(toolOptions);
}

// ---------------------------------------------------------------------------------------
// §9.1 description

test('the default description: globals line, sections, and one line per connector', () => {
  const text = buildDescription(['github', 'slack'], undefined, { github: 'GitHub REST API' });
  const lines = text.split('\n');
  assert.equal(lines[0], 'Execute JavaScript in a sandbox with access to connector SDKs.');
  assert.deepEqual(lines.filter((l) => l.startsWith('## ')), ['## Workflow', '## Rules', '## Snippets', '## Available connectors']);
  assert.ok(lines.includes('- The ONLY globals are `github`, `slack` and `codemode` (plus standard JavaScript). There is no `host`, `fs`, `require`, `process`, or Node.js API — all I/O goes through the connectors below.'));
  assert.ok(lines.includes('- Do not use `fetch` — use connector SDKs.'));
  assert.ok(text.endsWith('## Available connectors\n\n- `github` — GitHub REST API\n- `slack`'));
  assert.equal(lines.length, 29); // 27 fixed lines, then one per connector
});

test('a custom description is used as it is; an empty one is not', () => {
  assert.equal(buildDescription(['a'], 'Do things.', { a: 'ignored' }), 'Do things.');
  assert.equal(buildDescription(['a'], '', undefined), buildDescription(['a']));
  // An empty hint is no hint; connectors may also be given as connector objects.
  assert.equal(buildDescription([{ name: () => 'a' }], undefined, { a: '' }), buildDescription(['a']));
  assert.ok(buildDescription([]).endsWith('## Available connectors\n\n'));
  assert.match(buildDescription([]), /The ONLY globals are {2}and `codemode`/);
  // A `$` in a name is literal text.
  assert.match(buildDescription(['$&', "$'"]), /The ONLY globals are `\$&`, `\$'` and/);
});

// ---------------------------------------------------------------------------------------
// §9.2 input schema

test('the input schema is a Standard Schema v1 object', () => {
  const std = codeInputSchema['~standard'];
  assert.equal(std.version, 1);
  assert.equal(std.vendor, '@cloudflare/codemode');
  const json = { type: 'object', properties: { code: { type: 'string' } }, required: ['code'], additionalProperties: false };
  assert.deepEqual(std.jsonSchema.input({ target: 'draft-07' }), json);
  assert.deepEqual(std.jsonSchema.output({ target: 'draft-2020-12' }), json);
  assert.deepEqual(std.validate({ code: 'x', extra: 1 }), { value: { code: 'x' } });
  assert.deepEqual(std.validate(Object.create({ code: 'inherited' })), { value: { code: 'inherited' } });
  const issue = { issues: [{ message: 'Expected an object with a string code property' }] };
  for (const bad of [null, undefined, 'code', 1, [], {}, { code: 1 }, { code: null }, { Code: 'x' }]) {
    assert.deepEqual(std.validate(bad), issue, String(bad));
  }
});

// ---------------------------------------------------------------------------------------
// §9.4 toModelOutput

test('toModelOutput drops calls, bounds logs, and keeps the rest as JSON', () => {
  const logs = Array.from({ length: 3000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`);
  const output = { status: 'completed', executionId: 'e1', result: { big: 'r'.repeat(50_000), n: 10n, u: undefined }, logs, calls: [{ seq: 0 }] };
  const out = toModelOutput(output);
  assert.equal(out.type, 'json');
  assert.deepEqual(Object.keys(out.value), ['status', 'executionId', 'result', 'logs']);
  // The result is not truncated; BigInt becomes a decimal string; undefined members go.
  assert.deepEqual(out.value.result, { big: 'r'.repeat(50_000), n: '10' });
  assert.deepEqual(out.value.logs, truncateResult(logs));
  assert.ok(out.value.logs.length < logs.length);
  assert.ok(output.calls, 'the output itself is not changed');
  assert.equal(output.logs, logs);
});

test('toModelOutput on other values, and values JSON cannot hold', () => {
  assert.deepEqual(toModelOutput(undefined), { type: 'json', value: null });
  assert.deepEqual(toModelOutput('text'), { type: 'json', value: 'text' });
  assert.deepEqual(toModelOutput(12n), { type: 'json', value: '12' });
  assert.deepEqual(toModelOutput(NaN), { type: 'json', value: null });
  // Arrays pass through whole, `calls` members included.
  assert.deepEqual(toModelOutput([{ calls: 1 }, undefined]), { type: 'json', value: [{ calls: 1 }, null] });
  assert.deepEqual(toModelOutput({ when: new Date(0), m: new Map([[1, 2]]), f() {} }), { type: 'json', value: { when: '1970-01-01T00:00:00.000Z', m: {} } });
  const cyclic = { status: 'completed', result: {} };
  cyclic.result.self = cyclic.result;
  const out = toModelOutput(cyclic);
  assert.equal(out.type, 'json');
  assert.match(out.value.error, /^Result could not be serialized for the model: Converting circular structure to JSON/);
  assert.deepEqual(Object.keys(out.value), ['error']);
  assert.deepEqual(toModelOutput({ get bad() { throw new Error('boom'); } }), { type: 'json', value: { error: 'Result could not be serialized for the model: boom' } });
  assert.deepEqual(toModelOutput({ toJSON() { throw 'not an error'; } }), { type: 'json', value: { error: 'Result could not be serialized for the model: not an error' } });
});

// ---------------------------------------------------------------------------------------
// Agreement with Cloudflare's implementation

test('the description agrees with Cloudflare\'s for many connector sets, hints and custom texts', async (t) => {
  const cf = await loadCloudflare();
  const nameSets = [[], ['a'], ['github', 'slack'], ['github', 'slack', 'files_v2', 'weatherAPI', 'my-conn'], ['$&', "$'", '$$', '$1'], ['café', 'データ'], ['constructor', 'toString'], ['x'.repeat(200)]];
  const hintSets = [undefined, {}, { github: 'GitHub REST API' }, { github: '' }, { slack: 'Slack: post and read', unknown: 'never shown' },
    { a: 'multi\nline hint', '$&': 'dollar $& hint', $$: '$$', constructor: 'constructor hint' }, { github: 'x'.repeat(500), 'my-conn': '— dash' }];
  const customs = [undefined, '', 'Custom description.', '   ', 'Line one\nLine two'];
  let compared = 0;
  for (const names of nameSets) {
    for (const connectorHints of hintSets) {
      for (const description of customs) {
        const expected = cloudflareTool(cf, names, { description, connectorHints }).description;
        assert.equal(buildDescription(names, description, connectorHints), expected, JSON.stringify({ names, connectorHints, description }));
        assert.equal(buildDescription(names.map((n) => ({ name: () => n })), description, connectorHints), expected);
        compared++;
      }
    }
  }
  assert.equal(cloudflareTool(cf, ['a']).description, buildDescription(['a']));
  t.diagnostic(`${compared} descriptions compared`);
});

test('the input schema agrees with Cloudflare\'s', async () => {
  const cf = await loadCloudflare();
  const theirs = cloudflareTool(cf, ['a']).inputSchema;
  assert.deepEqual(Object.keys(codeInputSchema), Object.keys(theirs));
  const ours = codeInputSchema['~standard'];
  const std = theirs['~standard'];
  assert.deepEqual(Object.keys(ours).sort(), Object.keys(std).sort());
  assert.equal(ours.version, std.version);
  assert.equal(ours.vendor, std.vendor);
  assert.deepEqual(ours.jsonSchema.input({ target: 'draft-07' }), std.jsonSchema.input({ target: 'draft-07' }));
  assert.deepEqual(ours.jsonSchema.output({ target: 'openapi-3.0' }), std.jsonSchema.output({ target: 'openapi-3.0' }));
  const values = [null, undefined, 0, 1, '', 'code', true, [], ['code'], {}, { code: '' }, { code: 'x' }, { code: 'x', y: 2 },
    { code: 1 }, { code: null }, { code: undefined }, { code: ['x'] }, { code: new String('x') }, { Code: 'x' },
    Object.create({ code: 'proto' }), Object.assign([], { code: 'array' }), new Map([['code', 'x']]), () => {},
    Object.assign(() => {}, { code: 'fn' }), { get code() { return 'getter'; } }];
  for (const v of values) assert.deepEqual(ours.validate(v), std.validate(v), String(v));
});

// Tool outputs of every shape the runtime produces, and values a program can return.
function corpusOutputs() {
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const cyclicArray = [1];
  cyclicArray.push(cyclicArray);
  const calls = [{ seq: 0, connector: 'github', method: 'create_issue', args: { title: 't' }, result: { n: 1 }, requiresApproval: true, state: 'done' }];
  const longLogs = Array.from({ length: 5000 }, (_, i) => `log line ${i}: ${'lorem ipsum '.repeat(i % 7)}`);
  const fewLogs = ['one', 'two', ''];
  const hugeLine = ['z'.repeat(100_000)];
  const values = [
    undefined, null, 0, -0, 1.5, NaN, Infinity, '', 'plain text', true, 10n, -(2n ** 70n), Symbol('s'), () => 1,
    [], [1, 'two', undefined, 3n, { calls: [], logs: longLogs }], cyclicArray,
    { status: 'completed', executionId: 'exec_1', result: 42, calls },
    { status: 'completed', executionId: 'exec_2', result: { id: 7n, nested: [1n, undefined, null] }, logs: fewLogs, calls },
    { status: 'completed', executionId: 'exec_3', result: 'r'.repeat(60_000), logs: longLogs },
    { status: 'completed', executionId: 'exec_4', result: undefined, logs: [] },
    { status: 'completed', executionId: 'exec_5', result: cyclic, logs: fewLogs, calls },
    { status: 'completed', executionId: 'exec_6', result: null, logs: hugeLine },
    { status: 'completed', executionId: 'exec_7', result: [cyclicArray], calls: undefined },
    { status: 'paused', executionId: 'exec_8', pending: [{ seq: 1, connector: 'github', method: 'create_issue', args: { title: 'x', big: 99n } }], calls },
    { status: 'error', executionId: 'exec_9', error: 'Code execution failed: boom', logs: longLogs.slice(0, 100), calls },
    { status: 'error', executionId: '', error: 'The execution code is too large' },
    { logs: 'not an array', result: { u: undefined } },
    { logs: [1n, 2n, 'x'.repeat(30_000)] },
    { logs: [cyclic] },
    { logs: [{ deep: { deeper: 'd'.repeat(30_000) } }], extra: new Date(86_400_000) },
    { calls: 'only calls' },
    { result: new Map([[1, 2]]), set: new Set([1]), re: /x/g, err: new Error('e'), buf: new Uint8Array([1, 2, 3]) },
    { result: { toJSON: () => ({ replaced: 5n }) } },
    { result: { toJSON() { throw new Error('toJSON failed'); } } },
    { [Symbol('k')]: 1, visible: 'yes', fn() {} },
    Object.assign(Object.create({ inherited: 1 }), { own: 2, calls: 3 }),
    new Date(0),
    new (class Output { constructor() { this.status = 'completed'; this.result = 1; this.calls = []; } })(),
  ];
  return values;
}

test('toModelOutput agrees with Cloudflare\'s over varied outputs', async (t) => {
  const cf = await loadCloudflare();
  const theirs = cloudflareTool(cf, ['github']).toModelOutput;
  const outputs = corpusOutputs();
  for (const [i, output] of outputs.entries()) {
    assert.deepEqual(toModelOutput(output), theirs({ output }), `output #${i}`);
  }
  // Random log arrays around the truncation budget.
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < 60; i++) {
    const logs = Array.from({ length: Math.floor(random() * 400) }, (_, j) => `${j}:${'w'.repeat(Math.floor(random() * 200))}`);
    const output = { status: 'completed', executionId: `exec_r${i}`, result: { i, v: BigInt(i) }, logs, calls: [] };
    assert.deepEqual(toModelOutput(output), theirs({ output }), `random #${i}`);
  }
  t.diagnostic(`${outputs.length + 60} outputs compared`);
});

test('a throwing getter: Cloudflare throws, we answer with the serialization error (deliberate)', async () => {
  const cf = await loadCloudflare();
  const theirs = cloudflareTool(cf, ['github']).toModelOutput;
  const output = { status: 'completed', get result() { throw new Error('getter failed'); } };
  assert.throws(() => theirs({ output }), /getter failed/);
  assert.deepEqual(toModelOutput(output), { type: 'json', value: { error: 'Result could not be serialized for the model: getter failed' } });
  // In an array the getter runs inside JSON.stringify, where both catch it.
  assert.deepEqual(toModelOutput([output]), theirs({ output: [output] }));
});
