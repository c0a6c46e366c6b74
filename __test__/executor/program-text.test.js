'use strict';
// What chat models wrap around a program is taken off in both forms: a fence (```js, ```ts,
// bare), prose before or after it, trailing semicolons. Programs that merely contain backticks
// are left alone.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IsolateExecutor } = require('../helpers.js');
const { runCode } = require('../../lib/index.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

const WRAPPED = {
  'a fence': '```js\nasync () => 6 * 7\n```',
  'a ts fence': '```ts\nasync () => 6 * 7\n```',
  'a bare fence': '```\nasync () => 6 * 7\n```',
  'prose around a fence': 'Here is the program:\n\n```javascript\nasync () => {\n  return 6 * 7;\n};\n```\n\nIt returns 42.',
  'a trailing semicolon': 'async () => { return 6 * 7 };',
  'semicolons and blank lines after': 'async () => 6 * 7 ;;\n\n',
};

test('native form: fences, prose and trailing semicolons are taken off', async () => {
  for (const [name, code] of Object.entries(WRAPPED)) {
    const out = await executor.execute({ code });
    assert.equal(out.error, undefined, `${name}: ${out.error}`);
    assert.equal(out.result, 42, name);
  }
});

test('Cloudflare form and runCode: the same, beyond what normalizeCode accepts', async () => {
  for (const [name, code] of Object.entries(WRAPPED)) {
    const out = await executor.execute(code, []);
    assert.equal(out.error, undefined, `${name}: ${out.error}`);
    assert.equal(out.result, 42, name);
    assert.deepEqual(await runCode({ code, executor, providers: [] }), { result: 42 }, name);
  }
});

test('programs with backticks in their strings are left alone; a fence of another language is not unwrapped', async () => {
  const inString = await executor.execute({ code: 'async () => "```js\\nx\\n```"' });
  assert.equal(inString.result, '```js\nx\n```');
  const inTemplate = await executor.execute({ code: 'async () => `a\\`\\`\\`b`' });
  assert.equal(inTemplate.result, 'a```b');
  // Not unwrapped, and not run: as JavaScript it would be an empty template called as a tag.
  const python = await executor.execute({ code: '```python\nprint(1)\n```' });
  assert.equal(python.errorKind, 'syntax');
  assert.match(python.error, /the program is a ```python code block: only JavaScript or TypeScript runs here/);
  // Error positions stay the program's: leading lines are kept.
  const late = await executor.execute({ code: '\n\n\nasync () => { throw new Error("x") }' });
  assert.equal(late.errorKind, 'program');
});

test('retained handles take wrapped programs too', async () => {
  const first = await executor.execute({ code: 'async () => { globalThis.k = 2; return 1; };', retainHandles: true });
  try {
    const next = await first.handle.execute('```js\nasync () => globalThis.k * 21\n```');
    assert.equal(next.result, 42);
  } finally {
    await first.handle.dispose();
  }
});
