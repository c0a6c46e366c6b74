'use strict';
// Adversarial corpus, deep program text: what reads a program before V8 does (the TypeScript
// stripper above all, which recursed once per level on the worker's stack) must not let a short
// text end the process. A 21 KB `Array<Array<…3 000 levels…>>` used to kill it with SIGSEGV: the
// host itself in 'thread' isolation, the engine and every run it held in 'process'. Judged in a
// child process on what the host saw: it is alive, each run ended with an outcome (a refusal
// past the bound is a positioned syntax error), and the next run works.
const test = require('node:test');
const assert = require('node:assert/strict');
const { runChild } = require('../helpers.js');

// Each attack: [name, program text]. `n` levels, well past MAX_PROGRAM_NESTING (4 000), unless
// the name says it fits.
const ATTACKS = `
  const r = (s, n) => s.repeat(n);
  const wrap = (body) => 'async () => {\\n' + body + '\\n}';
  return [
    ['generic types, 3 000 (fits the bound)', 'const x: ' + r('Array<', 3000) + 'number' + r('>', 3000) + ' = []; return 1'],
    ['generic types, 10 000', 'const x: ' + r('Array<', 10000) + 'number' + r('>', 10000) + ' = []; return 1'],
    ['generic types, unterminated, 50 000', 'const x: ' + r('Array<', 50000) + 'number'],
    ['generic types across commas, 10 000', 'let x: ' + r('Map<1, ', 10000) + '1' + r('>', 10000) + '; return 1'],
    ['object types, 10 000', 'const x: ' + r('{ a: ', 10000) + 'number' + r(' }', 10000) + ' = 1; return 1'],
    ['parenthesised types, 10 000', 'let x: ' + r('(', 10000) + 'number' + r(')', 10000) + '; return 1'],
    ['template literal types, 10 000', 'type T = ' + r('\`\${', 10000) + 'string' + r('}\`', 10000) + '; return 1'],
    ['parentheses, 100 000', 'return ' + r('(', 100000) + '1' + r(')', 100000)],
    ['JSX-like text, 20 000', 'return ' + r('<div>', 20000) + 'x' + r('</div>', 20000)],
    ['regex literal groups, 100 000', 'return /' + r('(', 100000) + 'a' + r(')', 100000) + '/.test("a")'],
    ['member chain, 500 000', 'return a' + r('.b', 500000)],
    ['optional chain, 300 000', 'return a' + r('?.b', 300000)],
    ['member chain over lines, 300 000', 'return a' + r('\\n.b', 300000)],
    ['binary chain, 500 000', 'return 1' + r('+1', 500000)],
    ['unary chain, 500 000', 'return ' + r('!', 500000) + '1'],
    ['call chain, 500 000', 'return f' + r('()', 500000)],
    ['array destructuring, 50 000', 'const ' + r('[', 50000) + 'a' + r(']', 50000) + ' = []; return 1'],
    ['object destructuring, 50 000', 'const ' + r('{ a: ', 50000) + 'b' + r(' }', 50000) + ' = {}; return 1'],
    ['nested arrows, 50 000', 'return ' + r('a => ', 50000) + '1'],
    ['if in if, 50 000', r('if (a) ', 50000) + 'return 1'],
    ['else if after semicolons, 50 000', 'if (a) x' + r('; else if (a) x', 50000)],
    ['enum beside 2 000 levels (the transform)', 'enum E { A }\\nconst x: ' + r('Array<', 2000) + 'number' + r('>', 2000) + ' = []; return E.A'],
  ].map(([name, body]) => [name, wrap(body)]);
`;

test('nesting (child): deep program text ends its run, never the process, in both forms', async () => {
  const child = await runChild(`
    const attacks = (() => { ${ATTACKS} })();
    const ex = new lib.IsolateExecutor({ timeout: 10000, memoryLimitMb: 64, workers: 1 });
    const out = [];
    for (const [name, code] of attacks) {
      const native = await ex.execute({ code });
      const cf = await ex.execute(code, []);
      out.push({ name, bytes: code.length, native: { kind: native.errorKind, error: native.error && native.error.slice(0, 300), result: native.result }, cf: cf.error === undefined ? { result: cf.result } : { error: cf.error.slice(0, 300) } });
    }
    const next = await ex.execute({ code: 'async () => 2' });
    report({ out, next: next.result });
    await ex.dispose();
    process.exit(0);
  `, { timeoutMs: 300_000 });
  assert.equal(child.signal, null, `the host died (${child.signal}): ${child.stderr}`);
  assert.equal(child.code, 0, child.stderr);
  const { out, next } = child.report;
  assert.equal(next, 2);
  const byName = new Map(out.map((r) => [r.name, r]));
  // The issue's own attack, 21 KB of text, now strips on a stack sized for it and runs.
  assert.equal(byName.get('generic types, 3 000 (fits the bound)').native.result, 1);
  for (const r of out) {
    // Every run ended with an outcome; none took the host (checked above) or the engine down.
    assert.ok(r.native.error !== undefined || r.native.result !== undefined, `${r.name}: no outcome`);
    assert.doesNotMatch(r.native.error || '', /worker|engine|lost/i, r.name);
    assert.doesNotMatch(r.cf.error || '', /worker|engine|lost/i, r.name);
  }
  // Past the bound: a syntax error with the place, before the stripper reads the text.
  for (const name of ['generic types, 10 000', 'generic types, unterminated, 50 000', 'object types, 10 000', 'parenthesised types, 10 000', 'template literal types, 10 000', 'member chain, 500 000', 'binary chain, 500 000', 'else if after semicolons, 50 000']) {
    const r = byName.get(name);
    assert.equal(r.native.kind, 'syntax', `${name}: ${JSON.stringify(r.native)}`);
    assert.match(r.native.error, /nests more than 4000 levels deep.*\(line \d+, column \d+\)/, name);
  }
  assert.match(byName.get('enum beside 2 000 levels (the transform)').native.error, /at most 1000 levels/);
});
