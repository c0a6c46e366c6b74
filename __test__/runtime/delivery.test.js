'use strict';
// The delivery order of one pass (lib/runtime/delivery.js): results are handed over in the order
// of their places, whatever order they become ready in; places an earlier pass recorded that
// this pass never reaches are passed over after the grace period; what is not recorded goes at
// once.
const test = require('node:test');
const assert = require('node:assert/strict');
const { DeliveryOrder } = require('../../lib/runtime/delivery.js');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Hands over `place` once its turn comes and notes it in `out`.
function handOver(order, out, place, label = place) {
  return order.turn(place).then(() => out.push(label));
}

test('results ready in any order are handed over in the order of their places', async () => {
  const order = new DeliveryOrder(4);
  const out = [];
  const done = [3, 1, 0, 2].map((place) => handOver(order, out, place));
  await Promise.all(done);
  assert.deepEqual(out, [0, 1, 2, 3]);
});

test('the result whose turn it is goes before the ones it lets through', async () => {
  const order = new DeliveryOrder(3);
  const out = [];
  const later = [handOver(order, out, 2), handOver(order, out, 1)];
  await sleep(5);
  assert.deepEqual(out, [], 'nothing goes before place 0');
  await handOver(order, out, 0);
  await Promise.all(later);
  assert.deepEqual(out, [0, 1, 2]);
});

test('what is not recorded, or was passed over, goes at once', async () => {
  const order = new DeliveryOrder(2);
  const out = [];
  const waiting = handOver(order, out, 1);
  await handOver(order, out, undefined, 'pause');
  assert.deepEqual(out, ['pause']);
  order.passOver(0);
  await waiting;
  assert.deepEqual(out, ['pause', 1]);
  await handOver(order, out, 0, 'late 0');
  assert.deepEqual(out, ['pause', 1, 'late 0']);
});

test('a place of an earlier pass that this pass never reaches is passed over after the grace period', async () => {
  const order = new DeliveryOrder(3, 30);
  const out = [];
  const started = Date.now();
  await Promise.all([handOver(order, out, 1), handOver(order, out, 2)]);
  assert.deepEqual(out, [1, 2]);
  assert.ok(Date.now() - started >= 25, 'it waited for place 0 first');
});

test('a place the pass has reached (a call still running) is never passed over', async () => {
  const order = new DeliveryOrder(2, 20);
  const out = [];
  order.reached(0);
  const behind = handOver(order, out, 1);
  await sleep(60);
  assert.deepEqual(out, [], 'place 1 still waits for the running call at place 0');
  await handOver(order, out, 0);
  await behind;
  assert.deepEqual(out, [0, 1]);
});

test('places recorded during the pass are never passed over, and close() lets everything go', async () => {
  const order = new DeliveryOrder(0, 10);
  const out = [];
  const behind = handOver(order, out, 1);
  await sleep(40);
  assert.deepEqual(out, [], 'place 1 waits for place 0, being recorded in this pass');
  order.close();
  await behind;
  assert.deepEqual(out, [1]);
});
