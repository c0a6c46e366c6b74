#!/usr/bin/env node
'use strict';
// Runs cargo with the shared V8 archive linked when there is one (see v8-env.js), so
// `npm run test:rust` works on a machine without downloads.
const { spawnSync } = require('node:child_process');
const { root, buildEnv } = require('./v8-env.js');

const result = spawnSync('cargo', process.argv.slice(2), { cwd: root, env: buildEnv(), stdio: 'inherit' });
process.exit(result.status === null ? 1 : result.status);
