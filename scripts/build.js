#!/usr/bin/env node
'use strict';
// Builds the addon with @napi-rs/cli (extra arguments go to `napi build`), linking the shared
// V8 archive when there is one (see v8-env.js). The generated loader is binding.js /
// binding.d.ts (never edit them); index.* names only the public surface, in lib/.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { root, buildEnv } = require('./v8-env.js');

const napi = path.join(root, 'node_modules', '.bin', 'napi');
const args = ['build', '--platform', '--js', 'binding.js', '--dts', 'binding.d.ts', ...process.argv.slice(2)];
const result = spawnSync(napi, args, { cwd: root, env: buildEnv(), stdio: 'inherit' });
process.exit(result.status === null ? 1 : result.status);
