#!/usr/bin/env node
'use strict';
// `npm test`: the JS suite once per isolation mode ('process', the default, then 'thread'),
// then the Rust unit tests. Extra arguments narrow the JS run (e.g. `npm test -- __test__/x.js`).
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const targets = process.argv.slice(2);
const files = targets.length > 0 ? targets : ['__test__/'];

function run(command, args, env) {
  const result = spawnSync(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: 'inherit' });
  return result.status === null ? 1 : result.status;
}

let failed = false;
for (const isolation of ['process', 'thread']) {
  console.log(`\n=== JS tests, isolation: '${isolation}' ===`);
  const status = run(process.execPath, ['--test', '--test-concurrency=1', ...files], { CODEMODE_EXECUTOR_ISOLATION: isolation });
  if (status !== 0) failed = true;
}
if (targets.length === 0) {
  console.log('\n=== Rust unit tests ===');
  if (run(process.execPath, [path.join(__dirname, 'cargo.js'), 'test', '--release', '--lib'], {}) !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
