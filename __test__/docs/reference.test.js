'use strict';
// docs/reference/ (options, errors, counters) is generated from the code by
// scripts/reference.js, so that the reference cannot say what the code no longer does. This
// test fails when:
// - a committed page differs from what the script generates now (a bound, a default, a range,
//   an option, a code or a field changed, and `npm run docs:reference` was not run);
// - a bound, an option the code accepts, a fault code, an errorKind or a counter has no
//   description, or lib/index.d.ts disagrees with the code (a default, an option it declares
//   that the code refuses);
// - the fields executor.stats() and a result's timing and stats really have are not the ones
//   lib/index.d.ts documents (the counters page is written from those declarations);
// - a settable bound is missing from the bounds guide's per-boundary list (the one fact about a
//   bound the generated table does not carry).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const { render, differences, parseInterfaces } = require('../../scripts/reference.js');
const { IsolateExecutor } = require('../../lib/index.js');

test('the committed reference pages are what scripts/reference.js generates now', async () => {
  const { pages } = await render();
  assert.deepEqual(differences(pages), [], 'docs/reference/ is stale: run `npm run docs:reference`');
});

test('every bound, option, code and counter has a description, and lib/index.d.ts agrees with the code', async () => {
  const { problems } = await render();
  assert.deepEqual(problems, []);
});

test('`node scripts/reference.js --check` exits 0 on a fresh checkout', () => {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'reference.js'), '--check'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
});

test('docs/guides/bounds.md names the boundary of every settable bound, once', () => {
  const { boundTable } = require('../../lib/native.js');
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'guides', 'bounds.md'), 'utf8');
  const section = text.split('### Which boundary each bound rests on')[1];
  assert.ok(section, 'docs/guides/bounds.md has a "Which boundary each bound rests on" section');
  const listed = [...section.split(/\n#{1,3} /)[0].matchAll(/`(\w+)`/g)].map((m) => m[1]);
  const settable = boundTable().filter((b) => b.place !== 'derived').map((b) => b.name);
  assert.deepEqual(settable.filter((n) => !listed.includes(n)), [], 'bounds with no boundary');
  assert.deepEqual(listed.filter((n, i) => listed.indexOf(n) !== i), [], 'bounds under two boundaries');
});

test('stats(), timing and a result\'s stats have exactly the fields lib/index.d.ts documents', async () => {
  const interfaces = parseInterfaces(fs.readFileSync(path.join(ROOT, 'lib', 'index.d.ts'), 'utf8'));
  const declared = (name) => interfaces.get(name).members;
  const executor = new IsolateExecutor({ isolation: 'thread', workers: 1 });
  try {
    const result = await executor.execute({ code: 'async () => 1' });
    const check = (name, value) => {
      const members = declared(name);
      const keys = Object.keys(value).sort();
      const required = members.filter((m) => !m.optional).map((m) => m.name).sort();
      const all = new Set(members.map((m) => m.name));
      assert.deepEqual(required.filter((k) => !keys.includes(k)), [], `${name}: fields lib/index.d.ts declares that are missing`);
      assert.deepEqual(keys.filter((k) => !all.has(k)), [], `${name}: fields lib/index.d.ts does not declare`);
    };
    check('ExecutorStats', executor.stats());
    check('RunTiming', result.timing);
    check('RunStats', result.stats);
    check('TimingPhase', result.timing.phases[0]);
  } finally {
    await executor.dispose();
  }
});
