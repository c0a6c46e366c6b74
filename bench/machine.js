'use strict';
// What the numbers were measured on, for the report's header.

const fs = require('node:fs');
const os = require('node:os');

function cpuModel() {
  try {
    const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    if (line) return line.split(':')[1].trim();
  } catch {}
  return os.cpus()[0] ? os.cpus()[0].model : 'unknown';
}

function describeMachine() {
  return {
    cpu: cpuModel(),
    cores: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    date: new Date().toISOString(),
    loadAverage: os.loadavg().map((n) => +n.toFixed(2)),
  };
}

module.exports = { describeMachine };
