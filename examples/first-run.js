'use strict';
// A first execution: a program that calls two host tools and logs, run in a fresh isolate.
const { IsolateExecutor } = require('..');

const tools = {
  weather: {
    // Host functions: plain async JavaScript on the Node side.
    forecast: async ({ city }) => ({ city, tempC: city === 'Oslo' ? -3 : 18 }),
    cities: async () => ['Oslo', 'Lisbon', 'Nairobi'],
  },
};

// The executor hands every tool call to `dispatch` as JSON text and expects JSON text back.
async function dispatch(provider, tool, argsJson) {
  try {
    const result = await tools[provider][tool](...JSON.parse(argsJson));
    return JSON.stringify({ result });
  } catch (error) {
    return JSON.stringify({ error: error.message });
  }
}

// What a model would write: one program instead of one round trip per tool call.
const code = `async () => {
  const cities = await weather.cities();
  const forecasts = await Promise.all(cities.map((city) => weather.forecast({ city })));
  const warm = forecasts.filter((f) => f.tempC > 10).map((f) => f.city);
  console.log("checked", cities.length, "cities");
  return { warm };
}`;

async function main() {
  const executor = new IsolateExecutor({ timeout: 5000, memoryLimitMb: 64 });
  try {
    const out = await executor.execute({
      code,
      providers: [{ name: 'weather', tools: Object.keys(tools.weather) }],
      dispatch,
    });
    console.log(JSON.stringify(out, null, 2));
    if (out.error !== undefined || out.result.warm.join() !== 'Lisbon,Nairobi') process.exitCode = 1;
  } finally {
    await executor.dispose();
  }
}

main();
