'use strict';
// Turns a run's raw batches into a summary (summarizeResults) and the summary into
// RESULTS.md (renderReport). The summary is also written as JSON, so the Markdown is only a view.

const { summarize, median } = require('./stats.js');
const { W7_CALLS } = require('./workloads.js');

const MB = 1024 * 1024;
const LATENCY = ['W1', 'W6', 'W2', 'W7', 'W3', 'W5'];
const REFERENCES = [
  { id: 'node-vm', label: 'node:vm' },
  { id: 'isolated-vm', label: 'isolated-vm' },
];

function summarizeWorkload(key, raw) {
  const s = summarize(raw.samples);
  const row = {
    n: s.n,
    median: s.median,
    p99: s.p99,
    cpuPerRunMs: raw.runs ? raw.cpuMs / raw.runs : NaN,
    rssReadingsMB: raw.rssReadings.map((bytes) => bytes / MB),
    childProcesses: raw.childProcesses,
    errorCount: raw.errorCount || 0,
    errors: raw.errors,
  };
  if (key === 'W4') row.runsPerSecond = raw.wallMs ? (raw.runs * 1000) / raw.wallMs : NaN;
  return row;
}

function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN;
}

function summarizeResults(run, results) {
  const rows = {};
  for (const peer of run.peers) {
    rows[peer.id] = {};
    for (const [key, raw] of Object.entries(results[peer.id] || {})) rows[peer.id][key] = summarizeWorkload(key, raw);
  }
  // Ratios of medians (W4: of time per run, the inverse of throughput); above 1 is slower.
  const cost = (id, key) => {
    const row = rows[id] && rows[id][key];
    if (!row) return NaN;
    return key === 'W4' ? 1000 / row.runsPerSecond : row.median;
  };
  const ratios = {};
  for (const peer of run.peers) {
    ratios[peer.id] = {};
    for (const key of run.order) {
      ratios[peer.id][key] = {};
      for (const ref of REFERENCES) ratios[peer.id][key][ref.id] = ratio(cost(peer.id, key), cost(ref.id, key));
    }
    ratios[peer.id].W3['plain-node'] = ratio(cost(peer.id, 'W3'), cost('plain-node', 'W3'));
    // CPU time is the steadier measure when other work competes for the cores.
    const cpu = (id) => (rows[id] && rows[id].W3 ? rows[id].W3.cpuPerRunMs : NaN);
    ratios[peer.id].W3['plain-node-cpu'] = ratio(cpu(peer.id), cpu('plain-node'));
  }
  // RSS per peer: a batch-end reading includes whatever the process kept from earlier batches
  // (the W4 bursts above all), so the report gives the steady level (median of the readings
  // after the one-at-a-time workloads), the level after bursts, and the peak.
  const memory = {};
  for (const peer of run.peers) {
    const readings = (keys) => keys.flatMap((k) => (rows[peer.id][k] ? rows[peer.id][k].rssReadingsMB : []));
    const all = readings(run.order);
    memory[peer.id] = {
      steadyMB: median(readings(run.order.filter((k) => k !== 'W4'))),
      afterBurstMB: median(readings(['W4'])),
      peakMB: all.length ? Math.max(...all) : NaN,
      childProcesses: Math.max(0, ...run.order.map((k) => (rows[peer.id][k] ? rows[peer.id][k].childProcesses : 0))),
    };
  }
  // Two figures per peer: (W2 − W1) / 10, ten calls' share of a run that also makes a fresh
  // context and goes through cold code; and (W7 − W2) / (W7_CALLS − 10), the cost of one more
  // call in a run already under way, where those cancel out.
  const toolCall = {};
  const toolCallWarm = {};
  for (const peer of run.peers) {
    const w1 = cost(peer.id, 'W1');
    const w2 = cost(peer.id, 'W2');
    const w7 = cost(peer.id, 'W7');
    toolCall[peer.id] = (w2 - w1) / 10;
    toolCallWarm[peer.id] = (w7 - w2) / (W7_CALLS - 10);
  }
  const idle = {};
  for (const [id, byWorkers] of Object.entries(run.idle)) {
    const one = byWorkers[1];
    const many = byWorkers[32];
    idle[id] = {
      rss1MB: one && one.rssBytes ? one.rssBytes / MB : NaN,
      rss32MB: many && many.rssBytes ? many.rssBytes / MB : NaN,
      perIsolateMB: one && many && one.rssBytes && many.rssBytes ? (many.rssBytes - one.rssBytes) / 31 / MB : NaN,
      isolatesCreated32: many && many.stats ? many.stats.isolatesCreated : undefined,
      childProcesses32: many ? many.childProcesses : undefined,
      error: (one && one.error) || (many && many.error),
    };
  }
  return { ...run, rows, ratios, memory, toolCall, toolCallWarm, idleSummary: idle };
}

// ---- Markdown ----

function fmt(x) {
  if (!Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

function fmtRatio(x) {
  return Number.isFinite(x) ? `${x >= 10 ? x.toFixed(0) : x.toFixed(2)}×` : '–';
}

function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function label(s, id) {
  return s.peers.find((p) => p.id === id).label;
}

function latencyTable(s) {
  const header = ['peer', ...LATENCY.map((k) => `${k} median / p99 (n)`)];
  const rows = s.peers.map((p) => [p.label, ...LATENCY.map((k) => {
    const r = s.rows[p.id][k];
    return r ? `${fmt(r.median)} / ${fmt(r.p99)} (${r.n})` : '–';
  })]);
  return table(header, rows);
}

function burstTable(s) {
  const rows = s.peers.filter((p) => s.rows[p.id].W4).map((p) => {
    const r = s.rows[p.id].W4;
    return [p.label, fmt(r.runsPerSecond), fmt(r.median), fmt(r.p99), String(r.n)];
  });
  return table(['peer', 'runs/s', 'latency p50 (ms)', 'latency p99 (ms)', 'runs'], rows);
}

function cpuTable(s) {
  const rows = s.peers.map((p) => [p.label, ...s.order.map((k) => {
    const r = s.rows[p.id][k];
    return r ? fmt(r.cpuPerRunMs) : '–';
  })]);
  return table(['peer', ...s.order.map((k) => `${k} CPU ms/run`)], rows);
}

function rssTable(s) {
  const rows = s.peers.map((p) => {
    const m = s.memory[p.id];
    return [p.label, fmt(m.steadyMB), fmt(m.afterBurstMB), fmt(m.peakMB), String(m.childProcesses)];
  });
  return table(['peer', 'steady (MB)', 'after a W4 burst (MB)', 'peak (MB)', 'child processes'], rows);
}

function ratioTable(s) {
  const refs = REFERENCES.filter((ref) => s.peers.some((p) => p.id === ref.id));
  const header = ['peer'];
  for (const k of s.order) for (const ref of refs) header.push(`${k} vs ${ref.label}`);
  header.push('W3 vs plain node', 'W3 CPU vs plain node');
  const rows = s.peers.map((p) => {
    const cells = [p.label];
    for (const k of s.order) for (const ref of refs) cells.push(fmtRatio(s.ratios[p.id][k][ref.id]));
    cells.push(fmtRatio(s.ratios[p.id].W3['plain-node']), fmtRatio(s.ratios[p.id].W3['plain-node-cpu']));
    return cells;
  });
  return table(header, rows);
}

function toolCallTable(s) {
  const warm = s.toolCallWarm || {};
  const rows = s.peers
    .filter((p) => Number.isFinite(s.toolCall[p.id]) || Number.isFinite(warm[p.id]))
    .map((p) => [p.label, fmt(s.toolCall[p.id]), fmt(warm[p.id])]);
  return table(['peer', '(W2 − W1) / 10, ms per call', `(W7 − W2) / ${W7_CALLS - 10}, ms per call`], rows);
}

function idleSection(s) {
  const entries = Object.entries(s.idleSummary);
  if (entries.length === 0) return 'Not measured (no codemode variant ran).';
  const rows = entries.map(([id, r]) => [
    label(s, id),
    fmt(r.rss1MB),
    fmt(r.rss32MB),
    fmt(r.perIsolateMB),
    r.isolatesCreated32 === undefined ? '–' : String(r.isolatesCreated32),
    r.childProcesses32 === undefined ? '–' : String(r.childProcesses32),
    r.error ? r.error : '',
  ]);
  return table(['variant', 'RSS, workers: 1 (MB)', 'RSS, workers: 32 (MB)', 'per warm isolate (MB)', 'isolates created (32)', 'child processes (32)', 'error'], rows);
}

function floorsSection(s) {
  const f = s.floors;
  if (!f) return 'Not measured (no codemode variant ran).';
  if (f.error) return `Not measured: ${f.error}.`;
  return `${table(['', 'median CPU (ms)'], [
    ['`v8::Isolate::new` from our snapshot', fmt(f.isolateCreateMs)],
    ['restoring the bootstrapped context', fmt(f.isolateRestoreMs)],
    ['dropping the isolate', fmt(f.isolateDropMs)],
    ['a fresh isolate, in all', fmt(f.isolateCreateMs + f.isolateRestoreMs + f.isolateDropMs)],
  ])}

Every execution pays for one fresh isolate on a worker thread, whatever the pool does around
it: this is the CPU floor under W1's and W4's CPU per execution above (measured by the addon's
\`measureFloors\`, in a fresh process, after the peers ran).`;
}

function errorsSection(s) {
  const lines = [];
  for (const f of s.failed) lines.push(`- **${f.label}** did not run: ${f.reason.split('\n').slice(0, 3).join(' ')}`);
  for (const p of s.peers) {
    for (const k of s.order) {
      const r = s.rows[p.id][k];
      if (r && r.errorCount) lines.push(`- ${p.label} ${k}: ${r.errorCount} runs failed or returned a wrong value, e.g. \`${r.errors[0]}\``);
    }
  }
  return lines.length ? lines.join('\n') : 'None: every run of every peer returned the expected value.';
}

function renderReport(s) {
  const m = s.machine;
  const p = s.preset;
  const quick = s.mode === 'quick';
  return `# Peer benchmark results

${quick ? '**`--quick` run: a check of the harness, too few samples to compare peers.**\n\n' : ''}These numbers come from a **shared, noisy ${m.cores}-core machine** (other work, compiling
among it, ran at the same time). Rounds interleave the peers so noise hits them alike, but
treat differences under ~20 % as noise. Rerun with \`npm run bench\` (see [README.md](README.md)).

## Machine

| | |
| --- | --- |
| CPU | ${m.cpu}, ${m.cores} cores available |
| memory | ${m.memoryGiB} GiB |
| OS | ${m.os} |
| Node | ${m.node} (V8 ${m.v8}) |
| date | ${m.date} |
| load average (1/5/15 min) | before ${m.loadAverage.join(' / ')}, after ${(m.loadAverageAfter || []).join(' / ')} |
| background load (\`--load\`) | ${m.backgroundLoad ? `${m.backgroundLoad} CPU-bound process(es) at nice 19 for the whole run (peers' rounds, not the idle-memory and floor measurements)` : 'none'} |
| run | ${s.mode}: ${p.rounds} round(s), batches of up to ${p.budgetMs} ms, W4 bursts of ${p.burst}; ${s.durationS} s |

## Peers

${table(['peer', 'version', 'how it runs a program'], s.peers.map((x) => [x.label, x.version, x.notes]))}

${s.probe.isolation ? '' : `Our build does not have the \`isolation\` option yet (${s.probe.reason}), so it ran in its one mode.\n\n`}## Method

- Every peer runs each program in a **fresh** context: a new isolate (isolated-vm, ours), a new
  QuickJS runtime and context, a new \`vm.Context\`, a new dynamic Worker (workerd). Tools are
  host callbacks in the bench process in every peer; all are async functions.
- Each peer runs in its own Node child process (\`--no-node-snapshot --expose-gc\`). After a
  discarded warm-up pass, ${p.rounds} round(s): in each, every workload is run by every peer in
  turn, the peer order rotating by one each round. A batch runs the program sequentially (one
  run awaited before the next) until ${p.budgetMs} ms have passed or a run count is reached;
  W6 leaves 10 ms of idle between its runs (not counted in their latency); W4 submits
  ${p.burst} runs at once and times each from submission.
- Latency: wall time of one \`execute\`, from the call to the settled result, in the child.
  Percentiles are nearest-rank; p99 of fewer than 100 samples is the slowest one.
- CPU per run: user+system CPU of the child over a batch (\`process.cpuUsage()\`, which includes
  our addon's and isolated-vm's threads since they are in-process), **plus the CPU of the
  child's descendant processes** read from \`/proc/<pid>/stat\` (workerd; the worker processes of
  our 'process' isolation), divided by the runs. /proc counts in 10 ms ticks; a descendant that
  exits inside a batch loses its time.
- RSS: the child's RSS plus its descendants', read at the end of each batch. A reading includes
  what the process kept from earlier batches (the W4 bursts above all), so the table gives the
  steady level (median of the readings after every workload but W4), the median after W4
  bursts, and the peak.
- Ratios divide medians (W4: time per run, i.e. inverse throughput) by the reference peer's from
  the same run; above 1× is slower. W3 is also compared with the same loop in plain node, by
  wall time and by CPU per run (the steadier of the two when other work takes the cores).
- Tool-call round trip, two ways: (median W2 − median W1) / 10, the calls' share of a short run
  (it includes what the calls cost in a fresh context, and on a busy machine the CPU the pool
  spends making the next isolates), and (median W7 − median W2) / ${W7_CALLS - 10}, what one more call
  costs in a run already under way (the round trip itself).
- Idle memory per warm isolate (ours): RSS (child + descendants) of an executor with
  \`workers: 32\` minus one with \`workers: 1\`, each in a fresh process after every worker has run
  programs concurrently and the pool has settled for 1 s, divided by 31.
- W3's loop was calibrated on plain node in the orchestrator: ${s.calibration.iterations}
  iterations, ${fmt(s.calibration.measuredMs)} ms there.
- Values cross every sandbox boundary as JSON text except in the Cloudflare-shaped peers
  (workerd, our Cloudflare form), which use Cloudflare's transport codec; in workerd each tool
  call also makes one loopback HTTP round trip from the host Worker to the Node process.

## Latency per execution (ms)

${latencyTable(s)}

## W4: ${p.burst} W2 runs submitted at once

${burstTable(s)}

## CPU per execution (ms of CPU, child + descendants)

${cpuTable(s)}

## RSS (MB, child + descendants, at batch ends)

${rssTable(s)}

## Ratios (median time, this peer ÷ reference)

${ratioTable(s)}

## Tool-call round trip

${toolCallTable(s)}

The first column is what ten calls add to a fresh run; the second, one call more in a run
already making calls (W7 makes ${W7_CALLS}, W2 makes 10, both from a fresh context).

## Idle memory per warm isolate (ours)

${idleSection(s)}

## Floors on this machine (ours)

${floorsSection(s)}

## Failures and errors

${errorsSection(s)}

## Programs

${s.order.map((k) => `- ${k}, ${s.workloads[k].title}: \`${s.workloads[k].code}\``).join('\n')}
`;
}

module.exports = { summarizeResults, renderReport };
