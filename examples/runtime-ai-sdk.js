'use strict';
// The durable runtime as an AI SDK tool, with a mock model (no network): the model's program
// reads an issue tracker and asks to create an issue; the run pauses for approval; the host
// approves it (the earlier read is replayed, not re-run) and then rolls the run back.
// `runtime.tool()` has the shape of Cloudflare 0.5.6's tool, which AI SDK 6 expects
// (`toModelOutput({ output })`; AI SDK 5 passed the output itself); `ai@6` is a devDependency.
//
//   node examples/runtime-ai-sdk.js
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { generateText, tool, stepCountIs } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { IsolateExecutor, CodemodeConnector, createCodemodeRuntime } = require('..');

// ---- An in-memory issue tracker, and a connector over it ---------------------------------------

const tracker = {
  issues: [
    { id: 1, title: 'Docs: typo in README', state: 'open' },
    { id: 2, title: 'Crash on empty config', state: 'closed' },
  ],
  calls: { list_issues: 0, create_issue: 0, revert_create_issue: 0 },
};
const original = JSON.stringify(tracker.issues);

class IssueTracker extends CodemodeConnector {
  name() {
    return 'tracker';
  }
  instructions() {
    return 'The team issue tracker.';
  }
  tools() {
    return {
      list_issues: {
        description: 'List issues, optionally filtered by state',
        inputSchema: { type: 'object', properties: { state: { type: 'string', enum: ['open', 'closed'] } } },
        execute: async ({ state } = {}) => {
          tracker.calls.list_issues++;
          return tracker.issues.filter((issue) => state === undefined || issue.state === state);
        },
      },
      create_issue: {
        description: 'Open a new issue',
        inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
        requiresApproval: true, // the run pauses here until the host approves
        execute: async ({ title }) => {
          tracker.calls.create_issue++;
          const issue = { id: Math.max(...tracker.issues.map((i) => i.id)) + 1, title, state: 'open' };
          tracker.issues.push(issue);
          return issue;
        },
        // Called by runtime.rollback() with the recorded arguments and result.
        revert: async (_args, created) => {
          tracker.calls.revert_create_issue++;
          tracker.issues = tracker.issues.filter((issue) => issue.id !== created.id);
        },
      },
    };
  }
}

// ---- A mock model: one tool call, then a reply about what the tool returned --------------------

const CODE = `async () => {
  const open = await tracker.list_issues({ state: "open" });
  const existing = open.find((issue) => /flaky/i.test(issue.title));
  if (existing) return { duplicateOf: existing.id };
  const created = await tracker.create_issue({ title: "CI: flaky login test" });
  return { created: created.id, openBefore: open.length };
}`;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};

// What the model was given as the codemode tool's result (the toModelOutput projection).
let modelSaw;

const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const toolResult = prompt
      .filter((message) => message.role === 'tool')
      .flatMap((message) => message.content)
      .find((part) => part.type === 'tool-result');
    if (toolResult === undefined) {
      return {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'codemode', input: JSON.stringify({ code: CODE }) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }
    modelSaw = toolResult.output.value;
    const pending = modelSaw && modelSaw.status === 'paused' ? modelSaw.pending[0] : undefined;
    const text = pending
      ? `I asked to run ${pending.connector}.${pending.method}(${JSON.stringify(pending.args)}); it is waiting for your approval.`
      : `The run ended with status ${modelSaw && modelSaw.status}.`;
    return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});

// ---- The scenario -----------------------------------------------------------------------------

const counts = () => `list_issues=${tracker.calls.list_issues} create_issue=${tracker.calls.create_issue}`;
const titles = () => tracker.issues.map((issue) => `#${issue.id} ${issue.title}`).join(', ');

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-runtime-'));
  const executor = new IsolateExecutor({ timeout: 10_000 });
  try {
    // Every execution, call log entry and approval lives in this SQLite file; any process
    // opening it (with the same connectors) can approve, resume or roll back the run.
    const runtime = createCodemodeRuntime({
      executor,
      connectors: [new IssueTracker()],
      path: path.join(dir, 'runtime.db'),
    });

    console.log(`1. The model writes a program for the codemode tool (tracker: ${titles()}).`);
    const turn = await generateText({
      model,
      tools: { codemode: tool(runtime.tool()) },
      prompt: 'File an issue for the flaky login test, unless there is one already.',
      stopWhen: stepCountIs(3),
    });
    const output = turn.steps.flatMap((step) => step.toolResults)[0].output;
    const { executionId } = output;
    console.log(`   tool result: status "${output.status}", pending ${output.pending.map((p) => `${p.connector}.${p.method}(${JSON.stringify(p.args)})`).join(', ')}`);
    // toModelOutput hands the model everything but `calls` (the call log stays with the host).
    console.log(`   the model saw the keys: ${Object.keys(modelSaw).join(', ')}`);
    console.log(`   the model said: "${turn.text}"`);
    console.log(`   tracker calls so far: ${counts()}`);

    console.log('2. The user approves; the run resumes from its log.');
    const resumed = await runtime.approve({ executionId });
    console.log(`   approve: status "${resumed.status}", result ${JSON.stringify(resumed.result)}`);
    console.log(`   tracker calls after approval: ${counts()} (list_issues was replayed, not re-executed)`);
    const log = (await runtime.execution(executionId)).log;
    console.log(`   call log: ${log.map((e) => `#${e.seq} ${e.connector}.${e.method} ${e.state}`).join('; ')}`);
    console.log(`   tracker now: ${titles()}`);

    console.log('3. The user changes their mind: roll the run back.');
    await runtime.rollback({ executionId });
    const after = await runtime.execution(executionId);
    console.log(`   execution status: "${after.status}"; reverted: ${after.log.filter((e) => e.state === 'reverted').map((e) => `${e.connector}.${e.method}`).join(', ')}`);
    console.log(`   tracker now: ${titles()}`);
    const restored = JSON.stringify(tracker.issues) === original;
    console.log(`   tracker back to its original state: ${restored ? 'yes' : 'no'}`);
    if (output.status !== 'paused' || resumed.status !== 'completed' || tracker.calls.list_issues !== 1
      || tracker.calls.create_issue !== 1 || after.status !== 'rolled_back' || !restored) {
      process.exitCode = 1;
    }
  } finally {
    await executor.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
