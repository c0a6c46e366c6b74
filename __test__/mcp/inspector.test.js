'use strict';
// `codemode-executor mcp` driven by the MCP Inspector's CLI (@modelcontextprotocol/inspector
// 2.12.0, pinned), software nobody here wrote, as a user checks an MCP server before giving it
// to a desktop client (issue 37): over stdio, the command is an entry of the Inspector's own
// mcp.json (the shape Claude Desktop, Claude Code and Cursor read), in front of two reference
// servers and a broken entry; over Streamable HTTP, the Inspector is given the command's URL.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const { BIN, httpServer } = require('../fixtures/mcp-command.js');
const MCP = path.join(ROOT, 'node_modules', '@modelcontextprotocol');
const INSPECTOR = path.join(MCP, 'inspector', 'clients', 'launcher', 'build', 'index.js');

function scratch() {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-inspector-')));
}

// The upstream servers' mcp.json, and the Inspector's, whose one entry is the command over it.
// `approve`: memory's create_entities waits for a person's approval.
function configs(dir, { approve = false } = {}) {
  const upstreams = path.join(dir, 'upstreams.json');
  fs.writeFileSync(upstreams, JSON.stringify({
    mcpServers: {
      everything: { command: process.execPath, args: [path.join(MCP, 'server-everything', 'dist', 'index.js'), 'stdio'] },
      memory: {
        command: process.execPath,
        args: [path.join(MCP, 'server-memory', 'dist', 'index.js')],
        env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
        ...(approve ? { codemode: { approve: ['create_entities'] } } : {}),
      },
      broken: { command: 'no-such-mcp-server-binary' },
    },
  }));
  const client = path.join(dir, 'client.json');
  fs.writeFileSync(client, JSON.stringify({ mcpServers: { codemode: { command: process.execPath, args: [BIN, 'mcp', '--config', upstreams, '--data-dir', dir] } } }));
  return { upstreams, client };
}

// The Inspector's CLI run to its end; its answer is the JSON it prints on stdout.
function inspector(args) {
  const r = spawnSync(process.execPath, [INSPECTOR, '--cli', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    // No OS keychain here: the Inspector keeps its secrets (none) in memory.
    env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory' },
  });
  assert.equal(r.status, 0, `inspector ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

// A code answer's JSON (after the sentence of a paused one).
const outcome = (answer) => {
  const text = answer.content[0].text;
  return JSON.parse(text.includes('\n\n') ? text.slice(text.indexOf('\n\n') + 2) : text);
};

const PROGRAM = `async () => {
  const sum = await everything.get_sum({ a: 2, b: 40 });
  await memory.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["wrote programs"] }] });
  const graph = await memory.read_graph({});
  let why;
  try { await broken.anything({}); } catch (e) { why = e.message; }
  return { sum, people: graph.entities.map((e) => e.name), broken: why };
}`;

test('Inspector CLI over stdio: the tools, a program over two servers with a broken one beside them, search, and the upstream resources', () => {
  const dir = scratch();
  const { client } = configs(dir);
  const on = ['--config', client, '--server', 'codemode'];
  const listed = inspector([...on, '--method', 'tools/list']);
  assert.deepEqual(listed.tools.map((t) => t.name), ['code', 'pending', 'search', 'describe']);
  assert.equal(listed.tools.find((t) => t.name === 'search').annotations.readOnlyHint, true);

  const answer = inspector([...on, '--method', 'tools/call', '--tool-name', 'code', '--tool-arg', `code=${PROGRAM}`]);
  assert.equal(answer.isError, undefined, answer.content[0].text);
  const { status, result } = outcome(answer);
  assert.equal(status, 'completed');
  assert.match(JSON.stringify(result.sum), /42/);
  assert.deepEqual(result.people, ['Ada']);
  assert.match(result.broken, /^MCP server "broken" is unavailable: spawn no-such-mcp-server-binary ENOENT/);

  const found = JSON.parse(inspector([...on, '--method', 'tools/call', '--tool-name', 'search', '--tool-arg', 'query=sum of two numbers']).content[0].text);
  assert.equal(found.results[0].path, 'everything.get_sum');
  const resources = inspector([...on, '--method', 'resources/list']);
  assert.ok(resources.resources.length > 0, 'the upstream resources are listed');
  const first = resources.resources[0];
  const read = inspector([...on, '--method', 'resources/read', '--uri', first.uri]);
  assert.equal(read.contents[0].uri, first.uri);
});

test('Inspector CLI over Streamable HTTP: the command\'s URL, a program, and a run paused for approval, listed and approved out of band', async () => {
  const dir = scratch();
  const { upstreams } = configs(dir, { approve: true });
  const server = await httpServer(['--config', upstreams, '--data-dir', dir, '--http', '0', '--approval-tools']);
  const url = server.url;
  try {
    // Each Inspector call is a session of its own.
    assert.deepEqual(inspector([url, '--method', 'tools/list']).tools.map((t) => t.name), ['code', 'pending', 'approve', 'reject', 'rollback', 'search', 'describe']);
    const sum = inspector([url, '--method', 'tools/call', '--tool-name', 'code', '--tool-arg', 'code=async () => (await everything.get_sum({ a: 20, b: 22 }))']);
    assert.equal(outcome(sum).status, 'completed', sum.content[0].text);
    // The Inspector's CLI declares no elicitation: the run stays paused for the application.
    const program = 'code=async () => { await memory.create_entities({ entities: [{ name: "Bo", entityType: "person", observations: [] }] }); return (await memory.read_graph({})).entities.map((e) => e.name); }';
    const paused = inspector([url, '--method', 'tools/call', '--tool-name', 'code', '--tool-arg', program]);
    const { status, executionId } = outcome(paused);
    assert.equal(status, 'paused', paused.content[0].text);
    assert.ok(!fs.existsSync(path.join(dir, 'memory.jsonl')) || !fs.readFileSync(path.join(dir, 'memory.jsonl'), 'utf8').includes('Bo'), 'nothing written before the approval');
    const pending = JSON.parse(inspector([url, '--method', 'tools/call', '--tool-name', 'pending']).content[0].text);
    assert.deepEqual(pending.map((p) => [p.executionId, p.connector, p.method]), [[executionId, 'memory', 'create_entities']]);
    // Approved in another session (another Inspector call): the run goes on from the store.
    const approved = inspector([url, '--method', 'tools/call', '--tool-name', 'approve', '--tool-arg', `executionId=${executionId}`, `seq=${pending[0].seq}`]);
    const done = outcome(approved);
    assert.deepEqual([done.status, done.result], ['completed', ['Bo']], approved.content[0].text);
  } finally {
    await server.stop();
  }
});
