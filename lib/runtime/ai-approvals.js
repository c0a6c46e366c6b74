'use strict';
// The AI SDK's own tool approvals for a durable code tool (issue 35): `runtime.tool({ approvals:
// 'ai-sdk' })`, and createCodeTool / codeModeTool (lib/ai) built on it. Nothing here loads `ai`;
// it reads the AI SDK's message shapes (ModelMessage: `tool-call`, `tool-approval-request`,
// `tool-approval-response`, `tool-result`) as the SDK writes them.
//
// How the SDK's flow is used (ai 6 and 7, generateText / streamText, read from their code):
//   - A tool's `needsApproval(input, { toolCallId, messages })` is asked once for each new call
//     the model makes; `true` makes the SDK end the step with a `tool-approval-request` for that
//     call instead of executing it. The UI (useChat's addToolApprovalResponse) or the host
//     answers with a `tool-approval-response` in the next request's messages; the SDK then asks
//     needsApproval again (re-validation: a tool that says false now gets the approval turned
//     into a denial), and executes the approved call, or answers a declined one with an
//     `execution-denied` result, without calling the tool at all.
//   - So the code tool's needsApproval runs the program (a durable run, keyed by the call's
//     toolCallId) up to its first pause and answers `true` exactly when it paused for a person:
//     the approval request is the SDK's own, for the code tool's call, whose input shows the
//     program. Its execute, reached only once the SDK has an approval for the call (or when
//     nothing paused), continues the run from its log with `runtime.approve` — only if the
//     action the request was for is still the one waiting, so a replayed request never spends
//     an approval on a later action — and its result is the program's result.
//   - One call gets one approval. When the continued run pauses again, execute answers `{ status:
//     'paused', executionId, pending, message }`: the model reads that the next action needs
//     approval and calls the tool again with the same code; that new call adopts the paused run
//     (found through the earlier result in the messages: same code, same executionId, run still
//     paused) and asks for the next approval. A program needing several approvals asks for them
//     in turn, one tool call each.
//   - A declined approval reaches no tool function of the SDK's. The run waiting for it is
//     rejected (`runtime.reject`: ended, nothing of it applied) the next time the code tool sees
//     the conversation (any of its needsApproval or execute calls scans the messages for
//     declined responses), at once where the host passes its UI message stream through
//     withApprovalDescriptors (lib/ai: it sees the `tool-output-denied` chunk), or when the host
//     calls the tool's `decline(toolCallId)`. Until then it waits paused: nothing of it runs.
//   - What is asked for (the inner tool, its input; for approveProgram, the program) is given
//     by `approvalDescriptor(toolCallId)` on the tool, which withApprovalDescriptors puts on the
//     UI stream's approval request as the SDK's `approvalDescriptor` (the UI part's
//     `approval.descriptor`).
// The store is the truth: each answer is read back from it (no run state lives here; the caches
// below only spare look-ups and hold display data for the process that asked).

const { randomUUID } = require('node:crypto');
const { messageOf } = require('../util.js');

const KEY_PREFIX = 'ai-sdk:';
// Runs begun by a code tool call carry `ai-sdk:<toolCallId>:<random>` as their idempotency key:
// the call's id finds its run in any process; the random part keeps a provider that reuses ids
// across conversations from answering with another conversation's run.
const keyOf = (toolCallId) => `${KEY_PREFIX}${encodeURIComponent(String(toolCallId)).slice(0, 900)}:`;
const CACHE_LIMIT = 1000;

// ---- The conversation ------------------------------------------------------------------------

function contentParts(messages, role) {
  const out = [];
  for (const message of Array.isArray(messages) ? messages : []) {
    if (message && message.role === role && Array.isArray(message.content)) out.push(...message.content);
  }
  return out;
}

function codeOf(input) {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return value !== null && typeof value === 'object' && typeof value.code === 'string' ? value.code : undefined;
}

// The first answer to any approval request of the call: what the SDK acts on.
function responseFor(messages, toolCallId) {
  const ids = new Set(contentParts(messages, 'assistant')
    .filter((p) => p && p.type === 'tool-approval-request' && p.toolCallId === toolCallId)
    .map((p) => p.approvalId));
  if (ids.size === 0) return undefined;
  return contentParts(messages, 'tool').find((p) => p && p.type === 'tool-approval-response' && ids.has(p.approvalId)) ?? null;
}

// Whether the SDK has already asked for an approval of this call (a later request about it).
const wasAsked = (messages, toolCallId) => responseFor(messages, toolCallId) !== undefined;

// The index of the message holding the call, or the end (a call of the response under way).
function callIndex(messages, toolCallId) {
  const list = Array.isArray(messages) ? messages : [];
  const at = list.findIndex((m) => m && m.role === 'assistant' && Array.isArray(m.content)
    && m.content.some((p) => p && p.type === 'tool-call' && p.toolCallId === toolCallId));
  return at === -1 ? list.length : at;
}

// The latest earlier result that said a run of this code paused: `{ executionId, seqs }`.
function pausedBefore(messages, code, end) {
  const earlier = (Array.isArray(messages) ? messages : []).slice(0, end);
  const sameCode = new Set(contentParts(earlier, 'assistant')
    .filter((p) => p && p.type === 'tool-call' && codeOf(p.input) === code)
    .map((p) => p.toolCallId));
  let found;
  for (const part of contentParts(earlier, 'tool')) {
    if (!part || part.type !== 'tool-result' || !sameCode.has(part.toolCallId)) continue;
    const output = part.output;
    const value = output && output.type === 'json' ? output.value : undefined;
    if (value && value.status === 'paused' && typeof value.executionId === 'string' && Array.isArray(value.pending)) {
      const seqs = value.pending.map((p) => p && p.seq).filter(Number.isInteger);
      if (seqs.length > 0) found = { executionId: value.executionId, seqs };
    }
  }
  return found;
}

// ---- What is asked for -----------------------------------------------------------------------

/** A pending action as the person reads it: the program itself, or a call with its input. */
function actionOf(pending, display) {
  if (pending.kind === 'program') return { kind: 'program', seq: pending.seq, code: pending.code };
  const action = { kind: 'call', seq: pending.seq, tool: display(pending), input: pending.args };
  if (pending.inDoubt) action.inDoubt = true;
  return action;
}

function shown(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = '';
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The sentence the model reads with a run that paused again. */
function pausedMessage(actions) {
  const what = actions.map((a) => (a.kind === 'program' ? 'the program itself' : `${a.tool}(${shown(a.input)})`)).join(', ');
  return `The run paused: ${what} needs a person's approval. To ask the person for it, call this tool again with exactly the same code: the run continues where it stopped, and the calls it already made are not repeated.`;
}

// ---- Options of the code tool's call, for the inner tools' needsApproval functions ---------------

/**
 * The options of the code tool call under way (`{ toolCallId, messages, … }` as the SDK gave
 * them), found by a connector tool from the execution id its call context names: registered
 * under the run's idempotency key while a run begins, under its id while it is continued.
 */
class CallOptions {
  #byKey = new Map();
  #byId = new Map();
  #runtime;

  attach(runtime) {
    this.#runtime = runtime;
  }

  async during(kind, id, options, work) {
    const map = kind === 'key' ? this.#byKey : this.#byId;
    map.set(id, options);
    try {
      return await work();
    } finally {
      map.delete(id);
    }
  }

  /** The options of the call that runs `executionId` now; the SDK's shape, empty, otherwise. */
  async of(executionId) {
    if (this.#byId.has(executionId)) return this.#byId.get(executionId);
    if (this.#byKey.size > 0 && this.#runtime !== undefined) {
      const execution = await this.#runtime.execution(executionId);
      const key = execution && execution.idempotencyKey;
      if (key !== undefined && this.#byKey.has(key)) return this.#byKey.get(key);
    }
    return { toolCallId: undefined, messages: [] };
  }
}

/** What the tools of one code tool (and its bound copies) share: caches and call options. */
class ApprovalState {
  constructor() {
    this.asked = new Map(); // toolCallId → { id, bound, descriptor }, for the process that asked
    this.settled = new Set(); // approvalIds of declined responses already acted on
    this.calls = new CallOptions();
  }
}

function remember(map, key, value) {
  if (map instanceof Set) map.add(key);
  else map.set(key, value);
  if (map.size > CACHE_LIMIT) map.delete(map.keys().next().value);
}

// ---- The flow --------------------------------------------------------------------------------

/**
 * The AI SDK approval flow over one durable runtime. `runtime`: the handle (execution,
 * executions, approve, reject, pending); `start(code, idempotencyKey)`: begins a run as the
 * tool's execute does and answers its first pass; `display(pending)`: the name the person reads
 * for a call (`namespace.method`).
 */
class AiSdkApprovals {
  #runtime;
  #start;
  #display;
  #state;

  #onLost;

  constructor({ runtime, start, display, state, onLost }) {
    this.#onLost = onLost;
    this.#runtime = runtime;
    this.#start = start;
    this.#display = display ?? ((p) => `${p.connector}.${p.method}`);
    this.#state = state ?? new ApprovalState();
    this.#state.calls.attach(runtime);
  }

  // The run of the call: the one it began (its key), or the paused run an earlier result of the
  // same code named (adopted: the call asks for that run's next approval). `bound` is the seq of
  // the action this call asks about: for an adopted run, the first the earlier result listed;
  // for a run the call began, the first it paused on (found from the log when needed).
  async #find(toolCallId, code, messages) {
    const known = this.#state.asked.get(toolCallId);
    if (known !== undefined) {
      const execution = await this.#runtime.execution(known.id);
      if (execution !== undefined && (code === undefined || execution.code === code)) return known;
    }
    const prefix = keyOf(toolCallId);
    const begun = (await this.#runtime.executions()).find((e) => typeof e.idempotencyKey === 'string'
      && e.idempotencyKey.startsWith(prefix) && (code === undefined || e.code === code));
    if (begun !== undefined) return { id: begun.id };
    if (code === undefined) return undefined;
    const earlier = pausedBefore(messages, code, callIndex(messages, toolCallId));
    if (earlier === undefined) return undefined;
    const execution = await this.#runtime.execution(earlier.executionId);
    if (execution === undefined || execution.code !== code) return undefined;
    return { id: execution.id, bound: Math.min(...earlier.seqs) };
  }

  // The run as it stands: `{ status, executionId, pending? | result?, logs? | error? }`.
  async #current(id) {
    const execution = await this.#runtime.execution(id);
    if (execution === undefined) return { status: 'error', executionId: id, error: `No execution "${id}"` };
    switch (execution.status) {
      case 'paused':
        return { status: 'paused', executionId: id, pending: await this.#runtime.pending(id) };
      case 'completed':
        return { status: 'completed', executionId: id, result: execution.result, logs: execution.logs };
      case 'running':
        return { status: 'running', executionId: id };
      default:
        return { status: 'error', executionId: id, error: execution.error ?? `Execution ended: ${execution.status}` };
    }
  }

  // The seq of the action the call asks about (see #find).
  async #bound(run, answer) {
    if (run.bound !== undefined) return run.bound;
    const execution = await this.#runtime.execution(run.id);
    const seqs = (execution ? execution.log : []).filter((e) => e && e.requiresApproval === true).map((e) => e.seq);
    for (const p of answer.pending || []) seqs.push(p.seq);
    return seqs.length === 0 ? undefined : Math.min(...seqs);
  }

  #begin(code, toolCallId, options) {
    const key = `${keyOf(toolCallId ?? randomUUID())}${randomUUID()}`;
    return this.#state.calls.during('key', key, options, () => this.#start(code, key));
  }

  #describe(answer) {
    return { executionId: answer.executionId, actions: answer.pending.map((p) => actionOf(p, this.#display)) };
  }

  /** The AI SDK's `needsApproval(input, { toolCallId, messages })` of the code tool. */
  async needsApproval(input, options = {}) {
    const { toolCallId, messages } = options;
    const code = codeOf(input);
    if (code === undefined) return false; // execute reports the input
    await this.#settleDeclined(messages);
    // A later request about a call the SDK asked for (its re-validation of an approval): execute
    // decides what, if anything, the approval applies to.
    if (wasAsked(messages, toolCallId)) return true;
    let run = await this.#find(toolCallId, code, messages);
    let answer;
    if (run !== undefined) {
      answer = await this.#current(run.id);
    } else {
      answer = await this.#begin(code, toolCallId, options);
      run = { id: answer.executionId };
    }
    if (answer.status !== 'paused') return false;
    const bound = await this.#bound(run, answer);
    if (!answer.pending.some((p) => p.seq === bound)) return false; // moved on: execute says where it is
    remember(this.#state.asked, toolCallId, { id: run.id, bound, descriptor: this.#describe(answer) });
    return true;
  }

  /**
   * The code tool's execute: continues the call's run when the SDK approved it and the action
   * it was asked for still waits; begins it when needsApproval was not asked (an AI SDK 7
   * `toolApproval` setting decides for the tool), or the run it began is gone (an in-memory
   * runtime after a restart: the program runs again from its start, and pauses before anything
   * that needs approval). Answers the run as it then stands, with `actions` when paused.
   */
  async execute(input, options = {}) {
    const { toolCallId, messages } = options;
    const code = codeOf(input);
    if (code === undefined) return { status: 'error', executionId: '', error: 'Expected an object with a string code property' };
    await this.#settleDeclined(messages);
    const run = await this.#find(toolCallId, code, messages);
    let answer;
    if (run === undefined) {
      const response = responseFor(messages, toolCallId);
      if (response && response.approved === true && this.#onLost !== undefined) this.#onLost(toolCallId);
      answer = await this.#begin(code, toolCallId, options);
    } else {
      answer = await this.#current(run.id);
      const response = responseFor(messages, toolCallId);
      if (answer.status === 'paused' && response && response.approved === true) {
        const bound = await this.#bound(run, answer);
        if (answer.pending.some((p) => p.seq === bound)) {
          const seqs = answer.pending.map((p) => p.seq);
          // All that waits (more than one when calls paused together): what the request showed.
          answer = await this.#state.calls.during('id', run.id, options, () => this.#runtime.approve({ executionId: run.id, seq: seqs.length === 1 ? seqs[0] : undefined }));
          if (answer.status === 'error') {
            // A refusal (another process moved the run first) leaves the run as it was.
            const now = await this.#current(run.id);
            if (now.status !== 'error') answer = now;
          }
        }
      }
    }
    if (answer.status === 'paused') {
      const pending = Array.isArray(answer.pending) ? answer.pending : await this.#runtime.pending(answer.executionId);
      answer = { ...answer, pending, actions: pending.map((p) => actionOf(p, this.#display)) };
      answer.message = pausedMessage(answer.actions);
    }
    return answer;
  }

  /**
   * `{ executionId, actions: [{ kind: 'call', seq, tool, input, inDoubt? } | { kind: 'program',
   * seq, code }] }`: what the approval request of the call is for, or undefined when the call
   * asked for none (or is not this tool's).
   */
  async approvalDescriptor(toolCallId) {
    const known = this.#state.asked.get(toolCallId);
    if (known !== undefined) return known.descriptor;
    const run = await this.#find(toolCallId, undefined, []);
    if (run === undefined) return undefined;
    const answer = await this.#current(run.id);
    if (answer.status !== 'paused') return undefined;
    const bound = await this.#bound(run, answer);
    return answer.pending.some((p) => p.seq === bound) ? this.#describe(answer) : undefined;
  }

  /** Ends the run awaiting the call's approval as rejected; false when none awaits it. */
  async decline(toolCallId, code, messages) {
    const run = await this.#find(toolCallId, code, messages);
    if (run === undefined) return false;
    const answer = await this.#current(run.id);
    if (answer.status !== 'paused') return false;
    const bound = await this.#bound(run, answer);
    if (!answer.pending.some((p) => p.seq === bound)) return false;
    return this.#runtime.reject({ executionId: run.id, seq: bound });
  }

  // Rejects the runs whose approval the conversation declined (the SDK tells no tool).
  async #settleDeclined(messages) {
    const requests = new Map();
    for (const p of contentParts(messages, 'assistant')) {
      if (p && p.type === 'tool-approval-request') requests.set(p.approvalId, p.toolCallId);
    }
    if (requests.size === 0) return;
    const calls = new Map();
    for (const p of contentParts(messages, 'assistant')) {
      if (p && p.type === 'tool-call') calls.set(p.toolCallId, p);
    }
    for (const response of contentParts(messages, 'tool')) {
      if (!response || response.type !== 'tool-approval-response' || response.approved !== false) continue;
      if (this.#state.settled.has(response.approvalId)) continue;
      const toolCallId = requests.get(response.approvalId);
      const call = calls.get(toolCallId);
      const code = call && codeOf(call.input);
      if (code === undefined || responseFor(messages, toolCallId) !== response) continue;
      try {
        await this.decline(toolCallId, code, messages);
        remember(this.#state.settled, response.approvalId);
      } catch (error) {
        console.error(`codemode: could not reject the run declined by approval ${response.approvalId}: ${messageOf(error)}`);
      }
    }
  }
}

module.exports = { AiSdkApprovals, ApprovalState, pausedMessage, codeOf };
