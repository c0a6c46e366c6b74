'use strict';
// The person approves, not the model (issue 35), through the official MCP SDK client:
// - runtimeMcpServer asks the person through MCP elicitation when the client declares it: when a
//   run pauses, the client gets a form naming the pending action, its arguments and the
//   program's code; accept approves it and the run goes on (asking again at the next pause),
//   decline rejects the run, cancel leaves it paused. A client without elicitation is told
//   "paused" and the decision stays with the application (out of band);
// - approve / reject / rollback are not tools unless the host opts in (`approvalTools: true`):
//   by default the model cannot list or call them;
// - every tool the /mcp servers register carries MCP annotations.
// Each flow runs over stdio (a child server process, fixtures/mcp-approvals-server.js) and over
// Streamable HTTP on 127.0.0.1, against a real connector whose `create_issue` needs approval;
// the connector's own file counts how often the tool really ran. The runs live in the store
// storeOptions() names (SQLite, or PostgreSQL in `npm test`'s PostgreSQL pass), in the child too.
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
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
const { IsolateExecutor } = require('../../lib/index.js');
const { runtimeMcpServer, codeMcpServer, openApiMcpServer } = require('../../lib/mcp/index.js');
const { load } = require('../fixtures/tracker.js');
const { files, trackerRuntime, serveHttp } = require('../fixtures/mcp-approvals-server.js');

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'mcp-approvals-server.js');
const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

const ONE = 'async () => { const made = await tracker.create_issue({ title: "one" }); return made.id; }';
const TWO = 'async () => { const a = await tracker.create_issue({ title: "one" }); const b = await tracker.create_issue({ title: "two" }); return [a.id, b.id]; }';

/**
 * A real SDK client on `transport` ('stdio': a child server process; 'http': Streamable HTTP on
 * 127.0.0.1 in this process). With `elicit`, the client declares elicitation and answers each
 * request with `elicit(params)`; `asked` keeps what it was asked.
 */
async function connect(transport, { elicit, approvalTools = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `codemode-mcp-approvals-${transport}-`));
  const client = new Client({ name: 'person', version: '1.0.0' }, elicit ? { capabilities: { elicitation: {} } } : {});
  const asked = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return elicit(request.params);
    });
  }
  let runtime;
  let http;
  if (transport === 'stdio') {
    await client.connect(new StdioClientTransport({
      command: process.execPath,
      args: [FIXTURE, dir, ...(approvalTools ? ['--approval-tools'] : [])],
      // CODEMODE_EXECUTOR_ISOLATION, CODEMODE_TEST_STORE and CODEMODE_PG_URL included.
      env: process.env,
      stderr: 'pipe',
    }));
    // The same store (storeOptions(dir)), read from this process.
    runtime = trackerRuntime(executor, dir);
  } else {
    runtime = trackerRuntime(executor, dir);
    http = await serveHttp(runtime, approvalTools ? { approvalTools: true } : {});
    await client.connect(new StreamableHTTPClientTransport(http.url));
  }
  return {
    client,
    asked,
    runtime,
    ledger: () => load(files(dir).tracker),
    close: async () => {
      await client.close();
      if (http) await http.close();
      runtime.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const textOf = (answer) => answer.content[0].text;
// The runtime outcome in an answer: the JSON after the sentence, or the whole text.
function outcomeOf(answer) {
  const text = textOf(answer);
  return JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('\n\n{') + 2));
}
const pendingOf = async (client) => JSON.parse(textOf(await client.callTool({ name: 'pending', arguments: {} })));

for (const transport of ['stdio', 'http']) {
  test(`${transport}: a client with elicitation is asked at each pause; accepting approves it, and each action runs exactly once`, async () => {
    const s = await connect(transport, { elicit: () => ({ action: 'accept', content: {} }) });
    try {
      const answer = await s.client.callTool({ name: 'code', arguments: { code: TWO } });
      assert.equal(answer.isError, undefined, textOf(answer));
      const out = outcomeOf(answer);
      assert.equal(out.status, 'completed', textOf(answer));
      assert.deepEqual(out.result, [2, 3]);
      // Asked twice, once per pause; each form names the action, its arguments and the code.
      assert.equal(s.asked.length, 2);
      for (const [i, title] of [[0, 'one'], [1, 'two']]) {
        const { message, requestedSchema } = s.asked[i];
        assert.match(message, /tracker\.create_issue/);
        assert.ok(message.includes(JSON.stringify({ title })), message);
        assert.ok(message.includes(TWO), message);
        assert.equal(requestedSchema.type, 'object');
      }
      const ledger = s.ledger();
      assert.equal(ledger.ran.create_issue, 2);
      assert.deepEqual(ledger.issues.map((i) => i.title), ['first', 'one', 'two']);
      assert.deepEqual(await pendingOf(s.client), []);
      assert.equal((await s.runtime.execution(out.executionId)).status, 'completed');
    } finally {
      await s.close();
    }
  });

  test(`${transport}: a person who declines rejects the run; nothing runs`, async () => {
    const s = await connect(transport, { elicit: () => ({ action: 'decline' }) });
    try {
      const answer = await s.client.callTool({ name: 'code', arguments: { code: ONE } });
      assert.equal(s.asked.length, 1);
      assert.match(textOf(answer), /declined tracker\.create_issue\(\{"title":"one"\}\)/);
      const out = outcomeOf(answer);
      assert.equal(out.status, 'rejected');
      assert.equal((await s.runtime.execution(out.executionId)).status, 'rejected');
      assert.equal(s.ledger().ran.create_issue, undefined);
      assert.deepEqual(await pendingOf(s.client), []);
    } finally {
      await s.close();
    }
  });

  test(`${transport}: a person who cancels leaves the run paused for later`, async () => {
    const s = await connect(transport, { elicit: () => ({ action: 'cancel' }) });
    try {
      const answer = await s.client.callTool({ name: 'code', arguments: { code: ONE } });
      assert.equal(s.asked.length, 1);
      assert.match(textOf(answer), /^The run is paused: tracker\.create_issue\(\{"title":"one"\}\) \(seq 0\) awaits a person's approval/);
      const out = outcomeOf(answer);
      assert.equal(out.status, 'paused');
      assert.equal((await s.runtime.execution(out.executionId)).status, 'paused');
      assert.deepEqual((await pendingOf(s.client)).map((p) => [p.executionId, p.seq, p.method]), [[out.executionId, 0, 'create_issue']]);
      assert.equal(s.ledger().ran.create_issue, undefined);
    } finally {
      await s.close();
    }
  });

  test(`${transport}: a client without elicitation is told "paused"; approve, reject and rollback are no tools of the model's`, async () => {
    const s = await connect(transport);
    try {
      const { tools } = await s.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['code', 'pending', 'search', 'describe']);
      const answer = await s.client.callTool({ name: 'code', arguments: { code: ONE } });
      assert.match(textOf(answer), /^The run is paused: tracker\.create_issue\(\{"title":"one"\}\) \(seq 0\) awaits a person's approval/);
      assert.doesNotMatch(textOf(answer), /tool "approve"/, 'the model is not sent to a tool it does not have');
      const { executionId } = outcomeOf(answer);
      for (const [name, args] of [['approve', { executionId, seq: 0 }], ['reject', { executionId, seq: 0 }], ['rollback', { executionId }]]) {
        const refused = await s.client.callTool({ name, arguments: args });
        assert.equal(refused.isError, true, name);
        assert.match(textOf(refused), new RegExp(`Tool ${name} not found`));
      }
      assert.equal((await s.runtime.execution(executionId)).status, 'paused');
      assert.equal(s.ledger().ran.create_issue, undefined);
      // The application (out of band) decides.
      const done = await s.runtime.approve({ executionId, seq: 0 });
      assert.equal(done.status, 'completed');
      assert.equal(s.ledger().ran.create_issue, 1);
    } finally {
      await s.close();
    }
  });

  test(`${transport}: approvalTools: true gives the approval tools back`, async () => {
    const s = await connect(transport, { approvalTools: true });
    try {
      const { tools } = await s.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['code', 'pending', 'approve', 'reject', 'rollback', 'search', 'describe']);
      const answer = await s.client.callTool({ name: 'code', arguments: { code: ONE } });
      assert.match(textOf(answer), /tool "approve" with \{ executionId: "exec_/);
      const { executionId } = outcomeOf(answer);
      const done = await s.client.callTool({ name: 'approve', arguments: { executionId, seq: 0 } });
      assert.equal(outcomeOf(done).status, 'completed');
      assert.equal(s.ledger().ran.create_issue, 1);
    } finally {
      await s.close();
    }
  });
}

async function inMemory(server, capabilities = {}) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities });
  await client.connect(a);
  return client;
}

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
const hints = (tool) => Object.fromEntries(HINTS.map((h) => [h, tool.annotations?.[h]]));

test('annotations: every tool of every /mcp server says whether it reads, destroys, repeats safely and reaches out', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-mcp-annotations-'));
  const runtime = trackerRuntime(executor, dir);
  try {
    const upstream = new McpServer({ name: 'upstream', version: '1.0.0' });
    upstream.registerTool('add', { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
    const spec = { openapi: '3.0.0', info: { title: 'Pets', version: '1' }, paths: {} };
    const servers = {
      runtime: runtimeMcpServer({ runtime, approvalTools: true }),
      code: await codeMcpServer({ server: upstream, executor }),
      openapi: openApiMcpServer({ spec, executor, request: async () => ({}) }),
    };
    const seen = {};
    for (const [which, server] of Object.entries(servers)) {
      const client = await inMemory(server);
      for (const tool of (await client.listTools()).tools) {
        for (const h of HINTS) assert.equal(typeof tool.annotations?.[h], 'boolean', `${which}.${tool.name}.${h}`);
        seen[`${which}.${tool.name}`] = hints(tool);
      }
      await client.close();
    }
    const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    assert.deepEqual(seen['runtime.pending'], readOnly);
    assert.deepEqual(seen['runtime.search'], readOnly);
    assert.deepEqual(seen['runtime.describe'], readOnly);
    assert.equal(seen['runtime.code'].readOnlyHint, false);
    assert.equal(seen['runtime.code'].openWorldHint, true);
    assert.equal(seen['runtime.approve'].readOnlyHint, false);
    assert.equal(seen['runtime.rollback'].destructiveHint, true);
    assert.equal(seen['runtime.reject'].destructiveHint, true);
    assert.equal(seen['code.code'].readOnlyHint, false);
    assert.equal(seen['code.code'].openWorldHint, true);
    assert.deepEqual(seen['openapi.search'], readOnly);
    assert.equal(seen['openapi.execute'].readOnlyHint, false);
    assert.equal(seen['openapi.execute'].openWorldHint, true);
  } finally {
    runtime.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// A runtime handle whose pending entry is a program awaiting approval before it runs
// (createCodemodeRuntime({ approveProgram })), as runtime.pending() lists it.
function programRuntime(code) {
  const calls = [];
  const entry = { kind: 'program', executionId: 'exec_p', seq: 0, code, connector: 'codemode', method: 'program', args: { code } };
  return {
    calls,
    tool: () => ({ description: 'Run a program.' }),
    execute: async () => { calls.push(['execute']); return { status: 'paused', executionId: 'exec_p', pending: [entry] }; },
    approve: async (args) => { calls.push(['approve', args]); return { status: 'completed', executionId: 'exec_p', result: 42 }; },
    reject: async (args) => { calls.push(['reject', args]); return true; },
    pending: async () => [entry],
  };
}

test('a program awaiting approval before it runs: the form asks "Run this program?" with its code; accept runs it, decline rejects it', async () => {
  const code = 'async () => { return 6 * 7; }';
  for (const [action, expected] of [['accept', 'approve'], ['decline', 'reject']]) {
    const runtime = programRuntime(code);
    const asked = [];
    const client = await inMemory(runtimeMcpServer({ runtime }), { elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, async (request) => { asked.push(request.params); return { action }; });
    const answer = await client.callTool({ name: 'code', arguments: { code } });
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, /^Run this program\?/);
    assert.ok(asked[0].message.includes(code));
    assert.doesNotMatch(asked[0].message, /codemode\.program/);
    assert.deepEqual(runtime.calls, [['execute'], [expected, { executionId: 'exec_p', seq: 0 }]]);
    if (action === 'accept') assert.equal(outcomeOf(answer).result, 42);
    else assert.match(textOf(answer), /declined the program/);
    await client.close();
  }
  // Without elicitation the paused answer says the program waits, not "codemode.program(...)".
  const client = await inMemory(runtimeMcpServer({ runtime: programRuntime(code) }));
  const paused = await client.callTool({ name: 'code', arguments: { code } });
  assert.match(textOf(paused), /^The run is paused: the program awaits a person's approval before it runs/);
  await client.close();
});
