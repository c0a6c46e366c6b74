'use strict';
// A long upstream call through `codemode-executor mcp`: with a timeout longer than the MCP SDK's
// default 60 s on its mcp.json entry, a 90 s operation of the real server-everything completes;
// with a short --call-timeout the same call fails naming the bound and where to raise it. About
// 95 s, the length of the operation.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'codemode-executor.js');
const EVERYTHING = { command: process.execPath, args: [path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'] };

async function connect(args) {
  const client = new Client({ name: 'long-call-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], stderr: 'ignore' }));
  return client;
}

test('a 90 s upstream call completes under its entry\'s longer timeout, and fails under a short --call-timeout naming it', { timeout: 240_000 }, async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-mcp-long-')));
  const config = path.join(dir, 'mcp.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: {
    patient: { ...EVERYTHING, codemode: { timeout: 120_000 } },
    hasty: EVERYTHING,
  } }));
  const client = await connect(['--config', config, '--data-dir', dir, '--timeout', '150000', '--call-timeout', '2000']);
  try {
    const code = (server) => `async () => { try { await ${server}.trigger_long_running_operation({ duration: 90, steps: 9 }); return "done"; } catch (e) { return e.message; } }`;
    const started = Date.now();
    // The client's own request timeout (60 s by default in the SDK) would cut the code call first.
    const long = await client.callTool({ name: 'code', arguments: { code: code('patient') } }, undefined, { timeout: 200_000 });
    const took = Date.now() - started;
    assert.equal(long.isError, undefined, long.content[0].text);
    assert.equal(JSON.parse(long.content[0].text).result, 'done');
    assert.ok(took >= 89_000, `the operation took ${took} ms`);
    const cut = await client.callTool({ name: 'code', arguments: { code: code('hasty') } });
    assert.equal(JSON.parse(cut.content[0].text).result,
      'MCP server "hasty", tool "trigger-long-running-operation": MCP error -32001: Request timed out (after 2000 ms, this server\'s call timeout: "codemode": { "timeout": MS } in its mcp.json entry, or --call-timeout)');
  } finally {
    await client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
