#!/usr/bin/env node
'use strict';
// `npm run test:runtimes` (CI runs it after `npm test`): the package on the runtimes users run
// besides this machine's Node, all pinned official binaries from .ci/runtimes (installed here
// from the npm registry when missing):
// - Node 24 (active LTS): the whole JS suite;
// - Node 22 and 26: the install test and the V8-in-Node test;
// - Bun and Deno: the first execution in both arrangements (__test__/runtimes).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const runtimes = path.join(root, '.ci', 'runtimes');
const modules = path.join(runtimes, 'node_modules');
const node = (major) => path.join(modules, `node${major}`, 'bin', 'node');

function run(command, args, label) {
  console.log(`\n=== ${label} ===`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  return result.status === 0;
}

if (!fs.existsSync(node(24))) {
  const ok = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', runtimes], 'installing the pinned runtimes (.ci/runtimes)');
  if (!ok) process.exit(1);
}

const version = (binary) => spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
const suite = ['executor', 'adversarial', 'runtime', 'process', 'compat', 'install'].map((f) => path.join('__test__', f));
const smoke = [path.join('__test__', 'install', 'install.test.js'), path.join('__test__', 'executor', 'v8-in-node.test.js')];
let failed = false;
if (!run(node(24), [path.join(__dirname, 'test.js'), ...suite], `whole JS suite on Node ${version(node(24))}`)) failed = true;
for (const major of [22, 26]) {
  if (!run(node(major), ['--test', '--test-concurrency=1', ...smoke], `install and V8-in-Node tests on Node ${version(node(major))}`)) failed = true;
}
if (!run(process.execPath, ['--test', path.join('__test__', 'runtimes', 'runtimes.test.js')], 'Bun and Deno')) failed = true;
process.exit(failed ? 1 : 0);
