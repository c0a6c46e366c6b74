#!/usr/bin/env node
'use strict';
// `npm test`: the JS suite, then the Rust unit tests.
// - __test__/executor, adversarial, runtime: once per isolation mode ('process', the default,
//   then 'thread'), since what they check must hold in both arrangements;
// - __test__/process (forces 'process' or drives the engine itself), __test__/compat (no
//   executor at all), __test__/install (the packed package, installed elsewhere) and
//   __test__/docs (the documentation's samples and links): once;
// - __test__/runtime again, and __test__/postgres, over PostgreSQL (CODEMODE_TEST_STORE=postgres),
//   and the Rust unit tests with CODEMODE_PG_URL: the server CODEMODE_PG_URL names, or a
//   throwaway cluster started here (scripts/postgres.js). Where neither can be had the pass is
//   skipped with a loud line, and CODEMODE_REQUIRE_POSTGRES=1 (CI sets it) makes that a failure.
// Test files are listed here and passed by name: newer Nodes read a directory argument as a file
// or a glob, older ones do not expand globs, but every Node takes file names.
// Extra arguments narrow the JS run to those files or folders (e.g. `npm test -- __test__/compat`).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { startPostgres } = require('./postgres.js');

const root = path.join(__dirname, '..');
const BOTH_MODES = ['executor', 'adversarial', 'runtime'];
const ONCE = ['process', 'compat', 'install', 'docs'];
// Run once more over PostgreSQL (only then, for postgres/).
const ON_POSTGRES = ['runtime', 'postgres'];

function testFiles(target) {
  const full = path.resolve(root, target);
  if (fs.statSync(full).isFile()) return [path.relative(root, full)];
  return fs.readdirSync(full, { withFileTypes: true })
    .flatMap((entry) => {
      const child = path.join(target, entry.name);
      if (entry.isDirectory()) return testFiles(child);
      return entry.name.endsWith('.test.js') ? [path.relative(root, path.resolve(root, child))] : [];
    })
    .sort();
}

function run(command, args, env) {
  const result = spawnSync(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: 'inherit' });
  return result.status === null ? 1 : result.status;
}

function nodeTest(files, env) {
  if (files.length === 0) return 0;
  return run(process.execPath, ['--test', '--test-concurrency=1', ...files], env);
}

// __test__/runtimes needs the other runtimes' binaries: only `npm run test:runtimes` runs it.
const ON_REQUEST = ['runtimes'];

const targets = process.argv.slice(2);
const inFolder = (file, folders) => folders.some((f) => file.startsWith(path.join('__test__', f) + path.sep));
const selected = (targets.length > 0 ? targets : ['__test__']).flatMap(testFiles)
  .filter((f) => targets.length > 0 || !inFolder(f, ON_REQUEST));
const twice = selected.filter((f) => !inFolder(f, [...ONCE, 'postgres']));
const once = selected.filter((f) => inFolder(f, ONCE));
const onPostgres = selected.filter((f) => inFolder(f, ON_POSTGRES));
for (const f of twice) {
  if (!inFolder(f, [...BOTH_MODES, ...ON_REQUEST])) throw new Error(`${f} is in no test folder scripts/test.js knows`);
}

async function main() {
  let failed = false;
  for (const isolation of ['process', 'thread']) {
    if (twice.length === 0) break;
    console.log(`\n=== JS tests, isolation: '${isolation}' (${BOTH_MODES.join(', ')}) ===`);
    if (nodeTest(twice, { CODEMODE_EXECUTOR_ISOLATION: isolation }) !== 0) failed = true;
  }
  if (once.length > 0) {
    console.log(`\n=== JS tests, once (${ONCE.join(', ')}) ===`);
    if (nodeTest(once, {}) !== 0) failed = true;
  }
  const rust = targets.length === 0;
  if (onPostgres.length > 0 || rust) {
    const pg = await startPostgres();
    const env = pg.skipped ? {} : { CODEMODE_PG_URL: pg.url };
    // A throwaway cluster is a daemon: stopped here on ^C too.
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.once(signal, () => {
        if (!pg.skipped) pg.stop();
        process.exit(130);
      });
    }
    try {
      if (pg.skipped) {
        console.log(`\n=== PostgreSQL pass SKIPPED: ${pg.skipped} ===`);
        if (process.env.CODEMODE_REQUIRE_POSTGRES === '1') {
          console.error('CODEMODE_REQUIRE_POSTGRES=1: the PostgreSQL pass must run here');
          failed = true;
        }
      } else if (onPostgres.length > 0) {
        console.log(`\n=== JS tests over PostgreSQL (${ON_POSTGRES.join(', ')}; ${pg.started ? 'a throwaway cluster' : 'CODEMODE_PG_URL'}) ===`);
        if (nodeTest(onPostgres, { ...env, CODEMODE_TEST_STORE: 'postgres' }) !== 0) failed = true;
      }
      if (rust) {
        console.log(`\n=== Rust unit tests${pg.skipped ? '' : ' (the store\'s over SQLite and PostgreSQL)'} ===`);
        if (run(process.execPath, [path.join(__dirname, 'cargo.js'), 'test', '--release', '--lib'], env) !== 0) failed = true;
      }
    } finally {
      if (!pg.skipped) pg.stop();
    }
  }
  return failed;
}

main().then((failed) => process.exit(failed ? 1 : 0), (error) => {
  console.error(error);
  process.exit(1);
});
