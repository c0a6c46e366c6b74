#!/usr/bin/env node
'use strict';
// `npm run verify`: the hostile suite alone (__test__/adversarial: programs that attack each
// bound from inside the isolate, judged on what the host observed), in both isolation modes,
// with one summary line per class of attack. The command to run after changing limits or
// upgrading this package (and with it V8). See docs/threat-model.md.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const dir = path.join(root, '__test__', 'adversarial');
const classes = fs.readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort();
const modes = process.argv.includes('--thread-only') ? ['thread'] : ['process', 'thread'];

let passed = 0;
let failed = 0;
const lines = [];
for (const isolation of modes) {
  for (const file of classes) {
    const started = Date.now();
    const result = spawnSync(process.execPath, ['--test', '--test-reporter=tap', '--test-concurrency=1', path.join(dir, file)], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CODEMODE_EXECUTOR_ISOLATION: isolation },
      maxBuffer: 64 * 1024 * 1024,
    });
    const top = result.stdout.split('\n').filter((l) => /^(not )?ok \d+ - /.test(l));
    const bad = top.filter((l) => l.startsWith('not ok'));
    const good = top.length - bad.length;
    passed += good;
    failed += bad.length + (result.status !== 0 && bad.length === 0 ? 1 : 0);
    const name = file.replace(/\.test\.js$/, '');
    const status = bad.length === 0 && result.status === 0 ? 'ok' : 'FAILED';
    lines.push(`${isolation.padEnd(7)} ${name.padEnd(12)} ${String(good).padStart(3)}/${top.length} ${status} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    console.log(lines[lines.length - 1]);
    for (const l of bad) console.log(`        ${l}`);
    if (status === 'FAILED' && bad.length === 0) console.log(result.stdout.slice(-2000), result.stderr.slice(-2000));
  }
}
console.log(`verify: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
