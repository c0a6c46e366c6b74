#!/usr/bin/env node
'use strict';
// `npm run test:crash -- --trials N [--isolation thread|process] [--store sqlite|postgres]`: the
// crash-safety test of the durable runtime (__test__/runtime/crash.test.js) with N trials instead
// of the suite's 30, over a SQLite file or PostgreSQL (CODEMODE_PG_URL, or a throwaway cluster).
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { startPostgres } = require('./postgres.js');

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
const store = option('store', 'sqlite');
if (store !== 'sqlite' && store !== 'postgres') {
  console.error('--store must be sqlite or postgres');
  process.exit(2);
}
const file = path.join(__dirname, '..', '__test__', 'runtime', 'crash.test.js');

async function main() {
  const env = { ...process.env, CODEMODE_CRASH_TRIALS: String(trials), CODEMODE_EXECUTOR_ISOLATION: isolation };
  const pg = store === 'postgres' ? await startPostgres() : undefined;
  if (pg !== undefined && pg.skipped) {
    console.error(`--store postgres: ${pg.skipped}`);
    return 2;
  }
  if (pg !== undefined) Object.assign(env, { CODEMODE_TEST_STORE: 'postgres', CODEMODE_PG_URL: pg.url });
  try {
    const result = spawnSync(process.execPath, ['--test', file], { stdio: 'inherit', env });
    return result.status === null ? 1 : result.status;
  } finally {
    if (pg !== undefined) pg.stop();
  }
}

main().then((status) => process.exit(status));
