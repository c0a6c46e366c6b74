'use strict';
// What the durable runtime's store costs per decision, on each store: a SQLite file (synchronous
// NORMAL, the default, and FULL) and PostgreSQL (a local server with its own defaults: every
// commit waits for the disk). A decision is what one durable tool call asks of the store: `decide`
// (the call is recorded as executing) then `recordResult`, two transactions. Runs are driven
// through the runtime's store facet (the same conversions a pass pays), `concurrency` at once,
// each beginning, deciding `--calls` times and completing, again and again for `--seconds`;
// reported: decisions per second and the latency of one decision (p50, p99). Not a peer
// comparison and no executor: the store alone. Writes bench/RESULTS.store.md.
//
//   node bench/scenarios/store.js [--seconds 3] [--calls 5] [--concurrency 1,4,16]
//
// PostgreSQL: CODEMODE_PG_URL, or a throwaway cluster with durable settings (scripts/postgres.js).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { RuntimeStore, storeAt, storeOn } = require('../../lib/runtime/store.js');
const { startPostgres } = require('../../scripts/postgres.js');
const { describeMachine } = require('../machine.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
}
const SECONDS = Number(arg('seconds', 3));
const CALLS = Number(arg('calls', 5));
const CONCURRENCY = String(arg('concurrency', '1,4,16')).split(',').map(Number);

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// `concurrency` runs at once on one store until the time is up.
async function measure(native, concurrency) {
  const facet = new RuntimeStore(native, `bench_${concurrency}_${Date.now()}`);
  const latencies = [];
  const until = Date.now() + SECONDS * 1000;
  const lane = async () => {
    while (Date.now() < until) {
      const { id } = await facet.begin('async () => {}', ['bank'], 50, 30_000);
      for (let seq = 0; seq < CALLS; seq++) {
        const started = process.hrtime.bigint();
        const decision = await facet.decide(id, seq, 'bank', 'pay', { memo: `m${seq}`, amount: seq }, false, false, false);
        if (decision.kind !== 'execute') throw new Error(`expected execute, got ${decision.kind}`);
        await facet.recordResult(id, seq, 'bank', 'pay', { paid: true, seq });
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      await facet.complete(id, 'done', []);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / elapsed, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), n: latencies.length };
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-bench-store-'));
  const pg = await startPostgres({ durable: true });
  const stores = [
    ['SQLite file, durability normal', () => storeAt(path.join(dir, 'normal.db'), 'normal')],
    ['SQLite file, durability full', () => storeAt(path.join(dir, 'full.db'), 'full')],
  ];
  if (pg.skipped) console.error(`PostgreSQL not measured: ${pg.skipped}`);
  else stores.push([`PostgreSQL 15, local${pg.started ? ' throwaway cluster' : ''} (server defaults), maxConnections 4`, () => storeOn({ url: pg.url, schema: `bench_${process.pid}` })]);
  const rows = [];
  try {
    for (const [name, open] of stores) {
      const native = open();
      await measure(native, 1); // warm: schema, connections, prepared statements
      for (const c of CONCURRENCY) {
        const m = await measure(native, c);
        rows.push({ name, concurrency: c, ...m });
        console.log(`${name}, ${c} concurrent: ${m.perSecond.toFixed(0)} decisions/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms (${m.n})`);
      }
    }
  } finally {
    if (!pg.skipped) pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const table = [
    '| store | concurrent runs | decisions/s | p50 ms | p99 ms |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.name} | ${r.concurrency} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`),
  ].join('\n');
  const text = `# Durable store: cost per decision\n\nWritten by \`node bench/scenarios/store.js\` (${SECONDS} s per row, ${CALLS} decisions per run; a decision is \`decide\` + \`recordResult\`, two transactions). Machine: ${(({ cpu, cores, memoryGiB, node, date, loadAverage }) => `${cpu}, ${cores} cores, ${memoryGiB} GiB, Node ${node}, ${date}, load ${loadAverage.join(' ')}`)(describeMachine())}.\n\n${table}\n`;
  fs.writeFileSync(path.join(__dirname, '..', 'RESULTS.store.md'), text);
  console.log(`\n${text}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
