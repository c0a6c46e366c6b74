'use strict';
// Honest rollback over MCP (issue 37): a durable run mixing calls of real MCP servers from the
// npm registry (server-memory and server-filesystem, over stdio), one with a revert, one without
// and one whose revert throws, rolled back through runtimeMcpServer's rollback tool by the
// official SDK client. Judged on what the upstream servers hold afterwards, and on the answer.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { IsolateExecutor, McpConnector, createCodemodeRuntime } = require('../../lib/index.js');
const { runtimeMcpServer } = require('../../lib/mcp/index.js');

const ROOT = path.join(__dirname, '..', '..');
const serverJs = (name) => path.join(ROOT, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');

// An MCP server over stdio as a connector, the way an application wires one (docs/guides/tools.md).
class StdioConnector extends McpConnector {
  constructor(name, args, env = {}, reverts = {}) {
    super();
    this.key = name;
    this.args = args;
    this.env = env;
    this.reverts = reverts;
    this.clients = [];
  }

  name() { return this.key; }

  async createConnection() {
    const client = new Client({ name: 'rollback-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: this.args, env: { ...process.env, ...this.env }, stderr: 'ignore' }));
    this.clients.push(client);
    return { client, tools: (await client.listTools()).tools };
  }

  // Reverts are the application's: an MCP tool has none of its own.
  tool(name, t) {
    const revert = this.reverts[name];
    return revert === undefined ? t : { ...t, revert: (args, result) => revert(this, args, result) };
  }

  async call(name, args) {
    const { client } = await this.getConnection();
    return client.callTool({ name, arguments: args });
  }

  close() { return Promise.all(this.clients.map((c) => c.close())); }
}

test('rollback tool: an MCP call with a revert is undone, one without stays in force, one whose revert throws is named with its error', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-mcp-rollback-')));
  const memory = new StdioConnector('memory', [serverJs('server-memory')], { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') }, {
    create_entities: (self, args) => self.call('delete_entities', { entityNames: args.entities.map((e) => e.name) }),
    create_relations: () => { throw new Error('relations are kept for the audit'); },
  });
  const files = new StdioConnector('files', [serverJs('server-filesystem'), dir]);
  const executor = new IsolateExecutor();
  const runtime = createCodemodeRuntime({ executor, connectors: [memory, files], path: path.join(dir, 'runtime.db') });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await runtimeMcpServer({ runtime, approvalTools: true }).connect(b);
  const client = new Client({ name: 'outer', version: '1.0.0' });
  await client.connect(a);
  const target = path.join(dir, 'note.txt');
  try {
    const done = await client.callTool({ name: 'code', arguments: { code: `async () => {
      await files.write_file({ path: ${JSON.stringify(target)}, content: "kept" });
      await memory.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: [] }, { name: "Bob", entityType: "person", observations: [] }] });
      await memory.create_relations({ relations: [{ from: "Ada", to: "Bob", relationType: "knows" }] });
      return "done";
    }` } });
    const executionId = JSON.parse(done.content[0].text).executionId;
    assert.equal(JSON.parse(done.content[0].text).status, 'completed');

    const rolled = await client.callTool({ name: 'rollback', arguments: { executionId } });
    const text = rolled.content[0].text;
    assert.equal(rolled.isError, true, 'an incomplete rollback is an error');
    assert.equal(text.slice(0, text.indexOf('\n\n')), [
      `Rollback of execution ${executionId} is incomplete (the run's status: rolled_back).`,
      'Reverted: memory.create_entities (seq 1).',
      'Still in force (no revert: their effect was not undone): files.write_file (seq 0).',
      'Failed to revert (still in force): memory.create_relations (seq 2): relations are kept for the audit.',
    ].join('\n'));
    assert.deepEqual(JSON.parse(text.slice(text.indexOf('\n\n') + 2)).calls, [
      { seq: 2, connector: 'memory', method: 'create_relations', fate: 'revert_failed', error: 'relations are kept for the audit' },
      { seq: 1, connector: 'memory', method: 'create_entities', fate: 'reverted' },
      { seq: 0, connector: 'files', method: 'write_file', fate: 'no_revert' },
    ]);
    // What the servers hold: the entities are gone (their relation with them), the file stays.
    const graph = await memory.call('read_graph', {});
    assert.deepEqual(graph.structuredContent.entities, []);
    assert.equal(fs.readFileSync(target, 'utf8'), 'kept');

    // A run whose only effect has no revert: nothing changes, and the answer does not say "rolled back".
    const only = await client.callTool({ name: 'code', arguments: { code: `async () => files.write_file({ path: ${JSON.stringify(path.join(dir, 'only.txt'))}, content: "x" })` } });
    const onlyId = JSON.parse(only.content[0].text).executionId;
    const kept = await client.callTool({ name: 'rollback', arguments: { executionId: onlyId } });
    assert.equal(kept.isError, true);
    assert.match(kept.content[0].text, /^Rollback of execution \S+ is incomplete \(the run's status: completed\)\.\nStill in force \(no revert: their effect was not undone\): files\.write_file \(seq 0\)\.\n\n/);
    assert.equal(fs.readFileSync(path.join(dir, 'only.txt'), 'utf8'), 'x');
  } finally {
    await client.close();
    await memory.close();
    await files.close();
    await executor.dispose();
  }
});
