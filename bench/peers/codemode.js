'use strict';
// Our executor, @supolka/codemode-executor from this checkout (require of the repository root):
// a fresh V8 isolate per execution, as it always does. Two forms:
// - native (the fast path): execute({ code, providers, dispatch }) with tool calls as JSON text;
// - cloudflare: execute(code, [{ name, fns }]), the DynamicWorkerExecutor drop-in, whose tool
//   values go through the Cloudflare transport codec.
// `isolation` ('thread' | 'process') is passed only when the build has that option; see
// probeIsolation().
//
// Run as `node peers/codemode.js --probe`, it prints what the build supports as JSON, so the
// orchestrator can decide which variants to run without loading the addon itself.

const path = require('node:path');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { dispatchJson, hostTools, TOOL_NAMES } = require('../workloads.js');

const ROOT = path.resolve(__dirname, '..', '..');

// The addon may be rebuilt under us (it is replaced on disk); a load that fails while the file
// is being written is retried a few times before giving up. `root`: the checkout to load (its
// package.json, lib/ and built addon), this one by default.
function loadPackage(root = ROOT) {
  let lastError;
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      return require(root);
    } catch (error) {
      lastError = error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
    }
  }
  throw lastError;
}

// The `isolation` option exists when an invalid value is refused with ERR_INVALID_ARGUMENT
// (an unknown option is silently ignored by builds without it) and a valid one is accepted.
function probeIsolation() {
  const { IsolateExecutor } = loadPackage();
  try {
    new IsolateExecutor({ isolation: 'no-such-mode', workers: 1 }).dispose();
    return { isolation: false, reason: 'this build ignores the isolation option (an invalid value is not refused)' };
  } catch (error) {
    if (error.code !== 'ERR_INVALID_ARGUMENT') throw error;
  }
  for (const mode of ['thread', 'process']) {
    try {
      new IsolateExecutor({ isolation: mode, workers: 1 }).dispose();
    } catch (error) {
      if (error.code === 'ERR_INVALID_ARGUMENT') return { isolation: false, reason: `isolation: '${mode}' refused: ${error.message}` };
      throw error;
    }
  }
  return { isolation: true };
}

function describeBuild() {
  const version = require(path.join(ROOT, 'package.json')).version;
  let commit = 'unknown';
  let dirty = '';
  try {
    // The last commit that changed the executor itself, not whatever HEAD is (bench commits).
    commit = execFileSync('git', ['-C', ROOT, 'log', '-1', '--format=%h', '--', 'src', 'lib', 'Cargo.toml'], { encoding: 'utf8' }).trim();
    const changes = execFileSync('git', ['--no-optional-locks', '-C', ROOT, 'status', '--porcelain', '--', 'src', 'lib'], { encoding: 'utf8' }).trim();
    if (changes) dirty = ' + uncommitted changes in src/ or lib/';
  } catch {}
  const addon = path.join(ROOT, 'codemode-executor.linux-x64-gnu.node');
  let built = '';
  try {
    built = `, addon built ${fs.statSync(addon).mtime.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  } catch {}
  return `@supolka/codemode-executor ${version} (commit ${commit}${dirty}${built})`;
}

const PROVIDERS = [{ name: 'tools', tools: TOOL_NAMES }];
const CLOUDFLARE_PROVIDERS = [{ name: 'tools', fns: hostTools }];
const dispatch = (provider, tool, argsJson) => dispatchJson(tool, argsJson);

function unwrap(out) {
  if (out.error !== undefined) throw new Error(out.error);
  return out.result;
}

// options: { isolation?: 'thread' | 'process', form?: 'native' | 'cloudflare', workers?, root? }
async function create(options = {}) {
  const { IsolateExecutor } = loadPackage(options.root);
  const executorOptions = {};
  if (options.isolation !== undefined) executorOptions.isolation = options.isolation;
  if (options.workers !== undefined) executorOptions.workers = options.workers;
  const executor = new IsolateExecutor(executorOptions);
  const cloudflare = options.form === 'cloudflare';
  // The mode actually in force (the default can come from CODEMODE_EXECUTOR_ISOLATION); builds
  // without the option have only the in-process thread pool.
  const isolation = executor.bounds.isolation || 'thread pool; build without the isolation option';
  return {
    label: `codemode (${isolation}${cloudflare ? ', Cloudflare form' : ''})`,
    version: describeBuild(),
    notes: `isolation: ${isolation}${options.isolation === undefined ? ' (the default)' : ''}, workers: ${executor.bounds.workers}; ${cloudflare
      ? 'Cloudflare form execute(code, [{ name, fns }])'
      : 'native form execute({ code, providers, dispatch }), tool calls as JSON text'}`,
    executor,
    execute: cloudflare
      ? (code) => executor.execute(code, CLOUDFLARE_PROVIDERS).then(unwrap)
      : (code) => executor.execute({ code, providers: PROVIDERS, dispatch }).then(unwrap),
    // Keeps every worker busy at once (two 200 ms runs per worker), so each has made an isolate
    // before the idle-memory reading; returns the pool's counters as evidence.
    async saturate() {
      const code = 'async () => { await new Promise((resolve) => setTimeout(resolve, 200)); return 1; }';
      await Promise.all(Array.from({ length: executor.bounds.workers * 2 }, () => executor.execute({ code })));
      return executor.stats();
    },
    dispose: () => executor.dispose(),
  };
}

if (require.main === module && process.argv[2] === '--probe') {
  process.stdout.write(JSON.stringify({ ...probeIsolation(), version: describeBuild() }));
  process.exit(0); // the probe's executors hold no runs; do not wait for their threads
}

module.exports = { create, probeIsolation, describeBuild };
