'use strict';
// What preparing a program costs, from the `compile` phase each run reports (stripping
// TypeScript, compiling, or reading V8's code from the code cache), on one worker in 'thread'
// isolation:
// - the stripper's cost per KB: the same ~50 KB program as TypeScript and as plain JavaScript,
//   code cache off, `typescript` on and off;
// - what the code cache saves: the compile phase of a first run (a miss) against later runs of
//   the same source with other params (hits), and the whole run time with the cache off.
// Not a peer comparison: a before/after figure on one machine. Medians of --rounds runs.
//
//   node bench/scenarios/programs.js [--kb 50] [--rounds 30]
const { IsolateExecutor } = require('../../lib/index.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
}

// The program: `count` small helpers, all called by the entry function (so their lazily
// compiled code is what a cache hit saves too); typed, or the same without its types.
function program(count, typed) {
  const t = (text) => (typed ? text : '');
  const helpers = [];
  let size = 0;
  for (let i = 0; i < count; i++) {
    const fn = `function step${i}(value${t(': { total: number; items: number[] }')}, factor${t(': number')})${t(': number')} {\n` +
      `  const scaled${t(': number[]')} = value.items.map((item${t(': number')}) => item * factor + ${i});\n` +
      `  return scaled.reduce((sum${t(': number')}, x${t(': number')}) => sum + (x % 7), value.total)${t(' as number')};\n}\n`;
    helpers.push(fn);
    size += fn.length;
  }
  const calls = helpers.map((_, i) => `  total = step${i}({ total, items: params.items }, params.factor);`).join('\n');
  return `${typed ? 'interface Params { items: number[]; factor: number }\n' : ''}${helpers.join('')}\n` +
    `export default async function main(params${t(': Params')}) {\n  let total = 0;\n${calls}\n  return total;\n}\n`;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const phase = (out, name) => out.timing.phases.find((p) => p.name === name).durationMs;

async function measure(options, code, rounds, params) {
  const ex = new IsolateExecutor({ isolation: 'thread', workers: 1, ...options });
  try {
    const compile = [];
    const run = [];
    const hits = [];
    for (let i = 0; i < rounds + 1; i++) {
      const out = await ex.execute({ code, params: { ...params, factor: i } });
      if (out.error !== undefined) throw new Error(out.error);
      if (i === 0 && options.codeCacheMb !== 0) {
        run.first = out.timing.runMs;
        compile.first = phase(out, 'compile');
        continue;
      }
      compile.push(phase(out, 'compile'));
      run.push(out.timing.runMs);
      hits.push(out.stats.codeCacheHit);
    }
    return { compile: median(compile), run: median(run), first: compile.first, firstRun: run.first, hits: hits.filter(Boolean).length };
  } finally {
    await ex.dispose();
  }
}

async function main() {
  const kb = arg('kb', 50);
  const rounds = arg('rounds', 30);
  const params = { items: [1, 2, 3, 4] };
  // As many helpers as make the TypeScript text about `kb` KB.
  let count = 1;
  while (Buffer.byteLength(program(count, true)) < kb * 1024) count += 10;
  const ts = program(count, true);
  const js = program(count, false);
  const kbOf = (text) => Buffer.byteLength(text) / 1024;
  const off = { codeCacheMb: 0 };
  const jsPlain = await measure({ ...off, typescript: false }, js, rounds, params);
  const jsStripped = await measure({ ...off, typescript: true }, js, rounds, params);
  const tsStripped = await measure({ ...off, typescript: true }, ts, rounds, params);
  console.log(`programs: TypeScript ${kbOf(ts).toFixed(1)} KB, JavaScript ${kbOf(js).toFixed(1)} KB; medians of ${rounds} runs, code cache off`);
  console.log(`  compile phase, JavaScript with typescript: false   ${jsPlain.compile.toFixed(3)} ms`);
  console.log(`  compile phase, JavaScript with typescript: true    ${jsStripped.compile.toFixed(3)} ms  (stripper on JavaScript: ${((jsStripped.compile - jsPlain.compile) * 1000 / kbOf(js)).toFixed(1)} µs/KB)`);
  console.log(`  compile phase, TypeScript                          ${tsStripped.compile.toFixed(3)} ms  (stripper on TypeScript: ${((tsStripped.compile - jsPlain.compile * kbOf(ts) / kbOf(js)) * 1000 / kbOf(ts)).toFixed(1)} µs/KB)`);
  const cached = await measure({ typescript: true }, ts, rounds, params);
  console.log(`code cache, TypeScript ${kbOf(ts).toFixed(1)} KB (${cached.hits} of ${rounds} later runs hit):`);
  console.log(`  compile phase: first run ${cached.first.toFixed(3)} ms, later runs ${cached.compile.toFixed(3)} ms (cache off: ${tsStripped.compile.toFixed(3)} ms)`);
  console.log(`  whole run: later runs ${cached.run.toFixed(3)} ms, cache off ${tsStripped.run.toFixed(3)} ms (saved ${(tsStripped.run - cached.run).toFixed(3)} ms, ${((1 - cached.run / tsStripped.run) * 100).toFixed(0)}%)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
