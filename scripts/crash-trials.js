#!/usr/bin/env node
'use strict';
// `npm run test:crash -- --trials N [--isolation thread|process]`: the crash-safety test of the
// durable runtime (__test__/runtime/crash.test.js) with N trials instead of the suite's 30.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : args[i + 1];
};
const trials = Number(option('trials', 200));
if (!Number.isInteger(trials) || trials < 1) {
  console.error('--trials must be a positive integer');
  process.exit(2);
}
const isolation = option('isolation', 'process');
const file = path.join(__dirname, '..', '__test__', 'runtime', 'crash.test.js');
const result = spawnSync(process.execPath, ['--test', file], {
  stdio: 'inherit',
  env: { ...process.env, CODEMODE_CRASH_TRIALS: String(trials), CODEMODE_EXECUTOR_ISOLATION: isolation },
});
process.exit(result.status === null ? 1 : result.status);
