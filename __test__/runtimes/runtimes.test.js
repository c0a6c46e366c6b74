'use strict';
// The package on the other runtimes users pick: Bun and Deno run the first execution in both
// arrangements (in 'process' isolation the engine is started by that same runtime). The
// runtimes are the pinned official binaries of .ci/runtimes (npm run test:runtimes installs
// them); this file is run only when asked for, and fails when a binary is missing.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const RUNTIMES = path.join(__dirname, '..', '..', '.ci', 'runtimes', 'node_modules');
const SMOKE = path.join(__dirname, 'smoke.cjs');

function smoke(binary, args) {
  assert.ok(fs.existsSync(binary), `${binary} is not installed (npm run test:runtimes installs it)`);
  const result = spawnSync(binary, [...args, SMOKE], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, CODEMODE_EXECUTOR_ISOLATION: '' } });
  assert.equal(result.status, 0, `${path.basename(binary)} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop());
}

const EXPECTED = {
  thread: { result: { n: 42, typeofProcess: 'undefined' }, cloudflare: 42, engines: 0 },
  process: { result: { n: 42, typeofProcess: 'undefined' }, cloudflare: 42, engines: 1 },
};

test('Bun runs the first execution in both arrangements', () => {
  assert.deepEqual(smoke(path.join(RUNTIMES, '@oven', 'bun-linux-x64', 'bin', 'bun'), []), EXPECTED);
});

test('Deno runs the first execution in both arrangements', () => {
  assert.deepEqual(smoke(path.join(RUNTIMES, '@deno', 'linux-x64-glibc', 'deno'), ['run', '-A']), EXPECTED);
});
