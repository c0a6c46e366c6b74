'use strict';
// What a tool call costs in the Cloudflare form, `execute(code, [{ name, fns }])` (transport
// codec, pre-flight checks, programForRun), against the native form, `execute({ code,
// providers, dispatch })` with tool calls as JSON text, in 'thread' and 'process' isolation.
// Each form runs the same program text making W sequential tool calls (W = --calls, default
// 1,2,7) against a host function that answers at once; both forms share one executor (one
// worker) per isolation and take turns within each round, the order rotating, so drift hits
// both alike. Reported per form: the median run of each W, the per-call cost
// (W_hi − W_lo) / (hi − lo) and the fixed cost of a run (the W_lo median), and the
// Cloudflare ÷ native ratio of each. The same text is sent on every run, as an agent resending
// a program does.
// `--lib DIR` loads the library from another checkout (its lib/index.js and its built addon),
// so two checkouts can be compared one after the other on the same machine.
// Not a peer comparison: a before/after figure on one machine.
//
//   node bench/scenarios/toolcalls.js [--rounds 10] [--batch 20] [--calls 1,2,7]
//     [--isolation thread,process] [--lib DIR]
const path = require('node:path');
const { execFileSync } = require('node:child_process');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
}

const LIB = path.resolve(arg('lib', path.join(__dirname, '..', '..')));
const ROUNDS = Number(arg('rounds', 10));
const BATCH = Number(arg('batch', 20));
const CALLS = arg('calls', '1,2,7').split(',').map(Number).sort((a, b) => a - b);
const ISOLATIONS = arg('isolation', 'thread,process').split(',');
const { IsolateExecutor } = require(path.join(LIB, 'lib', 'index.js'));

// The program for W calls: the text is fixed per W, as a resent program's is.
const program = (calls) => `async () => {
  let total = 0;
  for (let i = 0; i < ${calls}; i++) total += (await t.get({ i })).v;
  return total;
}`;
const expected = (calls) => (calls * (calls - 1)) / 2;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

// The two forms on one executor: each returns a function running the W-call program once.
function forms(executor) {
  const cloudflareProviders = [{ name: 't', fns: { get: ({ i }) => ({ v: i }) } }];
  const nativeProviders = [{ name: 't', tools: ['get'] }];
  const dispatch = (provider, tool, argsJson) => JSON.stringify({ result: { v: JSON.parse(argsJson)[0].i } });
  return [
    { name: 'cloudflare', run: (code) => executor.execute(code, cloudflareProviders) },
    { name: 'native', run: (code) => executor.execute({ code, providers: nativeProviders, dispatch }) },
  ];
}

async function once(form, calls) {
  const code = program(calls);
  const start = performance.now();
  const out = await form.run(code);
  const ms = performance.now() - start;
  if (out.error !== undefined || out.result !== expected(calls)) {
    throw new Error(`${form.name}, ${calls} calls: ${out.error === undefined ? JSON.stringify(out.result) : out.error}`);
  }
  return ms;
}

async function measure(isolation) {
  const executor = new IsolateExecutor({ isolation, workers: 1, timeout: 60_000 });
  try {
    const list = forms(executor);
    const samples = new Map(list.map((f) => [f.name, new Map(CALLS.map((w) => [w, []]))]));
    // Warm-up: the engine started, the isolate pool and the code cache filled.
    for (const form of list) for (const w of CALLS) for (let i = 0; i < 5; i++) await once(form, w);
    for (let round = 0; round < ROUNDS; round++) {
      for (const w of CALLS) {
        for (let k = 0; k < list.length; k++) {
          const form = list[(round + k) % list.length];
          const into = samples.get(form.name).get(w);
          for (let i = 0; i < BATCH; i++) into.push(await once(form, w));
        }
      }
    }
    const lo = CALLS[0];
    const hi = CALLS[CALLS.length - 1];
    const figures = {};
    for (const form of list) {
      const medians = new Map(CALLS.map((w) => [w, median(samples.get(form.name).get(w))]));
      figures[form.name] = { medians, perCall: (medians.get(hi) - medians.get(lo)) / (hi - lo), fixed: medians.get(lo) };
    }
    console.log(`isolation '${isolation}' (${ROUNDS} rounds × ${BATCH} runs per form and W, medians)`);
    for (const form of list) {
      const f = figures[form.name];
      const runs = CALLS.map((w) => `W${w} ${f.medians.get(w).toFixed(3)}`).join('  ');
      console.log(`  ${form.name.padEnd(11)} ${runs} ms/run   per call ${f.perCall.toFixed(4)} ms   W${lo} run ${f.fixed.toFixed(3)} ms`);
    }
    const ratio = (a, b) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
    console.log(`  cloudflare ÷ native: per call ${ratio(figures.cloudflare.perCall, figures.native.perCall)}, W${lo} run ${ratio(figures.cloudflare.fixed, figures.native.fixed)}`);
  } finally {
    await executor.dispose();
  }
}

function revision() {
  try {
    const head = execFileSync('git', ['-C', LIB, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim().slice(0, 60);
    const changed = execFileSync('git', ['-C', LIB, 'status', '--porcelain', '--', 'lib'], { encoding: 'utf8' }).trim() !== '';
    return changed ? `${head}…, lib/ changed since` : head;
  } catch {
    return 'not a git checkout';
  }
}

async function main() {
  console.log(`tool-call cost, Cloudflare form against native; library ${LIB} (${revision()})`);
  console.log(`W = ${CALLS.join(', ')} sequential tool calls per run; per call = (W${CALLS[CALLS.length - 1]} − W${CALLS[0]}) / ${CALLS[CALLS.length - 1] - CALLS[0]}`);
  for (const isolation of ISOLATIONS) await measure(isolation);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
