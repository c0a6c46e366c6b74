#!/usr/bin/env node
'use strict';
// Builds the addon with @napi-rs/cli (extra arguments go to `napi build`), linking the shared
// V8 archive when there is one (see v8-env.js).
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { root, buildEnv } = require('./v8-env.js');

const napi = path.join(root, 'node_modules', '.bin', 'napi');
const args = ['build', '--platform', ...process.argv.slice(2)];
const result = spawnSync(napi, args, { cwd: root, env: buildEnv(), stdio: 'inherit' });
process.exit(result.status === null ? 1 : result.status);
