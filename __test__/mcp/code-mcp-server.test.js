'use strict';
// codeMcpServer over clients of real MCP servers (issue 37): a remote server wrapped through its
// client, several servers in one code tool, one wrapped McpServer behind several sessions, and
// a cancelled code call that stops the program before its next upstream effect.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');
const { IsolateExecutor } = require('../../lib/index.js');
const { codeMcpServer } = require('../../lib/mcp/index.js');

const ROOT = path.join(__dirname, '..', '..');
const serverJs = (name) => path.join(ROOT, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');

async function stdio(args, env = {}) {
  const client = new Client({ name: 'upstream', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, env: { ...process.env, ...env }, stderr: 'ignore' }));
  return client;
}

async function connect(server) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'outer', version: '1.0.0' });
  await client.connect(a);
  return client;
}

const resultOf = (answer) => JSON.parse(answer.content[0].text);

test('codeMcpServer({ clients }): two real servers in one code tool; cancelling the code call stops the program before its next call', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-cms-'));
  const memoryFile = path.join(dir, 'memory.jsonl');
  const everything = await stdio([serverJs('server-everything'), 'stdio']);
  const memory = await stdio([serverJs('server-memory')], { MEMORY_FILE_PATH: memoryFile });
  const executor = new IsolateExecutor();
  try {
    const outer = await connect(await codeMcpServer({ clients: { everything, memory }, executor, callTimeoutMs: 10_000 }));
    const [tool] = (await outer.listTools()).tools;
    assert.match(tool.description, /everything_get_sum/);
    assert.match(tool.description, /memory_read_graph/);
    const both = await outer.callTool({ name: 'code', arguments: { code: 'async () => { await codemode.memory_create_entities({ entities: [{ name: "A", entityType: "t", observations: [] }] }); return { sum: await codemode.everything_get_sum({ a: 1, b: 2 }), graph: await codemode.memory_read_graph({}) }; }' } });
    const value = resultOf(both);
    assert.match(JSON.stringify(value.sum), /3/);
    assert.deepEqual(value.graph.entities.map((e) => e.name), ['A']);

    const controller = new AbortController();
    const cancelled = outer.callTool({ name: 'code', arguments: { code: 'async () => { await codemode.everything_trigger_long_running_operation({ duration: 2, steps: 4 }); await codemode.memory_create_entities({ entities: [{ name: "late", entityType: "t", observations: [] }] }); return "finished"; }' } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 400);
    await assert.rejects(cancelled, /stop/);
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    const graph = await memory.callTool({ name: 'read_graph', arguments: {} });
    assert.deepEqual(graph.structuredContent.entities.map((e) => e.name), ['A'], 'the call after the cancel did not run');
  } finally {
    await everything.close();
    await memory.close();
    await executor.dispose();
  }
});

test('codeMcpServer({ server }): one wrapped McpServer behind several proxies (one per session); exactly one upstream option', async () => {
  const executor = new IsolateExecutor();
  try {
    const upstream = new McpServer({ name: 'up', version: '1.0.0' });
    upstream.registerTool('twice', { inputSchema: { n: z.number() } }, async ({ n }) => ({ content: [{ type: 'text', text: String(n * 2) }] }));
    const first = await connect(await codeMcpServer({ server: upstream, executor }));
    const second = await connect(await codeMcpServer({ server: upstream, executor }));
    for (const [client, n] of [[first, 2], [second, 5]]) {
      assert.equal(resultOf(await client.callTool({ name: 'code', arguments: { code: `async () => codemode.twice({ n: ${n} })` } })), n * 2);
    }
    await assert.rejects(codeMcpServer({ server: upstream, client: first, executor }), { code: 'ERR_INVALID_ARGUMENT', message: /exactly one of server/ });
    await assert.rejects(codeMcpServer({ client: {}, executor }), { code: 'ERR_INVALID_ARGUMENT', message: /client must be a connected MCP client/ });
  } finally {
    await executor.dispose();
  }
});
