'use strict';
// The body of a bench run (run.js parses the command line and installs; this runs the peers).

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const { PEERS } = require('./peers/index.js');
const { PeerProcess } = require('./peer-process.js');
const { workloads } = require('./workloads.js');
const { calibrateCpuLoop } = require('./calibrate.js');
const { describeMachine } = require('./machine.js');
const { renderReport, summarizeResults } = require('./report.js');

const IDLE_WORKERS = [1, 32];

function log(message) {
  console.log(`bench: ${message}`);
}

// What our build supports decides which codemode variants run. The probe loads the addon in a
// short-lived process so this one never does.
function probeCodemode() {
  try {
    const text = execFileSync(process.execPath, [path.join(__dirname, 'peers', 'codemode.js'), '--probe'], { encoding: 'utf8', timeout: 60_000 });
    return JSON.parse(text);
  } catch (error) {
    return { isolation: false, failed: true, reason: `probe failed: ${error.message.split('\n')[0]}` };
  }
}

function choosePeers(probe, only) {
  const ids = ['node-vm', 'isolated-vm', 'quickjs', 'workerd'];
  if (probe.isolation) ids.push('codemode-thread', 'codemode-process');
  else ids.push('codemode-default');
  ids.push('codemode-cloudflare', 'plain-node');
  return only ? ids.filter((id) => only.some((want) => id.includes(want))) : ids;
}

async function startPeers(ids) {
  const started = [];
  const failed = [];
  for (const id of ids) {
    const proc = new PeerProcess(id);
    try {
      const info = await proc.ready();
      info.label = info.label || PEERS[id].label;
      log(`started ${info.label}: ${info.version}`);
      started.push({ id, proc, info });
    } catch (error) {
      log(`could not start ${PEERS[id].label}: ${error.message.split('\n')[0]}`);
      failed.push({ id, reason: error.message });
      await proc.stop();
    }
  }
  return { started, failed };
}

function emptyResult() {
  return { samples: [], runs: 0, cpuMs: 0, rssReadings: [], wallMs: 0, errors: [], childProcesses: 0 };
}

function record(into, out) {
  into.samples.push(...out.samples);
  into.runs += out.runs;
  into.cpuMs += out.cpuMs;
  into.wallMs += out.wallMs || 0;
  into.rssReadings.push(out.rssBytes);
  into.childProcesses = Math.max(into.childProcesses, out.childProcesses);
  if (into.errors.length < 5) into.errors.push(...out.errors.slice(0, 5 - into.errors.length));
  into.errorCount = (into.errorCount || 0) + out.errors.length;
}

function requestFor(key, work, preset, sizes) {
  if (work.burst) return { type: 'burst', code: work.code, expected: work.expected, count: sizes ? sizes[key] : preset.burst };
  return {
    type: 'batch',
    code: work.code,
    expected: work.expected,
    maxRuns: sizes ? sizes[key] : preset.maxRuns[key],
    minRuns: 1,
    budgetMs: sizes ? Infinity : preset.budgetMs,
    gapMs: work.gapMs || 0,
  };
}

function supports(peer, key) {
  return peer.info.workloads === null || peer.info.workloads.includes(key);
}

// Runs one request on one peer; a peer that dies is dropped from the rest of the run.
async function attempt(peer, message, dead) {
  try {
    return await peer.proc.request(message);
  } catch (error) {
    log(`${peer.info.label} failed: ${error.message.split('\n')[0]}`);
    dead.set(peer.id, error.message);
    return null;
  }
}

async function runRounds(peers, work, order, preset) {
  const results = {};
  const dead = new Map();
  for (const peer of peers) results[peer.id] = {};

  log('warm-up pass (not recorded)');
  for (const key of order) {
    for (const peer of peers) {
      if (supports(peer, key) && !dead.has(peer.id)) await attempt(peer, requestFor(key, work[key], preset, preset.warmUp), dead);
    }
  }

  for (let round = 0; round < preset.rounds; round++) {
    const started = Date.now();
    for (const key of order) {
      // Rotate the order each round so that no peer always runs first or last.
      const rotated = peers.slice(round % peers.length).concat(peers.slice(0, round % peers.length));
      for (const peer of rotated) {
        if (!supports(peer, key) || dead.has(peer.id)) continue;
        const out = await attempt(peer, requestFor(key, work[key], preset), dead);
        if (out === null) continue;
        if (!results[peer.id][key]) results[peer.id][key] = emptyResult();
        record(results[peer.id][key], out);
      }
    }
    log(`round ${round + 1}/${preset.rounds} done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return { results, dead };
}

// RSS of a warm executor with N workers, each in a fresh process so allocator state from other
// work does not blur the difference.
async function idleMemory(variants, labels) {
  const out = {};
  for (const id of variants) {
    out[id] = {};
    for (const workers of IDLE_WORKERS) {
      const proc = new PeerProcess(id, { workers });
      try {
        await proc.ready();
        out[id][workers] = await proc.request({ type: 'idle-memory' });
      } catch (error) {
        out[id][workers] = { error: error.message.split('\n')[0] };
      } finally {
        await proc.stop();
      }
    }
    log(`idle memory measured for ${labels[id]}`);
  }
  return out;
}

// The floor under our numbers on this machine (the addon's measureFloors, in a fresh process):
// CPU of each phase of a fresh isolate.
function measureFloors() {
  const root = path.resolve(__dirname, '..');
  const script = `const n = require(${JSON.stringify(path.join(root, 'binding.js'))});
    process.stdout.write(JSON.stringify(typeof n.measureFloors === 'function'
      ? n.measureFloors(300) : { error: 'this build has no measureFloors' }));`;
  try {
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120_000 }));
  } catch (error) {
    return { error: error.message.split('\n')[0] };
  }
}

// `--load N`: N CPU-bound processes at the lowest priority (nice 19) for the whole run, as
// compilers or batch jobs on a shared host would be. Each spins in plain node.
function startLoad(count) {
  const procs = [];
  for (let i = 0; i < count; i++) {
    const child = spawn('nice', ['-n', '19', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
    child.on('error', (error) => log(`background load ${i} failed: ${error.message}`));
    procs.push(child);
  }
  if (count > 0) log(`background load: ${count} CPU-bound process(es) at nice 19`);
  return () => { for (const child of procs) child.kill('SIGKILL'); };
}

async function orchestrate({ preset, mode, order, only, out, load = 0 }) {
  const machine = describeMachine();
  machine.backgroundLoad = load;
  const calibration = calibrateCpuLoop(50);
  log(`W3 loop: ${calibration.iterations} iterations (${calibration.measuredMs.toFixed(1)} ms on plain node here)`);
  const work = workloads(calibration.iterations);
  const probe = probeCodemode();
  log(probe.isolation ? 'codemode build has the isolation option' : `codemode: ${probe.reason}`);

  const stopLoad = startLoad(load);
  const { started, failed } = await startPeers(choosePeers(probe, only));
  const began = Date.now();
  let rounds;
  try {
    rounds = await runRounds(started, work, order, preset);
  } finally {
    await Promise.all(started.map((peer) => peer.proc.stop()));
    stopLoad();
  }
  const idleVariants = started.map((p) => p.id).filter((id) => /^codemode-(thread|process|default)$/.test(id));
  const labels = Object.fromEntries(started.map((p) => [p.id, p.info.label]));
  const idle = await idleMemory(idleVariants, labels);
  const floors = idleVariants.length > 0 ? measureFloors() : null;
  if (floors) log('floors measured');
  machine.loadAverageAfter = require('node:os').loadavg().map((n) => +n.toFixed(2));

  const run = {
    mode,
    preset,
    machine,
    calibration,
    probe,
    durationS: Math.round((Date.now() - began) / 1000),
    peers: started.map((p) => ({ id: p.id, label: p.info.label, version: p.info.version, notes: p.info.notes })),
    failed: [
      ...failed.map((f) => ({ id: f.id, label: PEERS[f.id].label, reason: f.reason })),
      ...[...rounds.dead].map(([id, reason]) => ({ id, label: labels[id], reason: `died during the run: ${reason}` })),
    ],
    workloads: Object.fromEntries(order.map((key) => [key, { title: work[key].title, code: work[key].code }])),
    order,
    idle,
    floors,
  };
  const summary = summarizeResults(run, rounds.results);
  fs.writeFileSync(out, renderReport(summary));
  fs.writeFileSync(out.replace(/\.md$/, '') + '.json', `${JSON.stringify(summary, null, 2)}\n`);
  return out;
}

module.exports = { orchestrate };
