'use strict';
// The connectors' faults, /mcp's, and /ai's and /mcp's missing-peer error carry a stable `code`
// like the rest of the package: each is ERR_INVALID_ARGUMENT (a connector written without what
// it must implement, tools that clash or cannot run, a call of a tool that is not there, bad
// options, a peer SDK not installed), a CodemodeExecutorError with the same message as before.
// What a program sees of them (a tool not found inside a run) is still the message alone.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { CodemodeConnector, McpConnector, OpenApiConnector, ToolSetConnector } = require('../../lib/connectors/index.js');
const { runtimeMcpServer } = require('../../lib/mcp/index.js');
const { CodemodeExecutorError, ErrorCodes } = require('../../lib/index.js');

const root = path.join(__dirname, '..', '..');

// An assert.throws / assert.rejects validator: ERR_INVALID_ARGUMENT with exactly `message`
// (a string) or a message matching it (a RegExp).
const invalid = (message) => (error) => {
  assert.ok(error instanceof CodemodeExecutorError, `not a CodemodeExecutorError: ${error && error.stack}`);
  assert.equal(error.code, ErrorCodes.INVALID_ARGUMENT);
  if (message instanceof RegExp) assert.match(error.message, message);
  else assert.equal(error.message, message);
  return true;
};

test('CodemodeConnector without name() or tools(): ERR_INVALID_ARGUMENT', async () => {
  class NoName extends CodemodeConnector {
    tools() { return {}; }
  }
  assert.throws(() => new NoName().name(), invalid('NoName must implement name() — it returns the namespace the sandbox sees'));
  await assert.rejects(new NoName().describe(), invalid(/NoName must implement name\(\)/));
  class NoTools extends CodemodeConnector {
    name() { return 'nt'; }
  }
  await assert.rejects(new NoTools().describe(), invalid("NoTools must implement tools() — it returns the connector's tools record"));
  await assert.rejects(new NoTools().executeTool('x', {}), invalid(/NoTools must implement tools\(\)/));
});

test('CodemodeConnector whose tools() is not an object: ERR_INVALID_ARGUMENT', async () => {
  class NullTools extends CodemodeConnector {
    name() { return 'nul'; }
    tools() { return null; }
  }
  await assert.rejects(new NullTools().describe(), invalid('tools() of connector "nul" must return an object of tools (got null)'));
});

test('requiresApproval with replay "reexecute": ERR_INVALID_ARGUMENT', async () => {
  class Bad extends CodemodeConnector {
    name() { return 'shell'; }
    tools() { return { run: { requiresApproval: true, replay: 'reexecute', execute: () => 2 } }; }
  }
  const message = 'Connector "shell" tool "run" cannot combine requiresApproval with replay: "reexecute" — approved actions must be logged, not re-executed.';
  await assert.rejects(new Bad().describe(), invalid(message));
  await assert.rejects(new Bad().getTypeScriptTypes(), invalid(message));
});

test('executeTool of a tool that is not there, or has no execute: ERR_INVALID_ARGUMENT', async () => {
  class Partial extends CodemodeConnector {
    name() { return 'partial'; }
    tools() { return { docsOnly: { description: 'no execute' }, ping: { execute: () => 'pong' } }; }
  }
  const c = new Partial();
  await assert.rejects(c.executeTool('nope', {}), invalid('Tool "nope" not found on partial'));
  await assert.rejects(c.executeTool('toString', {}), invalid('Tool "toString" not found on partial'));
  await assert.rejects(c.executeTool('docsOnly', {}), invalid('Tool "docsOnly" on partial has no execute function'));
  assert.equal(await c.executeTool('ping', {}), 'pong');
});

test('ToolSetConnector: bad options and tools that clash: ERR_INVALID_ARGUMENT', async () => {
  const message = 'ToolSetConnector needs options with a `tools` record (an AI SDK ToolSet): new ToolSetConnector(ctx, { tools, name?, instructions? })';
  assert.throws(() => new ToolSetConnector({}, {}), invalid(message));
  assert.throws(() => new ToolSetConnector(), invalid(message));
  const clash = new ToolSetConnector({ tools: { 'get-repo': { execute: () => 1 }, 'get.repo': { execute: () => 2 } }, name: 'gh' });
  const clashMessage = 'Tools "get-repo" and "get.repo" on gh both map to "get_repo" — rename one of them.';
  await assert.rejects(clash.describe(), invalid(clashMessage));
  await assert.rejects(clash.executeTool('get_repo', {}), invalid(clashMessage));
});

test('McpConnector: no createConnection(), tools that clash: ERR_INVALID_ARGUMENT', async () => {
  class Unfinished extends McpConnector {
    name() { return 'u'; }
  }
  await assert.rejects(new Unfinished().describe(), invalid('Unfinished must implement createConnection() — it returns { client, tools?, fetchTools?, instructions? }'));
  class Clash extends McpConnector {
    name() { return 'github'; }
    createConnection() {
      return { client: { callTool: async () => ({ content: [] }) }, tools: [{ name: 'get-repo', inputSchema: {} }, { name: 'get.repo', inputSchema: {} }] };
    }
  }
  await assert.rejects(new Clash().describe(), invalid('MCP tools "get-repo" and "get.repo" on github both map to "get_repo". Override toolName() to disambiguate.'));
});

test('OpenApiConnector: no spec() or request(): ERR_INVALID_ARGUMENT', async () => {
  class NoSpec extends OpenApiConnector {
    name() { return 'n'; }
  }
  await assert.rejects(new NoSpec().describe(), invalid('NoSpec must implement spec() — it returns the OpenAPI document'));
  class NoRequest extends OpenApiConnector {
    name() { return 'n'; }
    spec() { return { paths: { '/x': { get: { operationId: 'x' } } } }; }
  }
  await assert.rejects(new NoRequest().executeTool('x', {}), invalid('NoRequest must implement request({ path, method, params, body, headers })'));
});

test('runtimeMcpServer without a durable runtime: ERR_INVALID_ARGUMENT', () => {
  const message = 'runtimeMcpServer: runtime must be a durable runtime (createCodemodeRuntime)';
  assert.throws(() => runtimeMcpServer({}), invalid(message));
  assert.throws(() => runtimeMcpServer({ runtime: { execute() {} } }), invalid(message));
});

// Runs `source` in a child in which `hidden` packages cannot be resolved (as peers.test.js).
function withoutPackages(hidden, source) {
  const prelude = `
    const Module = require('node:module');
    const resolve = Module._resolveFilename;
    const hidden = ${JSON.stringify(hidden)};
    Module._resolveFilename = function (request, ...rest) {
      if (hidden.some((h) => request === h || request.startsWith(h + '/'))) {
        const error = new Error("Cannot find module '" + request + "'");
        error.code = 'MODULE_NOT_FOUND';
        throw error;
      }
      return resolve.call(this, request, ...rest);
    };
    const report = (e) => console.log(JSON.stringify({
      code: e.code,
      cls: e instanceof require('./lib/index.js').CodemodeExecutorError,
      message: e.message,
      cause: e.cause && e.cause.code,
    }));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', `${prelude}\n${source}`], { cwd: root, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

test('/ai without the AI SDK: ERR_INVALID_ARGUMENT, the loader\'s error as its cause', async () => {
  const out = await withoutPackages(['ai'], `
    try { require('./lib/ai/index.js').createCodeTool({ tools: {}, executor: { execute() {} } }); console.log('{}'); } catch (e) { report(e); }`);
  assert.deepEqual(out, {
    code: ErrorCodes.INVALID_ARGUMENT,
    cls: true,
    message: "@supolka/codemode-executor/ai needs the AI SDK (npm install ai), which could not be loaded: Cannot find module 'ai'",
    cause: 'MODULE_NOT_FOUND',
  });
});

test('/mcp without the MCP SDK: ERR_INVALID_ARGUMENT, the loader\'s error as its cause', async () => {
  const out = await withoutPackages(['@modelcontextprotocol/sdk'], `
    try { require('./lib/mcp/index.js').openApiMcpServer({ spec: {}, executor: {}, request() {} }); console.log('{}'); } catch (e) { report(e); }`);
  assert.equal(out.code, ErrorCodes.INVALID_ARGUMENT);
  assert.equal(out.cls, true);
  assert.match(out.message, /^@supolka\/codemode-executor\/mcp needs the MCP SDK \(npm install @modelcontextprotocol\/sdk\), which could not be loaded: Cannot find module '@modelcontextprotocol\/sdk/);
  assert.equal(out.cause, 'MODULE_NOT_FOUND');
});
