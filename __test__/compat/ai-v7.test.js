'use strict';
// AI SDK 7 (the `ai7` devDependency, npm:ai@7): the scenarios of fixtures/ai-v7-scenarios.js
// run in a child process in which `ai` resolves to v7 — createCodeTool and runtime.tool() in a
// v7 generateText, codeModeTool as a v7 tool caller (`experimental_toolCallers`), and the AI
// SDK's abortSignal cancelling a spinning run. AI SDK 6 is covered by ai.test.js and the
// examples.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');

const fixtures = path.join(__dirname, '..', 'fixtures');

test('AI SDK 7: createCodeTool, runtime.tool(), codeModeTool and abortSignal', async () => {
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, ['-r', path.join(fixtures, 'ai-v7-alias.js'), path.join(fixtures, 'ai-v7-scenarios.js')], { timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout: out, stderr: err });
    });
  });
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  const seen = Object.fromEntries(stdout.trim().split('\n').map((line) => JSON.parse(line)).map(({ name, value }) => [name, value]));
  assert.deepEqual(seen.createCodeTool, { type: 'json', value: { result: 42 } });
  assert.deepEqual(seen['runtime.tool'], { type: 'json', status: 'completed', result: 42 });
  assert.deepEqual(seen.codeModeTool, { seen: { type: 'json', value: { result: 21 } }, declaresAdd: true });
  assert.equal(seen.abort.outcome, 'stopped by the user');
  assert.ok(seen.abort.ms < 5000, `generateText took ${seen.abort.ms} ms to give up`);
  assert.equal(seen.abort.busy, 0, 'the aborted run was cancelled, not left spinning');
});
