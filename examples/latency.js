'use strict';
// Median latency of sequential executions: a trivial program, and one making ten awaited tool
// calls. Usage: node examples/latency.js [runs=200]
const { IsolateExecutor } = require('..');

const runs = Number(process.argv[2] || 200);
const dispatch = (provider, tool, argsJson) => `{"result":${JSON.parse(argsJson)[0] + 1}}`;
const workloads = {
  trivial: { code: 'async () => 1 + 1' },
  tenToolCalls: {
    code: 'async () => { let n = 0; for (let i = 0; i < 10; i++) n = await svc.inc(n); return n }',
    providers: [{ name: 'svc', tools: ['inc'] }],
    dispatch,
  },
};

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function main() {
  const executor = new IsolateExecutor({ workers: 2 });
  const report = {};
  try {
    for (const [name, request] of Object.entries(workloads)) {
      for (let i = 0; i < 20; i++) await executor.execute(request); // warm up both tiers of V8
      const samples = [];
      for (let i = 0; i < runs; i++) {
        const started = process.hrtime.bigint();
        const out = await executor.execute(request);
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (out.error !== undefined) throw new Error(`${name}: ${out.error}`);
      }
      samples.sort((a, b) => a - b);
      report[name] = { runs, medianMs: +percentile(samples, 0.5).toFixed(3), p99Ms: +percentile(samples, 0.99).toFixed(3) };
    }
  } finally {
    await executor.dispose();
  }
  console.log(JSON.stringify(report, null, 2));
}

main();
