'use strict';
// The workloads: one program string each, the host tools they call, and the value each must
// return. Every peer runs these exact strings; only the wrapper that binds `tools` differs.
//
// Tools are host callbacks at two levels, so each peer can use the form its API takes:
// - hostTools[name](...args) → Promise<value> (Cloudflare-shaped peers: fns receive values);
// - dispatchJson(name, argsJson) → Promise<replyJson> with replyJson = {"result": ...} or
//   {"error": "..."} (JSON-text bridges: ours natively; node:vm, isolated-vm and QuickJS through
//   the shim in peers/shim.js, which moves values as JSON text so that W5 measures the same
//   serialization work in every sandbox).
// Both are async because real tools do I/O; every peer must carry a promise back.

const ROW_COUNT = 10_000;

// About 1 MB of JSON: 10 000 rows of ~100 bytes. Built once; each W5 call still stringifies it,
// as a real tool producing fresh data would.
function makeRows() {
  const rows = [];
  for (let id = 0; id < ROW_COUNT; id++) {
    rows.push({
      id,
      name: `item-${String(id).padStart(5, '0')}`,
      category: `c${id % 13}`,
      price: Math.round((id * 7.31) % 1000 * 100) / 100,
      tags: ['alpha', 'beta'],
      active: id % 3 !== 0,
    });
  }
  return rows;
}
const ROWS = makeRows();

const hostTools = {
  async get(arg) {
    return { v: arg.i };
  },
  async rows() {
    return { rows: ROWS };
  },
};
const TOOL_NAMES = Object.keys(hostTools);

async function dispatchJson(name, argsJson) {
  const tool = hostTools[name];
  if (tool === undefined) return JSON.stringify({ error: `Tool "${name}" not found` });
  try {
    return JSON.stringify({ result: await tool(...JSON.parse(argsJson)) });
  } catch (error) {
    return JSON.stringify({ error: error instanceof Error ? error.message : String(error) });
  }
}

// W3's loop. The iteration count is calibrated once per run on plain node (run.js) so the loop
// takes about 50 ms there; the resulting string is then the same for every peer.
function cpuLoopProgram(iterations) {
  return `async () => { let x = 0; for (let i = 0; i < ${iterations}; i++) { x = (x * 31 + i) % 1000003; } return x; }`;
}

function cpuLoopValue(iterations) {
  let x = 0;
  for (let i = 0; i < iterations; i++) x = (x * 31 + i) % 1000003;
  return x;
}

const W2_CODE = 'async () => { let s = 0; for (let i = 0; i < 10; i++) s += (await tools.get({ i })).v; return s; }';
// W7: the same loop ten times as long. (W7 − W2) / 90 is what one more call costs once a run is
// under way: the fresh context and the first calls through cold code are paid in both runs and
// cancel out, so it is the round trip itself (what W2 − W1 mixes with the cold start).
const W7_CALLS = 100;
const W7_CODE = `async () => { let s = 0; for (let i = 0; i < ${W7_CALLS}; i++) s += (await tools.get({ i })).v; return s; }`;

// Builds the workload table; W3 needs the calibrated iteration count.
function workloads(cpuIterations) {
  return {
    W1: {
      title: 'trivial program',
      code: 'async () => 1 + 1',
      expected: 2,
    },
    W6: {
      // Agents call the sandbox between model turns, not back to back: with idle time between
      // runs, a pool that builds isolates ahead of demand starts each run on a ready one. W1
      // measures the opposite, how fast fresh contexts can be made one after another.
      title: 'trivial program, 10 ms idle between runs (an agent\'s pace)',
      code: 'async () => 1 + 1',
      expected: 2,
      gapMs: 10,
    },
    W2: {
      title: '10 sequential awaited tool calls',
      code: W2_CODE,
      expected: 45,
    },
    W7: {
      title: `${W7_CALLS} sequential awaited tool calls`,
      code: W7_CODE,
      expected: (W7_CALLS * (W7_CALLS - 1)) / 2,
    },
    W3: {
      title: 'CPU loop (~50 ms on plain node)',
      code: cpuLoopProgram(cpuIterations),
      expected: cpuLoopValue(cpuIterations),
    },
    W4: {
      title: '500 W2 runs submitted at once',
      code: W2_CODE,
      expected: 45,
      burst: true,
    },
    W5: {
      title: '1 MB tool reply filtered to 10 rows',
      code: 'async () => { const { rows } = await tools.rows(); return rows.filter((r) => r.id % 1000 === 7); }',
      expected: ROWS.filter((r) => r.id % 1000 === 7),
    },
  };
}

const W5_REPLY_BYTES = JSON.stringify({ result: { rows: ROWS } }).length;

module.exports = {
  workloads, hostTools, dispatchJson, TOOL_NAMES, cpuLoopProgram, cpuLoopValue, W5_REPLY_BYTES, W7_CALLS,
};
