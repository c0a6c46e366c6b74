'use strict';
// The sub-entries load their optional peers on first use; without them, the first call says
// which package to install (and the root entry never needs either).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');

const root = path.join(__dirname, '..', '..');

// Runs `source` in a child in which `hidden` packages cannot be resolved.
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
    };`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', `${prelude}\n${source}`], { cwd: root, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('without the AI SDK, /ai loads and its first call names the package to install', async () => {
  const { code, stdout, stderr } = await withoutPackages(['ai'], `
    const ai = require('./lib/ai/index.js');
    require('./lib/index.js');
    try { ai.createCodeTool({ tools: {}, executor: { execute() {} } }); console.log('no error'); } catch (e) { console.log(e.message); }`);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^@supolka\/codemode-executor\/ai needs the AI SDK \(npm install ai\), which could not be loaded: Cannot find module 'ai'/);
});

test('without the MCP SDK, /mcp loads and its first call names the package to install', async () => {
  const { code, stdout, stderr } = await withoutPackages(['@modelcontextprotocol/sdk'], `
    const mcp = require('./lib/mcp/index.js');
    try { mcp.openApiMcpServer({ spec: {}, executor: {}, request() {} }); console.log('no error'); } catch (e) { console.log(e.message); }`);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^@supolka\/codemode-executor\/mcp needs the MCP SDK \(npm install @modelcontextprotocol\/sdk\), which could not be loaded/);
});
