#!/usr/bin/env node
'use strict';
// `npm test`: the JS suite, then the Rust unit tests.
// - __test__/executor, adversarial, runtime: once per isolation mode ('process', the default,
//   then 'thread'), since what they check must hold in both arrangements;
// - __test__/process (forces 'process' or drives the engine itself), __test__/mcp (the
//   `codemode-executor mcp` command as a child process, with real MCP servers), __test__/compat (no
//   executor at all), __test__/install (the packed package, installed elsewhere),
//   __test__/docs (the documentation's samples and links), __test__/console (the console in
//   a headless Chromium; its runs are not what it tests) and __test__/wpt (the Web Platform
//   Tests files, which run themselves in both modes and in Node): once;
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
const ONCE = ['process', 'compat', 'install', 'docs', 'console', 'mcp', 'wpt'];
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

// Each failing test's name and diagnostics (error, expected, actual, location), gathered from a
// second, TAP reporter written to a file, and printed again once every pass has ended: the end of
// a long log is what a reader (or a CI summary) sees first.
const failures = [];
const MAX_FAILURE_LINES = 40;

function nodeTest(files, env, label) {
  if (files.length === 0) return 0;
  const tap = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'codemode-test-')), 'report.tap');
  const shown = process.stdout.isTTY ? 'spec' : 'tap';
  const status = run(process.execPath, ['--test', '--test-concurrency=1',
    `--test-reporter=${shown}`, '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files], env);
  if (status !== 0) failures.push(...failedTests(fs.readFileSync(tap, 'utf8'), label));
  fs.rmSync(path.dirname(tap), { recursive: true, force: true });
  return status;
}

// `not ok N - name` lines with the YAML block that follows each (more deeply indented, up to its
// `...`); a failing file's own line (its tests already listed) is kept only when nothing else is.
function failedTests(report, label) {
  const lines = report.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!match) continue;
    const block = [];
    let stackLines = -1;
    for (let j = i + 1; j < lines.length && block.length < MAX_FAILURE_LINES; j++) {
      const line = lines[j];
      if (line.trim() === '...' || !line.startsWith(match[1] + '  ')) break;
      const field = line.slice(match[1].length);
      if (/^\s*stack:/.test(field)) stackLines = 0;
      else if (stackLines >= 0 && /^\s{4}/.test(field)) stackLines++;
      else stackLines = -1;
      // The stack's first three frames are enough to find the assertion.
      if (line.trim() === '---' || /^\s*duration_ms:/.test(field) || stackLines > 3) continue;
      block.push(field);
    }
    found.push({ label, name: match[2], block });
  }
  const isFile = (f) => f.block.some((line) => /failureType: '?subtestsFailed/.test(line));
  const tests = found.filter((f) => !isFile(f));
  return tests.length > 0 ? tests : found;
}

function printFailures() {
  if (failures.length === 0) return;
  console.log(`\n=== ${failures.length} failing test(s), again ===`);
  for (const { label, name, block } of failures) {
    console.log(`\n✖ [${label}] ${name}`);
    for (const line of block) console.log(`  ${line}`);
  }
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
    if (nodeTest(twice, { CODEMODE_EXECUTOR_ISOLATION: isolation }, `isolation ${isolation}`) !== 0) failed = true;
  }
  if (once.length > 0) {
    console.log(`\n=== JS tests, once (${ONCE.join(', ')}) ===`);
    if (nodeTest(once, {}, 'once') !== 0) failed = true;
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
        if (nodeTest(onPostgres, { ...env, CODEMODE_TEST_STORE: 'postgres' }, 'PostgreSQL') !== 0) failed = true;
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

main().then((failed) => {
  printFailures();
  process.exit(failed ? 1 : 0);
}, (error) => {
  console.error(error);
  process.exit(1);
});
