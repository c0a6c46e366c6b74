// A first execution: a program that calls two host tools and logs, run in a fresh isolate.
// The README's first example, as written there (`npm run example`; __test__/docs/docs.test.js
// checks the two stay the same).
import { IsolateExecutor } from '@supolka/codemode-executor';

// Your tools: the program reaches them as weather.cities() and weather.forecast({ city }).
const myTools = {
  weather: {
    cities: async () => ['Oslo', 'Lisbon'],
    forecast: async ({ city }) => ({ city, tempC: city === 'Oslo' ? 4 : 19 }),
  },
};

const executor = new IsolateExecutor({ timeout: 5000, memoryLimitMb: 64 });
const out = await executor.execute({
  code: `async () => {
    const cities = await weather.cities();
    const forecasts = await Promise.all(cities.map((city) => weather.forecast({ city })));
    console.log("checked", cities.length, "cities");
    return forecasts.filter((f) => f.tempC > 10).map((f) => f.city);
  }`,
  providers: [{ name: 'weather', tools: ['cities', 'forecast'] }],
  // Every tool call arrives as JSON text; answer {"result": ...} or {"error": "message"}.
  dispatch: async (provider, tool, argsJson) =>
    JSON.stringify({ result: await myTools[provider][tool](...JSON.parse(argsJson)) }),
});
// out = { result: ['Lisbon'], logs: ['checked 2 cities'], timing: { queuedMs, runMs, totalMs, phases }, stats: { toolCalls, ... } }
console.log(out.result, out.logs);
await executor.dispose();
