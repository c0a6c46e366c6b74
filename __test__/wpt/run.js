'use strict';
// Runs the vendored web-platform-tests files (files/, see LICENSE.md) with the shim (shim.js):
// inside the sandbox, through IsolateExecutor in 'thread' or 'process' isolation, and in plain
// Node (a child process of the running `node`), counting passed subtests per file.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { IsolateExecutor } = require('../helpers.js');
const { SHIM } = require('./shim.js');

// WPT_DIR names another tree laid out as the WPT repository (a checkout of it), so that a file can
// be measured before it is vendored: `WPT_DIR=~/wpt node __test__/wpt/table.js <path> ...`.
const FILES_DIR = process.env.WPT_DIR ? path.resolve(process.env.WPT_DIR) : path.join(__dirname, 'files');

// The vendored files, by area; each path is its path in the WPT repository.
const AREAS = {
  encoding: [
    'encoding/textdecoder-copy.any.js',
    'encoding/textdecoder-eof.any.js',
    'encoding/textdecoder-streaming.any.js',
  ],
  url: [
    'url/urlsearchparams-append.any.js',
    'url/urlsearchparams-delete.any.js',
    'url/urlsearchparams-has.any.js',
    'url/urlsearchparams-size.any.js',
    'url/urlsearchparams-sort.any.js',
    'url/url-statics-canparse.any.js',
    'url/url-tojson.any.js',
  ],
  FileAPI: ['FileAPI/blob/Blob-text.any.js'],
  streams: ['streams/readable-streams/floating-point-total-queue-size.any.js'],
  WebCryptoAPI: ['WebCryptoAPI/digest/digest.https.any.js'],
};
const FILES = Object.values(AREAS).flat();

// How long a file's subtests may take before the unfinished ones count as TIMEOUT.
const SUBTEST_WAIT_MS = 5000;

// The `// META: script=` files of `file` that are vendored here, in order (a helper a file
// names but does not use is not vendored, e.g. encoding/resources/encodings.js).
function metaScripts(file, source) {
  const out = [];
  for (const match of source.matchAll(/^\/\/ META: script=(\S+)$/gm)) {
    const ref = match[1];
    const rel = ref.startsWith('/') ? ref.slice(1) : path.posix.join(path.posix.dirname(file), ref);
    const full = path.join(FILES_DIR, rel);
    if (fs.existsSync(full)) out.push(fs.readFileSync(full, 'utf8'));
  }
  return out;
}

// The sandbox has no WebAssembly (docs/threat-model.md), which common/sab.js uses only to reach
// the SharedArrayBuffer constructor; where WebAssembly is absent, createBuffer takes the global
// SharedArrayBuffer instead (in Node, which has WebAssembly, this changes nothing).
const SAB_FALLBACK = `if (typeof WebAssembly === 'undefined' && typeof createBuffer === 'function') {
  const viaWasm = createBuffer;
  globalThis.createBuffer = (type, length, opts) =>
    type === 'SharedArrayBuffer' ? new SharedArrayBuffer(length, opts) : viaWasm(type, length, opts);
}`;

// The program (an async function's text) that runs one WPT file and returns
// { results, harnessError }. The META scripts run in the function's own scope, as a page's
// classic scripts share one global scope: the file sees the functions and bindings they declare.
function program(file) {
  const source = fs.readFileSync(path.join(FILES_DIR, file), 'utf8');
  const scripts = metaScripts(file, source);
  return `async () => {
${SHIM}
let harnessError = null;
try {
${scripts.join('\n;\n')}
${SAB_FALLBACK}
(function () {
${source}
})();
} catch (error) {
  harnessError = String(error && error.stack || error);
}
const results = await __wptResults(${SUBTEST_WAIT_MS});
return { results, harnessError };
}`;
}

function summarize(file, out) {
  const results = out.results || [];
  return {
    file,
    total: results.length,
    passed: results.filter((r) => r.status === 'PASS').length,
    failures: results.filter((r) => r.status !== 'PASS').map((r) => `${r.name}: ${r.status} ${r.message || ''}`.trim()),
    error: out.error || out.harnessError || undefined,
  };
}

async function runInSandbox(executor, file) {
  const out = await executor.execute({ code: program(file), timeout: SUBTEST_WAIT_MS * 4 });
  if (out.error) return summarize(file, { error: out.error });
  return summarize(file, out.result);
}

function runInNode(file) {
  const runner = `let code = '';
process.stdin.on('data', (d) => { code += d; });
process.stdin.on('end', () => {
  const fn = new Function('return (' + code + ')')();
  // Exits once the results are written: a file may leave a handle open (a MessagePort), which
  // would keep the process alive.
  fn().then((r) => process.stdout.write(JSON.stringify(r), () => process.exit(0)), (e) => { console.error(e); process.exit(3); });
});`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', runner], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', () => {
      try {
        resolve(summarize(file, JSON.parse(stdout)));
      } catch {
        resolve(summarize(file, { error: `node: ${stderr.slice(-2000)}` }));
      }
    });
    child.stdin.end(program(file));
  });
}

// Runs every file in Node and in the sandbox under each isolation in `isolations`; resolves
// { node: [summary], thread: [summary], process: [summary] } (summaries in FILES order).
async function runAll({ files = FILES, isolations = ['thread', 'process'] } = {}) {
  const out = { node: [] };
  for (const file of files) out.node.push(await runInNode(file));
  for (const isolation of isolations) {
    // A file's CPU may match its wall time (WebCryptoAPI's RSA generateKey files make about 150
    // keys), so the CPU budget is the run's timeout rather than the default 10 s.
    const executor = new IsolateExecutor({ workers: 1, isolation, cpuTimeMs: SUBTEST_WAIT_MS * 4 });
    try {
      out[isolation] = [];
      for (const file of files) out[isolation].push(await runInSandbox(executor, file));
    } finally {
      await executor.dispose();
    }
  }
  return out;
}

module.exports = { AREAS, FILES, program, runAll, runInNode, runInSandbox };
