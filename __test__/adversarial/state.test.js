'use strict';
// Adversarial corpus, state leaks between runs: programs that attack each bound from inside the isolate,
// judged only on what the host observed (the corpus's rules: harness.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  sharedExecutors,
} = require('./harness.js');

const shared = sharedExecutors();

// ---------------------------------------------------------------------------------------------
// State leaks between runs
// ---------------------------------------------------------------------------------------------

test('state: globals and prototypes modified in run 1 are not visible in run 2 (same worker thread)', async () => {
  const first = await shared.solo.execute({
    code: `async () => {
      globalThis.leak = 'from run 1';
      (0, eval)('var leakedVar = 1');
      implicitGlobal = 1;
      Object.prototype.pollutedObject = 1;
      Array.prototype.pollutedArray = 1;
      Array.prototype.map = () => 'hijacked map';
      String.prototype.trim = () => 'hijacked trim';
      Math.random = () => 4;
      Date.now = () => 0;
      JSON.stringify = () => 'hijacked stringify';
      Symbol.for('run1');
      console.log = () => { throw new Error('console hijacked'); };
      Object.defineProperty(tools, 'echo', { value: () => 'hijacked tool' });
      Object.freeze(Object.prototype);
      return 'run 1 done';
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: () => JSON.stringify({ result: 'host echo' }),
  });
  assert.equal(first.result, 'run 1 done', first.error);
  const second = await shared.solo.execute({
    code: `async () => {
      console.log('run 2 logs');
      return {
        leak: typeof globalThis.leak, leakedVar: typeof leakedVar, implicitGlobal: typeof implicitGlobal,
        pollutedObject: typeof ({}).pollutedObject, pollutedArray: typeof [].pollutedArray,
        map: [1, 2].map((x) => x + 1), trim: '  t  '.trim(), random: Math.random() < 1, now: Date.now() > 0,
        stringify: JSON.stringify({ a: 1 }), frozen: Object.isFrozen(Object.prototype),
        tool: await tools.echo(),
      };
    }`,
    providers: [{ name: 'tools', tools: ['echo'] }],
    dispatch: () => JSON.stringify({ result: 'host echo' }),
  });
  assert.equal(second.error, undefined, second.error);
  assert.deepEqual(second.logs, ['run 2 logs']);
  assert.deepEqual(second.result, {
    leak: 'undefined', leakedVar: 'undefined', implicitGlobal: 'undefined', pollutedObject: 'undefined', pollutedArray: 'undefined',
    map: [2, 3], trim: 't', random: true, now: true, stringify: '{"a":1}', frozen: false, tool: 'host echo',
  });
});

test('state: concurrent runs on two workers do not see each other', async () => {
  const writer = (tag) => `async () => {
    globalThis.shared = '${tag}';
    Object.prototype.owner = '${tag}';
    await new Promise((r) => { let n = 0; const spin = () => (++n < 2000 ? Promise.resolve().then(spin) : r()); spin(); });
    return [globalThis.shared, ({}).owner];
  }`;
  const [a, b] = await Promise.all([shared.ex.execute({ code: writer('A') }), shared.ex.execute({ code: writer('B') })]);
  assert.deepEqual(a.result, ['A', 'A']);
  assert.deepEqual(b.result, ['B', 'B']);
  const c = await shared.ex.execute({ code: 'async () => [typeof globalThis.shared, typeof ({}).owner]' });
  assert.deepEqual(c.result, ['undefined', 'undefined']);
});
