'use strict';
// How throughput and latency change as an executor gets more threads and engine processes: the
// curve behind the defaults of `workers` (this machine's core count) and `processes` (1). For
// each arrangement it measures, on one executor made for it and warmed first:
//   - a burst: `--burst` runs of ten tool calls each, all submitted at once: runs per second and
//     the time to the last answer;
//   - latency: `--trivial` trivial runs one after another (a fresh isolate each): p50 and p99.
// Arrangements: 'thread' isolation with workers 1, 2, 4, ... up to twice the core count (or
// `--max`), and 'process' isolation with the same worker counts in one engine, then with as many
// engines as cores (each of `workers` = cores / engines, at least 1); each worker count below
// the core count also without standby threads (`standbyIsolates: 0`). Rows go to stdout and to
// bench/RESULTS.scaling.md (or `--out`), with the machine it ran on, so a bigger machine gives
// its own curve with the one command:
//
//   node bench/scenarios/scaling.js [--max 32] [--burst 500] [--trivial 300] [--rounds 3]
//
// Each arrangement runs `--rounds` times, interleaved (round 1 of every arrangement, then round
// 2, ...), and the median round is reported, so a machine that gets busier part-way shifts all
// rows alike. Not a peer comparison: this executor against itself.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor } = require('../../lib/index.js');
const { describeMachine } = require('../machine.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
}
const CORES = os.availableParallelism();
const MAX = Number(arg('max', 2 * CORES));
const BURST = Number(arg('burst', 500));
const TRIVIAL = Number(arg('trivial', 300));
const ROUNDS = Number(arg('rounds', 3));
const OUT = arg('out', path.join(__dirname, '..', 'RESULTS.scaling.md'));

const TEN_CALLS = `async () => {
  let total = 0;
  for (let i = 0; i < 10; i++) total += (await calc.add({ a: i, b: 1 })).sum;
  return total;
}`;
const providers = [{ name: 'calc', tools: ['add'] }];
const dispatch = async (_provider, _tool, argsJson) => {
  const [{ a, b }] = JSON.parse(argsJson);
  return JSON.stringify({ result: { sum: a + b } });
};

function powersUpTo(max) {
  const counts = [];
  for (let n = 1; n <= max; n *= 2) counts.push(n);
  if (counts[counts.length - 1] !== max) counts.push(max);
  return counts;
}

function arrangements() {
  const list = [];
  for (const workers of powersUpTo(MAX)) {
    list.push({ isolation: 'thread', workers });
    // Below the core count standby threads may start (a core is free while a worker rebuilds
    // its isolate): the same arrangement without them shows what they change.
    if (workers < CORES) list.push({ isolation: 'thread', workers, standbyIsolates: 0 });
  }
  for (const workers of powersUpTo(MAX)) {
    list.push({ isolation: 'process', processes: 1, workers });
    if (workers < CORES) list.push({ isolation: 'process', processes: 1, workers, standbyIsolates: 0 });
  }
  for (let processes = 2; processes <= CORES; processes *= 2) {
    list.push({ isolation: 'process', processes, workers: Math.max(1, Math.floor(CORES / processes)) });
  }
  return list;
}

function label(a) {
  const base = a.isolation === 'thread'
    ? `thread, workers ${a.workers}`
    : `process, ${a.processes} engine${a.processes > 1 ? 's' : ''} × workers ${a.workers}`;
  return a.standbyIsolates === 0 ? `${base}, standbyIsolates 0` : base;
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)];
}

async function burst(executor) {
  const started = process.hrtime.bigint();
  const outs = await Promise.all(
    Array.from({ length: BURST }, () => executor.execute({ code: TEN_CALLS, providers, dispatch })),
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const failed = outs.filter((o) => o.error !== undefined || o.result !== 55);
  if (failed.length) throw new Error(`${failed.length} burst runs failed: ${failed[0].error}`);
  return { runsPerSecond: BURST / (ms / 1000), lastMs: ms };
}

async function trivial(executor) {
  const latencies = [];
  for (let i = 0; i < TRIVIAL; i++) {
    const started = process.hrtime.bigint();
    const out = await executor.execute({ code: 'async () => 1' });
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (out.result !== 1) throw new Error(`trivial run failed: ${out.error}`);
  }
  latencies.sort((x, y) => x - y);
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

async function measure(arrangement) {
  const executor = new IsolateExecutor({ ...arrangement, timeout: 60_000 });
  try {
    // Warm: engines started, every worker has made its isolate and run a program.
    await Promise.all(Array.from({ length: 4 * arrangement.workers }, () => executor.execute({ code: TEN_CALLS, providers, dispatch })));
    const b = await burst(executor);
    const t = await trivial(executor);
    return { ...b, ...t };
  } finally {
    await executor.dispose();
  }
}

// Read before anything runs, so the load average is the machine's, not this scenario's.
const MACHINE = describeMachine();

function machineLine() {
  const m = MACHINE;
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}; load average before ${m.loadAverage.join(' ')}`;
}

async function main() {
  const list = arrangements();
  const samples = list.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < list.length; i++) {
      const m = await measure(list[i]);
      samples[i].push(m);
      console.error(`round ${round + 1}/${ROUNDS} ${label(list[i])}: ${m.runsPerSecond.toFixed(0)} runs/s, trivial p50 ${m.p50.toFixed(2)} ms`);
    }
  }
  const rows = list.map((a, i) => {
    const s = samples[i];
    return {
      label: label(a),
      runsPerSecond: median(s.map((m) => m.runsPerSecond)),
      lastMs: median(s.map((m) => m.lastMs)),
      p50: median(s.map((m) => m.p50)),
      p99: median(s.map((m) => m.p99)),
    };
  });
  const lines = [
    '# Scaling: throughput and latency by threads and engine processes',
    '',
    `Written by \`node bench/scenarios/scaling.js --max ${MAX} --burst ${BURST} --trivial ${TRIVIAL} --rounds ${ROUNDS}\` on ${new Date().toISOString().slice(0, 10)}.`,
    `Machine: ${machineLine()}.`,
    '',
    `Burst: ${BURST} runs of ten tool calls each, submitted at once. Trivial: ${TRIVIAL} runs of \`async () => 1\` one after another, each in a fresh isolate. Median of ${ROUNDS} interleaved rounds.`,
    '',
    '| arrangement | burst runs/s | burst, last answer ms | trivial p50 ms | trivial p99 ms |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.label} | ${r.runsPerSecond.toFixed(0)} | ${r.lastMs.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`),
    '',
  ];
  fs.writeFileSync(OUT, lines.join('\n'));
  console.log(lines.join('\n'));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
