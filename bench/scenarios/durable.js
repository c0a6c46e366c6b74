#!/usr/bin/env node
'use strict';
// `node bench/scenarios/durable.js [--root DIR] [--rounds N] [--calls N]`: what a durable run
// costs per call and per pass, through the public API (createCodemodeRuntime over a SQLite
// file, 'thread' isolation): a run of N sequential calls, a run of N parallel calls
// (Promise.all), and the pass after an approval, which replays N recorded calls and executes
// the approved one. Prints the median of each, in ms, as JSON. `--root` loads the package from
// another checkout, so two builds can be compared on the same machine, round after round
// (issue 36 measured the delivery order and the replayed clock this way).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : args[i + 1];
};
const root = path.resolve(option('root', path.join(__dirname, '..', '..')));
const rounds = Number(option('rounds', 30));
const calls = Number(option('calls', 10));
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector } = require(path.join(root, 'lib', 'index.js'));

class Api extends CodemodeConnector {
  name() { return 'api'; }
  tools() {
    return {
      get: { description: 'a read', execute: async ({ id }) => ({ id, value: id * 2 }) },
      send: { description: 'an effect that needs approval', requiresApproval: true, execute: async () => ({ sent: true }) },
    };
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-bench-durable-'));
  const executor = new IsolateExecutor({ isolation: 'thread', workers: 1 });
  const runtime = createCodemodeRuntime({ executor, connectors: [new Api()], path: path.join(dir, 'runtime.db'), maxExecutions: 10_000 });
  const ids = Array.from({ length: calls }, (_, i) => i);
  const sequential = `async () => { let n = 0; for (const id of ${JSON.stringify(ids)}) n += (await api.get({ id })).value; return n; }`;
  const parallel = `async () => (await Promise.all(${JSON.stringify(ids)}.map((id) => api.get({ id })))).length`;
  const paused = `async () => { const r = await Promise.all(${JSON.stringify(ids)}.map((id) => api.get({ id }))); await api.send({ n: r.length }); return r.length; }`;
  const times = { sequential: [], parallel: [], pausedFirstPass: [], approvedPass: [] };
  const time = async (list, fn) => {
    const start = process.hrtime.bigint();
    const out = await fn();
    list.push(Number(process.hrtime.bigint() - start) / 1e6);
    return out;
  };
  try {
    for (let round = -3; round < rounds; round++) {
      const keep = round >= 0;
      const lists = keep ? times : { sequential: [], parallel: [], pausedFirstPass: [], approvedPass: [] };
      const a = await time(lists.sequential, () => runtime.execute({ code: sequential }));
      const b = await time(lists.parallel, () => runtime.execute({ code: parallel }));
      const c = await time(lists.pausedFirstPass, () => runtime.execute({ code: paused }));
      const d = await time(lists.approvedPass, () => runtime.approve({ executionId: c.executionId }));
      for (const out of [a, b, d]) if (out.status !== 'completed') throw new Error(JSON.stringify(out));
    }
  } finally {
    runtime.close();
    await executor.dispose();
  }
  const out = { root, calls, rounds };
  for (const [name, list] of Object.entries(times)) out[name] = Number(median(list).toFixed(3));
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((error) => { console.error(error); process.exit(1); });
