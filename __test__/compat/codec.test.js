'use strict';
// The shared codec (lib/cloudflare/codec.js, also evaluated inside every isolate): the parse fast paths
// skip the reviver / decoder only when the text cannot hold a tagged value.
const test = require('node:test');
const assert = require('node:assert/strict');
const codec = require('../../lib/cloudflare/codec.js');

test('transportParse revives binary envelopes, also when the tag key is spelled with \\u escapes', () => {
  const plain = codec.transportParse('{"a":[1,{"b":"x"}]}');
  assert.deepEqual(plain, { a: [1, { b: 'x' }] });
  const literal = codec.transportParse(`{"v":{"${codec.BINARY_TAG}":"Uint8Array","data":"AQI="}}`);
  assert.ok(literal.v instanceof Uint8Array);
  assert.deepEqual([...literal.v], [1, 2]);
  const escaped = codec.transportParse('{"v":{"\\u005f_codemode_binary_v1__":"ArrayBuffer","data":"AQI="}}');
  assert.ok(escaped.v instanceof ArrayBuffer);
  assert.deepEqual([...new Uint8Array(escaped.v)], [1, 2]);
});

test('cloneParse decodes tagged values, also when the tag key is spelled with \\u escapes', () => {
  const text = codec.cloneStringify({ d: new Date(5), n: -0, big: 10n });
  const back = codec.cloneParse(text);
  assert.ok(back.d instanceof Date);
  assert.ok(Object.is(back.n, -0));
  assert.equal(back.big, 10n);
  const escaped = codec.cloneParse('{"x":{"\\u0024codemode":"undefined"}}');
  assert.ok(Object.hasOwn(escaped, 'x'));
  assert.equal(escaped.x, undefined);
  assert.deepEqual(codec.cloneParse('{"plain":[1,"two",null]}'), { plain: [1, 'two', null] });
});

test('the storage codec keeps bigint and binary values and tells undefined from null', () => {
  const durable = require('../../lib/runtime/durable.js');
  const text = durable.stringifyForStorage({ n: 12345678901234567890n, b: new Uint8Array([1, 2]), a: new Uint8Array([9]).buffer, z: null });
  const back = durable.parseForStorage(text);
  assert.equal(back.n, 12345678901234567890n);
  assert.ok(back.b instanceof Uint8Array);
  assert.deepEqual([...back.b], [1, 2]);
  assert.ok(back.a instanceof ArrayBuffer);
  assert.deepEqual([...new Uint8Array(back.a)], [9]);
  assert.equal(back.z, null);
  assert.equal(durable.stringifyForStorage(undefined), undefined);
  assert.equal(durable.parseForStorage(null), undefined);
  assert.equal(durable.parseForStorage('null'), null);
});
