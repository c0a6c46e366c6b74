'use strict';
// Tools marked `needsApproval` inside code mode (issue 35): the code tool takes part in the AI
// SDK's own approval flow. A program that calls such a tool pauses durably; the code tool's
// call gets the SDK's `tool-approval-request`; the SDK's `tool-approval-response` (what
// useChat's addToolApprovalResponse sends) approves it — the run continues from its log and
// the tool runs exactly once — or declines it — nothing runs and the run ends rejected. Driven
// through the real AI SDK 6 (generateText, streamText and a Chat) with a mock model; AI SDK 7
// through fixtures/ai-v7-approvals.js in a child process. The runs live in the store
// storeOptions() names (a SQLite file, or PostgreSQL in `npm test`'s PostgreSQL pass), except
// where a test is about the in-memory default.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile } = require('node:child_process');
const ai = require('ai');
const aiTest = require('ai/test');
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector } = require('../../lib/index.js');
const { createCodeTool, withApprovalDescriptors } = require('../../lib/ai/index.js');
const {
  bank, mockModel, generate, answer, chat, toolParts, TRANSFER, TWO_TRANSFERS, SMALL_AND_LARGE,
} = require('../fixtures/ai-approvals.js');
const { storeOptions } = require('./stores.js');

const fixtures = path.join(__dirname, '..', 'fixtures');
const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

const user = (text) => [{ role: 'user', content: text }];
const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cm-ai-approvals-'));
// Where a code tool's runs live: a store of their own (createCodeTool's `runtime` option).
const newStore = () => storeOptions(tmpDir());
// A handle over the same store, to read what happened to the runs.
const reader = (store) => createCodemodeRuntime({ executor, connectors: [], ...store });

test('createCodeTool: a needsApproval tool called by a program asks through the AI SDK; approving runs it once', async () => {
  const { tools, applied } = bank(ai);
  const codemode = createCodeTool({ tools, executor, runtime: newStore() });
  assert.match(codemode.description, /transfer: \(input: TransferInput\)/, 'the tool is declared to the model, not dropped');
  const { model, seen } = mockModel(aiTest, { program: TRANSFER });

  const first = await generate(ai, { model, tools: { codemode }, messages: user('pay bob 500') });
  assert.equal(first.requests.length, 1, 'one tool-approval-request, for the code tool call');
  const [request] = first.requests;
  assert.equal(request.toolCall.toolName, 'codemode');
  assert.equal(request.toolCall.input.code, TRANSFER, 'the request shows the program');
  assert.deepEqual(applied, [], 'nothing applied before the approval');
  const descriptor = await codemode.approvalDescriptor(request.toolCall.toolCallId);
  assert.deepEqual(descriptor.actions.map(({ kind, tool, input }) => ({ kind, tool, input })), [
    { kind: 'call', tool: 'codemode.transfer', input: { to: 'bob', amount: 500 } },
  ], 'the request names the inner tool and its input');
  assert.equal(typeof descriptor.executionId, 'string');

  const approved = answer(first.messages, first.requests, true);
  const second = await generate(ai, { model, tools: { codemode }, messages: approved });
  assert.deepEqual(applied, [{ to: 'bob', amount: 500 }], 'the approved transfer ran once');
  assert.equal(second.requests.length, 0);
  assert.deepEqual(seen.at(-1), { type: 'json', value: { result: { before: 1000, receipt: { sent: 500, to: 'bob' } } } }, "the code tool's result is the program's");
  assert.equal(second.result.text, 'done {"before":1000,"receipt":{"sent":500,"to":"bob"}}');

  // The same request again (a client retry): the approval is not applied twice.
  await generate(ai, { model, tools: { codemode }, messages: approved });
  assert.deepEqual(applied, [{ to: 'bob', amount: 500 }], 'a replayed approval runs nothing again');
});

test('createCodeTool: declining leaves the tool unexecuted, the model is told, and the run ends rejected', async () => {
  const store = newStore();
  const { tools, applied } = bank(ai);
  const codemode = createCodeTool({ tools, executor, runtime: store });
  const { model } = mockModel(aiTest, { program: TRANSFER });
  const first = await generate(ai, { model, tools: { codemode }, messages: user('pay bob 500') });
  assert.equal(first.requests.length, 1);
  const { executionId } = await codemode.approvalDescriptor(first.requests[0].toolCall.toolCallId);

  const declined = answer(first.messages, first.requests, false, 'not today');
  const second = await generate(ai, { model, tools: { codemode }, messages: declined });
  assert.deepEqual(applied, []);
  assert.equal(second.result.text, 'declined', 'the model read the execution-denied result');
  // The next time the code tool sees this conversation (here: the model writes another
  // program) the declined run is ended before anything else happens.
  const { model: again } = mockModel(aiTest, { program: 'async () => codemode.balance({})' });
  await generate(ai, { model: again, tools: { codemode }, messages: [...second.messages, ...user('what is my balance?')] });
  assert.equal((await reader(store).execution(executionId)).status, 'rejected');
  assert.deepEqual(applied, []);
});

test('createCodeTool: a program needing two approvals asks for them in turn', async () => {
  const { tools, applied } = bank(ai);
  const codemode = createCodeTool({ tools, executor, runtime: newStore() });
  const { model } = mockModel(aiTest, { program: TWO_TRANSFERS });
  const first = await generate(ai, { model, tools: { codemode }, messages: user('pay ana and bob') });
  assert.equal(first.requests.length, 1);
  assert.deepEqual((await codemode.approvalDescriptor(first.requests[0].toolCall.toolCallId)).actions.map((a) => a.input), [{ to: 'ana', amount: 100 }]);

  const second = await generate(ai, { model, tools: { codemode }, messages: answer(first.messages, first.requests, true) });
  assert.deepEqual(applied, [{ to: 'ana', amount: 100 }], 'the first transfer ran; the run paused at the second');
  assert.equal(second.requests.length, 1, 'the second approval is asked for');
  assert.notEqual(second.requests[0].toolCall.toolCallId, first.requests[0].toolCall.toolCallId);
  assert.deepEqual((await codemode.approvalDescriptor(second.requests[0].toolCall.toolCallId)).actions.map((a) => a.input), [{ to: 'bob', amount: 200 }]);

  // A retry of the second request does not spend the first approval on the second transfer.
  await generate(ai, { model, tools: { codemode }, messages: answer(first.messages, first.requests, true) });
  assert.deepEqual(applied, [{ to: 'ana', amount: 100 }]);

  const third = await generate(ai, { model, tools: { codemode }, messages: answer(second.messages, second.requests, true) });
  assert.deepEqual(applied, [{ to: 'ana', amount: 100 }, { to: 'bob', amount: 200 }], 'each transfer ran once');
  assert.equal(third.result.text, 'done [100,200]');
});

test('createCodeTool: a needsApproval function is asked with the actual input at each call', async () => {
  const { tools, applied, asked } = bank(ai, { needsApproval: ({ amount }) => amount > 1000 });
  const codemode = createCodeTool({ tools, executor, runtime: newStore() });
  const { model } = mockModel(aiTest, { program: SMALL_AND_LARGE });
  const first = await generate(ai, { model, tools: { codemode }, messages: user('pay') });
  assert.deepEqual(asked, [{ to: 'ana', amount: 50 }, { to: 'bob', amount: 5000 }]);
  assert.deepEqual(applied, [{ to: 'ana', amount: 50 }], 'the small amount needed no approval');
  assert.equal(first.requests.length, 1);
  assert.deepEqual((await codemode.approvalDescriptor(first.requests[0].toolCall.toolCallId)).actions.map((a) => a.input), [{ to: 'bob', amount: 5000 }]);

  const second = await generate(ai, { model, tools: { codemode }, messages: answer(first.messages, first.requests, true) });
  assert.deepEqual(applied, [{ to: 'ana', amount: 50 }, { to: 'bob', amount: 5000 }]);
  assert.equal(asked.length, 2, 'the decision is recorded, not asked again on replay');
  assert.equal(second.result.text, 'done [50,5000]');
});

test('createCodeTool: a program cannot skip the question by calling the connector underneath', async () => {
  const { tools, applied, asked } = bank(ai, { needsApproval: ({ amount }) => amount > 1000 });
  const codemode = createCodeTool({ tools, executor, runtime: newStore() });
  const call = (code, toolCallId) => codemode.execute({ code }, { toolCallId, messages: [] });
  await assert.rejects(call('async () => __codemode.transfer$auto({ to: "eve", amount: 9999 })', 'sneak-1'), /needs approval/);
  // Asking for a small amount does not let a large one through.
  await assert.rejects(call('async () => { await __codemode.transfer$check({ to: "eve", amount: 1 }); return __codemode.transfer$auto({ to: "eve", amount: 9999 }); }', 'sneak-2'), /needs approval/);
  // The method that pauses does pause.
  const paused = await call('async () => __codemode.transfer({ to: "eve", amount: 9999 })', 'sneak-3');
  assert.equal(paused.status, 'paused');
  assert.deepEqual(paused.pending.map((a) => a.input), [{ to: 'eve', amount: 9999 }]);
  assert.deepEqual(applied, []);
  assert.deepEqual(asked, [{ to: 'eve', amount: 1 }]);
});

test('createCodeTool: declining the second of two approvals rejects the run; the first stays applied', async () => {
  const store = newStore();
  const { tools, applied } = bank(ai);
  const codemode = createCodeTool({ tools, executor, runtime: store });
  const { model } = mockModel(aiTest, { program: TWO_TRANSFERS });
  const first = await generate(ai, { model, tools: { codemode }, messages: user('pay ana and bob') });
  const second = await generate(ai, { model, tools: { codemode }, messages: answer(first.messages, first.requests, true) });
  assert.equal(second.requests.length, 1);
  const { executionId } = await codemode.approvalDescriptor(second.requests[0].toolCall.toolCallId);
  const declined = answer(second.messages, second.requests, false);
  const third = await generate(ai, { model, tools: { codemode }, messages: declined });
  assert.equal(third.result.text, 'declined');
  assert.equal(await codemode.decline(second.requests[0].toolCall.toolCallId), true, 'the host can end it at once');
  assert.equal((await reader(store).execution(executionId)).status, 'rejected');
  assert.deepEqual(applied, [{ to: 'ana', amount: 100 }]);
});

test('createCodeTool without runtime: a restart loses the paused run; the approval that arrives after it asks again', async () => {
  const { tools, applied } = bank(ai);
  const { model } = mockModel(aiTest, { program: TRANSFER });
  const before = createCodeTool({ tools, executor }); // the in-memory default, deliberately
  const first = await generate(ai, { model, tools: { codemode: before }, messages: user('pay bob 500') });
  assert.equal(first.requests.length, 1);
  // A fresh code tool (a new process's): its in-memory runtime never saw the run.
  const after = createCodeTool({ tools, executor }); // likewise
  const second = await generate(ai, { model, tools: { codemode: after }, messages: answer(first.messages, first.requests, true) });
  assert.deepEqual(applied, [], 'the approval of the lost run applies to nothing');
  assert.equal(second.requests.length, 1, 'the program ran again up to the transfer and asks again');
  const third = await generate(ai, { model, tools: { codemode: after }, messages: answer(second.messages, second.requests, true) });
  assert.deepEqual(applied, [{ to: 'bob', amount: 500 }]);
  assert.equal(third.result.text, 'done {"before":1000,"receipt":{"sent":500,"to":"bob"}}');
});

test('useChat flow: streamText and a Chat; the UI part is approval-requested with a descriptor; addToolApprovalResponse approves or declines', async () => {
  for (const approved of [true, false]) {
    const store = newStore();
    const { tools, applied } = bank(ai);
    const all = { codemode: createCodeTool({ tools, executor, runtime: store }) };
    const { model } = mockModel(aiTest, { program: TRANSFER });
    const c = chat(ai, { model, tools: all, transform: (stream) => withApprovalDescriptors(stream, all) });
    await c.sendMessage({ text: 'pay bob 500' });
    const [part] = toolParts(c);
    assert.equal(part.type, 'tool-codemode');
    assert.equal(part.state, 'approval-requested');
    assert.equal(part.input.code, TRANSFER);
    assert.deepEqual(part.approval.descriptor.actions.map(({ kind, tool, input }) => ({ kind, tool, input })), [{ kind: 'call', tool: 'codemode.transfer', input: { to: 'bob', amount: 500 } }]);
    assert.deepEqual(applied, []);

    await c.addToolApprovalResponse({ id: part.approval.id, approved });
    await c.sendMessage();
    const status = (await reader(store).execution(part.approval.descriptor.executionId)).status;
    const last = toolParts(c).at(-1);
    if (approved) {
      assert.deepEqual(applied, [{ to: 'bob', amount: 500 }]);
      assert.equal(last.state, 'output-available');
      assert.deepEqual(last.output, { result: { before: 1000, receipt: { sent: 500, to: 'bob' } } });
      assert.equal(status, 'completed');
    } else {
      assert.deepEqual(applied, []);
      assert.equal(last.state, 'output-denied');
      assert.equal(status, 'rejected', 'the declined run ended as the response streamed');
    }
    const text = c.messages.at(-1).parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    assert.equal(text, approved ? 'done {"before":1000,"receipt":{"sent":500,"to":"bob"}}' : 'declined');
  }
});

test('a restart between the approval request and its response: the run continues from the store', async () => {
  const dir = tmpDir();
  const store = storeOptions(dir);
  // Request 1 in another process (its store: storeOptions(dir) there, over the same env), which
  // exits with the run paused in the store.
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, [path.join(fixtures, 'ai-approvals-request.js'), dir], { timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout: out, stderr: err });
    });
  });
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  const first = JSON.parse(stdout);
  assert.equal(first.requests.length, 1);
  assert.deepEqual(first.applied, []);

  // A fresh code tool (and executor) here: the approval continues the run from its log.
  const { tools, applied } = bank(ai);
  const codemode = createCodeTool({ tools, executor, runtime: store });
  const { model } = mockModel(aiTest, { program: TRANSFER });
  const second = await generate(ai, { model, tools: { codemode }, messages: answer(first.messages, first.requests, true) });
  assert.deepEqual(applied, [{ to: 'bob', amount: 500 }], 'the transfer ran once, here');
  assert.equal(second.result.text, 'done {"before":1000,"receipt":{"sent":500,"to":"bob"}}');
  const [run] = (await reader(store).executions()).filter((e) => e.status === 'completed');
  assert.equal(run.log.filter((e) => e.method === 'balance').length, 1, 'the earlier call was replayed, not run again');
});

class Bank extends CodemodeConnector {
  constructor(applied) {
    super();
    this.applied = applied;
  }
  name() { return 'bank'; }
  tools() {
    return {
      transfer: {
        description: 'Move money',
        inputSchema: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } },
        requiresApproval: true,
        execute: async ({ to, amount }) => { this.applied.push({ to, amount }); return { sent: amount, to }; },
      },
    };
  }
}

test('runtime.tool({ approvals: "ai-sdk" }): the same flow; runtime.tool() still answers { status: "paused" }', async () => {
  const applied = [];
  const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(applied)], ...newStore() });
  const program = 'async () => (await bank.transfer({ to: "bob", amount: 500 })).sent';

  // Cloudflare's answer stays the default.
  const plain = ai.tool(runtime.tool());
  assert.equal(plain.needsApproval, undefined);
  const paused = await plain.execute({ code: program }, { toolCallId: 'x', messages: [] });
  assert.equal(paused.status, 'paused');
  assert.equal(paused.pending[0].method, 'transfer');
  await runtime.reject({ executionId: paused.executionId, seq: paused.pending[0].seq });

  const codemode = ai.tool(runtime.tool({ approvals: 'ai-sdk' }));
  const { model } = mockModel(aiTest, { program });
  const first = await generate(ai, { model, tools: { codemode }, messages: user('pay bob') });
  assert.equal(first.requests.length, 1);
  const descriptor = await codemode.approvalDescriptor(first.requests[0].toolCall.toolCallId);
  assert.deepEqual(descriptor.actions.map(({ kind, tool, input }) => ({ kind, tool, input })), [{ kind: 'call', tool: 'bank.transfer', input: { to: 'bob', amount: 500 } }]);
  assert.deepEqual(applied, []);
  const second = await generate(ai, { model, tools: { codemode }, messages: answer(first.messages, first.requests, true) });
  assert.deepEqual(applied, [{ to: 'bob', amount: 500 }]);
  assert.equal(second.result.text, 'done 500');
  assert.equal((await runtime.execution(descriptor.executionId)).status, 'completed');

  assert.throws(() => runtime.tool({ approvals: 'sometimes' }), { code: 'ERR_INVALID_ARGUMENT' });
});

test('approveProgram: the program itself is what the approval request asks for', async () => {
  const applied = [];
  const runtime = createCodemodeRuntime({ executor, connectors: [new Bank(applied)], ...newStore(), approveProgram: true });
  const program = 'async () => (await bank.transfer({ to: "bob", amount: 7 })).sent';
  const codemode = ai.tool(runtime.tool({ approvals: 'ai-sdk' }));
  const { model } = mockModel(aiTest, { program });
  const first = await generate(ai, { model, tools: { codemode }, messages: user('pay bob') });
  assert.equal(first.requests.length, 1);
  const descriptor = await codemode.approvalDescriptor(first.requests[0].toolCall.toolCallId);
  assert.deepEqual(descriptor.actions.map(({ kind, code }) => ({ kind, code })), [{ kind: 'program', code: program }]);

  // Approving the program runs it up to the transfer, which is asked for next.
  const second = await generate(ai, { model, tools: { codemode }, messages: answer(first.messages, first.requests, true) });
  assert.deepEqual(applied, []);
  assert.equal(second.requests.length, 1);
  const next = await codemode.approvalDescriptor(second.requests[0].toolCall.toolCallId);
  assert.deepEqual(next.actions.map(({ kind, tool }) => ({ kind, tool })), [{ kind: 'call', tool: 'bank.transfer' }]);
  const third = await generate(ai, { model, tools: { codemode }, messages: answer(second.messages, second.requests, true) });
  assert.deepEqual(applied, [{ to: 'bob', amount: 7 }]);
  assert.equal(third.result.text, 'done 7');
});

test('AI SDK 7: codeModeTool and createCodeTool take part in the v7 approval flow', async () => {
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, ['-r', path.join(fixtures, 'ai-v7-alias.js'), path.join(fixtures, 'ai-v7-approvals.js'), tmpDir()], { timeout: 60_000 }, (error, out, err) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout: out, stderr: err });
    });
  });
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  const seen = Object.fromEntries(stdout.trim().split('\n').map((line) => JSON.parse(line)).map(({ name, value }) => [name, value]));
  assert.deepEqual(seen.version, '7');
  assert.deepEqual(seen['codeModeTool approve'], { requests: 1, tool: 'tools.transfer', appliedBefore: [], applied: [{ to: 'bob', amount: 500 }], text: 'done {"before":1000,"receipt":{"sent":500,"to":"bob"}}' });
  assert.deepEqual(seen['codeModeTool decline'], { requests: 1, applied: [], text: 'declined' });
  assert.deepEqual(seen['createCodeTool function'], { asked: [{ to: 'ana', amount: 50 }, { to: 'bob', amount: 5000 }], requests: 1, applied: [{ to: 'ana', amount: 50 }, { to: 'bob', amount: 5000 }], text: 'done [50,5000]' });
  assert.deepEqual(seen['chat two approvals'], { states: ['approval-requested', 'approval-requested'], tools: ['codemode.transfer', 'codemode.transfer'], applied: [{ to: 'ana', amount: 100 }, { to: 'bob', amount: 200 }], text: 'done [100,200]' });
});
