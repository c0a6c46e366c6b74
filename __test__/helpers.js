'use strict';
// Shared helpers for the test files.
const { spawn } = require('node:child_process');
const path = require('node:path');

const LIB = path.join(__dirname, '..', 'lib', 'index.js');
const { IsolateExecutor } = require(LIB);

// A dispatch function backed by a table of host functions: tools[provider][tool](...args).
function tableDispatch(table) {
  return async (provider, tool, argsJson) => {
    const fn = table[provider] && table[provider][tool];
    if (typeof fn !== 'function') return JSON.stringify({ error: `no host function ${provider}.${tool}` });
    try {
      return JSON.stringify({ result: await fn(...JSON.parse(argsJson)) });
    } catch (error) {
      return JSON.stringify({ error: error.message });
    }
  };
}

// Runs `source` (a script body that may use `lib`, the library, and `report(value)`) in a
// child Node process; resolves { code, signal, report, stderr }.
function runChild(source, { timeoutMs = 60_000, env = {} } = {}) {
  const prelude = `const lib = require(${JSON.stringify(LIB)});\n` +
    `const report = (v) => process.stdout.write('REPORT ' + JSON.stringify(v) + '\\n');\n`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', prelude + `(async () => {\n${source}\n})().catch((e) => { console.error(e); process.exit(3); });`], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').reverse().find((l) => l.startsWith('REPORT '));
      resolve({ code, signal, report: line ? JSON.parse(line.slice(7)) : undefined, stderr: stderr.slice(-4000) });
    });
  });
}

module.exports = { IsolateExecutor, LIB, tableDispatch, runChild };
