'use strict';
// `/mcp` against Cloudflare's published `@cloudflare/codemode/mcp` (the oracle): the same
// upstream servers and the same executor (ours), compared on the tools each server lists and on
// every answer; then runtimeMcpServer, driven by a real MCP SDK client over the in-memory
// transport, and over stdio through examples/mcp-server.js. Deliberate differences: the
// servers use the SDK's default JSON Schema validator, not `@cfworker/json-schema`, and every
// tool carries MCP annotations (Cloudflare's carry none; compared with them taken off).
// Approvals through elicitation and the opt-in approval tools: ../runtime/mcp-approvals.test.js.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { z } = require('zod');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const ours = require('../../lib/mcp/index.js');
const { loadCloudflare } = require('../fixtures/cloudflare-oracle.js');
const { Bank, readLedger } = require('../fixtures/bank.js');

let cloudflareMcp;
async function oracle() {
  if (!cloudflareMcp) {
    await loadCloudflare();
    cloudflareMcp = await import('@cloudflare/codemode/mcp');
  }
  return cloudflareMcp;
}

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

async function connect(server) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(a);
  return client;
}

function upstream() {
  const server = new McpServer({ name: 'upstream', version: '1.0.0' });
  server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number().describe('first'), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }] }));
  server.registerTool('shout', { description: 'Upper-case a text', inputSchema: { text: z.string(), loud: z.boolean().optional() } },
    async ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }));
  server.registerTool('fail-now', { description: 'Always fails', inputSchema: {} },
    async () => ({ content: [{ type: 'text', text: 'it failed' }], isError: true }));
  server.registerTool('structured', { description: 'Structured', inputSchema: {}, outputSchema: { n: z.number() } },
    async () => ({ content: [{ type: 'text', text: '{"n":7}' }], structuredContent: { n: 7 } }));
  return server;
}

// A tools/list answer without the annotations (after checking that each of ours has them).
function withoutAnnotations({ tools, ...rest }, ours) {
  return {
    ...rest,
    tools: tools.map(({ annotations, ...tool }) => {
      if (ours) assert.equal(typeof annotations?.readOnlyHint, 'boolean', tool.name);
      return tool;
    }),
  };
}

const CODES = [
  'async () => codemode.add({ a: 2, b: 3 })',
  'async () => codemode.shout({ text: "hi" })',
  'async () => codemode.fail_now({})',
  'async () => codemode.structured({})',
  'async () => ({ big: "x".repeat(30000) })',
  'async () => undefined',
  'async () => { throw new Error("nope") }',
  'this is not code',
];

test('/mcp codeMcpServer: the same tool listing and answers as Cloudflare\'s', async () => {
  const cf = await oracle();
  const mine = await connect(await ours.codeMcpServer({ server: upstream(), executor }));
  const theirs = await connect(await cf.codeMcpServer({ server: upstream(), executor }));
  assert.deepEqual(withoutAnnotations(await mine.listTools(), true), withoutAnnotations(await theirs.listTools()));
  for (const code of CODES) {
    assert.deepEqual(await mine.callTool({ name: 'code', arguments: { code } }), await theirs.callTool({ name: 'code', arguments: { code } }), code);
  }
  const custom = await connect(await ours.codeMcpServer({ server: upstream(), executor, description: 'Types: {{types}} / {{example}}' }));
  const customCf = await connect(await cf.codeMcpServer({ server: upstream(), executor, description: 'Types: {{types}} / {{example}}' }));
  assert.deepEqual(withoutAnnotations(await custom.listTools(), true), withoutAnnotations(await customCf.listTools()));
});

const SPEC = {
  openapi: '3.0.0',
  info: { title: 'Pets', version: '1' },
  paths: {
    '/pets': { get: { summary: 'List pets', tags: ['pets'], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pets' } } } } } } },
    '/pets/{id}': { delete: { summary: 'Delete </script>', tags: ['admin'] } },
  },
  components: { schemas: { Pet: { type: 'object', properties: { name: { type: 'string' }, friend: { $ref: '#/components/schemas/Pet' } } }, Pets: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } },
};

test('/mcp openApiMcpServer: the same tools and answers as Cloudflare\'s; request runs on the host', async () => {
  const cf = await oracle();
  const requests = [];
  const request = async (options) => { requests.push(options); return { status: 200, echo: options }; };
  const mine = await connect(ours.openApiMcpServer({ spec: SPEC, executor, request, description: 'Extra words' }));
  const theirs = await connect(cf.openApiMcpServer({ spec: SPEC, executor, request, description: 'Extra words' }));
  assert.deepEqual(withoutAnnotations(await mine.listTools(), true), withoutAnnotations(await theirs.listTools()));
  for (const [name, code] of [
    ['search', 'async () => Object.keys((await codemode.spec()).paths)'],
    ['search', 'async () => (await codemode.spec()).paths["/pets"].get.responses[200].content["application/json"].schema'],
    ['search', 'async () => (await codemode.spec()).paths["/pets/{id}"].delete.summary'],
    ['search', 'async () => typeof codemode.request'],
    ['execute', 'async () => codemode.request({ method: "GET", path: "/pets", query: { limit: 2 } })'],
    ['execute', 'async () => { throw new Error("bad") }'],
  ]) {
    assert.deepEqual(await mine.callTool({ name, arguments: { code } }), await theirs.callTool({ name, arguments: { code } }), code);
  }
  assert.equal(requests.length, 2);
});

function bankRuntime() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-mcp-'));
  const ledger = path.join(dir, 'ledger.jsonl');
  const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(ledger)], path: path.join(dir, 'runtime.db') });
  return { dir, ledger, runtime };
}

const WIRE = 'async () => { await bank.pay({ memo: "a" }); await bank.wire({ memo: "w" }); return "sent"; }';

test('runtimeMcpServer with approvalTools: a run pauses, the model is told what waits, approve runs it once; bad input is an MCP error and the server keeps serving', async () => {
  const { ledger, runtime } = bankRuntime();
  const client = await connect(ours.runtimeMcpServer({ runtime, approvalTools: true }));
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['code', 'pending', 'approve', 'reject', 'rollback', 'search', 'describe']);
  assert.equal(tools[0].description, runtime.tool().description);
  const paused = await client.callTool({ name: 'code', arguments: { code: WIRE } });
  const text = paused.content[0].text;
  assert.match(text, /^The run is paused: bank\.wire\(\{"memo":"w"\}\) \(seq 1\) awaits a person's approval\. It continues when the user approves it \(tool "approve" with \{ executionId: "exec_/);
  const executionId = JSON.parse(text.slice(text.indexOf('\n\n') + 2)).executionId;
  const pending = JSON.parse((await client.callTool({ name: 'pending', arguments: {} })).content[0].text);
  assert.deepEqual(pending.map((p) => [p.executionId, p.seq, p.method]), [[executionId, 1, 'wire']]);
  const done = await client.callTool({ name: 'approve', arguments: { executionId, seq: 1 } });
  assert.equal(done.isError, undefined);
  assert.equal(JSON.parse(done.content[0].text).result, 'sent');
  assert.deepEqual(readLedger(ledger).filter((r) => r.op === 'effect').map((r) => r.memo), ['a', 'w']);
  const again = await client.callTool({ name: 'approve', arguments: { executionId, seq: 1 } });
  assert.equal(again.isError, true);
  assert.match(again.content[0].text, /is not paused \(status: completed\)/);
  // Bad inputs.
  const missing = await client.callTool({ name: 'code', arguments: {} });
  assert.equal(missing.isError, true);
  assert.match(missing.content[0].text, /code/);
  const wrongType = await client.callTool({ name: 'approve', arguments: { executionId: 5 } });
  assert.equal(wrongType.isError, true);
  const unknown = await client.callTool({ name: 'approve', arguments: { executionId: 'exec_nope' } });
  assert.equal(unknown.isError, true);
  assert.equal(JSON.parse(unknown.content[0].text).error, 'No execution "exec_nope" to resume.');
  const huge = await client.callTool({ name: 'code', arguments: { code: `async () => ${JSON.stringify('x'.repeat(1_100_000))}` } });
  assert.equal(huge.isError, true);
  assert.match(huge.content[0].text, /too large/);
  const rolled = await client.callTool({ name: 'rollback', arguments: { executionId } });
  assert.equal(rolled.isError, undefined);
  assert.match(rolled.content[0].text, /^Rolled back execution exec_\S+ \(the run's status: rolled_back\)\.\nReverted: bank\.pay \(seq 0\), bank\.wire \(seq 1\)\.\n/);
  assert.deepEqual(JSON.parse(rolled.content[0].text.slice(rolled.content[0].text.indexOf('\n\n') + 2)).leftInForce, []);
  const found = JSON.parse((await client.callTool({ name: 'search', arguments: { query: 'wire' } })).content[0].text);
  assert.equal(found.results[0].method, 'wire');
  assert.equal((await client.callTool({ name: 'code', arguments: { code: 'async () => 1 + 1' } })).isError, undefined, 'still serving');
});

test('examples/mcp-server.js: a real SDK client over stdio runs code that pauses, the person approves it through elicitation, and the effect runs once', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-mcp-stdio-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(__dirname, '..', '..', 'examples', 'mcp-server.js'), dir],
    env: process.env,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => { asked.push(request.params.message); return { action: 'accept', content: {} }; });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => t.name === 'approve'), 'the model cannot approve');
    const done = await client.callTool({ name: 'code', arguments: { code: 'async () => { const made = await tracker.create_issue({ title: "from MCP" }); return made.id; }' } });
    assert.equal(JSON.parse(done.content[0].text).status, 'completed');
    assert.equal(asked.length, 1);
    assert.match(asked[0], /^Approve tracker\.create_issue\?/);
    const issues = JSON.parse(fs.readFileSync(path.join(dir, 'issues.json'), 'utf8'));
    assert.deepEqual(issues.map((i) => i.title), ['from MCP']);
  } finally {
    await client.close();
  }
});
