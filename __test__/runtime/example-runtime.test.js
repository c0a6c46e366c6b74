'use strict';
// examples/runtime-ai-sdk.js, run as a user would (`node examples/runtime-ai-sdk.js`): the
// durable runtime as an AI SDK tool with a mock model — pause for approval, approve (replay),
// roll back. The child inherits CODEMODE_EXECUTOR_ISOLATION, so it runs in both modes.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');

const root = path.join(__dirname, '..', '..');

function runExample() {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join('examples', 'runtime-ai-sdk.js')], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('examples/runtime-ai-sdk.js pauses, resumes by replay, rolls back, and exits 0', async () => {
  const { code, stdout, stderr } = await runExample();
  assert.equal(code, 0, `exit code ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  const expected = [
    // The first pass pauses at the approval-gated call; the read has run once.
    'tool result: status "paused", pending tracker.create_issue({"title":"CI: flaky login test"})',
    // What the model is given: the §9.4 projection, without the host's call log.
    'the model saw the keys: status, executionId, pending',
    'the model said: "I asked to run tracker.create_issue({"title":"CI: flaky login test"}); it is waiting for your approval."',
    'tracker calls so far: list_issues=1 create_issue=0',
    // Approval runs the next pass: list_issues replays from the log, create_issue executes once.
    'approve: status "completed", result {"created":3,"openBefore":1}',
    'tracker calls after approval: list_issues=1 create_issue=1',
    'call log: #0 tracker.list_issues applied; #1 tracker.create_issue applied',
    // Rollback reverts the write and marks the run.
    'execution status: "rolled_back"; reverted: tracker.create_issue',
    'tracker back to its original state: yes',
  ];
  for (const line of expected) assert.ok(stdout.includes(line), `missing "${line}" in:\n${stdout}`);
});
