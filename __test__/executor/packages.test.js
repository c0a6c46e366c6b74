'use strict';
// npm packages in programs (`packages`, lib/packages.js, issue 39): real packages from this
// checkout's node_modules (pinned devDependencies: zod, date-fns, lodash-es, papaparse, and the
// CommonJS-only ms) imported statically and dynamically in both request forms; packages made
// here in a temporary node_modules for the hostile cases (a Node built-in, a link out of
// node_modules, a top level that never ends, an import cycle, a bundle over its bound).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor } = require('../helpers.js');

const REAL = ['zod', 'date-fns', 'lodash-es', 'papaparse', 'ms'];
// Resolved from the working directory (the checkout, where npm test runs).
const ex = new IsolateExecutor({ workers: 1, timeout: 10_000, packages: REAL });
test.after(() => ex.dispose());

// A node_modules of our own: { name: { 'package.json': {...}, 'index.js': '...' } }.
const FIXTURES = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-packages-'));
test.after(() => fs.rmSync(FIXTURES, { recursive: true, force: true }));
function writePackage(name, files, version = '1.0.0') {
  const dir = path.join(FIXTURES, 'node_modules', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version, type: 'module', main: 'index.js' }));
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  return dir;
}
writePackage('needs-fs', { 'index.js': 'import { readFileSync } from "fs";\nexport const read = () => readFileSync("/etc/passwd", "utf8");\n' });
writePackage('needs-child', { 'index.js': 'export { exec } from "node:child_process";\n' });
writePackage('spins', { 'index.js': 'while (true) {}\nexport const never = 1;\n' });
writePackage('cycle', {
  'index.js': 'import { b } from "./b.js";\nexport const a = () => "a" + b();\nexport const name = "cycle";\n',
  'b.js': 'import { name } from "./index.js";\nexport const b = () => "b:" + name;\n',
});
writePackage('big', { 'index.js': `export const blob = ${JSON.stringify('x'.repeat(200_000))};\n` });
writePackage('changing', { 'index.js': 'export const v = "first";\n' });
// A package whose entry points outside node_modules, and one linked in from elsewhere (as npm
// link and workspaces do), which is served.
fs.writeFileSync(path.join(FIXTURES, 'host-file.js'), 'export const secret = "a file of the host";\n');
writePackage('escapes', { 'index.js': '' });
fs.writeFileSync(path.join(FIXTURES, 'node_modules', 'escapes', 'package.json'), JSON.stringify({ name: 'escapes', version: '1.0.0', main: '../../host-file.js' }));
const outside = path.join(FIXTURES, 'linked-src');
fs.mkdirSync(outside);
fs.writeFileSync(path.join(outside, 'package.json'), JSON.stringify({ name: 'linked', version: '1.0.0', main: 'index.js' }));
fs.writeFileSync(path.join(outside, 'index.js'), 'export const from = "linked";\n');
fs.symlinkSync(outside, path.join(FIXTURES, 'node_modules', 'linked'), 'dir');

const fixtures = new IsolateExecutor({
  workers: 1,
  timeout: 2_000,
  packagesFrom: FIXTURES,
  packages: ['needs-fs', 'needs-child', 'spins', 'cycle', 'big', 'changing', 'escapes', 'linked', 'missing'],
  limits: { maxPackageBytes: 100_000 },
});
test.after(() => fixtures.dispose());

async function ok(executor, code) {
  const out = await executor.execute({ code });
  assert.equal(out.error, undefined, out.error);
  return out.result;
}

test('real packages: static and dynamic imports of ES module and CommonJS packages run in the sandbox', async () => {
  assert.deepEqual(await ok(ex, `import { z } from 'zod';
export default async () => {
  const User = z.object({ name: z.string(), age: z.number().int() });
  const bad = User.safeParse({ name: 'x', age: 1.5 });
  return { good: User.parse({ name: 'Ada', age: 36 }), bad: bad.success, path: bad.error.issues[0].path };
}`), { good: { name: 'Ada', age: 36 }, bad: false, path: ['age'] });
  assert.equal(await ok(ex, `async () => { const { format, addDays } = await import('date-fns'); return format(addDays(new Date(2024, 0, 30), 3), 'yyyy-MM-dd'); }`), '2024-02-02');
  assert.equal(await ok(ex, `import { format } from 'date-fns/format';\nreturn format(new Date(2020, 0, 2), 'do MMMM yyyy');`), '2nd January 2020');
  assert.deepEqual(await ok(ex, `import _ from 'lodash-es';\nimport { groupBy } from 'lodash-es';\nreturn [_.chunk([1, 2, 3, 4, 5], 2), groupBy(['one', 'two', 'three'], 'length')];`),
    [[[1, 2], [3, 4], [5]], { 3: ['one', 'two'], 5: ['three'] }]);
  assert.deepEqual(await ok(ex, `import Papa from 'papaparse';\nreturn Papa.parse('name,n\\nAda,1\\nBob,2', { header: true, dynamicTyping: true }).data;`),
    [{ name: 'Ada', n: 1 }, { name: 'Bob', n: 2 }]);
  // ms is CommonJS only: its module.exports is the default export.
  assert.deepEqual(await ok(ex, `import ms from 'ms';\nreturn [ms('2 days'), ms(90_000)];`), [172_800_000, '2m']);
});

test('the Cloudflare form imports packages too', async () => {
  const out = await ex.execute(`async () => { const { default: ms } = await import('ms'); const { z } = await import('zod'); return [ms('1h'), z.string().parse('s')]; }`, []);
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.result, [3_600_000, 's']);
  const module = await ex.execute(`import ms from 'ms';\nexport default async () => ms('1m');`, []);
  assert.equal(module.error, undefined, module.error);
  assert.equal(module.result, 60_000);
});

test('a package not allowed, not installed, a Node built-in or a path with .. is refused by name', async () => {
  const unlisted = await ex.execute({ code: `import _ from 'lodash';\nexport default () => _.VERSION;` });
  assert.match(unlisted.error, /Cannot import "lodash": the package "lodash" is not allowed\. The host allows it with new IsolateExecutor\(\{ packages: \["lodash"\] \}\)/);
  assert.equal(unlisted.errorKind, 'program');
  // A dynamic import that cannot be served throws where the program can catch it.
  assert.match(await ok(ex, `async () => { try { await import('left-pad'); } catch (e) { return e.message; } }`), /the package "left-pad" is not allowed/);
  const missing = await fixtures.execute({ code: `import x from 'missing';\nreturn x;` });
  assert.match(missing.error, /Cannot import "missing": the package is allowed but not installed in .*node_modules \(the host installs it with npm install missing\)/);
  const builtin = await ex.execute({ code: `import fs from 'fs';\nreturn 1;` });
  assert.match(builtin.error, /Cannot import "fs": Node built-in modules are not available to programs/);
  const prefixed = await ex.execute({ code: `import fs from 'node:fs';\nreturn 1;` });
  assert.match(prefixed.error, /Node built-in modules are not available in the sandbox/);
  for (const specifier of ['zod/../../package.json', 'zod/./v4', 'date-fns//format']) {
    const out = await ex.execute({ code: `import x from '${specifier}';\nreturn 1;` });
    assert.match(out.error, /may not contain "\." or "\.\." segments/, specifier);
  }
});

test('a list entry that is a path, not a package name, is refused when the executor is made', () => {
  for (const entry of ['../secrets', '/etc', 'zod/../x', '..', './zod', 'C:\\x', 'Zod', '']) {
    assert.throws(() => new IsolateExecutor({ packages: [entry] }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /is not an npm package name|must be package names/.test(e.message), entry);
  }
  assert.throws(() => new IsolateExecutor({ packages: 'zod' }), { code: 'ERR_INVALID_ARGUMENT', message: /packages must be an array/ });
  assert.throws(() => new IsolateExecutor({ packages: ['zod'], packagesFrom: 42 }), { code: 'ERR_INVALID_ARGUMENT', message: /packagesFrom/ });
});

test('a package that needs a Node built-in is refused, naming the package and the built-in', async () => {
  const fsOut = await fixtures.execute({ code: `import { read } from 'needs-fs';\nreturn read();` });
  assert.match(fsOut.error, /Cannot import "needs-fs": the package "needs-fs" needs the Node built-in "fs" \(from .*needs-fs.index\.js\), and programs have no Node built-ins/);
  const child = await fixtures.execute({ code: `async () => { try { await import('needs-child'); } catch (e) { return e.message; } }` });
  assert.match(child.result, /the package "needs-child" needs the Node built-in "node:child_process"/);
});

test('a package whose entry points outside its directory is not served; a linked package is', async () => {
  const out = await fixtures.execute({ code: `import { secret } from 'escapes';\nreturn secret;` });
  assert.equal(out.result, undefined);
  assert.match(out.error, /Cannot import "escapes": it resolves to .*host-file\.js, outside the package's directory .*node_modules.escapes/);
  assert.equal(await ok(fixtures, `import { from } from 'linked';\nreturn from;`), 'linked');
});

test('a bundle over limits.maxPackageBytes is refused as a bound', async () => {
  const out = await fixtures.execute({ code: `import { blob } from 'big';\nreturn blob.length;` });
  assert.equal(out.errorKind, 'bound');
  assert.equal(out.errorBound, 'maxPackageBytes');
  assert.match(out.error, /Cannot import "big": its bundle is \d+ bytes, over limits\.maxPackageBytes \(100000\)/);
});

test('a package whose top level never ends is stopped by the run\'s own bounds; the next run works', async () => {
  const started = Date.now();
  const out = await fixtures.execute({ code: `import { never } from 'spins';\nreturn never;`, timeout: 500 });
  assert.equal(out.errorKind, 'timeout', out.error);
  assert.ok(Date.now() - started < 10_000);
  assert.equal(await ok(fixtures, `import { a } from 'cycle';\nreturn a();`), 'ab:cycle');
});

test('bundles are cached per package version and reused across runs', async () => {
  const dir = path.join(FIXTURES, 'node_modules', 'changing');
  assert.equal(await ok(fixtures, `import { v } from 'changing';\nreturn v;`), 'first');
  // Same version, new files: the cached bundle is served.
  fs.writeFileSync(path.join(dir, 'index.js'), 'export const v = "second";\n');
  assert.equal(await ok(fixtures, `import { v } from 'changing';\nreturn v;`), 'first');
  // A new version is bundled again.
  writePackage('changing', { 'index.js': 'export const v = "second";\n' }, '1.0.1');
  assert.equal(await ok(fixtures, `import { v } from 'changing';\nreturn v;`), 'second');
  // With no cache, every run bundles what is installed now.
  const uncached = new IsolateExecutor({ workers: 1, packagesFrom: FIXTURES, packages: ['changing'], packageCacheMb: 0 });
  try {
    assert.equal(await ok(uncached, `import { v } from 'changing';\nreturn v;`), 'second');
    fs.writeFileSync(path.join(dir, 'index.js'), 'export const v = "third";\n');
    assert.equal(await ok(uncached, `import { v } from 'changing';\nreturn v;`), 'third');
  } finally {
    await uncached.dispose();
  }
});

test('bundling past packageBuildTimeoutMs is refused as a bound; the bounds show in executor.bounds', async () => {
  const slow = new IsolateExecutor({ workers: 1, packages: ['zod'], packageBuildTimeoutMs: 1 });
  try {
    assert.equal(slow.bounds.packageBuildTimeoutMs, 1);
    assert.equal(slow.bounds.packageCacheMb, 64);
    assert.equal(slow.bounds.maxPackageBytes, 8 * 1024 * 1024);
    const out = await slow.execute({ code: `import { z } from 'zod';\nreturn 1;` });
    assert.equal(out.errorBound, 'packageBuildTimeoutMs');
    assert.match(out.error, /bundling the package took longer than 1 ms \(packageBuildTimeoutMs\)/);
  } finally {
    await slow.dispose();
  }
  assert.throws(() => new IsolateExecutor({ packageCacheMb: -1 }), { code: 'ERR_INVALID_ARGUMENT', message: /packageCacheMb/ });
  assert.throws(() => new IsolateExecutor({ limits: { maxPackageBytes: 0 } }), { code: 'ERR_INVALID_ARGUMENT', message: /maxPackageBytes/ });
});

test('the executor\'s own modules win over a package of the same specifier, and may import packages', async () => {
  const both = new IsolateExecutor({
    workers: 1,
    packages: ['ms', 'zod'],
    modules: { ms: 'export default () => "own module"', 'schema.js': 'import { z } from "zod";\nexport const Name = z.string().min(2);' },
  });
  try {
    assert.equal(await ok(both, `import ms from 'ms';\nreturn ms();`), 'own module');
    assert.deepEqual(await ok(both, `import { Name } from 'schema.js';\nreturn [Name.safeParse('Ada').success, Name.safeParse('A').success];`), [true, false]);
  } finally {
    await both.dispose();
  }
});
