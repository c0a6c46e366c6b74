'use strict';
// A program as a chat model answers: prose, a fenced TypeScript module with params, a helper
// module imported statically. The same source runs twice with other params (the second run
// comes from the code cache), console lines are followed as they happen, and the result says
// where the time went.
//
//   node examples/typed-program.js
const { IsolateExecutor } = require('..');

const answer = `Here is a program that converts the forecasts:

\`\`\`ts
import { toFahrenheit } from 'units.js';

interface Params { cities: string[] }
type Forecast = { city: string; tempC: number };

export default async function main({ cities }: Params): Promise<string[]> {
  const forecasts: Forecast[] = await Promise.all(cities.map((city) => weather.forecast({ city })));
  for (const f of forecasts) console.log(f.city, toFahrenheit(f.tempC));
  return forecasts.filter((f) => f.tempC > 10).map((f) => f.city);
}
\`\`\`

It returns the warm cities.`;

const forecast = async ({ city }) => ({ city, tempC: city === 'Oslo' ? -3 : 18 });

async function run() {
  const executor = new IsolateExecutor({
    timeout: 5000,
    modules: { 'units.js': 'export const toFahrenheit = (c) => Math.round(c * 9 / 5 + 32) + "°F";' },
  });
  try {
    const request = (cities) => ({
      code: answer,
      params: { cities },
      providers: [{ name: 'weather', tools: ['forecast'] }],
      dispatch: async (_provider, _tool, argsJson) => JSON.stringify({ result: await forecast(...JSON.parse(argsJson)) }),
      onLog: (line) => console.log(`  live: ${line}`),
    });
    const first = await executor.execute(request(['Oslo', 'Lisbon']));
    const second = await executor.execute(request(['Nairobi']));
    for (const out of [first, second]) {
      const phases = out.timing.phases.map((p) => `${p.name} ${p.durationMs.toFixed(2)} ms`).join(', ');
      console.log(JSON.stringify({ result: out.result, error: out.error, codeCacheHit: out.stats.codeCacheHit }), `(${phases})`);
    }
  } finally {
    await executor.dispose();
  }
}

run().catch((error) => {
  console.error(error);
  process.exit(1);
});
