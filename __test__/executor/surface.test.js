'use strict';
// The hand-written copies of Rust's tables, pinned to the native ones (issue 34, "tables that
// cannot drift"). The bounds are declared once, in src/limits.rs (`BOUNDS`, exported as
// `boundTable()`); run reports and stats are napi objects (src/api/report.rs). What restates
// them by hand is checked here against what the addon gives at run time, in the isolation mode
// the suite runs (scripts/test.js runs this folder in 'process' and in 'thread'):
// - lib/index.d.ts: the bounds of `IsolateExecutorOptions` (top level and `limits`) and the
//   defaults their comments give, the keys of `ExecutorLimits` and `ExecutorStats`, the
//   per-run bounds of `NativeExecuteRequest` (read with the TypeScript compiler's parser);
// - the defaults (and ranges, where written) in README.md's bounds tables, the table of
//   docs/guides/bounds.md and the table of docs/deploying.md, units converted (MiB, ms, s);
//   the defaults are the rows' own (`default`), which `executor.bounds` of an executor made
//   with no options must equal; the fields of docs/deploying.md's `stats()` table;
// - lib/executor/index.js: the per-run bounds `REQUEST_OPTIONS` takes (derived from the table)
//   each reach the native range check, by name; `notStarted()` (built natively by
//   `notStartedReport`) is the report the runner gives a program over `maxCodeBytes`.
// A new bound, a renamed stat or a changed default fails here until every copy follows.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ts = require('typescript');
const { boundTable, NativeExecutor } = require('../../binding.js');
const { engineCommand } = require('../../lib/executor/engine-command.js');
const { REQUEST_OPTIONS, notStarted } = require('../../lib/executor/index.js');
const { IsolateExecutor } = require('../helpers.js');

const ROOT = path.join(__dirname, '..', '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const sorted = (names) => [...names].sort();

const BOUNDS = boundTable();
const byName = new Map(BOUNDS.map((b) => [b.name, b]));
const names = (rows) => sorted(rows.map((b) => b.name));
// What an executor made with no options has, by name: the table's own defaults.
const DEFAULTS = Object.fromEntries(BOUNDS.map((b) => [b.name, b.default]));
const SETTABLE = BOUNDS.filter((b) => b.place !== 'derived');
// A per-run bound is one a request may set: `maxArrayLikeLength` has the per-run scope too, but
// it is derived (it follows the run's `memoryLimitMb`), never passed.
const PER_RUN = SETTABLE.filter((b) => b.scope === 'run');

// The isolation this pass runs in (scripts/test.js sets the variable; 'process' otherwise).
const ISOLATION = process.env.CODEMODE_EXECUTOR_ISOLATION === 'thread' ? 'thread' : 'process';

// ---- lib/index.d.ts, read with the TypeScript parser ----

const DTS = ts.createSourceFile('index.d.ts', read('lib/index.d.ts'), ts.ScriptTarget.Latest, true);
const BINDING_DTS = ts.createSourceFile('binding.d.ts', read('binding.d.ts'), ts.ScriptTarget.Latest, true);

function docOf(node) {
  return ts.getJSDocCommentsAndTags(node)
    .map((doc) => ts.getTextOfJSDocComment(doc.comment) || '')
    .join(' ');
}

// The members of a type literal or interface body: name → { optional, doc, type }.
function members(list) {
  const out = new Map();
  for (const member of list) {
    if (!ts.isPropertySignature(member)) continue;
    const name = member.name.getText();
    assert.ok(!out.has(name), `${name} is declared twice`);
    out.set(name, { optional: member.questionToken !== undefined, doc: docOf(member), type: member.type });
  }
  return out;
}

function interfaceMembers(source, name) {
  const found = source.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === name);
  assert.ok(found, `${source.fileName} declares interface ${name}`);
  return members(found.members);
}

// ---- the documentation's tables ----

// A cell's text without its inline-code backticks.
const plain = (cell) => cell.replace(/`/g, '');

/** The tables of a Markdown page whose header reads `| bound | default |` or `| option | default |`. */
function boundTables(file) {
  const lines = read(file).split('\n');
  const tables = [];
  for (let i = 0; i < lines.length; i++) {
    const header = cells(lines[i]);
    if (!header || !['bound', 'option'].includes(header[0]) || header[1] !== 'default') continue;
    const rows = [];
    let j = i + 2; // past the |---| line
    for (; j < lines.length && lines[j].startsWith('|'); j++) rows.push({ line: j + 1, cells: cells(lines[j]) });
    tables.push({ header, rows, line: i + 1 });
    i = j;
  }
  return tables;
}

function cells(line) {
  if (!line.startsWith('|')) return null;
  return line.slice(1, line.lastIndexOf('|')).split('|').map((c) => c.trim());
}

// The bounds a row's first cell names: the inline-code names before its description (after
// ` — ` or in parentheses), `limits.` marking a message bound. A row naming no code (the fixed
// bounds: timers, error text, program nesting) names no bound.
function rowNames(cell) {
  const head = cell.split(' — ')[0].replace(/\([^)]*\)/g, '');
  return [...head.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

// Units as the docs write them, by what a bound counts. A bound's option name says which:
// `…Bytes` are bytes, `…Mb` MiB, a bound of kind `milliseconds` ms; others are counts (a word
// after the number, "waiting runs", is not a unit).
const UNITS = {
  bytes: { '': 1, B: 1, byte: 1, bytes: 1, KiB: 1024, MiB: 1024 ** 2, MB: 1024 ** 2, GiB: 1024 ** 3, GB: 1024 ** 3 },
  mib: { '': 1, MiB: 1, MB: 1, GiB: 1024, GB: 1024 },
  ms: { '': 1, ms: 1, s: 1000, min: 60_000, day: 86_400_000, days: 86_400_000 },
  count: { '': 1 },
};
function family(bound) {
  if (bound.name.endsWith('Bytes')) return 'bytes';
  if (bound.name.endsWith('Mb')) return 'mib';
  if (bound.kind === 'milliseconds') return 'ms';
  return 'count';
}

// "10 000", "1 048 576", "0.5": spaces (plain, no-break, narrow) group thousands.
const NUMBER = /(\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)|\d+(?:\.\d+)?)(?:\s*([A-Za-z]+))?/g;

// The amounts written in `text` ("8 / 32 / 32 MiB"), one per bound, in each bound's unit. A
// number without a unit takes the unit written after a later number of the same cell
// ("8 / 32 / 32 MiB" is three MiB values), when that unit is one of its bound's.
function amounts(text, bounds, where) {
  const parts = text.split('/');
  assert.equal(parts.length, bounds.length, `${where}: "${text}" gives ${parts.length} values for ${bounds.length} bounds`);
  const found = parts.map((part, i) => {
    const numbers = [...part.matchAll(NUMBER)];
    assert.equal(numbers.length, 1, `${where}: "${part.trim()}" (${bounds[i].name}) is not one number`);
    const [, digits, word] = numbers[0];
    return { value: Number(digits.replace(/[ \u00a0\u202f]/g, '')), unit: word || '' };
  });
  return found.map(({ value, unit }, i) => {
    const units = UNITS[family(bounds[i])];
    let scale = units[unit];
    if (scale === undefined) scale = family(bounds[i]) === 'count' ? 1 : undefined; // a word after a count
    assert.ok(scale !== undefined, `${where}: ${bounds[i].name} written in "${unit}", not one of ${Object.keys(units).filter(Boolean).join(', ')}`);
    if (unit === '') {
      const later = found.slice(i + 1).map((f) => f.unit).filter((u) => u !== '' && units[u] !== undefined).pop();
      if (later !== undefined) scale = units[later];
    }
    return value * scale;
  });
}

// Defaults that depend on the machine or on other bounds, written as words: what the words
// must say, and what the native default must then be.
const WORDED = {
  workers: { words: /available parallelism/, holds: (value) => value === os.availableParallelism() },
  processMemoryLimitMb: { words: /derived|every worker/, holds: (value, limits) => value === processMemoryFormula()(limits) },
};

// deploying.md's formula for the derived `processMemoryLimitMb`, evaluated over the limits.
function processMemoryFormula() {
  const line = read('docs/deploying.md').split('\n').find((l) => /^\(workers\b.*×.*memoryLimitMb/.test(l));
  assert.ok(line, 'docs/deploying.md writes the formula of the derived processMemoryLimitMb');
  const expression = line.replace(/MiB/g, '').replace(/×/g, '*').replace(/[A-Za-z]+/g, (word) => {
    if (word === 'min') return 'Math.min';
    assert.ok(byName.has(word), `the processMemoryLimitMb formula names ${word}, not a bound`);
    return `limits.${word}`;
  });
  return new Function('limits', `return ${expression};`);
}

// Checks one written default (a table cell, a "Default …" comment) for `bounds`.
function checkDefault(text, bounds, defaults, where) {
  // A range in parentheses ("128 MB (16–16 384)") is checked as one; other asides are dropped.
  const asides = [...text.matchAll(/\(([^)]*)\)/g)].map((m) => m[1]);
  for (const aside of asides.filter((a) => /^[\d\s\u00a0\u202f]+–[\d\s\u00a0\u202f]+$/.test(a))) {
    for (const bound of bounds) checkRange(aside, bound, where);
  }
  const value = plain(text.replace(/\([^)]*\)/g, '')).trim();
  if (bounds.length === 1 && WORDED[bounds[0].name] && !/^\d/.test(value)) {
    const { words, holds } = WORDED[bounds[0].name];
    assert.match(value, words, `${where}: ${bounds[0].name}'s default`);
    assert.ok(holds(defaults[bounds[0].name], defaults), `${where}: ${bounds[0].name} defaults to ${defaults[bounds[0].name]}, not "${value}"`);
    return;
  }
  const written = amounts(value, bounds, where);
  bounds.forEach((bound, i) => {
    assert.equal(written[i], defaults[bound.name], `${where}: ${bound.name} is written to default to ${written[i]}, natively ${defaults[bound.name]} ("${text}")`);
  });
}

// A range as written ("10–60 000", "1 ms – 1 day") against the row's min and max.
function checkRange(text, bound, where) {
  const ends = plain(text).split('–');
  assert.equal(ends.length, 2, `${where}: "${text}" is not a range`);
  const [min, max] = ends.map((end) => amounts(end, [bound], where)[0]);
  assert.deepEqual([min, max], [bound.min, bound.max], `${where}: ${bound.name}'s range is written ${min}–${max}, natively ${bound.min}–${bound.max}`);
}

// Every bound row of `file`'s tables, checked: the names are bounds in their place, the default
// (and the range column, where there is one) as the addon has them. Returns the names covered.
function checkTables(file, defaults) {
  const tables = boundTables(file);
  assert.ok(tables.length > 0, `${file} has a bounds table`);
  const covered = [];
  for (const { header, rows } of tables) {
    const range = header.indexOf('range');
    for (const { line, cells: row } of rows) {
      const where = `${file}:${line}`;
      const written = rowNames(row[0]);
      if (written.length === 0) continue;
      const bounds = written.map((name) => {
        const bare = name.replace(/^limits\./, '');
        const bound = byName.get(bare);
        assert.ok(bound, `${where}: ${name} is not a bound of boundTable()`);
        // `limits.` written on a row's first name stands for the names after it.
        const underLimits = written[0].startsWith('limits.');
        assert.equal(underLimits, bound.place === 'limits', bound.place === 'limits'
          ? `${where}: ${bare} is a message bound, written limits.${bare}`
          : `${where}: ${bare} is not a message bound, written without limits.`);
        return bound;
      });
      assert.ok(bounds.every((b) => b.place !== 'derived'), `${where}: a derived bound has no default to write`);
      checkDefault(row[1], bounds, defaults, where);
      if (range !== -1) for (const bound of bounds) checkRange(row[range], bound, where);
      covered.push(...bounds.map((b) => b.name));
    }
  }
  assert.equal(new Set(covered).size, covered.length, `${file} writes a bound in two rows: ${covered.join(', ')}`);
  return covered;
}

// ---- an executor of this pass's mode, with no options: the defaults, its limits and stats ----

let executor;
test.before(() => {
  executor = new IsolateExecutor();
});
test.after(async () => {
  if (executor) await executor.dispose();
});

test('boundTable() rows are whole and named once (what every copy is checked against)', () => {
  assert.ok(BOUNDS.length > 0);
  assert.equal(new Set(BOUNDS.map((b) => b.name)).size, BOUNDS.length);
  for (const b of BOUNDS) {
    assert.match(b.name, /^[a-z][A-Za-z]*$/);
    assert.ok(['top', 'limits', 'derived'].includes(b.place), `${b.name}: place ${b.place}`);
    assert.ok(['executor', 'run', 'process'].includes(b.scope), `${b.name}: scope ${b.scope}`);
    assert.ok(['integer', 'milliseconds'].includes(b.kind), `${b.name}: kind ${b.kind}`);
    assert.equal(typeof b.default, 'number', `${b.name}: default`);
    assert.ok(b.min <= b.default && b.default <= b.max, `${b.name}: default ${b.default} outside ${b.min}–${b.max}`);
  }
});

test('executor.bounds of an executor made with no options: each row\'s default', () => {
  const { isolation, ...limits } = executor.bounds;
  assert.equal(isolation, ISOLATION);
  assert.deepEqual(limits, DEFAULTS);
});

test('lib/index.d.ts IsolateExecutorOptions: the settable bounds of boundTable(), each in its place', () => {
  const options = interfaceMembers(DTS, 'IsolateExecutorOptions');
  const top = [...options.keys()].filter((k) => byName.has(k));
  assert.deepEqual(sorted(top), names(SETTABLE.filter((b) => b.place === 'top')), 'top-level bounds');
  const limits = options.get('limits');
  assert.ok(limits && limits.optional && ts.isTypeLiteralNode(limits.type), 'options.limits is an optional object type');
  const inLimits = members(limits.type.members);
  assert.deepEqual(sorted(inLimits.keys()), names(SETTABLE.filter((b) => b.place === 'limits')), 'bounds in options.limits');
  for (const [name, member] of [...options].filter(([k]) => byName.has(k)).concat([...inLimits])) {
    assert.ok(member.optional, `${name} is optional`);
  }
  // The other names are options the constructor knows: each is accepted (an unknown name is
  // refused first, before the out-of-range workers that keeps any executor from starting).
  for (const name of options.keys()) {
    if (byName.has(name)) continue;
    assert.throws(() => new IsolateExecutor({ [name]: undefined, workers: 0 }), { code: 'ERR_INVALID_ARGUMENT', message: /^workers must be/ },
      `IsolateExecutorOptions.${name} is an option of the executor`);
  }
});

test('lib/index.d.ts IsolateExecutorOptions: each bound\'s "Default …" is the native default', () => {
  const options = interfaceMembers(DTS, 'IsolateExecutorOptions');
  const all = [...options].concat([...members(options.get('limits').type.members)]).filter(([k]) => byName.has(k));
  for (const [name, { doc }] of all) {
    const match = /\bDefault:?\s+([^.;]*(?:\.\d[^.;]*)?)/.exec(doc);
    assert.ok(match, `lib/index.d.ts: ${name}'s comment gives its default ("Default …")`);
    checkDefault(match[1], [byName.get(name)], DEFAULTS, `lib/index.d.ts ${name}`);
    // A range written in the comment ("in MB (16–16384)") is the row's.
    for (const [, range] of doc.matchAll(/\(([\d\s\u00a0\u202f]+–[\d\s\u00a0\u202f]+)\)/g)) {
      checkRange(range, byName.get(name), `lib/index.d.ts ${name}`);
    }
  }
});

test('lib/index.d.ts ExecutorBounds and executor.bounds: every row of boundTable(), and isolation', () => {
  const expected = sorted([...BOUNDS.map((b) => b.name), 'isolation']);
  const declared = interfaceMembers(DTS, 'ExecutorBounds');
  assert.deepEqual(sorted(declared.keys()), expected, 'ExecutorBounds keys');
  assert.ok([...declared.values()].every((m) => !m.optional), 'every ExecutorBounds key is always there');
  const limits = executor.bounds;
  assert.deepEqual(sorted(Object.keys(limits)), expected, 'executor.bounds keys');
  assert.equal(limits.isolation, ISOLATION);
  for (const b of BOUNDS) assert.equal(typeof limits[b.name], 'number', `limits.${b.name}`);
});

// The stats keys that are not always there, and when they are.
const SOMETIMES = {
  crashLoop: () => false, // only while engines keep failing to start (process.test.js makes one)
  enginePids: () => ISOLATION === 'process',
};

test('lib/index.d.ts ExecutorStats: the keys of a real executor.stats()', async () => {
  assert.equal((await executor.execute({ code: 'async () => 1' })).result, 1);
  const stats = executor.stats();
  const declared = interfaceMembers(DTS, 'ExecutorStats');
  for (const key of Object.keys(stats)) assert.ok(declared.has(key), `stats().${key} is declared in ExecutorStats`);
  for (const [key, { optional }] of declared) {
    if (!optional) assert.ok(Object.hasOwn(stats, key), `ExecutorStats.${key} is in stats() (${ISOLATION})`);
  }
  const optional = [...declared].filter(([, m]) => m.optional).map(([k]) => k);
  assert.deepEqual(sorted(optional), sorted(Object.keys(SOMETIMES)), 'the optional ExecutorStats keys');
  for (const key of optional) assert.equal(Object.hasOwn(stats, key), SOMETIMES[key](), `stats().${key} (${ISOLATION})`);
  // crashLoop is the native stats' own optional field (binding.d.ts is generated from Rust).
  const native = interfaceMembers(BINDING_DTS, 'NativeStats');
  assert.ok(native.get('crashLoop') && native.get('crashLoop').optional, 'NativeStats.crashLoop');
  assert.equal(stats.isolation, ISOLATION);
});

// README, the bounds guide and deploying.md link to the generated reference
// (docs/reference/options.md, kept true by __test__/docs/reference.test.js) instead of copying
// its table, which drifted.
for (const file of ['README.md', 'docs/guides/bounds.md', 'docs/deploying.md']) {
  test(`${file}: links to the generated options reference instead of copying the bounds table`, () => {
    assert.deepEqual(boundTables(file).map((t) => `${file}:${t.line}`), [], 'a hand-written bounds table');
    assert.match(read(file), /\]\((?:\.\.\/|docs\/)?reference\/options\.md[#)]/, `${file} links to reference/options.md`);
  });
}

// The packages guide lists the bounds of its feature, not all: each row it has is checked.
test('docs/guides/programs-and-packages.md bounds table: each row\'s default', () => {
  const covered = checkTables('docs/guides/programs-and-packages.md', DEFAULTS);
  assert.ok(covered.length > 0);
});

test('REQUEST_OPTIONS and NativeExecuteRequest: the per-run bounds are boundTable()\'s per-run rows', () => {
  assert.deepEqual(sorted(REQUEST_OPTIONS.filter((k) => byName.has(k))), names(PER_RUN), 'per-run bounds of REQUEST_OPTIONS');
  const request = interfaceMembers(DTS, 'NativeExecuteRequest');
  assert.deepEqual(sorted([...request.keys()].filter((k) => byName.has(k))), names(PER_RUN), 'per-run bounds of NativeExecuteRequest');
  // The napi request (binding.d.ts, generated from src/api/executor.rs) takes them by name, in
  // one `bounds` map (`Overrides::parse`), never as fields of their own.
  const native = interfaceMembers(BINDING_DTS, 'NativeRequest');
  assert.ok(native.has('bounds'), 'NativeRequest.bounds');
  assert.deepEqual([...native.keys()].filter((k) => byName.has(k)), [], 'bounds as fields of NativeRequest');
  // The request type declares what REQUEST_OPTIONS accepts, the test hook aside.
  assert.deepEqual(sorted(request.keys()), sorted(REQUEST_OPTIONS.filter((k) => !k.startsWith('__'))), 'NativeExecuteRequest keys');
});

// A per-run bound the request takes must reach the native layer, where its range is checked
// (`Overrides::parse`): one past its maximum is refused there, naming it. A bound the JS layer
// accepted and dropped would run instead.
test('each per-run bound of a request reaches the native range check', async () => {
  assert.ok(PER_RUN.length > 0);
  for (const bound of PER_RUN) {
    await assert.rejects(
      async () => executor.execute({ code: 'async () => 1', [bound.name]: bound.max + 1 }),
      { code: 'ERR_INVALID_ARGUMENT', message: new RegExp(`^${bound.name} must be`) },
      `request.${bound.name} = ${bound.max + 1}`,
    );
  }
});

// docs/deploying.md's `stats()` fields are in the generated counters reference
// (docs/reference/stats.md, written from ExecutorStats and checked against a real stats() by
// __test__/docs/reference.test.js): deploying.md links to it instead of copying the table.
test('docs/deploying.md stats(): links to the generated counters reference, with no copy of its table', () => {
  const text = read('docs/deploying.md');
  assert.ok(!/^\| field \| meaning \|$/m.test(text), 'docs/deploying.md has a hand-written `| field | meaning |` table');
  assert.match(text, /\]\(reference\/stats\.md[#)]/, 'docs/deploying.md links to reference/stats.md');
});

test('notStarted() is the native report of a program over maxCodeBytes, key for key', async () => {
  const options = { isolation: ISOLATION, bounds: { workers: 1, maxCodeBytes: 16 } };
  if (ISOLATION === 'process') options.engineCommand = engineCommand();
  const native = new NativeExecutor(options);
  try {
    const code = 'async () => "longer than sixteen bytes"';
    const report = await native.execute({ code, runConfigJson: JSON.stringify({ resultMode: 'json', namespaces: [] }) }, () => {});
    assert.equal(report.errorBound, 'maxCodeBytes');
    const copy = notStarted(native.codeSizeBreach(Buffer.byteLength(code)));
    assert.deepEqual(sorted(Object.keys(copy)), sorted(Object.keys(report)), 'the keys of notStarted()');
    assert.deepEqual(copy, { ...report });
  } finally {
    await native.dispose();
  }
});

test('executor.limits, the old name of executor.bounds, gives the same values and warns once', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    assert.deepEqual(executor.limits, executor.bounds);
    assert.deepEqual(executor.limits, executor.bounds);
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  const renamed = warnings.filter((w) => w.code === 'CODEMODE_RENAMED_OPTION');
  assert.equal(renamed.length, 1);
  assert.match(renamed[0].message, /executor\.limits is now named executor\.bounds/);
});
