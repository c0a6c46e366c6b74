'use strict';
// `codemode-executor mcp` (lib/cli/mcp.js) as a user runs it: the command started as a child
// process, driven by the official MCP SDK client over stdio and Streamable HTTP, in front of the
// reference MCP servers from the npm registry (server-everything, server-memory,
// server-filesystem, pinned devDependencies).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema, CreateMessageRequestSchema, ListRootsRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const ROOT = path.join(__dirname, '..', '..');
const { BIN, httpServer } = require('../fixtures/mcp-command.js');
const serverJs = (name, file = 'index.js') => path.join(ROOT, 'node_modules', '@modelcontextprotocol', name, 'dist', file);
const EVERYTHING = { command: process.execPath, args: [serverJs('server-everything'), 'stdio'] };
const memory = (dir) => ({ command: process.execPath, args: [serverJs('server-memory')], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } });
const filesystem = (dir) => ({ command: process.execPath, args: [serverJs('server-filesystem'), dir] });

function scratch() {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-mcp-cmd-')));
}

function writeConfig(dir, mcpServers, name = 'mcp.json') {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify({ mcpServers }, null, 2));
  return file;
}

async function stdioClient(args, { env = {}, cwd, onElicit, onSample, onRoots } = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], env: { ...process.env, ...env }, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  const capabilities = { ...(onElicit ? { elicitation: {} } : {}), ...(onSample ? { sampling: {} } : {}), ...(onRoots ? { roots: { listChanged: true } } : {}) };
  const client = new Client({ name: 'command-test', version: '1.0.0' }, { capabilities });
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, onElicit);
  if (onSample) client.setRequestHandler(CreateMessageRequestSchema, onSample);
  if (onRoots) client.setRequestHandler(ListRootsRequestSchema, onRoots);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

async function httpClient(url) {
  const client = new Client({ name: 'command-test-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const run = (client, code, options) => client.callTool({ name: 'code', arguments: { code } }, undefined, options);
// The JSON of an answer (after the sentence of a paused or rolled-back one).
const outcome = (answer) => {
  const text = answer.content[0].text;
  return JSON.parse(text.includes('\n\n') ? text.slice(text.indexOf('\n\n') + 2) : text);
};

// The CLI run to its end: { status, stdout, stderr }.
function cli(args, options = {}) {
  const r = spawnSync(process.execPath, [BIN, 'mcp', ...args], { encoding: 'utf8', timeout: 30_000, ...options });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('stdio: one program over three real servers; a missing binary beside them costs only its callers; an image byte for byte; resources and prompts forwarded; the store under XDG_DATA_HOME, not the working directory', async () => {
  const dir = scratch();
  const config = writeConfig(dir, {
    everything: EVERYTHING,
    'memory-graph': memory(dir),
    files: filesystem(dir),
    broken: { command: 'no-such-mcp-server-binary' },
  });
  const data = path.join(dir, 'xdg');
  // Started in / as desktop clients may do: nothing is written there.
  const { client } = await stdioClient(['--config', config], { env: { XDG_DATA_HOME: data }, cwd: '/' });
  try {
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['code', 'pending', 'search', 'describe']);
    const multi = await run(client, `async () => {
      const sum = await everything.get_sum({ a: 2, b: 40 });
      await memory_graph.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["wrote programs"] }] });
      await files.write_file({ path: ${JSON.stringify(path.join(dir, 'note.txt'))}, content: "hello" });
      const graph = await memory_graph.read_graph({});
      const text = await files.read_text_file({ path: ${JSON.stringify(path.join(dir, 'note.txt'))} });
      let why;
      try { await broken.anything({}); } catch (e) { why = e.message; }
      return { sum, people: graph.entities.map((e) => e.name), text, broken: why };
    }`);
    assert.equal(multi.isError, undefined, multi.content[0].text);
    const { result } = outcome(multi);
    assert.match(JSON.stringify(result.sum), /42/);
    assert.deepEqual(result.people, ['Ada']);
    assert.match(JSON.stringify(result.text), /hello/);
    assert.match(result.broken, /^MCP server "broken" is unavailable: spawn no-such-mcp-server-binary ENOENT/);
    assert.equal(fs.readFileSync(path.join(dir, 'note.txt'), 'utf8'), 'hello');
    assert.ok(fs.existsSync(path.join(data, 'codemode-executor', 'runtime.db')), 'the store is in XDG_DATA_HOME');

    // An uncaught call of the dead server fails the run with its name and why.
    const dead = await run(client, 'async () => broken.anything({})');
    assert.equal(dead.isError, true);
    assert.match(dead.content[0].text, /MCP server \\"broken\\" is unavailable/);

    // search lists what is reachable; describe says why a server is not.
    const found = JSON.parse((await client.callTool({ name: 'search', arguments: { query: 'sum of two numbers' } })).content[0].text);
    assert.equal(found.results[0].path, 'everything.get_sum');
    const described = (await client.callTool({ name: 'describe', arguments: { target: 'broken' } })).content[0].text;
    assert.match(described, /not reachable now: spawn no-such-mcp-server-binary ENOENT/);

    // A tool that runs only as an MCP task is not listed, and a call says why it cannot run.
    const everythingTypes = JSON.stringify(JSON.parse((await client.callTool({ name: 'describe', arguments: { target: 'everything' } })).content[0].text));
    assert.match(everythingTypes, /get_sum/);
    assert.doesNotMatch(everythingTypes, /simulate_research_query/);
    const task = outcome(await run(client, 'async () => { try { return await everything.simulate_research_query({ topic: "x" }); } catch (e) { return e.message; } }')).result;
    assert.equal(task, 'MCP server "everything", tool "simulate-research-query": it runs only as an MCP task, which codemode-executor does not support');

    // The image, as the server gives it, reaches the client intact.
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(new StdioClientTransport(EVERYTHING));
    const original = (await direct.callTool({ name: 'get-tiny-image', arguments: {} })).content.find((b) => b.type === 'image');
    await direct.close();
    const image = await run(client, 'async () => everything.get_tiny_image({})');
    const passed = image.content.find((b) => b.type === 'image');
    assert.equal(passed.mimeType, original.mimeType);
    assert.ok(original.data.length > 1000);
    assert.equal(passed.data, original.data, 'the base64 is the same, byte for byte');
    // A program returns content blocks of its own.
    const own = await run(client, `async () => {
      const r = await everything.get_tiny_image({});
      const img = r.content.find((b) => b.type === "image");
      return { __mcpContent: [{ type: "text", text: "a picture" }, img] };
    }`);
    assert.deepEqual(own.content.slice(1).map((b) => b.type), ['text', 'image']);
    assert.equal(own.content[2].data, original.data);

    // The resource links a tool returns can be read; upstream resources and prompts are listed.
    const linked = await run(client, 'async () => everything.get_resource_links({ count: 2 })');
    const link = linked.content.find((b) => b.type === 'resource_link');
    assert.match(link.uri, /^demo:\/\/resource\//);
    const read = await client.readResource({ uri: link.uri });
    assert.equal(read.contents[0].uri, link.uri);
    assert.ok((await client.listResources()).resources.some((r) => r.uri.startsWith('demo://resource/static/')));
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    assert.ok(prompts.includes('everything/simple-prompt'), prompts.join(', '));
    const prompt = await client.getPrompt({ name: 'everything/simple-prompt', arguments: {} });
    assert.equal(prompt.messages[0].role, 'user');
    await assert.rejects(client.readResource({ uri: 'demo://nowhere/1' }), /No upstream server could read demo:\/\/nowhere\/1/);
  } finally {
    await client.close();
  }
  assert.equal(fs.existsSync(path.join('/', '.codemode')), false);
});

test('a failed start is tried again after its backoff, not cached: the server that appears later is used', async () => {
  const dir = scratch();
  const late = path.join(dir, 'late-server.sh');
  const config = writeConfig(dir, { late: { command: late }, everything: EVERYTHING });
  const { client } = await stdioClient(['--config', config, '--data-dir', dir]);
  try {
    const first = outcome(await run(client, 'async () => { try { return await late.read_graph({}); } catch (e) { return e.message; } }')).result;
    assert.match(first, /^MCP server "late" is unavailable: spawn .*late-server\.sh ENOENT/);
    fs.writeFileSync(late, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(serverJs('server-memory'))}\n`, { mode: 0o755 });
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // past the backoff (0.5 s, then 1 s)
    const second = outcome(await run(client, 'async () => late.read_graph({})'));
    assert.deepEqual(second.result, { entities: [], relations: [] });
    const found = JSON.parse((await client.callTool({ name: 'search', arguments: { query: 'read graph' } })).content[0].text);
    assert.ok(found.results.some((r) => r.path === 'late.read_graph'));
  } finally {
    await client.close();
  }
});

test('per-upstream timeouts (no hidden 60 s), progress relayed to the client, and cancelling the code call stops the program before its next effect', async () => {
  const dir = scratch();
  const config = writeConfig(dir, {
    slow: { ...EVERYTHING, codemode: { timeout: 800 } },
    everything: EVERYTHING,
    files: filesystem(dir),
  });
  const { client } = await stdioClient(['--config', config, '--data-dir', dir, '--timeout', '20000']);
  try {
    // The entry's own timeout: a 2 s operation on a server given 0.8 s fails, naming it.
    const cut = outcome(await run(client, 'async () => { try { await slow.trigger_long_running_operation({ duration: 2, steps: 2 }); return "done"; } catch (e) { return e.message; } }')).result;
    assert.match(cut, /^MCP server "slow", tool "trigger-long-running-operation": MCP error -32001: Request timed out/);
    assert.ok(cut.endsWith(' (after 800 ms, this server\'s call timeout: "codemode": { "timeout": MS } in its mcp.json entry, or --call-timeout)'), cut);
    // The same operation under the command's timeout completes, and its progress reaches the client.
    const progress = [];
    const done = await run(client, 'async () => everything.trigger_long_running_operation({ duration: 1, steps: 3 })', { onprogress: (p) => progress.push(p) });
    assert.equal(done.isError, undefined, done.content[0].text);
    assert.ok(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
    assert.match(progress[0].message, /^everything\.trigger-long-running-operation: /);

    // Cancelled during its first (long) call, the program never makes its second one.
    const marker = path.join(dir, 'after-cancel.txt');
    const controller = new AbortController();
    const started = Date.now();
    const cancelled = run(client, `async () => {
      await everything.trigger_long_running_operation({ duration: 2, steps: 4 });
      await files.write_file({ path: ${JSON.stringify(marker)}, content: "should not land" });
      return "finished";
    }`, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user pressed stop')), 500);
    await assert.rejects(cancelled, /user pressed stop/);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 3_500 - Date.now())));
    assert.equal(fs.existsSync(marker), false, 'the write after the cancelled call did not land');
    // The run is recorded as ended, not completed.
    const later = outcome(await run(client, 'async () => "still serving"'));
    assert.equal(later.result, 'still serving');
  } finally {
    await client.close();
  }
});

test('approvals from mcp.json: a marked tool waits for a person; rollback says the upstream write stays in force', async () => {
  const dir = scratch();
  const config = writeConfig(dir, { files: { ...filesystem(dir), codemode: { approve: ['write_file'] } } });
  const { client } = await stdioClient(['--config', config, '--data-dir', dir, '--approval-tools']);
  const target = path.join(dir, 'approved.txt');
  try {
    const paused = await run(client, `async () => { await files.list_directory({ path: ${JSON.stringify(dir)} }); await files.write_file({ path: ${JSON.stringify(target)}, content: "yes" }); return "written"; }`);
    assert.match(paused.content[0].text, /^The run is paused: files\.write_file\(/);
    assert.equal(fs.existsSync(target), false);
    const { executionId, pending } = outcome(paused);
    const approved = await client.callTool({ name: 'approve', arguments: { executionId, seq: pending[0].seq } });
    assert.equal(outcome(approved).result, 'written');
    assert.equal(fs.readFileSync(target, 'utf8'), 'yes');
    const rolled = await client.callTool({ name: 'rollback', arguments: { executionId } });
    assert.equal(rolled.isError, true);
    assert.match(rolled.content[0].text, /^Rollback of execution \S+ is incomplete \(the run's status: completed\)\.\nStill in force \(no revert: their effect was not undone\): files\.write_file \(seq 1\)\.\nRead only \(nothing to undo\): files\.list_directory \(seq 0\)\.\n/);
    assert.deepEqual(outcome(rolled).leftInForce, ['files.write_file (seq 1)']);
    assert.equal(fs.readFileSync(target, 'utf8'), 'yes', 'nothing claimed undone was undone');
  } finally {
    await client.close();
  }
});

test('approvals from mcp.json through elicitation: the person is asked with the call and its arguments; decline leaves no effect, accept runs it', async () => {
  const dir = scratch();
  const config = writeConfig(dir, { files: { ...filesystem(dir), codemode: { approve: ['write_file'] } } });
  const asked = [];
  let answer = 'decline';
  const { client } = await stdioClient(['--config', config, '--data-dir', dir], {
    onElicit: async (request) => { asked.push(request.params.message); return { action: answer }; },
  });
  const target = path.join(dir, 'asked.txt');
  const program = `async () => { await files.write_file({ path: ${JSON.stringify(target)}, content: "ok" }); return "written"; }`;
  try {
    const declined = await run(client, program);
    assert.match(declined.content[0].text, /^The person declined files\.write_file\(/);
    assert.equal(fs.existsSync(target), false);
    answer = 'accept';
    const accepted = await run(client, program);
    assert.equal(outcome(accepted).result, 'written');
    assert.equal(fs.readFileSync(target, 'utf8'), 'ok');
    assert.equal(asked.length, 2);
    assert.match(asked[0], /^Approve files\.write_file\?/);
    assert.match(asked[0], /asked\.txt/);
  } finally {
    await client.close();
  }
});

test("an upstream's sampling and elicitation requests reach the client that supports them (a mock model answers); a client without them gets a clear error", async () => {
  const dir = scratch();
  const config = writeConfig(dir, { everything: EVERYTHING });
  const sampled = [];
  const { client } = await stdioClient(['--config', config, '--data-dir', dir], {
    onSample: async (request) => { sampled.push(request.params.messages[0].content.text); return { model: 'mock-model', role: 'assistant', content: { type: 'text', text: 'mocked answer' } }; },
    onElicit: async () => ({ action: 'decline' }),
  });
  const bare = await stdioClient(['--config', config, '--data-dir', path.join(dir, 'bare')]);
  try {
    const answer = outcome(await run(client, 'async () => ({ s: await everything.trigger_sampling_request({ prompt: "hello", maxTokens: 5 }), e: await everything.trigger_elicitation_request({}) })')).result;
    assert.match(JSON.stringify(answer.s), /mocked answer/);
    assert.deepEqual(sampled, ['Resource trigger-sampling-request context: hello']);
    assert.match(JSON.stringify(answer.e), /User declined/);
    const refused = await run(bare.client, 'async () => everything.trigger_sampling_request({ prompt: "hello", maxTokens: 5 })');
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /the client does not support sampling/);
  } finally {
    await client.close();
    await bare.client.close();
  }
});

test('Streamable HTTP: one session per client, both served at once; the port in use is one line with a code', async () => {
  const dir = scratch();
  const config = writeConfig(dir, { 'memory-graph': memory(dir), everything: EVERYTHING });
  const server = await httpServer(['--config', config, '--data-dir', dir, '--http', '0']);
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const [a, b] = await Promise.all([httpClient(server.url), httpClient(server.url)]);
    const [ra, rb] = await Promise.all([
      run(a, 'async () => { await memory_graph.create_entities({ entities: [{ name: "A", entityType: "t", observations: [] }] }); return (await everything.get_sum({ a: 1, b: 1 })); }'),
      run(b, 'async () => (await memory_graph.read_graph({})).entities.length'),
    ]);
    assert.match(JSON.stringify(outcome(ra).result), /2/);
    assert.equal(typeof outcome(rb).result, 'number');
    assert.ok(a.transport.sessionId && b.transport.sessionId && a.transport.sessionId !== b.transport.sessionId);
    await Promise.all([a.close(), b.close()]);
    // A request addressed to another host name (DNS rebinding) or from another site's page is refused.
    const port0 = Number(new URL(server.url).port);
    const status = (headers) => new Promise((resolve, reject) => {
      const req = require('node:http').request({ host: '127.0.0.1', port: port0, path: '/mcp', method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => { res.resume(); resolve(res.statusCode); });
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }));
    });
    assert.equal(await status({ host: `evil.example:${port0}` }), 403);
    assert.equal(await status({ origin: 'https://evil.example' }), 403);
    assert.equal(await status({}), 200);

    const port = Number(new URL(server.url).port);
    const busy = cli(['--config', config, '--data-dir', dir, '--http', String(port)]);
    assert.equal(busy.status, 1);
    assert.equal(busy.stderr, `codemode-executor mcp: ERR_PORT_IN_USE: port ${port} on 127.0.0.1 is in use; pick another with --http\n`);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('usage errors: one line with a stable code, no stack, a non-zero exit; --help reads like a man page', async () => {
  const dir = scratch();
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{ "mcpServers": { "x": { "command": "a", } } }');
  const cases = [
    [['--config', bad], 2, /^codemode-executor mcp: ERR_MCP_CONFIG: \S+bad\.json: is not valid JSON \(.+\)\n$/],
    [['--config', writeConfig(dir, { x: { args: ['a'] } }, 'no-command.json')], 2, /^codemode-executor mcp: ERR_MCP_CONFIG: \S+: mcpServers\["x"\] needs either "command" \(a stdio server\) or "url" \(a remote one\)\n$/],
    [['--config', writeConfig(dir, { x: { command: 'a', codemode: { approve: 'write_file' } } }, 'approve.json')], 2, /ERR_MCP_CONFIG: .*codemode\.approve must be an array of tool names\n$/],
    [['--config', path.join(dir, 'missing.json')], 2, /^codemode-executor mcp: ERR_MCP_CONFIG: \S+missing\.json: cannot read it \(ENOENT\)\n$/],
    [['--config', bad, '--verbose'], 2, /^codemode-executor mcp: ERR_CLI_USAGE: unknown option "--verbose" \(see --help\)\n$/],
    [['--http', 'eighty'], 2, /^codemode-executor mcp: ERR_CLI_USAGE: --config FILE is required/],
    [['--config', writeConfig(dir, {}, 'empty.json'), '--http', 'eighty'], 2, /^codemode-executor mcp: ERR_CLI_USAGE: --http must be an integer from 0 to 65535 \(got "eighty"\)\n$/],
  ];
  for (const [args, status, message] of cases) {
    const r = cli(args);
    assert.equal(r.status, status, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  const help = cli(['--help']);
  assert.equal(help.status, 0);
  for (const section of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'EXIT STATUS']) assert.match(help.stdout, new RegExp(`^${section}$`, 'm'));
  assert.match(help.stdout, /--store PATH\|URL/);
});

test('docs/guides/mcp-command.md: every mcp.json sample is accepted as the command reads it', () => {
  const { readConfig } = require('../../lib/cli/mcp.js');
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'guides', 'mcp-command.md'), 'utf8');
  const samples = [...page.matchAll(/^```json\n([\s\S]*?)\n```$/gm)].map((m) => m[1]);
  assert.ok(samples.length >= 4, `${samples.length} json samples`);
  const dir = scratch();
  for (const [i, sample] of samples.entries()) {
    const file = path.join(dir, `sample-${i}.json`);
    fs.writeFileSync(file, sample);
    assert.ok(readConfig(file).length >= 1, sample);
  }
  assert.deepEqual(readConfig(path.join(dir, 'sample-0.json')).map((s) => [s.name, s.approve]), [['files', ['write_file', 'edit_file', 'move_file']], ['memory', []], ['tracker', []]]);
});

// A port nothing listens on now.
async function freePort() {
  const probe = require('node:net').createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// server-everything over HTTP (`streamableHttp` at /mcp, or `sse` at /sse) on `port`, ready.
async function everythingOverHttp(mode, port) {
  const child = spawn(process.execPath, [serverJs('server-everything'), mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      if (/listening on port|running on port/i.test(err)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`server-everything ${mode} exited (${code}): ${err}`)));
  });
  return { stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGKILL'); }) };
}

test('remote upstreams over Streamable HTTP and SSE; one that dies mid-session fails only its callers, and is used again once it is back', async () => {
  const dir = scratch();
  const [webPort, ssePort] = [await freePort(), await freePort()];
  let web = await everythingOverHttp('streamableHttp', webPort);
  const old = await everythingOverHttp('sse', ssePort);
  const config = writeConfig(dir, {
    web: { url: `http://127.0.0.1:${webPort}/mcp` },
    old: { url: `http://127.0.0.1:${ssePort}/sse`, type: 'sse' },
  });
  const { client } = await stdioClient(['--config', config, '--data-dir', dir]);
  const SUMS = 'async () => { const out = {}; for (const s of ["web", "old"]) { try { out[s] = await globalThis[s].get_sum({ a: 1, b: 2 }); } catch (e) { out[s] = e.message; } } return out; }';
  try {
    const both = outcome(await run(client, SUMS)).result;
    assert.match(both.web, /3/);
    assert.match(both.old, /3/);
    await web.stop();
    const down = outcome(await run(client, SUMS)).result;
    assert.match(down.web, /^MCP server "web"/);
    assert.match(down.old, /3/, 'the other server keeps working');
    web = await everythingOverHttp('streamableHttp', webPort);
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // past the backoff
    const back = outcome(await run(client, SUMS)).result;
    assert.match(back.web, /3/, `back: ${JSON.stringify(back)}`);
  } finally {
    await client.close();
    await web.stop();
    await old.stop();
  }
});

test('without the MCP SDK (an optional peer) the command says how to get it, in one line', () => {
  // The package's bin and lib as installed beside acorn (its one dependency) and nothing else.
  const dir = scratch();
  fs.cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'lib'), path.join(dir, 'lib'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.cpSync(path.join(ROOT, 'node_modules', 'acorn'), path.join(dir, 'node_modules', 'acorn'), { recursive: true });
  const r = spawnSync(process.execPath, [path.join(dir, 'bin', 'codemode-executor.js'), 'mcp', '--config', writeConfig(dir, {})], { encoding: 'utf8', cwd: dir, timeout: 30_000 });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /^codemode-executor mcp: ERR_MCP_SDK_MISSING: the mcp command needs the MCP SDK, an optional peer of this package: npm install @modelcontextprotocol\/sdk \(with npx: npx -y -p @modelcontextprotocol\/sdk -p @supolka\/codemode-executor codemode-executor mcp \.\.\.\)\n$/);
});

test('roots: the client\'s roots reach the upstreams at its start and when it says they changed', async () => {
  const dir = scratch();
  const [given, first, second] = ['given', 'first', 'second'].map((d) => { fs.mkdirSync(path.join(dir, d)); return path.join(dir, d); });
  fs.writeFileSync(path.join(second, 'b.txt'), 'b');
  const config = writeConfig(dir, { files: filesystem(given) });
  let current = first;
  const asked = [];
  const { client } = await stdioClient(['--config', config, '--data-dir', dir], {
    onRoots: async () => { asked.push(current); return { roots: [{ uri: `file://${current}`, name: path.basename(current) }] }; },
  });
  // The directories server-filesystem allows, as a program sees them.
  const allowed = async () => JSON.stringify(outcome(await run(client, 'async () => files.list_allowed_directories({})')).result);
  const until = async (dirName) => {
    for (let i = 0; i < 100; i++) {
      if ((await allowed()).includes(dirName)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`the upstream never allowed ${dirName}: ${await allowed()}`);
  };
  try {
    await until(first);
    assert.ok(!(await allowed()).includes(given), 'the roots replace the folders of its arguments');
    current = second;
    await client.sendRootsListChanged();
    await until(second);
    const listed = outcome(await run(client, `async () => files.list_directory({ path: ${JSON.stringify(second)} })`));
    assert.match(JSON.stringify(listed.result), /b\.txt/);
    assert.deepEqual([...new Set(asked)], [first, second]);
  } finally {
    await client.close();
  }
});
