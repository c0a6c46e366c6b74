'use strict';
// `codemode-executor mcp --store postgres://…` (issue 37): a run one command process pauses on a
// marked call is approved from another process over the same PostgreSQL database, and its
// upstream effect (server-filesystem) lands once.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { startPostgres } = require('../../scripts/postgres.js');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'codemode-executor.js');
let pg;
test.before(async () => {
  pg = await startPostgres();
  if (pg.skipped) throw new Error(`this test needs PostgreSQL: ${pg.skipped}`);
});
test.after(() => {
  if (pg && !pg.skipped) pg.stop();
});

async function command(config, extra = []) {
  const client = new Client({ name: 'pg-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--config', config, '--store', pg.url, ...extra], stderr: 'ignore' }));
  return client;
}

test('--store postgres://: paused by one command process, approved from another, the write lands once', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-mcp-pg-')));
  const config = path.join(dir, 'mcp.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { files: {
    command: process.execPath,
    args: [path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js'), dir],
    codemode: { approve: ['write_file'] },
  } } }));
  const target = path.join(dir, 'out.txt');
  const first = await command(config);
  let executionId;
  try {
    const paused = await first.callTool({ name: 'code', arguments: { code: `async () => { await files.write_file({ path: ${JSON.stringify(target)}, content: "once" }); return "ok"; }` } });
    const text = paused.content[0].text;
    assert.match(text, /^The run is paused: files\.write_file\(/);
    executionId = JSON.parse(text.slice(text.indexOf('\n\n') + 2)).executionId;
  } finally {
    await first.close();
  }
  assert.equal(fs.existsSync(target), false);
  const second = await command(config, ['--approval-tools']);
  try {
    const pending = JSON.parse((await second.callTool({ name: 'pending', arguments: { executionId } })).content[0].text);
    assert.deepEqual(pending.map((p) => p.method), ['write_file']);
    const done = await second.callTool({ name: 'approve', arguments: { executionId, seq: pending[0].seq } });
    assert.equal(JSON.parse(done.content[0].text).result, 'ok');
    assert.equal(fs.readFileSync(target, 'utf8'), 'once');
  } finally {
    await second.close();
  }
});
