'use strict';
// How long a healthy one-line run waits while N runaway programs (`for (;;) {}`) hold the
// pool, in both arrangements. The runaways are submitted first, the healthy run 100 ms later;
// the figure is the healthy run's latency from its own submission. Not a peer comparison: it
// measures admission (issue 12, hole 6), before and after a change, on the same machine.
//
//   node bench/scenarios/runaways.js [--runaways 8] [--timeout 5000] [--rounds 3]
const { IsolateExecutor } = require('../../lib/index.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
}

async function once(isolation, runaways, timeout) {
  const ex = new IsolateExecutor({ isolation, timeout });
  try {
    await ex.execute({ code: 'async () => 0' }); // started and warm
    const burning = Array.from({ length: runaways }, () => ex.execute({ code: 'async () => { for (;;) {} }' }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = process.hrtime.bigint();
    const out = await ex.execute({ code: 'async () => "served"' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (out.result !== 'served') throw new Error(`healthy run failed: ${JSON.stringify(out)}`);
    await Promise.all(burning);
    return ms;
  } finally {
    await ex.dispose();
  }
}

async function main() {
  const runaways = arg('runaways', 8);
  const timeout = arg('timeout', 5000);
  const rounds = arg('rounds', 3);
  for (const isolation of ['thread', 'process']) {
    const ms = [];
    for (let i = 0; i < rounds; i++) ms.push(await once(isolation, runaways, timeout));
    ms.sort((a, b) => a - b);
    console.log(`${isolation}: healthy run latency with ${runaways} runaways (timeout ${timeout} ms): ` +
      `median ${ms[Math.floor(ms.length / 2)].toFixed(1)} ms, all ${ms.map((m) => m.toFixed(1)).join(', ')}`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
