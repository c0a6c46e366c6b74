'use strict';
// runCode (docs/cloudflare-compat.md §5): normalize, execute, and turn an error into a thrown Error whose text the
// model reads next ("Code execution failed: ..." plus the console output).
const { normalizeCode, READS_PROGRAMS } = require('./normalize.js');
const { unwrapProgram } = require('../program-text.js');
const { RUN_SECRETS } = require('./execute.js');

// `signal` (not in Cloudflare's runCode) is passed on to the executor, which cancels the run
// when it aborts (an executor that knows no `signal` option ignores it).
// `replay` (not in Cloudflare's runCode either): the durable runtime's time and randomness that
// repeat on every pass of a run (this package's executor only).
// `onSecrets` (not in Cloudflare's runCode either): told the run's secrets, so the durable
// runtime redacts their values from what it records (this package's executor only).
async function runCode({ code, executor, providers, connectors, signal, replay, onSecrets }) {
  let options;
  if (connectors && connectors.length) options = { connectors };
  if (signal !== undefined && signal !== null) options = { ...options, signal };
  if (replay !== undefined) options = { ...options, replay };
  if (onSecrets !== undefined) options = { ...options, [RUN_SECRETS]: onSecrets };
  // Prose around a fence and a trailing `;` are taken off first (not in Cloudflare's runCode).
  const text = unwrapProgram(code);
  const program = executor[READS_PROGRAMS] === true ? text : normalizeCode(text);
  const out = await executor.execute(program, providers, options);
  const logs = out.logs || [];
  if (out.error) {
    const context = logs.length ? `\n\nConsole output:\n${logs.join('\n')}` : '';
    throw new Error(`Code execution failed: ${out.error}${context}`);
  }
  return logs.length ? { result: out.result, logs } : { result: out.result };
}

module.exports = { runCode };
