'use strict';
// The application of __test__/console/cli.test.js, in a process of its own: a durable runtime
// over the store file argv[2] with a shop whose orders need approval (each effect appended to
// the ledger file argv[3]). It starts two runs that pause, prints `PAUSED <id>` for each, then
// answers lines on stdin: `recover` runs runtime.recover() and prints `RECOVERED <json>`.
const fs = require('node:fs');
const readline = require('node:readline');
const { IsolateExecutor, CodemodeConnector, createCodemodeRuntime } = require('../../lib/index.js');

const [file, ledger] = process.argv.slice(2);

class Shop extends CodemodeConnector {
  name() {
    return 'shop';
  }

  tools() {
    return {
      price: { description: 'A price', execute: async ({ item }) => ({ item, price: item.length }) },
      order: {
        description: 'Order an item',
        requiresApproval: true,
        execute: async ({ item }, ctx) => {
          fs.appendFileSync(ledger, `${JSON.stringify({ item, executionId: ctx.executionId })}\n`);
          return { ordered: item };
        },
        revert: async () => {},
      },
    };
  }
}

(async () => {
  const executor = new IsolateExecutor({ isolation: 'thread', workers: 1 });
  const runtime = createCodemodeRuntime({ executor, connectors: [new Shop()], path: file });
  for (const item of ['tea', 'cake']) {
    const out = await runtime.execute({ code: `async () => { const p = await shop.price({ item: "${item}" }); return shop.order({ item: p.item }); }` });
    if (out.status !== 'paused') throw new Error(`expected a pause: ${JSON.stringify(out)}`);
    process.stdout.write(`PAUSED ${out.executionId}\n`);
  }
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line === 'recover') {
      const outcomes = await runtime.recover();
      process.stdout.write(`RECOVERED ${JSON.stringify(outcomes.map((o) => ({ status: o.status, executionId: o.executionId, result: o.result })))}\n`);
    }
  }
  await executor.dispose();
})().catch((error) => {
  console.error(error);
  process.exit(3);
});
