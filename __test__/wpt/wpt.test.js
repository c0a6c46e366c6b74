'use strict';
// The vendored web-platform-tests files (__test__/wpt/files, LICENSE.md there), run with the
// project's shim inside the sandbox in 'thread' and 'process' isolation and in plain Node:
// per file, the sandbox passes at least as many subtests as Node does, and at least the floor
// recorded here (what it passed when the floor was last raised). `node __test__/wpt/table.js`
// prints the table (docs/internals/sandbox.md, "Web Platform Tests").
const test = require('node:test');
const assert = require('node:assert/strict');

const { FILES, runAll } = require('./run.js');

// Passed subtests per file, in each isolation: raise a floor when a fix passes more.
const FLOOR = {
  'encoding/textdecoder-copy.any.js': 4,
  'encoding/textdecoder-eof.any.js': 2,
  'encoding/textdecoder-streaming.any.js': 64,
  'url/urlsearchparams-append.any.js': 4,
  'url/urlsearchparams-delete.any.js': 4,
  'url/urlsearchparams-has.any.js': 2,
  'url/urlsearchparams-size.any.js': 4,
  'url/urlsearchparams-sort.any.js': 17,
  'url/url-statics-canparse.any.js': 11,
  'url/url-tojson.any.js': 1,
  'FileAPI/blob/Blob-text.any.js': 2,
  'streams/readable-streams/floating-point-total-queue-size.any.js': 4,
  'WebCryptoAPI/digest/digest.https.any.js': 116,
};

test('every vendored WPT file has a floor', () => {
  assert.deepEqual(Object.keys(FLOOR).sort(), [...FILES].sort());
});

test('the sandbox passes at least what Node passes, per WPT file, in both isolations', async () => {
  const out = await runAll();
  for (const [i, file] of FILES.entries()) {
    const node = out.node[i];
    assert.ok(node.total > 0, `${file}: Node ran no subtest (${node.error})`);
    for (const isolation of ['thread', 'process']) {
      const s = out[isolation][i];
      assert.equal(s.total, node.total, `${file} (${isolation}): ${s.total} subtests, Node ${node.total} (${s.error})`);
      const detail = `${file} (${isolation}): ${s.passed}/${s.total} passed, Node ${node.passed}; failures:\n${s.failures.join('\n')}`;
      assert.ok(s.passed >= node.passed, detail);
      assert.ok(s.passed >= FLOOR[file], `${detail}\nfloor ${FLOOR[file]}`);
    }
  }
});
