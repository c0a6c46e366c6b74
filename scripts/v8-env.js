'use strict';
// The environment for building: where the shared V8 archive sits beside the checkout
// (../shared/v8), the `v8` crate links it instead of downloading V8; elsewhere the crate's own
// download is used.
const { existsSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const archive = path.resolve(root, '..', 'shared', 'v8', 'librusty_v8_release_x86_64-unknown-linux-gnu.a.gz');

function buildEnv() {
  const env = { ...process.env };
  if (!env.RUSTY_V8_ARCHIVE && existsSync(archive)) env.RUSTY_V8_ARCHIVE = archive;
  return env;
}

module.exports = { root, buildEnv };
