'use strict';
// One peer, in its own process (started by run.js with --no-node-snapshot --expose-gc, over an
// IPC channel). Keeping each peer in its own process keeps their heaps, threads and allocator
// state apart, and lets CPU and RSS be read per peer.
//
// Messages from run.js, answered in order:
//   { type: 'batch', code, expected, maxRuns, minRuns, budgetMs, gapMs }
//       sequential runs (each awaited before the next, gapMs of idle between them) until
//       maxRuns, or until budgetMs has passed and at least minRuns were done
//       → { samples (ms), runs, cpuMs, rssBytes, errors }
//   { type: 'burst', code, expected, count }
//       `count` runs submitted at once → { samples (ms from submission), wallMs, ... }
//   { type: 'idle-memory' }   (codemode only) saturate the pool, settle → { rssBytes, stats }
//   { type: 'exit' }
// CPU is this process's user+system time (which includes our addon's threads, being
// in-process) plus the CPU of its descendant processes (workerd; our 'process' isolation's
// workers), read from /proc. RSS is this process's plus its descendants'.

const { createPeer } = require('./peers/index.js');
const { descendants, cpuBetween, rssOf } = require('./procfs.js');

const peerId = process.argv[2];
const overrides = process.argv[3] ? JSON.parse(process.argv[3]) : {};
let peer;

function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6;
}

function settle() {
  if (global.gc) global.gc(); // start each batch without the previous one's garbage
}

function check(value, expected) {
  return JSON.stringify(value) === JSON.stringify(expected);
}

// Brackets `work` with CPU and RSS readings. The /proc scans sit outside the self-CPU window.
async function measured(work) {
  settle();
  const kidsBefore = descendants();
  const selfBefore = process.cpuUsage();
  const out = await work();
  const self = process.cpuUsage(selfBefore);
  const kidsAfter = descendants();
  return {
    ...out,
    cpuMs: (self.user + self.system) / 1000 + cpuBetween(kidsBefore, kidsAfter),
    rssBytes: process.memoryUsage.rss() + rssOf(kidsAfter),
    childProcesses: kidsAfter.size,
  };
}

async function runOne(code, expected, errors) {
  try {
    const value = await peer.execute(code);
    if (!check(value, expected)) errors.push(`wrong result: ${JSON.stringify(value).slice(0, 200)}`);
  } catch (error) {
    errors.push(String(error && error.message || error).slice(0, 300));
  }
}

async function batch({ code, expected, maxRuns, minRuns, budgetMs, gapMs = 0 }) {
  return measured(async () => {
    const samples = [];
    const errors = [];
    const started = nowMs();
    while (samples.length < maxRuns && (samples.length < minRuns || nowMs() - started < budgetMs)) {
      // Idle time before a run is not part of its latency.
      if (gapMs > 0 && samples.length > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
      const t0 = nowMs();
      await runOne(code, expected, errors);
      samples.push(nowMs() - t0);
    }
    return { samples, runs: samples.length, errors };
  });
}

async function burst({ code, expected, count }) {
  return measured(async () => {
    const errors = [];
    const started = nowMs();
    const samples = await Promise.all(Array.from({ length: count }, () => runOne(code, expected, errors).then(() => nowMs() - started)));
    return { samples, runs: count, wallMs: nowMs() - started, errors };
  });
}

async function idleMemory() {
  const stats = await peer.saturate();
  await new Promise((resolve) => setTimeout(resolve, 1000)); // let finished runs be torn down
  settle();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const kids = descendants();
  return { rssBytes: process.memoryUsage.rss() + rssOf(kids), childProcesses: kids.size, stats };
}

async function handle(message) {
  switch (message.type) {
    case 'batch': return batch(message);
    case 'burst': return burst(message);
    case 'idle-memory': return idleMemory();
    case 'exit':
      await peer.dispose();
      process.disconnect();
      setTimeout(() => process.exit(0), 200).unref();
      return null;
    default: throw new Error(`unknown message ${message.type}`);
  }
}

// Messages are handled one at a time, in arrival order.
let queue = Promise.resolve();
process.on('message', (message) => {
  queue = queue.then(() => handle(message))
    .then((result) => result && process.send({ ok: true, result }))
    .catch((error) => process.send({ ok: false, error: String(error && error.stack || error) }));
});

createPeer(peerId, overrides).then(
  (created) => {
    peer = created;
    process.send({ ok: true, ready: { label: peer.label || null, version: peer.version, notes: peer.notes, workloads: peer.workloads || null } });
  },
  (error) => {
    process.send({ ok: false, error: String(error && error.stack || error) });
    setTimeout(() => process.exit(1), 100);
  },
);
