'use strict';
// The `/ai` entry's faults carry a stable `code` like the rest of the package: `codeModeTool`
// where the installed AI SDK (6, this checkout's `ai`) has no tool callers, and without an
// executor under AI SDK 7 (a child process in which `ai` resolves to v7), is
// ERR_INVALID_ARGUMENT, a CodemodeExecutorError with the same message as before.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { codeModeTool, createCodeTool } = require('../../lib/ai/index.js');
const { CodemodeExecutorError, ErrorCodes } = require('../../lib/index.js');

const ROOT = path.join(__dirname, '..', '..');

test('codeModeTool on AI SDK 6: ERR_INVALID_ARGUMENT, pointing at createCodeTool', () => {
  assert.equal(require('ai/package.json').version.split('.')[0], '6');
  assert.throws(() => codeModeTool({ executor: { execute: async () => ({}) } }), (error) => {
    assert.ok(error instanceof CodemodeExecutorError);
    assert.equal(error.code, ErrorCodes.INVALID_ARGUMENT);
    assert.equal(error.message, 'codeModeTool needs AI SDK 7 (experimental_toolCaller); with AI SDK 6 use createCodeTool({ tools, executor })');
    return true;
  });
});

test('codeModeTool on AI SDK 7 without an executor: ERR_INVALID_ARGUMENT', () => {
  const out = execFileSync(process.execPath, ['-r', path.join(__dirname, '..', 'fixtures', 'ai-v7-alias.js'), '-e', `
    const { codeModeTool } = require('./lib/ai/index.js');
    const { CodemodeExecutorError } = require('./lib/index.js');
    try { codeModeTool({}); console.log(JSON.stringify({ threw: false })); }
    catch (e) { console.log(JSON.stringify({ v: require('ai/package.json').version.split('.')[0], code: e.code, cls: e instanceof CodemodeExecutorError, message: e.message })); }
  `], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.deepEqual(JSON.parse(out.trim().split('\n').pop()), {
    v: '7', code: ErrorCodes.INVALID_ARGUMENT, cls: true, message: 'codeModeTool: executor must implement execute(code, providers, options)',
  });
});

test('createCodeTool without an executor, or without tools: ERR_INVALID_ARGUMENT when it is made, not a TypeError at its first run', () => {
  const coded = (message) => (error) => {
    assert.ok(error instanceof CodemodeExecutorError, `a CodemodeExecutorError, not ${error && error.constructor && error.constructor.name}: ${error && error.message}`);
    assert.equal(error.code, ErrorCodes.INVALID_ARGUMENT);
    assert.equal(error.message, message);
    return true;
  };
  const executor = { execute: async () => ({ result: 1 }) };
  for (const options of [{ tools: {} }, { tools: {}, executor: {} }, { tools: {}, executor: null }]) {
    assert.throws(() => createCodeTool(options), coded('createCodeTool: executor must implement execute(code, providers, options)'));
  }
  for (const options of [{ executor }, { executor, tools: null }, { executor, tools: 'x' }]) {
    assert.throws(() => createCodeTool(options), coded('createCodeTool: tools must be a ToolSet or an array of providers'));
  }
  assert.throws(() => createCodeTool(), coded('createCodeTool: executor must implement execute(code, providers, options)'));
  assert.equal(typeof createCodeTool({ tools: {}, executor }).execute, 'function');
});
