'use strict';
// The first execution, in both isolation modes, on whatever runtime runs this file (Node, Bun,
// Deno): a program with a tool call, answered by the host. Prints one JSON line; exits 1 on any
// failure. Driven by runtimes.test.js.
const path = require('node:path');
const { IsolateExecutor } = require(path.join(__dirname, '..', '..', 'lib', 'index.js'));

(async () => {
  const out = {};
  for (const isolation of ['thread', 'process']) {
    const ex = new IsolateExecutor({ isolation, workers: 1, timeout: 10_000 });
    try {
      const r = await ex.execute({
        code: 'async () => { const n = await tools.add({ a: 40, b: 2 }); return { n, typeofProcess: typeof process } }',
        providers: [{ name: 'tools', tools: ['add'] }],
        dispatch: async (_p, _t, argsJson) => { const [{ a, b }] = JSON.parse(argsJson); return JSON.stringify({ result: a + b }); },
      });
      const cf = await ex.execute('async () => await codemode.twice(21)', { twice: (x) => x * 2 });
      out[isolation] = { result: r.result, error: r.error, cloudflare: cf.result, engines: ex.stats().processes };
    } finally {
      await ex.dispose();
    }
  }
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((error) => {
  console.error(error && error.stack ? error.stack : String(error));
  process.exit(1);
});
