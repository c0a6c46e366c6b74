'use strict';
// truncateResponse / truncateResult (docs/cloudflare-compat.md §12): the spec's exact examples, the "same reference"
// returns, and output deep-equal to Cloudflare's own helpers (@cloudflare/codemode 0.5.6, used
// only as a black-box oracle) over a varied corpus. The package entry imports
// `cloudflare:workers`, so the helpers' chunk is imported by file (its name is fixed for the
// pinned version); `n` is truncateResult and `t` truncateResponse in its minified exports.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { truncateResult, truncateResponse } = require('../../lib/cloudflare/truncate.js');

const CF_CHUNK = path.join(__dirname, '..', '..', 'node_modules', '@cloudflare', 'codemode', 'dist', 'truncate-Dd-VZZYQ.js');
let cf;
test.before(async () => {
  const chunk = await import(pathToFileURL(CF_CHUNK).href);
  cf = { truncateResult: chunk.n, truncateResponse: chunk.t };
  assert.equal(typeof cf.truncateResult, 'function');
  assert.equal(typeof cf.truncateResponse, 'function');
});

const x = (n, ch = 'x') => ch.repeat(n);
const json = (value) => JSON.stringify(value);
const TAIL = (tokens, limit) =>
  `\n\n--- TRUNCATED ---\nResponse was ~${tokens} tokens (limit: ${limit}). Narrow the request to reduce response size.`;

// ---- The spec's own words ------------------------------------------------------------------

test('truncateResponse: unchanged up to 24,000 chars, then the prefix and the marker text', () => {
  const fits = x(24_000);
  assert.equal(truncateResponse(fits), fits);
  assert.equal(truncateResponse(x(30_000)), x(24_000) + TAIL('7,500', '6,000'));
  // The limit shown is maxTokens even when maxChars is given; tokens are ceil(length / 4).
  assert.equal(truncateResponse('abcdefghij', { maxChars: 4 }), 'abcd' + TAIL(3, '6,000'));
  assert.equal(truncateResponse('abcdefghij', { maxTokens: 2 }), 'abcdefgh' + TAIL(3, 2));
  assert.equal(truncateResponse(x(1_234_567), { maxTokens: 1500 }), x(6000) + TAIL('308,642', '1,500'));
});

test('spec example: an array of 500 small objects keeps {i:0} … {i:17} and counts the rest', () => {
  const value = { items: Array.from({ length: 500 }, (_, i) => ({ i })) };
  const expected = {
    items: [...Array.from({ length: 18 }, (_, i) => ({ i })), '--- TRUNCATED --- 482 more items'],
  };
  assert.deepEqual(truncateResult(value, { maxChars: 200 }), expected);
});

test('spec example: a long string keeps 144 chars and says how long it was; siblings untouched', () => {
  const value = { a: x(1000), b: 1, c: 'short' };
  const out = truncateResult(value, { maxChars: 200 });
  assert.deepEqual(out, { a: x(144) + ' --- TRUNCATED --- 1,000 chars', b: 1, c: 'short' });
  assert.equal(json(out).length, 200);
});

test('truncateResult: strings go through truncateResponse', () => {
  assert.equal(truncateResult('abcdef', { maxChars: 2 }), 'ab' + TAIL(2, '6,000'));
  // A string is measured by its length, not its JSON (escapes do not count).
  const quotes = x(50, '"');
  assert.equal(truncateResult(quotes, { maxChars: 60 }), quotes);
});

test('truncateResult: returns the very same value when it fits or cannot be measured', () => {
  const fits = { a: [1, 2, 3], b: 'ok' };
  assert.equal(truncateResult(fits), fits);
  assert.equal(truncateResult(fits, { maxChars: json(fits).length }), fits);
  const cycle = { big: x(100) };
  cycle.self = cycle;
  assert.equal(truncateResult(cycle, { maxChars: 10 }), cycle);
  const withBigInt = { n: 10n ** 40n, s: x(100) };
  assert.equal(truncateResult(withBigInt, { maxChars: 10 }), withBigInt);
  const fn = () => x(100);
  assert.equal(truncateResult(fn, { maxChars: 0 }), fn);
  assert.equal(truncateResult(undefined, { maxChars: 0 }), undefined);
  assert.equal(truncateResult(Symbol.for('s'), { maxChars: 0 }), Symbol.for('s'));
});

test('truncateResult: a new value in its JSON form, the input left as it was', () => {
  class Report {
    constructor() {
      this.hidden = x(500);
    }
    toJSON() {
      return { kind: 'report', body: x(300) };
    }
  }
  const input = { report: new Report(), gone: undefined, fn() {}, list: [undefined, x(300)] };
  const before = json(input);
  const out = truncateResult(input, { maxChars: 400 });
  assert.notEqual(out, input);
  assert.equal(json(input), before);
  assert.ok(json(out).length <= 400);
  assert.equal(Object.getPrototypeOf(out.report), Object.prototype);
  assert.equal(out.report.kind, 'report');
  assert.ok(!('gone' in out) && !('fn' in out));
  assert.equal(out.list[0], null);
});

test('truncateResult: a scalar that cannot shrink falls back to truncateResponse of its JSON', () => {
  assert.equal(truncateResult(123456789, { maxChars: 5 }), '12345' + TAIL(3, '6,000'));
  assert.equal(truncateResult(Number.MAX_VALUE, { maxChars: 10, maxTokens: 3 }), '1.79769313' + TAIL(6, 3));
  assert.equal(truncateResult([x(100)], { maxChars: 1 }), '[' + TAIL(26, '6,000'));
});

test('truncateResult: the note key grows spaces past existing keys', () => {
  const out = truncateResult({ '--- TRUNCATED ---': x(300), '--- TRUNCATED --- ': 1, b: x(300) }, { maxChars: 100 });
  assert.deepEqual(out, {
    '--- TRUNCATED --- ': 1,
    '--- TRUNCATED ---  ': '2 keys omitted: --- TRUNCATED ---, b',
  });
});

test('truncateResult: a "__proto__" key stays an ordinary key (deliberately unlike Cloudflare)', () => {
  // JSON.parse makes "__proto__" an own key; assigning it to a fresh object would instead set
  // that object's prototype and lose the key, which Cloudflare's 0.5.6 does.
  const input = JSON.parse(`{"__proto__": {"polluted": 1}, "b": "${x(300)}"}`);
  const out = truncateResult(input, { maxChars: 100 });
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.deepEqual(Object.keys(out), ['__proto__', 'b']);
  assert.equal(json(out), `{"__proto__":{"polluted":1},"b":"${x(37)} --- TRUNCATED --- 300 chars"}`);
  assert.equal({}.polluted, undefined);
  const theirs = cf.truncateResult(input, { maxChars: 100 });
  assert.deepEqual(Object.keys(theirs), ['b'], 'the oracle still drops the key (if not, align with it)');
});

// ---- Deep-equal with Cloudflare's helpers --------------------------------------------------

// A seeded generator (mulberry32) so the corpus is the same on every run.
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters chosen for their JSON cost: plain, two-byte, CJK, escaped (`\"`, `\\`, `\n`,
// `\u0001`), an emoji (a surrogate pair a prefix can split), a lone surrogate (escaped as
// `\ud800`) and U+2028.
const ALPHABET = ['a', 'b', ' ', 'é', '中', '"', '\\', '\n', '\u0001', '😀', '\ud800', '\u2028'];
const KEYS = ['a', 'b', 'id', 'name', '--- TRUNCATED ---', '--- TRUNCATED --- ', '"quoted"', 'ü', '😀', '1', '20'];

function corpusGenerator(seed) {
  const rnd = random(seed);
  const int = (n) => Math.floor(rnd() * n);
  const pick = (list) => list[int(list.length)];
  const string = () => {
    const letters = Array.from({ length: 1 + int(3) }, () => pick(ALPHABET));
    return Array.from({ length: pick([0, 1, 2, 7, 20, 31, 60, 130, 300, 1000]) }, () => pick(letters)).join('');
  };
  const scalar = () =>
    pick([string, string, () => int(10), () => int(1e9), () => -rnd() * 1e300, () => 5e-324, () => true, () => null])();
  const value = (depth) => {
    const r = rnd();
    if (depth > 2 || r < 0.35) return scalar();
    if (r < 0.68) return Array.from({ length: pick([0, 1, 2, 3, 5, 12, 25]) }, () => value(depth + 1));
    const object = {};
    const width = pick([0, 1, 2, 4, 8, 12]);
    for (let i = 0; i < width; i++) object[pick(KEYS) + (rnd() < 0.5 ? i : '')] = value(depth + 1);
    return object;
  };
  const options = (length) => {
    const r = rnd();
    if (r < 0.45) return { maxChars: int(Math.min(length + 1, 400)) };
    if (r < 0.7) return { maxChars: pick([0, 1, 2, 3, 5, 10, 24, 40, 64, 100, 200, 500, 2000]) };
    if (r < 0.85) return { maxTokens: pick([0, 1, 3, 10, 25, 50, 100]) };
    if (r < 0.95) return { maxTokens: pick([5, 20, 50]), maxChars: int(300) };
    return undefined; // the defaults: 6,000 tokens, 24,000 chars
  };
  return () => {
    const v = value(0);
    return [v, options(json(v)?.length ?? 0)];
  };
}

class Money {
  constructor(cents) {
    this.cents = cents;
  }
  toJSON() {
    return { amount: (this.cents / 100).toFixed(2), note: x(this.cents % 400, 'n') };
  }
}

function handPickedCases() {
  const cases = [];
  const add = (name, value, options) => cases.push({ name, value, options });
  const cycle = { a: x(100) };
  cycle.self = cycle;
  const strings = {
    ascii: x(5000),
    quotes: x(1000, '"'),
    newlines: Array.from({ length: 900 }, (_, i) => (i % 3 ? 'a' : '\n')).join(''),
    control: x(100) + x(900, '\u0002'),
    emoji: x(700, '😀'),
    emojiMix: Array.from({ length: 600 }, (_, i) => (i % 3 ? 'a' : '😀')).join(''),
    lone: x(400, '\ud800'),
    cjk: x(2000, '中'),
    accents: x(3000, 'é'),
  };
  for (const [kind, s] of Object.entries(strings)) {
    for (const maxChars of [0, 1, 2, 3, 10, 19, 20, 31, 32, 33, 40, 64, 100, 128, 257, 1000]) {
      add(`string ${kind} in an array, maxChars ${maxChars}`, [s], { maxChars });
      add(`string ${kind} in an object, maxChars ${maxChars}`, { s, n: 1 }, { maxChars });
    }
    add(`bare string ${kind}`, s, { maxChars: 50 });
    add(`bare string ${kind}, default budget`, s.repeat(10), undefined);
  }
  for (const length of [1, 2, 10, 99, 100, 999, 1000, 1001, 9999, 12345, 123456]) {
    add(`string length ${length} (grouped count)`, { s: x(length) }, { maxChars: 60 });
  }
  for (const n of [2, 9, 10, 11, 99, 100, 101, 1000, 1001, 2500]) {
    const items = Array.from({ length: n }, (_, i) => ({ id: i, label: `item ${i}` }));
    for (const maxChars of [10, 33, 34, 35, 36, 60, 71, 72, 150, 1000]) add(`array of ${n} objects, maxChars ${maxChars}`, items, { maxChars });
    const wide = Object.fromEntries(items.map((item) => [`key_${item.id}`, item.label.repeat(item.id % 7)]));
    for (const maxChars of [10, 23, 24, 30, 60, 200, 1000]) add(`object of ${n} keys, maxChars ${maxChars}`, wide, { maxChars });
  }
  for (let maxChars = 0; maxChars <= 140; maxChars++) {
    add(`two big strings, maxChars ${maxChars}`, [x(1000), x(1000, 'y')], { maxChars });
    add(`object of three, maxChars ${maxChars}`, { a: x(1000), b: x(1000, 'y'), c: x(300, 'z') }, { maxChars });
    add(`long-key note, maxChars ${maxChars}`, { [x(60, 'k')]: x(1000), b: true }, { maxChars });
    add(`scalars and a string, maxChars ${maxChars}`, [true, 784559.369, null, x(200), -1.2345678901234568e-300], { maxChars });
    add(`equal-sized values (ties), maxChars ${maxChars * 3}`, { a: x(500), b: x(500, 'y'), c: x(500, 'z'), d: 1 }, { maxChars: maxChars * 3 });
  }
  // Where the count of dropped items gains a digit (9 → 10, 99 → 100, 999 → 1,000).
  for (const n of [10, 11, 100, 101, 1000, 1001]) {
    const items = [x(1000), ...Array.from({ length: n - 1 }, () => x(1000, 'y'))];
    for (let maxChars = 60; maxChars <= 90; maxChars++) add(`${n} big strings, maxChars ${maxChars}`, items, { maxChars });
  }
  add('marker keys taken', { '--- TRUNCATED ---': x(300), '--- TRUNCATED --- ': 1, b: x(300) }, { maxChars: 100 });
  add('marker key dropped', { '--- TRUNCATED ---': x(300), b: x(300) }, { maxChars: 80 });
  add('marker key kept', { '--- TRUNCATED ---': 1, b: x(300) }, { maxChars: 80 });
  add('huge number alone', 123456789012345680000, { maxChars: 5 });
  add('max number alone', Number.MAX_VALUE, { maxChars: 10 });
  add('tiny number alone', -5e-324, { maxChars: 3 });
  add('huge numbers in an array', [1e21, 2e21, 3e21], { maxChars: 10 });
  add('true under a tiny budget', true, { maxChars: 2 });
  add('null under a tiny budget', null, { maxChars: 1 });
  add('empty array, budget 1', [], { maxChars: 1 });
  add('empty object, budget 1', {}, { maxChars: 1 });
  add('cycle', cycle, { maxChars: 10 });
  add('BigInt', 10n ** 100n, { maxChars: 5 });
  add('BigInt inside', { a: 1n, s: x(100) }, { maxChars: 1 });
  add('undefined', undefined, { maxChars: 0 });
  add('function', () => 1, { maxChars: 0 });
  add('symbol', Symbol('s'), { maxChars: 0 });
  add('toJSON returning undefined', { toJSON: () => undefined }, { maxChars: 1 });
  add('toJSON returning a long string', { toJSON: () => x(100) }, { maxChars: 30 });
  add('class instances with toJSON', Array.from({ length: 30 }, (_, i) => new Money(i * 137)), { maxChars: 300 });
  add('Date, Map, Set, undefined, function members', [new Date(0), new Map([[1, 2]]), new Set([1]), undefined, () => 1, x(100)], { maxChars: 40 });
  add('undefined and function members', { u: undefined, f() {}, big: x(500) }, { maxChars: 50 });
  // oxlint-disable-next-line unicorn/no-new-array -- fifty holes are the case under test
  add('sparse array', new Array(50), { maxChars: 30 });
  add('nested deeply', { a: { b: { c: { d: { e: [x(500), { f: x(500) }] } } } } }, { maxChars: 120 });
  add('fits exactly', { a: x(10) }, { maxChars: json({ a: x(10) }).length });
  add('one over', { a: x(10) }, { maxChars: json({ a: x(10) }).length - 1 });
  add('fits the default', { a: x(23_000) }, undefined);
  add('over the default', { a: x(25_000), b: Array.from({ length: 3000 }, (_, i) => i) }, undefined);
  add('maxTokens only', { a: x(1000) }, { maxTokens: 10 });
  add('maxTokens and maxChars', { a: x(1000) }, { maxTokens: 10, maxChars: 60 });
  add('maxTokens 0', [x(100)], { maxTokens: 0 });
  add('fractional maxChars', [x(100)], { maxChars: 2.5 });
  add('fractional maxTokens', { a: x(100) }, { maxTokens: 7.5 });
  add('negative maxChars', [x(100)], { maxChars: -5 });
  add('NaN maxChars', { a: x(100) }, { maxChars: NaN });
  add('null options', { a: x(30_000) }, { maxChars: null, maxTokens: null });
  return cases;
}

const RANDOM_CASES = 3000;

test('truncateResult and truncateResponse deep-equal Cloudflare over a varied corpus', () => {
  const next = corpusGenerator(20_240_506);
  const cases = handPickedCases();
  for (let i = 0; i < RANDOM_CASES; i++) {
    const [value, options] = next();
    cases.push({ name: `random #${i}`, value, options });
  }

  let changed = 0;
  for (const { name, value, options } of cases) {
    const ours = truncateResult(value, options);
    const theirs = cf.truncateResult(value, options);
    assert.deepStrictEqual(ours, theirs, `truncateResult: ${name}`);
    assert.equal(ours === value, theirs === value, `same reference: ${name}`);
    if (ours !== value) changed++;
    // truncateResponse on the compact JSON too, whenever there is one.
    let text;
    try {
      text = JSON.stringify(value);
    } catch {}
    if (typeof text === 'string') {
      assert.equal(truncateResponse(text, options), cf.truncateResponse(text, options), `truncateResponse: ${name}`);
    }
  }
  // Guard against a vacuous corpus: most cases must actually have been cut.
  assert.ok(cases.length > 2500, `corpus has ${cases.length} cases`);
  assert.ok(changed > cases.length * 0.6, `${changed} of ${cases.length} cases were truncated`);
});
