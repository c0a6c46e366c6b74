'use strict';
// What watching runs costs per tool call: `onEvent` (lib/events.js) and OpenTelemetry spans
// (lib/otel.js), on and off. One program makes --calls sequential tool calls against a
// dispatch that answers at once; each configuration has its own executor (one worker, the
// chosen isolation), and the configurations take turns within each round so drift hits all
// alike. Reported: the median run's wall time on the host and, against the baseline, the cost
// per call; the baseline measured a second time shows the noise floor of that figure.
//   1. Before any tracer provider is registered: `tracing: false` (what a host without
//      @opentelemetry/api gets: the API is never loaded) against `tracing: true` with the API
//      loaded but nothing recording (one no-op span per run).
//   2. With the SDK's BasicTracerProvider registered (spans end in an exporter that drops them):
//      nothing, events, spans, and both.
// Not a peer comparison: a before/after figure on one machine.
//
//   node bench/scenarios/observability.js [--calls 200] [--rounds 15] [--isolation thread|process]
const { IsolateExecutor } = require('../../lib/index.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
}

const CALLS = Number(arg('calls', 200));
const ROUNDS = Number(arg('rounds', 15));
const ISOLATION = arg('isolation', 'thread');
const CODE = `async (params) => {
  let total = 0;
  for (let i = 0; i < params.calls; i++) total += await t.add({ i });
  return total;
}`;
const REPLY = JSON.stringify({ result: 1 });
const dispatch = () => REPLY;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

// One configuration: its executor, and whether its runs get an onEvent.
function config(name, { tracing, events }) {
  let seen = 0;
  const executor = new IsolateExecutor({ isolation: ISOLATION, workers: 1, tracing });
  const request = { code: CODE, params: { calls: CALLS }, providers: [{ name: 't', tools: ['add'] }], dispatch };
  if (events) request.onEvent = () => { seen++; };
  return {
    name,
    samples: [],
    executor,
    async once() {
      const start = performance.now();
      const out = await executor.execute(request);
      const ms = performance.now() - start;
      if (out.error !== undefined || out.result !== CALLS) throw new Error(`${name}: ${out.error}`);
      return ms;
    },
    get events() { return seen; },
  };
}

// Runs every configuration once per round, after a warm-up, rotating which goes first.
async function measure(configs) {
  for (const c of configs) for (let i = 0; i < 3; i++) await c.once();
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < configs.length; k++) {
      const c = configs[(round + k) % configs.length];
      c.samples.push(await c.once());
    }
  }
  const base = median(configs[0].samples);
  for (const c of configs) {
    const ms = median(c.samples);
    const perCall = ((ms - base) / CALLS) * 1000;
    console.log(`  ${c.name.padEnd(34)} ${ms.toFixed(2).padStart(8)} ms/run  ${c === configs[0] ? '   (baseline)' : `${perCall >= 0 ? '+' : ''}${perCall.toFixed(2)} µs/call`}`);
  }
  await Promise.all(configs.map((c) => c.executor.dispose()));
}

async function main() {
  console.log(`observability cost: ${CALLS} tool calls per run, ${ROUNDS} rounds, isolation '${ISOLATION}', median run`);
  console.log('1. no tracer provider registered');
  await measure([
    config('tracing: false, no onEvent', { tracing: false, events: false }),
    config('tracing: true, nothing records', { tracing: true, events: false }),
    config('tracing: false again (noise)', { tracing: false, events: false }),
  ]);

  const { trace } = require('@opentelemetry/api');
  const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
  const drop = { export: (spans, done) => done({ code: 0 }), shutdown: () => Promise.resolve() };
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(drop)] }));
  console.log('2. the SDK\'s BasicTracerProvider registered');
  const events = config('onEvent', { tracing: false, events: true });
  await measure([
    config('nothing (tracing: false)', { tracing: false, events: false }),
    events,
    config('spans', { tracing: true, events: false }),
    config('spans and onEvent', { tracing: true, events: true }),
    config('nothing again (noise)', { tracing: false, events: false }),
  ]);
  console.log(`  (onEvent received ${events.events} events)`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
