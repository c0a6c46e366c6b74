'use strict';
// CPU time and RSS of a process's descendants, read from /proc. A peer that runs work outside
// the measured process (workerd; our executor in 'process' isolation) must be charged for it,
// and process.cpuUsage() only sees the calling process. Linux only; elsewhere both read 0.

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

function getconf(name, fallback) {
  try {
    return Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim()) || fallback;
  } catch {
    return fallback;
  }
}
const TICKS_PER_SECOND = getconf('CLK_TCK', 100);
const PAGE_SIZE = getconf('PAGESIZE', 4096);

// One /proc/<pid>/stat, split after the command name (which may hold spaces and parentheses).
function readStat(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, starttime 22, rss 24.
  return {
    pid,
    ppid: Number(f[1]),
    cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND,
    start: f[19],
    rssBytes: Number(f[21]) * PAGE_SIZE,
  };
}

// Every live descendant of `root`, keyed by pid and start time so a reused pid is not confused
// with the process that had it before.
function descendants(root = process.pid) {
  let entries;
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return new Map();
  }
  const byParent = new Map();
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat === null) continue;
    if (!byParent.has(stat.ppid)) byParent.set(stat.ppid, []);
    byParent.get(stat.ppid).push(stat);
  }
  const found = new Map();
  const stack = [root];
  while (stack.length) {
    for (const child of byParent.get(stack.pop()) || []) {
      found.set(`${child.pid}:${child.start}`, child);
      stack.push(child.pid);
    }
  }
  return found;
}

// CPU the descendants spent between two snapshots. A process that started in between is charged
// in full; one that exited in between is lost (its time is not visible any more), which the
// report states.
function cpuBetween(before, after) {
  let ms = 0;
  for (const [key, now] of after) {
    const then = before.get(key);
    ms += then === undefined ? now.cpuMs : now.cpuMs - then.cpuMs;
  }
  return ms;
}

function rssOf(snapshot) {
  let bytes = 0;
  for (const stat of snapshot.values()) bytes += stat.rssBytes;
  return bytes;
}

module.exports = { descendants, cpuBetween, rssOf, TICKS_PER_SECOND };
