'use strict';
// Speed and memory figures live in one place, and each one can be traced to a committed run
// (documentation review of 2026-12-04, §3 items 3–4: pages quoted per-call costs, memory and
// throughput that disagreed with each other and with the results files, some from no file at all):
// - docs/benchmark.md is the only page that states measured figures. Every block of it
//   (a paragraph, a list item, a table row) that contains a measured figure names a committed
//   results file (`bench/RESULTS.md`, `bench/RESULTS.load.md`, `bench/RESULTS.store.md`,
//   `bench/RESULTS.scaling.md`, `bench/RESULTS.packages.md`, or a `.json` beside them), and every
//   number of a block that names one occurs in one of the files it names, with the same digits
//   (a number is digits with an optional decimal part; spaces or commas between groups of three
//   digits are dropped, so "9 200 000" is 9200000).
// - No other page in docs/, and not README.md, contains a measured figure: they say what is
//   faster or larger in words and link to the heading of docs/benchmark.md that gives the number.
// A measured figure, narrowly: in prose (fenced and inline code left out), a number or range
// ("7.9–9.1") directly followed by a unit of time, size, rate or ratio (µs, ms, KB, kB, KiB, MB,
// MiB, GB, GiB, %, runs/s, calls/s, decisions/s, …/s, a ratio written "0.70×" or "0.70x"), or a
// number in a table column whose header names such a unit. Configuration is not measurement:
// the defaults, minimums and maximums of the native bound table (`boundTable()`, converted to the
// units pages write) and the named constants listed in CONFIG below, each with where it is
// defined, may appear anywhere; the harness's own settings (BENCH_SETTINGS) may appear in
// docs/benchmark.md. A measured figure that happens to equal one of them goes unnoticed; that is
// the price of a rule simple enough never to flag a bound.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { boundTable } = require('../../lib/native.js');

const ROOT = path.join(__dirname, '..', '..');
const BENCHMARK = 'docs/benchmark.md';
// Cloudflare's contract: the figures it states are Cloudflare's defaults (60,000 ms), configuration, not measurements.
const QUOTED = new Set(['docs/cloudflare-compat.md']);

const UNIT = String.raw`(?:µs|μs|ms|KiB|KB|kB|MiB|MB|GiB|GB|%|(?:runs|calls|decisions|requests)/s)(?:/s)?`;
const NUMBER = String.raw`\d{1,3}(?:[ \u00a0\u202f,]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
// A number or a range of them, then a unit: "0.48 ms", "7.9–9.1 ms", "+1161 MB"; or a ratio, its
// sign attached: "0.70×" (a spaced "6 × 128" is a product).
const FIGURE = new RegExp(String.raw`(?<![\w.])(${NUMBER})(?:\s*[–-]\s*(${NUMBER}))?(?:\s?(${UNIT})|(×|x))(?![\w])`, 'gu');
const FIGURE_IN_CELL = new RegExp(FIGURE.source, 'u');
const ANY_NUMBER = new RegExp(String.raw`(?<![\w.])(${NUMBER})(?![\w]|\.\d)`, 'gu');
const CITATION = /bench\/RESULTS(?:\.[a-z]+)?\.(?:md|json)/g;
const UNIT_IN_HEADER = new RegExp(String.raw`(?<![\w])(?:µs|ms|MB|MiB|GB|%|(?:runs|calls|decisions)/s)(?![\w])`, 'u');

function canonical(number, unit) {
  const digits = number.replace(/[ \u00a0\u202f,]/g, '');
  const units = { μs: 'µs', KiB: 'KB', kB: 'KB', MiB: 'MB', GiB: 'GB', x: '×' };
  return `${digits} ${units[unit] || unit}`;
}

/** Configuration values, as "<digits> <unit>" after canonical(). */
function configuration() {
  const out = new Map();
  const add = (value, unit, why) => out.set(canonical(String(value), unit), why);
  const bytes = (n, why) => {
    for (const [unit, size] of [['GB', 2 ** 30], ['MB', 2 ** 20], ['KB', 2 ** 10]]) {
      if (n >= size && n % size === 0) return add(n / size, unit, why);
    }
  };
  for (const bound of boundTable()) {
    for (const key of ['default', 'min', 'max']) {
      const value = bound[key];
      if (!Number.isFinite(value)) continue;
      const why = `boundTable(): ${bound.name} ${key}`;
      if (bound.kind === 'milliseconds') add(value, 'ms', why);
      else if (bound.name.endsWith('Bytes')) bytes(value, why);
      else if (bound.name.endsWith('Mb')) add(value, 'MB', why);
    }
  }
  for (const [figure, why] of CONFIG) out.set(canonical(...figure.split(' ')), why);
  return out;
}

// Named constants and worked examples of the configuration that pages quote, with their source.
const CONFIG = [
  ['30000 ms', 'leaseMs default (lib/runtime/)'],
  ['5000 ms', 'PostgreSQL connectTimeoutMs default (src/store/postgres.rs)'],
  ['250 ms', 'overflow_after (src/limits.rs); the longest gap between memory samples'],
  ['100 ms', 'LONG_RUN_CPU (src/pool/admission.rs)'],
  ['50 ms', 'termination_grace (src/limits.rs)'],
  ['20 ms', 'restart_backoff_min (src/limits.rs, src/process/host/death.rs)'],
  ['2 ms', 'STANDBY_CHECK (src/process/engine/input.rs)'],
  ['50 µs', 'REPLY_SPIN (src/sandbox/spin.rs)'],
  ['20 µs', 'LEADER_GRACE (src/process/engine/input.rs)'],
  ['1 MB', 'MAX_HELLO_BYTES, 1 MiB (src/process/engine/handshake.rs)'],
  ['1 GB', 'HARD_MAX_FRAME_BYTES, 1 GiB (src/protocol/mod.rs); also the largest object V8 makes'],
  ['8 KB', 'STDERR_TAIL_BYTES (src/process/host/mod.rs)'],
  ['64 KB', 'MAX_TYPES_CHARS (lib/package-types.js)'],
  ['1536 MB', 'the fixed part of processMemoryLimitMb (src/limits.rs)'],
  ['1.5 GB', 'the same 1 536 MiB'],
  ['2336 MB', "processMemoryLimitMb of deploying.md's sample configuration, by the formula there"],
  ['256 MB', 'PROGRAM_STRIP_STACK_BYTES (src/limits.rs); 8 × maxReplyBytes, the unread-input limit'],
  ['4 MB', 'WORKER_STACK_BYTES (src/pool/mod.rs)'],
  ['2 MB', 'the codemode-v8-anchor thread stack (src/sandbox/)'],
  ['1280 MB', 'HEAP_GRANT (src/sandbox/mod.rs)'],
  ['80 %', "deploying.md's alert threshold on queued / maxQueue (advice, not a measurement)"],
  ['1 ×', "a ratio's reference point (above 1× is slower)"],
];

// Settings of the harness (bench/orchestrate.js, bench/workloads.js), not results.
const BENCH_SETTINGS = new Set(['10 ms', '2000 ms', '50 ms', '1 MB', '250 ms', '20 %', '50 KB'].map((f) => canonical(...f.split(' '))));

function markdownFiles(dir) {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(rel);
    return entry.name.endsWith('.md') ? [rel] : [];
  });
}

/** The page without its fenced blocks, line numbers kept (fences become blank lines). */
function withoutFences(text) {
  const lines = text.split('\n');
  let fence = null;
  return lines.map((line) => {
    const open = /^[ \t]*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
      return '';
    }
    if (open) {
      fence = open[1];
      return '';
    }
    return line;
  });
}

/** Blocks of a page: paragraphs, list items and table rows, each `{ line, raw, prose, header }`. */
function blocks(text) {
  const out = [];
  let current = null;
  let header = null; // the header cells of the table being read
  const flush = () => {
    if (current) out.push(current);
    current = null;
  };
  withoutFences(text).forEach((line, i) => {
    if (/^\s*\|/.test(line)) {
      flush();
      const cells = line.trim().replace(/^\||\|$/g, '').split('|');
      if (cells.every((c) => /^\s*:?-+:?\s*$/.test(c))) return;
      if (!header) header = cells;
      else out.push({ line: i + 1, raw: line, cells, header });
      return;
    }
    header = null;
    if (/^\s*$/.test(line) || /^#{1,6}\s/.test(line)) return flush();
    if (/^\s*(?:[-*]|\d+\.)\s/.test(line)) flush();
    if (!current) current = { line: i + 1, raw: '' };
    current.raw += `${line}\n`;
  });
  flush();
  for (const block of out) block.prose = block.raw.replace(/`[^`\n]*`/g, ' ');
  return out;
}

/** Measured figures of a block: `{ text }` for each, configuration left out. */
function figures(block, allowed) {
  const found = [];
  const keep = (text, numbers, unit) => {
    if (numbers.some((number) => !allowed.has(canonical(number, unit)))) found.push({ text });
  };
  for (const m of block.prose.matchAll(FIGURE)) keep(m[0], [m[1], m[2]].filter(Boolean), m[3] || m[4]);
  if (block.header) {
    block.cells.forEach((cell, column) => {
      const unit = UNIT_IN_HEADER.exec(block.header[column] || '');
      if (!unit) return;
      const plain = cell.replace(/`[^`]*`/g, ' ');
      if (FIGURE_IN_CELL.test(plain)) return; // its unit is written out: found above
      for (const m of plain.matchAll(ANY_NUMBER)) keep(m[0], [m[1]], unit[0]);
    });
  }
  return found;
}

function read(rel) {
  return fs.readFileSync(path.join(ROOT, rel), 'utf8');
}

/** Does `digits` occur in the file as a whole number (not part of a longer one)? */
function occursIn(text, digits) {
  const escaped = digits.replace('.', '\\.');
  return new RegExp(String.raw`(?<![\d.])${escaped}(?![\d]|\.\d)`).test(text.replace(/(\d)[ \u00a0\u202f,](?=\d{3}(?!\d))/g, '$1'));
}

const CONFIGURATION = configuration();

test('docs/benchmark.md: every figure names its results file and occurs in it with the same digits', () => {
  const allowed = new Set([...CONFIGURATION.keys(), ...BENCH_SETTINGS]);
  const problems = [];
  let checked = 0;
  for (const block of blocks(read(BENCHMARK))) {
    const cited = [...new Set(block.raw.match(CITATION) || [])];
    if (cited.length === 0) {
      for (const figure of figures(block, allowed)) {
        problems.push(`${BENCHMARK}:${block.line}: "${figure.text}" names no results file (bench/RESULTS*.md) in its paragraph, list item or table row`);
      }
      continue;
    }
    const missing = cited.filter((file) => !fs.existsSync(path.join(ROOT, file)));
    if (missing.length > 0) {
      problems.push(`${BENCHMARK}:${block.line}: cites ${missing.join(', ')}, which is not committed`);
      continue;
    }
    const texts = cited.map(read);
    for (const m of block.prose.matchAll(ANY_NUMBER)) {
      const digits = m[1].replace(/[ \u00a0\u202f,]/g, '');
      checked++;
      if (!texts.some((text) => occursIn(text, digits))) {
        problems.push(`${BENCHMARK}:${block.line}: ${m[1]} is not in ${cited.join(' or ')}`);
      }
    }
  }
  assert.ok(checked > 20, `only ${checked} numbers were checked against results files`);
  assert.deepEqual(problems, []);
});

const OTHER_PAGES = markdownFiles('docs')
  .filter((page) => page !== BENCHMARK && !QUOTED.has(page))
  .sort();

test('no page in docs/ but benchmark.md states a measured figure (they link to it instead)', () => {
  const problems = [];
  for (const page of OTHER_PAGES) {
    for (const block of blocks(read(page))) {
      for (const figure of figures(block, CONFIGURATION)) problems.push(`${page}:${block.line}: "${figure.text}"`);
    }
  }
  assert.deepEqual(problems, []);
});

test('README.md states no measured figure (its speed sentence links to docs/benchmark.md)', () => {
  const problems = [];
  for (const block of blocks(read('README.md'))) {
    for (const figure of figures(block, CONFIGURATION)) problems.push(`README.md:${block.line}: "${figure.text}"`);
  }
  assert.deepEqual(problems, []);
});

test('the figure rule finds figures and lets configuration through', () => {
  const found = (text) => figures(blocks(text)[0], CONFIGURATION).map((f) => f.text);
  assert.deepEqual(found('a call costs about 0.05 ms, or 60 µs, and 1 250 runs/s.'), ['0.05 ms', '60 µs', '1 250 runs/s']);
  assert.deepEqual(found('it took 7.9–9.1 ms, 0.70× the wall time, +1161 MB RSS, 14 % more CPU.'), ['7.9–9.1 ms', '0.70×', '1161 MB', '14 %']);
  assert.deepEqual(found('| store | decisions/s |\n| --- | --- |\n| file | 4477 |'), ['4477']);
  assert.deepEqual(found('`timeout` is 60 000 ms, `memoryLimitMb` 128 MB (16–16 384), replies 32 MiB, leases 30 000 ms.'), []);
  assert.deepEqual(found('A sample: `await sleep(10 ms)` in code, and\n```js\nconst t = 5 ms;\n```'), []);
  assert.ok(occursIn('iterations 9200000 and 50.2 ms', '9200000'));
  assert.ok(!occursIn('iterations 9200000 and 50.2 ms', '50'));
  assert.ok(!occursIn('0.0513', '0.051'));
});
