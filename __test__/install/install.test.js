'use strict';
// The package as a user gets it: `npm run package` packs the root and the platform package,
// both are installed into a fresh project with `npm install --ignore-scripts` (no compiler may
// run), and everything below runs from that installed copy, never from this checkout: CommonJS
// and ES module imports, a first execution in both isolation modes (the engine process must
// start from the installed layout), the exports map, the TypeScript types under node16 and
// bundler resolution, an esbuild bundle moved away from node_modules, and the error a user
// sees when the platform package is missing.
// INSTALL_TEST_NODE names another Node binary to run the installed copy with (CI: 22 and 26).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const NODE = process.env.INSTALL_TEST_NODE || process.execPath;
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const ESBUILD = path.join(ROOT, 'node_modules', '.bin', 'esbuild');

let work;
let tarballs;

function sh(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 240_000, ...options });
  const output = `${result.stdout || ''}${result.stderr || ''}`;
  assert.equal(result.status, 0, `${command} ${args.join(' ')} exited ${result.status}:\n${output.slice(-4000)}`);
  return result.stdout;
}

function runIn(dir, source, { esm = false, env = {} } = {}) {
  const args = esm ? ['--input-type=module', '-e', source] : ['-e', source];
  return sh(NODE, args, { cwd: dir, env: { ...process.env, CODEMODE_EXECUTOR_ISOLATION: '', ...env } });
}

function npmInstall(dir, specs, extra = []) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: path.basename(dir), private: true, version: '1.0.0' }));
  sh('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', ...extra, ...specs], { cwd: dir });
}

test.before(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-install-'));
  // The addon at the root is the one the rest of the suite tested: pack it, do not rebuild.
  sh(process.execPath, [path.join(ROOT, 'scripts', 'package.js'), '--no-build'], { cwd: ROOT });
  const dist = path.join(ROOT, 'dist');
  const files = fs.readdirSync(dist).filter((f) => f.endsWith('.tgz'));
  tarballs = {
    root: path.join(dist, files.find((f) => /^supolka-codemode-executor-\d/.test(f))),
    platform: path.join(dist, files.find((f) => f.startsWith('supolka-codemode-executor-linux-x64-gnu-'))),
  };
  npmInstall(path.join(work, 'app'), [tarballs.platform, tarballs.root]);
});

test.after(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('the tarballs hold what a user needs and nothing of the checkout', () => {
  const list = (tgz) => sh('tar', ['-tzf', tgz]).split('\n').filter(Boolean);
  const root = list(tarballs.root);
  for (const f of ['package/package.json', 'package/LICENSE', 'package/binding.js', 'package/lib/index.js', 'package/lib/index.mjs', 'package/lib/index.d.ts', 'package/lib/console/console.html', 'package/lib/console/console.js', 'package/lib/console/console.css', 'package/lib/cli/console.js']) {
    assert.ok(root.includes(f), `${f} is in the root tarball`);
  }
  assert.ok(!root.some((f) => f.endsWith('.node') || f.startsWith('package/src/') || f.startsWith('package/__test__/')), 'no binary, Rust source or tests in the root tarball');
  const platform = list(tarballs.platform);
  assert.ok(platform.includes('package/codemode-executor.linux-x64-gnu.node'));
  const manifest = JSON.parse(fs.readFileSync(path.join(work, 'app', 'node_modules', '@supolka', 'codemode-executor', 'package.json'), 'utf8'));
  assert.deepEqual(manifest.optionalDependencies, { '@supolka/codemode-executor-linux-x64-gnu': manifest.version });
  const report = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist', 'package-report.json'), 'utf8'));
  assert.ok(report.binary.stripped < report.binary.unstripped, `stripped ${report.binary.stripped} < ${report.binary.unstripped}`);
});

test('CommonJS require and a first execution, in both isolation modes, from the installed copy', () => {
  const out = runIn(path.join(work, 'app'), `
    const { IsolateExecutor } = require('@supolka/codemode-executor');
    (async () => {
      const results = {};
      for (const isolation of ['thread', 'process']) {
        const ex = new IsolateExecutor({ isolation, workers: 1 });
        const r = await ex.execute({ code: 'async () => 40 + (await tools.two())', providers: [{ name: 'tools', tools: ['two'] }], dispatch: () => JSON.stringify({ result: 2 }) });
        results[isolation] = { result: r.result, error: r.error, engines: ex.stats().processes };
        await ex.dispose();
      }
      console.log(JSON.stringify(results));
    })().catch((e) => { console.error(e); process.exit(1); });
  `);
  const results = JSON.parse(out.trim().split('\n').pop());
  assert.deepEqual(results.thread, { result: 42, engines: 0 });
  assert.deepEqual(results.process, { result: 42, engines: 1 });
});

test('ES module named imports are the CommonJS exports, and deep imports are not public', () => {
  const out = runIn(path.join(work, 'app'), `
    import * as esm from '@supolka/codemode-executor';
    import { IsolateExecutor, createCodemodeRuntime, CodemodeConnector } from '@supolka/codemode-executor';
    import { createRequire } from 'node:module';
    const cjs = createRequire(import.meta.url)('@supolka/codemode-executor');
    const named = Object.keys(esm).filter((k) => k !== 'default').sort();
    let deep;
    try { createRequire(import.meta.url)('@supolka/codemode-executor/lib/executor/index.js'); deep = 'resolved'; } catch (e) { deep = e.code; }
    const ex = new IsolateExecutor({ isolation: 'thread', workers: 1 });
    const r = await ex.execute('async () => 6 * 7', []);
    await ex.dispose();
    console.log(JSON.stringify({ same: JSON.stringify(named) === JSON.stringify(Object.keys(cjs).sort()), named: named.length, result: r.result, deep,
      kinds: [typeof createCodemodeRuntime, typeof CodemodeConnector], pkg: createRequire(import.meta.url)('@supolka/codemode-executor/package.json').name }));
  `, { esm: true });
  const r = JSON.parse(out.trim().split('\n').pop());
  assert.equal(r.same, true, 'the ES module names equal the CommonJS ones');
  assert.ok(r.named > 10);
  assert.equal(r.result, 42);
  assert.equal(r.deep, 'ERR_PACKAGE_PATH_NOT_EXPORTED');
  assert.deepEqual(r.kinds, ['function', 'function']);
  assert.equal(r.pkg, '@supolka/codemode-executor');
});

test('the types check a realistic program under tsc --strict, moduleResolution node16 and bundler', () => {
  const dir = path.join(work, 'types');
  // The AI SDK's types, for the tool() objects a connector returns, and the ones the AI SDK's
  // need (Node's, JSON Schema's), from the npm cache at the versions this checkout uses.
  const version = (name) => require(path.join(ROOT, 'node_modules', name, 'package.json')).version;
  npmInstall(dir, [tarballs.platform, tarballs.root, `ai@${version('ai')}`, `@types/node@${version('@types/node')}`, `@types/json-schema@${version('@types/json-schema')}`]);
  fs.copyFileSync(path.join(__dirname, 'typed-program.ts'), path.join(dir, 'program.ts'));
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  // skipLibCheck stays off: it would skip the package's own declarations too.
  for (const [type, module, resolution] of [['commonjs', 'node16', 'node16'], ['module', 'node16', 'node16'], ['module', 'esnext', 'bundler']]) {
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...manifest, type }));
    const config = { compilerOptions: { strict: true, noEmit: true, target: 'es2022', module, moduleResolution: resolution, types: ['node'], lib: ['es2022', 'dom'] }, files: ['program.ts'] };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config));
    sh(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: dir });
  }
});

test('an esbuild bundle moved away from node_modules runs in \'process\' isolation', () => {
  const dir = path.join(work, 'app');
  fs.writeFileSync(path.join(dir, 'bundled-app.js'), `
    const { IsolateExecutor } = require('@supolka/codemode-executor');
    (async () => {
      const ex = new IsolateExecutor({ isolation: 'process', workers: 1 });
      const r = await ex.execute({ code: 'async () => "bundled " + (1 + 1)' });
      console.log(JSON.stringify({ result: r.result, error: r.error, pids: ex.stats().enginePids.length }));
      await ex.dispose();
    })().catch((e) => { console.error(e.message); process.exit(1); });
  `);
  const out = path.join(work, 'bundle-build');
  sh(ESBUILD, ['bundled-app.js', '--bundle', '--platform=node', `--outdir=${out}`, '--loader:.node=copy'], { cwd: dir });
  // Moved to a folder of its own: no node_modules, no lib/ beside it.
  const moved = path.join(work, 'elsewhere');
  fs.cpSync(out, moved, { recursive: true });
  assert.ok(!fs.existsSync(path.join(moved, 'node_modules')));
  const r = JSON.parse(sh(NODE, [path.join(moved, 'bundled-app.js')], { cwd: moved }).trim().split('\n').pop());
  assert.deepEqual(r, { result: 'bundled 2', pids: 1 });
});

test('without the platform package, require fails naming the platform, the package and how to build', () => {
  const dir = path.join(work, 'no-binary');
  npmInstall(dir, [tarballs.root], ['--omit=optional']);
  const result = spawnSync(NODE, ['-e', "try { require('@supolka/codemode-executor') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }"], { cwd: dir, encoding: 'utf8' });
  const r = JSON.parse(result.stdout.trim().split('\n').pop());
  assert.equal(r.code, 'ERR_NATIVE_BINARY');
  assert.match(r.message, /linux-x64-gnu/);
  assert.match(r.message, /@supolka\/codemode-executor-linux-x64-gnu is missing/);
  assert.match(r.message, /npm run build/);
  assert.doesNotMatch(r.message, /npm has a bug/);
});
