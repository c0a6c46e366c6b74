'use strict';
// `@supolka/codemode-executor/tanstack`: this engine as an isolate driver for TanStack AI's code
// mode (`@tanstack/ai-code-mode`'s `IsolateDriver`: `createContext({ bindings, timeout,
// memoryLimit })` → `{ execute(code), dispose() }`), in place of `@tanstack/ai-isolate-node`
// (isolated-vm). Nothing here loads TanStack: the contract is plain objects.
//
// How a context runs a program: `code` is the body of an async function (what the code-mode
// tool hands a driver, its TypeScript already stripped); each binding (`external_<tool>`,
// `skill_<name>`) is a function in scope taking one input object, calling the binding's
// `execute` on the host (lib/external-functions.js). Each `execute` is a fresh run of the
// executor (its own isolate, its timeout and memory bound the context's), so globals do not
// carry from one `execute` of a context to the next as they do in isolated-vm's one context;
// the code-mode tool makes a context per program, where that never shows.

const { invalidArgument } = require('../errors.js');
const { messageOf, isObject } = require('../util.js');
const { IDENTIFIER, programCalling, providersFor, answerCall, errorName } = require('../external-functions.js');

// Console lines as the isolated-vm driver gives them: `ERROR: `, `WARN: ` before the text.
function tanstackLog(line) {
  if (line.startsWith('[error] ')) return `ERROR: ${line.slice(8)}`;
  if (line.startsWith('[warn] ')) return `WARN: ${line.slice(7)}`;
  return line;
}

function checkBindings(bindings) {
  if (!isObject(bindings)) throw invalidArgument('createContext: config.bindings must be an object of tool bindings');
  const table = new Map();
  for (const [name, binding] of Object.entries(bindings)) {
    if (!IDENTIFIER.test(name)) throw invalidArgument(`createContext: binding name ${JSON.stringify(name)} is not a JavaScript identifier`);
    if (!isObject(binding) || typeof binding.execute !== 'function') throw invalidArgument(`createContext: binding ${name} has no execute function`);
    table.set(name, binding);
  }
  return table;
}

function checkPositive(label, value) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value > 0)) throw invalidArgument(`${label} must be a positive number (got ${String(value)})`);
  return value;
}

/**
 * A TanStack AI isolate driver over `executor` (an IsolateExecutor): `createIsolateDriver({
 * executor, timeout?, memoryLimit? })`, given to `createCodeModeTool({ driver, tools })` or
 * `createCodeMode`. `timeout` (ms) and `memoryLimit` (MB) are the defaults a context gets when
 * its config names none; without either, the executor's own bounds apply.
 */
function createIsolateDriver({ executor, timeout, memoryLimit } = {}) {
  if (!executor || typeof executor.execute !== 'function') throw invalidArgument('createIsolateDriver: executor must be an IsolateExecutor');
  const defaults = { timeout: checkPositive('createIsolateDriver: timeout', timeout), memoryLimit: checkPositive('createIsolateDriver: memoryLimit', memoryLimit) };
  return {
    async createContext(config = {}) {
      const table = checkBindings(config.bindings ?? {});
      const runTimeout = checkPositive('createContext: config.timeout', config.timeout) ?? defaults.timeout;
      const runMemory = checkPositive('createContext: config.memoryLimit', config.memoryLimit) ?? defaults.memoryLimit;
      const names = [...table.keys()];
      let disposed = false;
      return {
        async execute(code) {
          if (disposed) return { success: false, error: { name: 'DisposedError', message: 'Context has been disposed' }, logs: [] };
          if (typeof code !== 'string') return { success: false, error: { name: 'TypeError', message: 'code must be a string' }, logs: [] };
          let report;
          try {
            report = await executor.execute({
              code: programCalling(code, names),
              providers: providersFor(names),
              dispatch: (_provider, tool, argsJson) => answerCall((input) => table.get(tool).execute(input), argsJson),
              ...(runTimeout === undefined ? {} : { timeout: runTimeout }),
              ...(runMemory === undefined ? {} : { memoryLimitMb: runMemory }),
            });
          } catch (error) {
            // The executor refused the run (disposed, its queue full): no program ran.
            const why = error && typeof error.code === 'string' ? { code: error.code } : {};
            return { success: false, error: { name: 'ExecutorError', message: messageOf(error), ...why }, logs: [] };
          }
          const logs = report.logs.map(tanstackLog);
          if (report.error === undefined) return { success: true, value: report.result, logs };
          const name = errorName(report);
          const why = report.errorKind === 'bound' ? report.errorBound : report.errorKind;
          return { success: false, error: { name, message: report.error, ...(why === undefined ? {} : { code: why }) }, logs };
        },
        async dispose() {
          disposed = true;
        },
      };
    },
  };
}

module.exports = { createIsolateDriver };
