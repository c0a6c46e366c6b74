'use strict';
// Instructions per run, counted by valgrind (callgrind), not timed: the same count on every run
// of the same build on the same kind of CPU, so a change of a few percent in what a fresh
// isolate or a tool call costs shows up even on a shared, noisy machine where the timed bench
// cannot see it. Each subject runs a workload N_lo and N_hi times back to back in a process of
// its own (every process it starts counted too: an engine in 'process' isolation); the
// difference of the two totals divided by N_hi − N_lo is what one more run costs, with the
// process's start, the peer's setup and the first runs' warm-up cancelled out. Valgrind runs
// threads one at a time, so the count is CPU work, not latency: what limits runs per second once
// every core is busy.
//
// Subjects: our executor ('thread', 'process', the Cloudflare form in 'thread'), node:vm and
// quickjs-emscripten (the bench's peers), and the addon's fresh isolate alone
// (`measureFloors`: create, restore and drop, nothing run in it). Workloads: W1 (a trivial
// program) and W2 (ten sequential tool calls), the bench's own program strings, and URL (a
// program reading one URL: what the first use of the network globals costs a run) and Response
// (reading a JSON body, as a program using fetch does); the last two for our executor only, as
// the peers have neither.
//
//   node bench/scenarios/instructions.js [--subjects a,b] [--workloads W1,W2,URL,Response] [--runs 10,60]
//     [--lib DIR] [--out FILE]
//
// Needs valgrind on the PATH (Debian: `apt-get install valgrind`). `--lib DIR` counts another
// checkout's build (its lib/ and addon), for a before/after pair. About a minute per subject
// and workload on a 2-core machine. With --out, also writes the table as Markdown.
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { execFileSync, spawnSync } = require('node:child_process');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : process.argv[i + 1];
}

const EXTRA_WORKLOADS = {
  URL: { code: "async () => new URL('https://example.com/a?b=1').searchParams.get('b')", expected: '1' },
  Response: {
    code: "async () => (await new Response('{\"a\":1}', { headers: { 'content-type': 'application/json' } }).json()).a",
    expected: 1,
  },
};
const ALL_SUBJECTS = ['isolate', 'codemode-thread', 'codemode-process', 'codemode-cloudflare', 'node-vm', 'quickjs'];

// The child: builds one subject and runs one workload `runs` times, one after the other.
async function child(subject, workload, runs, lib) {
  if (subject === 'isolate') {
    // measureFloors builds and drops one isolate per sample after one warm-up isolate.
    require(path.join(lib, 'binding.js')).measureFloors(runs);
    return;
  }
  const { workloads } = require('../workloads.js');
  const { code, expected } = { ...workloads(1), ...EXTRA_WORKLOADS }[workload];
  // Our executor from the checkout under test, with one worker (runs are sequential here, and
  // valgrind runs threads one at a time); the Cloudflare form in 'thread' isolation.
  const overrides = subject.startsWith('codemode-') ? { root: lib, workers: 1 } : {};
  if (subject === 'codemode-cloudflare') overrides.isolation = 'thread';
  const peer = await require('../peers/index.js').createPeer(subject, overrides);
  for (let i = 0; i < runs; i++) {
    const value = await peer.execute(code);
    if (JSON.stringify(value) !== JSON.stringify(expected)) {
      throw new Error(`${subject} ${workload}: got ${JSON.stringify(value)}, expected ${JSON.stringify(expected)}`);
    }
  }
  await peer.dispose();
}

// Total instructions of one child process tree under callgrind.
function count(subject, workload, runs, lib) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-instructions-'));
  try {
    const result = spawnSync('valgrind', [
      '--tool=callgrind',
      '--trace-children=yes',
      // V8 writes machine code into memory it then runs; valgrind must notice.
      '--smc-check=all-non-file',
      `--callgrind-out-file=${path.join(dir, 'out.%p')}`,
      process.execPath, __filename, '--child', subject, workload, String(runs), lib,
    ], { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (result.status !== 0) {
      throw new Error(`${subject} ${workload} × ${runs} failed under valgrind (status ${result.status}):\n${result.stderr.slice(-2000)}`);
    }
    let total = 0;
    for (const file of fs.readdirSync(dir)) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      const line = /^(?:totals|summary): (\d+)/m.exec(text);
      if (line) total += Number(line[1]);
    }
    if (total === 0) throw new Error(`${subject} ${workload}: valgrind wrote no counts`);
    return total;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const millions = (n) => (n / 1e6).toFixed(2);

async function main() {
  const lib = path.resolve(arg('lib', path.join(__dirname, '..', '..')));
  const subjects = arg('subjects', ALL_SUBJECTS.join(',')).split(',');
  const workloadNames = arg('workloads', 'W1,W2,URL,Response').split(',');
  const [lo, hi] = arg('runs', '10,60').split(',').map(Number);
  if (!(hi > lo && lo >= 1)) throw new Error('--runs takes two counts, the second larger: 10,60');
  for (const subject of subjects) {
    if (!ALL_SUBJECTS.includes(subject)) throw new Error(`unknown subject ${subject} (one of ${ALL_SUBJECTS.join(', ')})`);
  }
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is not on the PATH: this scenario counts instructions with it');
  }
  const rows = [];
  for (const subject of subjects) {
    const lacksWebGlobals = !subject.startsWith('codemode-') && subject !== 'isolate';
    const names = subject === 'isolate' ? ['fresh isolate'] : workloadNames.filter((name) => !(lacksWebGlobals && name in EXTRA_WORKLOADS));
    for (const workload of names) {
      const low = count(subject, workload, lo, lib);
      const high = count(subject, workload, hi, lib);
      const perRun = (high - low) / (hi - lo);
      rows.push({ subject, workload, perRun });
      console.log(`${subject.padEnd(20)} ${workload.padEnd(14)} ${millions(perRun).padStart(8)} M instructions per run`);
    }
  }
  const base = (workload) => rows.find((row) => row.subject === 'node-vm' && row.workload === workload);
  const lines = [
    `Instructions per run (callgrind, runs ${lo} and ${hi}, difference per run), ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, library at ${path.relative(process.cwd(), lib) || '.'}`,
    '',
    '| subject | workload | M instructions per run | ÷ node:vm |',
    '| --- | --- | ---: | ---: |',
    ...rows.map((row) => {
      const peer = base(row.workload);
      return `| ${row.subject} | ${row.workload} | ${millions(row.perRun)} | ${peer ? (row.perRun / peer.perRun).toFixed(2) : ''} |`;
    }),
  ];
  console.log(`\n${lines.join('\n')}`);
  const out = arg('out', undefined);
  if (out !== undefined) fs.writeFileSync(out, `${lines.join('\n')}\n`);
}

if (process.argv[2] === '--child') {
  const [, , , subject, workload, runs, lib] = process.argv;
  child(subject, workload, Number(runs), lib).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
