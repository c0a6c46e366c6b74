'use strict';
// runCode (docs/cloudflare-compat.md §5): normalize, execute, and turn an error into a thrown Error whose text the
// model reads next ("Code execution failed: ..." plus the console output).
const { normalizeCode } = require('./normalize.js');

async function runCode({ code, executor, providers, connectors }) {
  const options = connectors && connectors.length ? { connectors } : undefined;
  const out = await executor.execute(normalizeCode(code), providers, options);
  const logs = out.logs || [];
  if (out.error) {
    const context = logs.length ? `\n\nConsole output:\n${logs.join('\n')}` : '';
    throw new Error(`Code execution failed: ${out.error}${context}`);
  }
  return logs.length ? { result: out.result, logs } : { result: out.result };
}

module.exports = { runCode };
