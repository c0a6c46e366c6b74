'use strict';
// `/ai` against Cloudflare's published `@cloudflare/codemode/ai` (the oracle, loaded with the
// `cloudflare:workers` stand-in): the same ToolSets, the same executor (ours), compared on tool
// descriptions, input schemas, generated types, outputs and errors. Deliberate differences:
// the code tool's input schema is the AI SDK's `jsonSchema()` (no zod), so its JSON Schema is
// compared, not its object, and a non-object input is refused with our own message.
const test = require('node:test');
const assert = require('node:assert/strict');
const { z } = require('zod');
const { tool, jsonSchema, asSchema } = require('ai');
const { IsolateExecutor } = require('../../lib/index.js');
const ours = require('../../lib/ai/index.js');
const { loadCloudflare } = require('../fixtures/cloudflare-oracle.js');

let cloudflareAi;
async function oracle() {
  if (!cloudflareAi) {
    await loadCloudflare();
    cloudflareAi = await import('@cloudflare/codemode/ai');
  }
  return cloudflareAi;
}

const executor = new IsolateExecutor({ workers: 1 });
test.after(() => executor.dispose());

function toolSet({ plain = false, approvals = true } = {}) {
  const set = {
    get_weather: tool({
      description: 'Current weather\nfor a city */ or not',
      inputSchema: z.object({ city: z.string().describe('City name'), units: z.enum(['c', 'f']).optional().describe('Units') }),
      outputSchema: z.object({ temp: z.number(), city: z.string() }),
      execute: async ({ city, units }) => ({ temp: units === 'f' ? 70 : 21, city }),
    }),
    'search-docs': tool({
      description: 'Search the docs',
      inputSchema: jsonSchema({ type: 'object', properties: { q: { type: 'string', description: 'The query' }, limit: { type: 'integer' } }, required: ['q'] }),
      execute: async ({ q, limit }) => ({ hits: [q], limit: limit ?? 10 }),
    }),
    delete_all: tool({ description: 'Needs approval', inputSchema: z.object({}), needsApproval: true, execute: async () => 'deleted' }),
    maybe: tool({ description: 'Approval by function', inputSchema: z.object({}), needsApproval: async () => false, execute: async () => 'm' }),
    no_execute: tool({ description: 'Client-side', inputSchema: z.object({ a: z.string() }) }),
    defaulted: tool({
      inputSchema: z.object({ n: z.number().default(3) }),
      outputSchema: z.object({ n: z.number().default(1) }).transform((v) => v.n),
      execute: async ({ n }) => n * 2,
    }),
  };
  // Tools marked needsApproval: Cloudflare's createCodeTool leaves them out; ours keeps them and
  // runs its programs durably (issue 35; compared below without them, and in ../runtime/ai-approvals.test.js).
  if (!approvals) {
    delete set.delete_all;
    delete set.maybe;
  }
  // A plain JSON Schema (not wrapped): typed `unknown`; the AI SDK's asSchema refuses it, so
  // createCodeTool throws for it in both.
  if (plain) set.plain = { description: 'plain', inputSchema: { type: 'object', properties: { x: { type: 'number' } } }, execute: async (a) => a };
  return set;
}

test('/ai generateTypes: the same declarations as Cloudflare, namespace included', async () => {
  const cf = await oracle();
  for (const namespace of [undefined, 'weather']) {
    assert.equal(ours.generateTypes(toolSet({ plain: true }), namespace), cf.generateTypes(toolSet({ plain: true }), namespace));
  }
  assert.equal(ours.generateTypes({}), cf.generateTypes({}));
  const odd = { bad: { description: 42, inputSchema: z.object({ a: z.string() }) }, nothing: { inputSchema: undefined } };
  assert.equal(ours.generateTypes(odd), cf.generateTypes(odd));
});

test('/ai createCodeTool: description, input schema, results and errors as Cloudflare', async () => {
  const cf = await oracle();
  const variants = [
    { tools: toolSet({ approvals: false }) },
    { tools: [ours.aiTools(toolSet({ approvals: false })), { name: 'extra', tools: { ping: tool({ description: 'Ping', inputSchema: z.object({}), execute: async () => 'pong' }) } }] },
    { tools: [{ name: 'typed', tools: toolSet({ approvals: false }), types: 'declare const typed: any' }], description: 'Custom:\n{{types}}\nend' },
  ];
  for (const options of variants) {
    const mine = ours.createCodeTool({ ...options, executor });
    const theirs = cf.createCodeTool({ ...options, tools: Array.isArray(options.tools) ? options.tools.map((p) => ({ ...p })) : options.tools, executor });
    assert.equal(mine.description, theirs.description);
    assert.deepEqual(await asSchema(mine.inputSchema).jsonSchema, await asSchema(theirs.inputSchema).jsonSchema);
    for (const code of [
      'async () => codemode.get_weather({ city: "Oslo", units: "f" })',
      'async () => { console.log("hi"); return await codemode.search_docs({ q: "x" }); }',
      'async () => codemode.defaulted({})',
      'async () => codemode.get_weather({ city: 5 })',
      'async () => codemode.delete_all({})',
      'async () => codemode.no_execute({ a: "b" })',
      'async () => { throw new Error("boom"); }',
      'async () => extra.ping({})',
      'async () => typed.get_weather({ city: "Lima" })',
    ]) {
      const settle = (p) => p.then((value) => ({ value }), (error) => ({ error: error.message }));
      const [a, b] = await Promise.all([settle(mine.execute({ code }, {})), settle(theirs.execute({ code }, {}))]);
      assert.deepEqual(a, b, code);
    }
  }
});

test('/ai createCodeTool keeps needsApproval tools where Cloudflare drops them (issue 35)', async () => {
  const cf = await oracle();
  const mine = ours.createCodeTool({ tools: toolSet(), executor });
  const theirs = cf.createCodeTool({ tools: toolSet(), executor });
  assert.ok(!theirs.description.includes('delete_all'));
  assert.match(mine.description, /delete_all: \(input: DeleteAllInput\)/);
  assert.match(mine.description, /maybe: \(input: MaybeInput\)/);
  assert.equal(typeof mine.needsApproval, 'function');
  // The same program, and the same answer, where nothing needs approval.
  const code = 'async () => codemode.get_weather({ city: "Oslo", units: "f" })';
  assert.deepEqual(await mine.execute({ code }, { toolCallId: 'k1', messages: [] }), await theirs.execute({ code }, {}));
  // maybe's needsApproval function says no: it runs where Cloudflare's has no such function.
  assert.deepEqual(await mine.execute({ code: 'async () => codemode.maybe({})' }, { toolCallId: 'k2', messages: [] }), { result: 'm' });
  await assert.rejects(theirs.execute({ code: 'async () => codemode.maybe({})' }, {}), /Tool "maybe" not found/);
});

test('/ai resolveProvider and aiTools: the same shape; needsApproval tools dropped; input validated', async () => {
  const cf = await oracle();
  const a = ours.resolveProvider(ours.aiTools(toolSet()));
  const b = cf.resolveProvider(cf.aiTools(toolSet()));
  assert.equal(a.name, b.name);
  assert.deepEqual(Object.keys(a.fns).sort(), Object.keys(b.fns).sort());
  assert.deepEqual(await a.fns.get_weather({ city: 'Rome' }), await b.fns.get_weather({ city: 'Rome' }));
  const bad = async (fns) => fns.get_weather({ city: 1 }).then(() => 'resolved', (e) => e.name);
  assert.equal(await bad(a.fns), await bad(b.fns));
  assert.equal(ours.resolveProvider({ name: 'n', tools: {} }).name, 'n');
  const message = (f) => { try { f(); return 'returned'; } catch (e) { return e.message; } };
  assert.equal(message(() => ours.createCodeTool({ tools: toolSet({ plain: true }), executor })), message(() => cf.createCodeTool({ tools: toolSet({ plain: true }), executor })));
});

test('/ai loads with import and require and exports what Cloudflare\'s does', async () => {
  const cf = await oracle();
  const esm = await import('@supolka/codemode-executor/ai');
  assert.equal(require('@supolka/codemode-executor/ai').createCodeTool, ours.createCodeTool);
  for (const name of Object.keys(cf)) {
    assert.equal(typeof ours[name], typeof cf[name], `require: ${name}`);
    assert.equal(typeof esm[name], typeof cf[name], `import: ${name}`);
  }
});

test('examples/ai-code-tool.js runs createCodeTool in a generateText loop and exits 0', async () => {
  const { execFile } = require('node:child_process');
  const path = require('node:path');
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, [path.join('examples', 'ai-code-tool.js')], { cwd: path.join(__dirname, '..', '..'), timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout: out, stderr: err });
    });
  });
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  for (const line of [
    'the tool description declares: getWeather, toFahrenheit',
    'tool result: {"result":[{"city":"Oslo","fahrenheit":39.2},{"city":"Lisbon","fahrenheit":66.2}],"logs":["checked 2 cities"]}',
    'tool calls on the host: getWeather=2 toFahrenheit=2',
    'the model said: "Right now: Oslo 39.2°F, Lisbon 66.2°F."',
  ]) assert.ok(stdout.includes(line), `missing "${line}" in:\n${stdout}`);
});

test('a file written for @cloudflare/codemode/ai runs on Node with only its imports and the executor constructor changed', async () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const { execFile } = require('node:child_process');
  const original = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'cloudflare-app.mjs'), 'utf8');
  const migrated = original
    .replace('import { createCodeTool } from "@cloudflare/codemode/ai"; // import: ai', 'import { createCodeTool } from "@supolka/codemode-executor/ai";')
    .replace('import { DynamicWorkerExecutor } from "@cloudflare/codemode"; // import: root', 'import { IsolateExecutor } from "@supolka/codemode-executor";')
    .replace('const executor = new DynamicWorkerExecutor({ loader: env.LOADER }); // constructor', 'const executor = new IsolateExecutor();');
  const changed = original.split('\n').filter((line, i) => line !== migrated.split('\n')[i]);
  assert.equal(changed.length, 3, 'only the two imports and the constructor changed');
  // Inside the repository, so the package name resolves to this checkout.
  const file = path.join(__dirname, '..', 'fixtures', `.migrated-${process.pid}.mjs`);
  fs.writeFileSync(file, migrated);
  try {
    const { code, stdout, stderr } = await new Promise((resolve) => {
      execFile(process.execPath, [file], { timeout: 60_000 }, (error, out, err) => resolve({ code: error ? (error.code ?? 1) : 0, stdout: out, stderr: err }));
    });
    assert.equal(code, 0, stderr);
    assert.deepEqual(JSON.parse(stdout.trim()), { type: 'json', value: { result: 7 } });
  } finally {
    fs.rmSync(file, { force: true });
  }
});
