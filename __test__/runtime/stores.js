'use strict';
// Where the runtime tests keep the durable state: a SQLite file, or, in `npm test`'s PostgreSQL
// pass (CODEMODE_TEST_STORE=postgres), a schema of its own in the database CODEMODE_PG_URL names.
// The same tests run over both, so both stores are held to the same behaviour.
const path = require('node:path');

const KIND = process.env.CODEMODE_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
if (KIND === 'postgres' && !process.env.CODEMODE_PG_URL) {
  throw new Error('CODEMODE_TEST_STORE=postgres needs CODEMODE_PG_URL (npm test starts a server and sets both)');
}

/**
 * The createCodemodeRuntime options that name one store: `file` in `dir`, or, over PostgreSQL,
 * a schema named after both (so every process that gets the same `dir` and `file`, children
 * included, shares it, and nothing else does). Plain data: it can be written into a child's source.
 */
function storeOptions(dir, file = 'runtime.db') {
  if (KIND === 'sqlite') return { path: path.join(dir, file) };
  const schema = `t_${path.basename(dir)}_${file}`.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 63);
  return { store: { url: process.env.CODEMODE_PG_URL, schema } };
}

/** The NativeStore behind `storeOptions(...)`'s store, for tests that reach past the runtime. */
function nativeStore(options) {
  const { NativeStore } = require('../../lib/native.js');
  if (options.path !== undefined) return new NativeStore(options.path);
  const { url, ...settings } = options.store;
  return new NativeStore(url, settings);
}

module.exports = { KIND, storeOptions, nativeStore };
