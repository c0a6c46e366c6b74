'use strict';
// `tsc --strict --noEmit` over one TypeScript file of this folder (an adapter's types against the
// published framework's), as the adapters' tests run it: { status, output }.
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function typeCheck(file) {
  const args = [TSC, '--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'node16', '--moduleResolution', 'node16', '--types', 'node', '--lib', 'es2022,dom', path.join(__dirname, file)];
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

module.exports = { typeCheck };
