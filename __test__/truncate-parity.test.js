'use strict';
// truncateResult / truncateResponse (docs/cloudflare-compat.md §12): the spec's exact examples, and agreement with
// Cloudflare's published implementation (a black-box oracle) over a varied corpus.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { truncateResult, truncateResponse } = require('../lib/index.js');

const oracle = () => import(pathToFileURL(path.join(__dirname, '..', 'node_modules', '@cloudflare', 'codemode', 'dist', 'truncate-Dd-VZZYQ.js')).href);

test('the spec\'s examples, exactly', () => {
  const items = { items: Array.from({ length: 500 }, (_, i) => ({ i })) };
  const cut = truncateResult(items, { maxChars: 200 });
  assert.equal(cut.items.length, 19);
  assert.deepEqual(cut.items.slice(0, 18), Array.from({ length: 18 }, (_, i) => ({ i })));
  assert.equal(cut.items[18], '--- TRUNCATED --- 482 more items');
  const strings = truncateResult({ a: 'x'.repeat(1000), b: 1, c: 'short' }, { maxChars: 200 });
  assert.deepEqual(strings, { a: 'x'.repeat(144) + ' --- TRUNCATED --- 1,000 chars', b: 1, c: 'short' });
  const text = 'y'.repeat(30_000);
  assert.equal(truncateResponse(text), 'y'.repeat(24_000) + '\n\n--- TRUNCATED ---\nResponse was ~7,500 tokens (limit: 6,000). Narrow the request to reduce response size.');
  assert.equal(truncateResponse('short'), 'short');
});

test('values that fit, or cannot be serialized, come back as the same reference', () => {
  const small = { a: [1, 2] };
  assert.equal(truncateResult(small), small);
  const cyclic = { big: 'z'.repeat(100_000) };
  cyclic.self = cyclic;
  assert.equal(truncateResult(cyclic), cyclic);
  const withBigInt = { n: 1n, s: 'q'.repeat(100_000) };
  assert.equal(truncateResult(withBigInt), withBigInt);
  const fn = () => 1;
  assert.equal(truncateResult(fn), fn);
  assert.equal(truncateResult(undefined), undefined);
});

test('agrees with Cloudflare\'s implementation over a varied corpus', async () => {
  const cf = await oracle();
  const cfResult = cf.n;
  const cfResponse = cf.t;
  const corpus = [
    'short', 'x'.repeat(24_001), 'é☃𝄞'.repeat(10_000), '"\\\n\t'.repeat(9_000),
    { a: 'x'.repeat(50_000) }, { list: Array.from({ length: 3000 }, (_, i) => i) },
    { nested: { deeper: { deepest: 'w'.repeat(40_000), keep: [1, 2, 3] } }, other: 'v'.repeat(10_000) },
    Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'], text: 'lorem '.repeat(30) })),
    { '--- TRUNCATED ---': 'k', big: 'b'.repeat(30_000), small: 1 },
    { many: Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`key${i}`, 'v'.repeat(i * 3)])) },
    { number: 12345678901234567890, text: 't'.repeat(25_000) },
    [ 'a'.repeat(10_000), 'b'.repeat(10_000), 'c'.repeat(10_000) ],
    { date: new Date(0), long: 'd'.repeat(30_000) },
    { escapes: '\u0000\u001f"\\'.repeat(8_000) },
    Array.from({ length: 5 }, () => 'm'.repeat(6000)),
    { mixed: [1, 'two', { three: 'x'.repeat(30_000) }, null, true] },
  ];
  const options = [undefined, { maxChars: 200 }, { maxChars: 1000 }, { maxTokens: 100 }, { maxTokens: 2000, maxChars: 500 }];
  let compared = 0;
  for (const value of corpus) {
    for (const opts of options) {
      assert.deepEqual(truncateResult(value, opts), cfResult(value, opts), `${JSON.stringify(value).slice(0, 60)} ${JSON.stringify(opts)}`);
      if (typeof value === 'string') assert.equal(truncateResponse(value, opts), cfResponse(value, opts));
      compared++;
    }
  }
  assert.equal(compared, corpus.length * options.length);
});
