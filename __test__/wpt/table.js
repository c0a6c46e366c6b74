#!/usr/bin/env node
'use strict';
// Prints the WPT conformance table: passed/total subtests per vendored file and per area, in
// plain Node and in the sandbox in 'thread' and 'process' isolation.
// `node __test__/wpt/table.js` (markdown table); `--failures` also lists the failing subtests.
// Paths given as arguments (WPT paths, under files/ or WPT_DIR, see run.js) replace the vendored
// list; their area is the path's first folder.
const { AREAS: VENDORED, runAll } = require('./run.js');

function areasOf(paths) {
  const areas = {};
  for (const file of paths) (areas[file.split('/')[0]] ||= []).push(file);
  return areas;
}

async function main() {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const AREAS = args.length > 0 ? areasOf(args) : VENDORED;
  const out = await runAll({ files: Object.values(AREAS).flat() });
  const cell = (s) => (s.error && s.total === 0 ? `error` : `${s.passed}/${s.total}`);
  const lines = ['| file | Node ' + process.versions.node + ' | thread | process |', '| --- | ---: | ---: | ---: |'];
  const totals = {};
  let i = 0;
  for (const [area, files] of Object.entries(AREAS)) {
    totals[area] = { node: 0, thread: 0, process: 0, total: 0 };
    for (const file of files) {
      const row = ['node', 'thread', 'process'].map((k) => out[k][i]);
      lines.push(`| ${file} | ${row.map(cell).join(' | ')} |`);
      totals[area].total += row[0].total;
      for (const k of ['node', 'thread', 'process']) totals[area][k] += out[k][i].passed;
      i++;
    }
  }
  for (const [area, t] of Object.entries(totals)) {
    lines.push(`| **${area}** (${t.total}) | ${t.node} | ${t.thread} | ${t.process} |`);
  }
  console.log(lines.join('\n'));
  if (process.argv.includes('--failures')) {
    for (const k of ['node', 'thread', 'process']) {
      for (const s of out[k]) {
        for (const f of s.failures) console.log(`${k} ${s.file}: ${f}`);
        if (s.error) console.log(`${k} ${s.file}: error ${s.error}`);
      }
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
