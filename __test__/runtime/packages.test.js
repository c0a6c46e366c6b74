'use strict';
// A durable run whose program imports an allowed npm package (issue 39): it pauses for an
// approval and resumes, each pass importing the package again (from the executor's bundle
// cache), and earlier calls replay.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { Tracker, load } = require('../fixtures/tracker.js');
const { storeOptions } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 1, packages: ['zod', 'ms'] });
test.after(() => executor.dispose());

test('a durable run that imports packages pauses for approval and resumes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-runtime-packages-'));
  const tracker = new Tracker(path.join(dir, 'tracker.json'), {});
  const runtime = createCodemodeRuntime({ executor, connectors: [tracker], ...storeOptions(dir) });
  const code = `import { z } from 'zod';
import ms from 'ms';
export default async function main() {
  const Issue = z.object({ title: z.string().min(1) });
  const before = (await tracker.list_issues()).length;
  const made = await tracker.create_issue(Issue.parse({ title: 'due in ' + ms(ms('2d'), { long: true }) }));
  return { before, made: Boolean(made) };
}`;
  const paused = await runtime.execute({ code });
  assert.equal(paused.status, 'paused', paused.error);
  assert.deepEqual(paused.pending.map((p) => [p.method, p.args]), [['create_issue', { title: 'due in 2 days' }]]);
  const done = await runtime.approve({ executionId: paused.executionId });
  assert.equal(done.status, 'completed', done.error);
  assert.deepEqual(done.result, { before: 1, made: true });
});

// A tiny package in a directory of its own (packagesFrom), at `version`, whose `v` says it.
function writeVersioned(from, version) {
  const dir = path.join(from, 'node_modules', 'versioned');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'versioned', version, type: 'module', main: 'index.js' }));
  fs.writeFileSync(path.join(dir, 'index.js'), `export const v = ${JSON.stringify(version)};\n`);
}

test('a durable run records the package versions its program began with; a pass with another installed is kept and named (ERR_PACKAGE_VERSION)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-runtime-versions-'));
  writeVersioned(dir, '1.0.0');
  const tracker = new Tracker(path.join(dir, 'tracker.json'), {});
  // No bundle cache: every pass bundles what is installed at that moment.
  const local = new IsolateExecutor({ workers: 1, packagesFrom: dir, packages: ['versioned'], packageCacheMb: 0 });
  try {
    const runtime = createCodemodeRuntime({ executor: local, connectors: [tracker], ...storeOptions(dir) });
    const code = `import { v } from 'versioned';
export default async function main() {
  const made = await tracker.create_issue({ title: 'made with ' + v });
  return { v, made: made.title };
}`;
    const paused = await runtime.execute({ code });
    assert.equal(paused.status, 'paused', paused.error);
    assert.deepEqual(paused.pending.map((p) => p.args), [{ title: 'made with 1.0.0' }]);
    const recorded = (await runtime.execution(paused.executionId)).log.find((e) => e.method === '#packages');
    assert.deepEqual(recorded.result, { versioned: '1.0.0' });

    // Another version installed: the approving pass stops before the program runs.
    writeVersioned(dir, '2.0.0');
    const refused = await runtime.approve({ executionId: paused.executionId });
    assert.equal(refused.status, 'error');
    assert.equal(refused.interrupted, 'ERR_PACKAGE_VERSION');
    assert.match(refused.error, /ERR_PACKAGE_VERSION: .*versioned 1\.0\.0 when it began, 2\.0\.0 installed now/);
    assert.equal((await runtime.execution(paused.executionId)).status, 'running');
    assert.equal(load(path.join(dir, 'tracker.json')).ran.create_issue, undefined, 'the approved call ran');

    // Gone: named as such.
    fs.rmSync(path.join(dir, 'node_modules', 'versioned'), { recursive: true });
    const [gone] = await runtime.recover();
    assert.equal(gone.interrupted, 'ERR_PACKAGE_VERSION');
    assert.match(gone.error, /versioned 1\.0\.0 when it began, not installed \(or not allowed\) now/);

    // The recorded version back: recover() finishes the run with it.
    writeVersioned(dir, '1.0.0');
    const [done] = await runtime.recover();
    assert.equal(done.status, 'completed', done.error);
    assert.deepEqual(done.result, { v: '1.0.0', made: 'made with 1.0.0' });
  } finally {
    await local.dispose();
  }
});

test('codemode.run of a snippet saved from a module that imports a package: it runs, and its versions are recorded and checked as a program\'s', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-runtime-snippet-packages-'));
  writeVersioned(dir, '1.0.0');
  const tracker = new Tracker(path.join(dir, 'tracker.json'), {});
  const local = new IsolateExecutor({ workers: 1, packagesFrom: dir, packages: ['versioned'], packageCacheMb: 0 });
  try {
    const runtime = createCodemodeRuntime({ executor: local, connectors: [tracker], ...storeOptions(dir) });
    // The snippet's source: a module with a static import, its default export taking the input.
    const source = await runtime.execute({ code: `import { v } from 'versioned';
const suffix = (text) => text + ' (made with ' + v + ')';
export default async function title(input) {
  return suffix(input === undefined ? 'nothing' : input.title);
}` });
    assert.equal(source.status, 'completed', source.error);
    assert.equal(source.result, 'nothing (made with 1.0.0)');
    await runtime.saveSnippet('title', { executionId: source.executionId, description: 'A title with its version' });
    // An anonymous default export and a dynamic import, as a second snippet.
    const dynamic = await runtime.execute({ code: `export default async (input) => {
  const { v } = await import('versioned');
  return (input === undefined ? 0 : input.n) + ':' + v;
}
export const unused = 1;` });
    assert.equal(dynamic.status, 'completed', dynamic.error);
    await runtime.saveSnippet('numbered', { executionId: dynamic.executionId });

    const code = `async () => {
  const title = await codemode.run('title', { title: 'jam' });
  const numbered = await codemode.run('numbered', { n: 7 });
  const made = await tracker.create_issue({ title });
  return { title, numbered, made: made.title };
}`;
    const paused = await runtime.execute({ code });
    assert.equal(paused.status, 'paused', paused.error);
    assert.deepEqual(paused.pending.map((p) => p.args), [{ title: 'jam (made with 1.0.0)' }]);
    const log = (await runtime.execution(paused.executionId)).log;
    assert.deepEqual(log.filter((e) => e.method === '#packages').map((e) => [e.seq, e.result]), [[0, { versioned: '1.0.0' }], [1, { versioned: '1.0.0' }]]);

    // Another version installed: the approving pass stops at the snippet, nothing approved runs.
    writeVersioned(dir, '2.0.0');
    const refused = await runtime.approve({ executionId: paused.executionId });
    assert.equal(refused.status, 'error');
    assert.equal(refused.interrupted, 'ERR_PACKAGE_VERSION');
    assert.match(refused.error, /versioned 1\.0\.0 when it began, 2\.0\.0 installed now/);
    assert.equal((await runtime.execution(paused.executionId)).status, 'running');
    assert.equal(load(path.join(dir, 'tracker.json')).ran.create_issue, undefined, 'the approved call ran');

    // The recorded version back: recover() finishes the run with it.
    writeVersioned(dir, '1.0.0');
    const [done] = await runtime.recover();
    assert.equal(done.status, 'completed', done.error);
    assert.deepEqual(done.result, { title: 'jam (made with 1.0.0)', numbered: '7:1.0.0', made: 'jam (made with 1.0.0)' });
    assert.equal(load(path.join(dir, 'tracker.json')).ran.create_issue, 1);
  } finally {
    await local.dispose();
  }
});

test('a run begun without recorded versions (an earlier release) resumes unchecked, its seqs unchanged', async () => {
  const { READS_PROGRAMS } = require('../../lib/cloudflare/normalize.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-runtime-versions-old-'));
  writeVersioned(dir, '1.0.0');
  const tracker = new Tracker(path.join(dir, 'tracker.json'), {});
  const local = new IsolateExecutor({ workers: 1, packagesFrom: dir, packages: ['versioned'] });
  try {
    // An executor that cannot tell the versions, as the runtime of an earlier release did not ask.
    const unaware = { execute: (...args) => local.execute(...args), get [READS_PROGRAMS]() { return local[READS_PROGRAMS]; } };
    const code = `import { v } from 'versioned';
export default async function main() {
  const before = (await tracker.list_issues()).length;
  const made = await tracker.create_issue({ title: 'made with ' + v });
  return { before, made: made.title };
}`;
    const old = createCodemodeRuntime({ executor: unaware, connectors: [tracker], ...storeOptions(dir) });
    const paused = await old.execute({ code });
    assert.equal(paused.status, 'paused', paused.error);
    assert.deepEqual(paused.calls.map((c) => [c.seq, c.method]), [[0, 'list_issues'], [1, 'create_issue']]);
    const now = createCodemodeRuntime({ executor: local, connectors: [tracker], ...storeOptions(dir) });
    const done = await now.approve({ executionId: paused.executionId });
    assert.equal(done.status, 'completed', done.error);
    assert.deepEqual(done.result, { before: 1, made: 'made with 1.0.0' });
    assert.equal(load(path.join(dir, 'tracker.json')).ran.list_issues, 1);
  } finally {
    await local.dispose();
  }
});

// Packages written into a directory of their own (packagesFrom), for describe().
function writePackages(from, packages) {
  for (const [name, files] of Object.entries(packages)) {
    for (const [file, text] of Object.entries(files)) {
      const target = path.join(from, 'node_modules', name, file);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, typeof text === 'string' ? text : JSON.stringify(text));
    }
  }
}

test('describe() of an allowed package gives its declarations, in the runtime and in a program', async () => {
  const from = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-describe-packages-')));
  const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`part${i}.d.ts`, `export declare const value${i}: "${'x'.repeat(2000)}";\n`]));
  writePackages(from, {
    // exports with nested conditions; a reference written with .js and one with .ts
    typed: {
      'package.json': { name: 'typed', version: '1.2.3', exports: { '.': { import: { types: './dist/index.d.ts', default: './dist/index.js' } }, './extra': { types: './dist/extra.d.ts', default: './dist/extra.js' } } },
      'dist/index.js': 'export const greet = (n) => "hi " + n;',
      'dist/index.d.ts': 'export { greet } from "./greet.js";\nexport type { Options } from "./options.ts";\n',
      'dist/greet.d.ts': 'export declare function greet(name: string): string;\n',
      'dist/options.d.ts': 'export interface Options { loud?: boolean }\n',
      'dist/extra.js': 'export const extra = 1;',
      'dist/extra.d.ts': 'export declare const extra: number;\n',
    },
    // no declarations of its own; @types has them
    untyped: { 'package.json': { name: 'untyped', version: '0.1.0', main: 'index.js' }, 'index.js': 'export default 1;' },
    '@types/untyped': { 'package.json': { name: '@types/untyped', version: '0.1.0' }, 'index.d.ts': 'declare const value: number;\nexport default value;\n' },
    bare: { 'package.json': { name: 'bare', version: '2.0.0', main: 'index.js' }, 'index.js': 'export default 2;' },
    // a reference out of its directory is not followed
    escaping: { 'package.json': { name: 'escaping', version: '1.0.0', types: 'index.d.ts' }, 'index.d.ts': 'export * from "../secret/leak.js";\n' },
    secret: { 'leak.d.ts': 'export declare const SECRET_DECLARATION: 1;\n' },
    huge: { 'package.json': { name: 'huge', version: '1.0.0', types: 'index.d.ts' }, 'index.d.ts': Object.keys(many).map((f) => `export * from "./${f.replace('.d.ts', '.js')}";`).join('\n'), ...many },
  });
  const ex = new IsolateExecutor({ workers: 1, packages: ['typed', 'untyped', 'bare', 'escaping', 'huge', 'missing', 'zod'], packagesFrom: from });
  const real = new IsolateExecutor({ workers: 1, packages: ['zod'] });
  try {
    const runtime = createCodemodeRuntime({ executor: ex, connectors: [], ...storeOptions(from) });
    const typed = await runtime.describe('typed');
    assert.equal(typed.kind, 'package');
    assert.equal(typed.version, '1.2.3');
    assert.match(typed.description, /^npm package typed@1\.2\.3, which programs may import/);
    assert.equal(typed.types, [
      '// typed/dist/index.d.ts\nexport { greet } from "./greet.js";\nexport type { Options } from "./options.ts";\n',
      '// typed/dist/greet.d.ts\nexport declare function greet(name: string): string;\n',
      '// typed/dist/options.d.ts\nexport interface Options { loud?: boolean }\n',
    ].join('\n'));
    assert.equal((await runtime.describe('typed/extra')).types, '// typed/dist/extra.d.ts\nexport declare const extra: number;\n');
    const untyped = await runtime.describe('untyped');
    assert.match(untyped.description, /\(declarations from @types\/untyped\)$/);
    assert.equal(untyped.types, '// @types/untyped/index.d.ts\ndeclare const value: number;\nexport default value;\n');
    assert.equal((await runtime.describe('bare')).types, '// bare@2.0.0 ships no TypeScript declarations, and @types for it is not installed.');
    const escaping = await runtime.describe('escaping');
    assert.ok(!escaping.types.includes('SECRET_DECLARATION'), escaping.types);
    const huge = await runtime.describe('huge');
    assert.ok(huge.types.length < 70_000, `${huge.types.length} characters`);
    assert.match(huge.types, /\/\/ … \d+ more declaration file\(s\) not shown \(over 65536 characters\): huge\/part\d+\.d\.ts/);
    // Not an allowed package, not installed, or a path out of the package: said as for any target.
    assert.equal((await runtime.describe('left-pad')).types, '"left-pad" not found.');
    assert.match((await runtime.describe('missing')).types, /^Cannot import "missing": the package is allowed but not installed/);
    assert.match((await runtime.describe('typed/../x')).types, /may not contain "\." or "\.\." segments/);

    // From inside a durable run's program, over a real package.
    const realRuntime = createCodemodeRuntime({ executor: real, connectors: [], ...storeOptions(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-describe-real-'))) });
    const out = await realRuntime.execute({ code: 'async () => { const d = await codemode.describe("zod"); return { kind: d.kind, version: d.version, head: d.types.split("\\n")[0] }; }' });
    assert.equal(out.status, 'completed', out.error);
    assert.deepEqual(out.result, { kind: 'package', version: require('zod/package.json').version, head: '// zod/index.d.cts' });
  } finally {
    await ex.dispose();
    await real.dispose();
  }
});

test("the runtime tool's description tells the model which packages it may import, and how to read their types", async () => {
  const allowing = new IsolateExecutor({ workers: 1, packages: ['zod', 'ms', 'not-installed-here'] });
  const plain = new IsolateExecutor({ workers: 1 });
  try {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-tool-packages-'));
    const description = createCodemodeRuntime({ executor: allowing, connectors: [], ...storeOptions(dir) }).tool().description;
    const section = description.slice(description.indexOf('\n## Packages\n'));
    assert.equal(section, [
      '\n## Packages\n',
      'Programs may also import these npm packages (`import { x } from "name"`, or `await import("name")`); `codemode.describe("name")` (or a subpath, such as `"name/sub"`) returns their TypeScript declarations:',
      // Each with its version and its package.json's description.
      `- \`ms\` ${require('ms/package.json').version} — Tiny millisecond conversion utility`,
      `- \`zod\` ${require('zod/package.json').version} — TypeScript-first schema declaration and validation library with static type inference`,
    ].join('\n'));
    // Without packages the text is Cloudflare's, with no such section.
    const without = createCodemodeRuntime({ executor: plain, connectors: [], ...storeOptions(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-tool-plain-'))) }).tool().description;
    assert.ok(!without.includes('## Packages'));
    assert.equal(description.slice(0, description.indexOf('\n\n## Packages\n')), without);
  } finally {
    await allowing.dispose();
    await plain.dispose();
  }
});

test('search() finds the allowed packages by name and description, in the runtime and in a program; without packages its answers are the connectors\' and snippets\' alone', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-search-packages-'));
  const allowing = new IsolateExecutor({ workers: 1, packages: ['papaparse', 'zod', 'not-installed-here'] });
  const plain = new IsolateExecutor({ workers: 1 });
  try {
    const tracker = new Tracker(path.join(dir, 'tracker.json'), {});
    const runtime = createCodemodeRuntime({ executor: allowing, connectors: [tracker], ...storeOptions(dir) });
    const found = await runtime.search('parse csv');
    assert.deepEqual(found.results[0], {
      path: 'papaparse',
      connector: 'package',
      method: 'papaparse',
      description: `npm package papaparse@${require('papaparse/package.json').version}, which programs may import: ${require('papaparse/package.json').description}`,
      kind: 'package',
      score: found.results[0].score,
    });
    assert.ok(found.results[0].score > 0);
    // By name; a package allowed but not installed is not offered.
    assert.deepEqual((await runtime.search('zod')).results.map((r) => [r.kind, r.path]), [['package', 'zod']]);
    assert.equal((await runtime.search('installed')).total, 0);
    // Connector methods still come first where they match better.
    const issues = await runtime.search('create issue');
    assert.equal(issues.results[0].path, 'tracker.create_issue');
    assert.ok(issues.results.every((r) => r.kind !== 'package'));
    // In a program, the same answer.
    const run = await runtime.execute({ code: 'async () => (await codemode.search("csv")).results.map((r) => r.kind + ":" + r.path)' });
    assert.equal(run.status, 'completed', run.error);
    assert.deepEqual(run.result, ['package:papaparse']);
    // Without packages: nothing of the kind.
    const without = createCodemodeRuntime({ executor: plain, connectors: [tracker], ...storeOptions(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-search-plain-'))) });
    assert.equal((await without.search('parse csv')).total, 0);
  } finally {
    await allowing.dispose();
    await plain.dispose();
  }
});
