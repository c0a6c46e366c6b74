#!/usr/bin/env node
'use strict';
// Cold and cached import times of npm packages in programs (`packages`, issue 39): for each
// package, a fresh executor's first run (which bundles it) and the median of later runs (the
// bundle from the cache), in both isolation modes. `npm run bench:packages` from the checkout,
// whose devDependencies are the packages. Not part of the test suite: it prints figures.
const { IsolateExecutor } = require('../lib/index.js');

const CASES = [
  ['zod', "import { z } from 'zod';\nreturn z.object({ a: z.number() }).parse({ a: 1 }).a;"],
  ['date-fns', "import { format } from 'date-fns';\nreturn format(new Date(0), 'yyyy');"],
  ['date-fns/format', "import { format } from 'date-fns/format';\nreturn format(new Date(0), 'yyyy');"],
  ['lodash-es', "import _ from 'lodash-es';\nreturn _.chunk([1, 2, 3], 2).length;"],
  ['papaparse', "import Papa from 'papaparse';\nreturn Papa.parse('a,b').data.length;"],
  ['ms', "import ms from 'ms';\nreturn ms('1s');"],
];
const LATER = 9;

async function timed(executor, code) {
  const started = performance.now();
  const out = await executor.execute({ code });
  if (out.error !== undefined) throw new Error(out.error);
  return performance.now() - started;
}

async function main() {
  const rows = [];
  for (const isolation of ['thread', 'process']) {
    for (const [specifier, code] of CASES) {
      const name = specifier.split('/')[0];
      const executor = new IsolateExecutor({ isolation, workers: 1, packages: [name] });
      try {
        await executor.execute({ code: '1' }); // the engine and a warm isolate, not the package
        const cold = await timed(executor, code);
        const later = [];
        for (let i = 0; i < LATER; i++) later.push(await timed(executor, code));
        later.sort((a, b) => a - b);
        rows.push({ isolation, specifier, coldMs: Math.round(cold), cachedMs: Math.round(later[LATER >> 1]) });
      } finally {
        await executor.dispose();
      }
    }
  }
  console.table(rows);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
