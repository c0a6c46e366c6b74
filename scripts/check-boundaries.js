#!/usr/bin/env node
'use strict';
// CI check of the house rules on foreign APIs: napi only in src/api, V8 only in src/sandbox,
// SQLite and PostgreSQL only in src/store, libc only in src/os.rs, libuv only in src/uv.rs. Comments are skipped (they may name the
// APIs); any use in code outside its home fails with the file and line.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const RULES = [
  { what: 'napi', pattern: /\bnapi(_derive)?::|#\[napi\b/, home: 'src/api/' },
  { what: 'V8', pattern: /\bv8::/, home: 'src/sandbox/' },
  { what: 'rusqlite', pattern: /\brusqlite\b/, home: 'src/store/' },
  { what: 'postgres (the driver)', pattern: /(?<!store::)\b(tokio_)?postgres::|\bextern crate postgres\b/, home: 'src/store/' },
  { what: 'libc', pattern: /\blibc::/, home: 'src/os.rs' },
  // libuv's functions are looked up by name (`c"uv_…"`) and its types come through napi's sys.
  { what: 'libuv', pattern: /\bc"uv_|\bsys::uv_|\buv_[a-z_]+\s*\(/, home: 'src/uv.rs' },
];

function rustFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return rustFiles(full);
    return entry.name.endsWith('.rs') ? [full] : [];
  });
}

const problems = [];
for (const file of rustFiles(path.join(root, 'src'))) {
  const rel = path.relative(root, file).split(path.sep).join('/');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, '');
    for (const rule of RULES) {
      if (rule.pattern.test(code) && !rel.startsWith(rule.home)) {
        problems.push(`${rel}:${i + 1}: ${rule.what} used outside ${rule.home}: ${line.trim()}`);
      }
    }
  });
}
if (problems.length > 0) {
  console.error(`boundary check failed (${problems.length}):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`boundary check: napi, V8, rusqlite, postgres, libc and libuv stay in their modules (${RULES.length} rules)`);
