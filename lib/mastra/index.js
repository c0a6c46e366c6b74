'use strict';
// `@supolka/codemode-executor/mastra`: this engine as a Mastra Code Mode transport
// (`@mastra/core/tools`' `CodeModeTransport`: `run({ program, toolIds, dispatch, timeout,
// abortSignal, onExternalCall, onExternalResult })` → `{ success, result?, logs?, error? }`), for
// `createCodeMode({ tools }, transport)`. Its programs run in the executor's isolates, so no
// workspace sandbox is needed (`requiresSandbox: false`), as with Mastra's in-process
// transports. Nothing here loads Mastra: the contract is plain objects.
//
// Each tool id is the function `external_<id>` (the id with every character that cannot be in
// an identifier made `_`, as Mastra's stubs name it) in the program's scope, calling Mastra's
// `dispatch` on the host (lib/external-functions.js); each `run` is a fresh run of the
// executor, `timeout` its time bound, `abortSignal` its cancellation.

const { invalidArgument } = require('../errors.js');
const { messageOf } = require('../util.js');
const { IDENTIFIER, programCalling, providersFor, answerCall, errorName, errorLine } = require('../external-functions.js');

// The name Mastra's stubs give a tool id (after `external_`).
function externalName(toolId) {
  const cleaned = String(toolId).replace(/[^A-Za-z0-9_$]/g, '_');
  return IDENTIFIER.test(cleaned) ? cleaned : `_${cleaned}`;
}

// A console line as Mastra's transports keep it: the message alone.
function mastraLog(line) {
  if (line.startsWith('[error] ')) return line.slice(8);
  if (line.startsWith('[warn] ')) return line.slice(7);
  return line;
}

// Calls a tracing hook; what it throws is ignored, as Mastra's own transport does.
function notify(hook, ...args) {
  if (typeof hook !== 'function') return;
  try {
    hook(...args);
  } catch {
    // A hook's failure is not the program's.
  }
}

/**
 * A Mastra Code Mode transport over `executor` (an IsolateExecutor): `new
 * IsolateCodeModeTransport({ executor, memoryLimitMb? })`, given to `createCodeMode({ tools },
 * transport)`. `memoryLimitMb` bounds each program's heap (default the executor's).
 */
class IsolateCodeModeTransport {
  #executor;
  #memoryLimitMb;

  constructor({ executor, memoryLimitMb } = {}) {
    if (!executor || typeof executor.execute !== 'function') throw invalidArgument('IsolateCodeModeTransport: executor must be an IsolateExecutor');
    if (memoryLimitMb !== undefined && (typeof memoryLimitMb !== 'number' || !(memoryLimitMb > 0))) {
      throw invalidArgument(`IsolateCodeModeTransport: memoryLimitMb must be a positive number (got ${String(memoryLimitMb)})`);
    }
    this.#executor = executor;
    this.#memoryLimitMb = memoryLimitMb;
  }

  /** Programs run in the executor's isolates: no workspace sandbox is needed. */
  get requiresSandbox() {
    return false;
  }

  async run({ program, toolIds, dispatch, timeout, abortSignal, onExternalCall, onExternalResult }) {
    if (typeof program !== 'string') return { success: false, logs: [], error: { message: 'program must be a string', name: 'TypeError' } };
    const tools = new Map((toolIds || []).map((id) => [`external_${externalName(id)}`, id]));
    const call = async (name, input) => {
      const toolId = tools.get(name);
      const started = Date.now();
      notify(onExternalCall, toolId, input);
      try {
        const value = await dispatch(toolId, input);
        notify(onExternalResult, toolId, Date.now() - started);
        return value;
      } catch (error) {
        notify(onExternalResult, toolId, Date.now() - started, error);
        throw error;
      }
    };
    const names = [...tools.keys()];
    let report;
    try {
      report = await this.#executor.execute({
        code: programCalling(program, names),
        providers: providersFor(names),
        dispatch: (_provider, name, argsJson) => answerCall((input) => call(name, input), argsJson),
        ...(typeof timeout === 'number' && timeout > 0 ? { timeout } : {}),
        ...(this.#memoryLimitMb === undefined ? {} : { memoryLimitMb: this.#memoryLimitMb }),
        ...(abortSignal ? { signal: abortSignal } : {}),
      });
    } catch (error) {
      // Cancelled through abortSignal, or refused by the executor (disposed, its queue full).
      const name = abortSignal && abortSignal.aborted ? 'AbortError' : 'ExecutorError';
      return { success: false, logs: [], error: { message: messageOf(error), name } };
    }
    const logs = report.logs.map(mastraLog);
    if (report.error === undefined) return { success: true, result: report.result, logs };
    const line = errorLine(report.error);
    return { success: false, logs, error: { message: report.error, name: errorName(report), ...(line === undefined ? {} : { line }) } };
  }
}

module.exports = { IsolateCodeModeTransport };
