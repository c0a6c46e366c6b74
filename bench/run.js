'use strict';
// The peer benchmark's orchestrator: `node bench/run.js [--quick] [--rounds N] [--peers a,b]
// [--load N] [--out FILE]` (see bench/README.md).
//
// 1. Installs bench/'s own dependencies when they are missing (never the root's job).
// 2. Calibrates W3's loop on plain node in this process (~50 ms), before any child starts.
// 3. Starts every peer in its own child process (child.js), all kept alive for the whole run.
// 4. Warm-up pass (discarded), then rounds: in each round every workload is run by every peer
//    in turn, the peer order rotating from round to round, so slow drifts in machine noise hit
//    all peers alike.
// 5. Idle memory per warm isolate of our executor, in fresh children with the others stopped.
// 6. Writes the report (report.js) and a JSON summary beside it.

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const BENCH = __dirname;

// isolated-vm has no prebuilt binary it can download here and compiles with node-gyp, which
// would otherwise download Node's headers too: point it at the running Node's own headers when
// they are installed beside it (Debian's nodejs, the official tarballs, nvm all have them).
function ensureInstalled() {
  if (fs.existsSync(path.join(BENCH, 'node_modules', '.package-lock.json'))) return;
  console.log('bench: installing bench/ dependencies (isolated-vm compiles from source; takes a minute or two)');
  const env = { ...process.env };
  const nodeDir = path.resolve(path.dirname(process.execPath), '..');
  if (!env.npm_config_nodedir && fs.existsSync(path.join(nodeDir, 'include', 'node', 'node.h'))) env.npm_config_nodedir = nodeDir;
  execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: BENCH, stdio: 'inherit', env });
}

function parseArgs(argv) {
  const args = { quick: false, rounds: undefined, peers: undefined, out: undefined, load: 0 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') args.quick = true;
    else if (arg === '--rounds') args.rounds = Number(argv[++i]);
    else if (arg === '--peers') args.peers = argv[++i].split(',');
    else if (arg === '--out') args.out = path.resolve(argv[++i]);
    else if (arg === '--load') args.load = Number(argv[++i]);
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: node bench/run.js [--quick] [--rounds N] [--peers id,id,...] [--load N] [--out FILE]');
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (args.rounds !== undefined && !(Number.isInteger(args.rounds) && args.rounds > 0)) {
    throw new Error('--rounds takes a positive integer');
  }
  if (!(Number.isInteger(args.load) && args.load >= 0 && args.load <= 16)) {
    throw new Error('--load takes the number of background CPU-bound processes (0 to 16)');
  }
  return args;
}

// Batch sizes: a batch stops at maxRuns, or once budgetMs has passed with at least one run.
const PRESETS = {
  full: {
    rounds: 5,
    budgetMs: 2000,
    maxRuns: { W1: 300, W6: 150, W2: 200, W7: 100, W3: 20, W5: 40 },
    burst: 500,
    warmUp: { W1: 20, W6: 5, W2: 10, W7: 3, W3: 2, W5: 3, W4: 50 },
  },
  quick: {
    rounds: 1,
    budgetMs: 250,
    maxRuns: { W1: 50, W6: 20, W2: 30, W7: 10, W3: 3, W5: 5 },
    burst: 500,
    warmUp: { W1: 5, W6: 2, W2: 3, W7: 1, W3: 1, W5: 1, W4: 20 },
  },
};
const ORDER = ['W1', 'W6', 'W2', 'W7', 'W3', 'W5', 'W4'];

function main() {
  const args = parseArgs(process.argv.slice(2));
  ensureInstalled();
  // Loaded after the install: peers/ and their packages may not have existed before it.
  return require('./orchestrate.js').orchestrate({
    preset: { ...PRESETS[args.quick ? 'quick' : 'full'], ...(args.rounds ? { rounds: args.rounds } : {}) },
    mode: args.quick ? 'quick' : 'full',
    order: ORDER,
    only: args.peers,
    load: args.load,
    // A run under load is written beside the quiet one, never over it.
    out: args.out || path.join(BENCH, `RESULTS${args.quick ? '.quick' : ''}${args.load > 0 ? '.load' : ''}.md`),
  });
}

main().then(
  (out) => console.log(`bench: wrote ${path.relative(process.cwd(), out)}`),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
