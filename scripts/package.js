#!/usr/bin/env node
'use strict';
// `npm run package`: builds the release addon and lays out the two npm packages the way
// `napi artifacts` + `napi prepublish` would: the platform package npm/linux-x64-gnu/ receives
// the stripped .node, the root package declares it as an optional dependency of the same
// version. Both are packed into dist/ (git-ignored); nothing is published.
//   --no-build   pack the addon already built at the root (CI builds it first)
// Checks on the way: the stripped binary still loads, and it needs no newer glibc than the
// documented floor (GLIBC_FLOOR): a change that raises it fails here.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { root, buildEnv } = require('./v8-env.js');

const TRIPLE = 'linux-x64-gnu';
const BINARY = `codemode-executor.${TRIPLE}.node`;
const GLIBC_FLOOR = [2, 34];
const DIST = path.join(root, 'dist');

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stderr || ''}${result.stdout || ''}`);
  }
  return result.stdout;
}

/** The newest GLIBC_x.y symbol version a binary asks for. */
function glibcNeeded(file) {
  const text = fs.readFileSync(file).toString('latin1');
  let newest = [0, 0];
  for (const m of text.matchAll(/GLIBC_(\d+)\.(\d+)(?:\.\d+)?/g)) {
    const v = [Number(m[1]), Number(m[2])];
    if (v[0] > newest[0] || (v[0] === newest[0] && v[1] > newest[1])) newest = v;
  }
  return newest;
}

function pack(dir) {
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', DIST], { cwd: dir }));
  return { file: path.join(DIST, info.filename), size: info.size, unpackedSize: info.unpackedSize, entries: info.entryCount };
}

const mb = (n) => `${(n / 1024 / 1024).toFixed(1)} MB`;

function main() {
  if (!process.argv.includes('--no-build')) {
    run(process.execPath, [path.join(__dirname, 'build.js'), '--release'], { env: buildEnv(), stdio: 'inherit' });
  }
  const built = path.join(root, BINARY);
  if (!fs.existsSync(built)) throw new Error(`${BINARY} is not built: run npm run build first`);
  const platformDir = path.join(root, 'npm', TRIPLE);
  const target = path.join(platformDir, BINARY);
  fs.copyFileSync(built, target);
  run('strip', ['--strip-unneeded', target]);
  const before = fs.statSync(built).size;
  const after = fs.statSync(target).size;
  // The stripped binary must still load and answer.
  const probe = `const a = require(${JSON.stringify(target)}); if (!a.errorCodes().includes('ERR_QUEUE_FULL')) process.exit(1);`;
  run(process.execPath, ['-e', probe]);
  const needed = glibcNeeded(target);
  if (needed[0] > GLIBC_FLOOR[0] || (needed[0] === GLIBC_FLOOR[0] && needed[1] > GLIBC_FLOOR[1])) {
    throw new Error(`the binary needs glibc ${needed.join('.')}, above the documented floor ${GLIBC_FLOOR.join('.')} (README, npm/${TRIPLE}/README.md)`);
  }
  fs.mkdirSync(DIST, { recursive: true });
  for (const old of fs.readdirSync(DIST)) if (old.endsWith('.tgz')) fs.rmSync(path.join(DIST, old));
  const platform = pack(platformDir);
  const main = pack(root);
  const report = {
    binary: { unstripped: before, stripped: after, glibc: needed.join('.') },
    platform,
    root: main,
  };
  fs.writeFileSync(path.join(DIST, 'package-report.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(`binary: ${mb(before)} -> ${mb(after)} stripped (needs glibc ${needed.join('.')}, floor ${GLIBC_FLOOR.join('.')})`);
  console.log(`${path.relative(root, platform.file)}: ${mb(platform.size)} packed, ${mb(platform.unpackedSize)} unpacked`);
  console.log(`${path.relative(root, main.file)}: ${(main.size / 1024).toFixed(0)} KB packed, ${(main.unpackedSize / 1024).toFixed(0)} KB unpacked (${main.entries} files)`);
}

try {
  main();
} catch (error) {
  console.error(`package: ${error.message}`);
  process.exit(1);
}
