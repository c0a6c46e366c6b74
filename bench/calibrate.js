'use strict';
// Picks W3's iteration count: the loop program, run as plain JavaScript in this process, should
// take about `targetMs`. Done once per bench run, before any peer starts, and rounded to two
// significant digits; every peer then runs the resulting string unchanged. The fastest of
// several timings is used, not the median: on a busy machine it is the one closest to the
// loop's own cost.

const { cpuLoopProgram } = require('./workloads.js');

function timeOnce(iterations) {
  // oxlint-disable-next-line no-eval -- the reference: the loop compiled in this realm, no sandbox
  const program = (0, eval)(`(${cpuLoopProgram(iterations)})`);
  const started = process.hrtime.bigint();
  program(); // the loop runs synchronously before the async function's first await
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function roundTwoDigits(n) {
  const scale = 10 ** (Math.floor(Math.log10(n)) - 1);
  return Math.round(n / scale) * scale;
}

function calibrateCpuLoop(targetMs = 50) {
  let iterations = 1_000_000;
  for (let pass = 0; pass < 3; pass++) {
    for (let i = 0; i < 3; i++) timeOnce(iterations); // let the optimizing tier compile it
    const ms = Math.min(...Array.from({ length: 7 }, () => timeOnce(iterations)));
    iterations = Math.max(1000, Math.round((iterations * targetMs) / ms));
  }
  iterations = roundTwoDigits(iterations);
  const measuredMs = Math.min(...Array.from({ length: 7 }, () => timeOnce(iterations)));
  return { iterations, measuredMs, targetMs };
}

module.exports = { calibrateCpuLoop };
