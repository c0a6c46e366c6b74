'use strict';
// The TypeScript declarations of an allowed npm package, for `describe` (issue 39): the
// declaration file its package.json names for the specifier (the `types` condition of its
// `exports`, else `types`/`typings`, else index.d.ts), or the `@types` package's when it ships
// none, and the relative declaration files that one reaches (`from "./x.js"`, `import("./x")`,
// `/// <reference path>`), in the order reached, each headed by its path. Files outside the
// package's directory are never read, and the text is bounded: a model asked for one package
// gets its entry and the first of its types, not the whole library in its context.
const fs = require('node:fs/promises');
const path = require('node:path');

// Characters of declarations one describe returns: a package's entry and its main types (zod's
// schemas, a date-fns function's signature) fit; the rest is named, not shown.
const MAX_TYPES_CHARS = 64 * 1024;
// Declaration files read for one describe, included or not: a bound on the host's work for a
// package that references thousands.
const MAX_TYPES_FILES = 400;

const DECLARATION = /\.d\.[cm]?ts$/;

// The declaration file an `exports` entry names: a string that is one, or the `types`
// condition of a conditions object (nested under import/require/default as npm packages do).
function typesCondition(entry) {
  if (typeof entry === 'string') return DECLARATION.test(entry) ? entry : null;
  if (Array.isArray(entry)) {
    for (const item of entry) {
      const found = typesCondition(item);
      if (found !== null) return found;
    }
    return null;
  }
  if (entry === null || typeof entry !== 'object') return null;
  if (typeof entry.types === 'string') return entry.types;
  for (const condition of ['types', 'import', 'module', 'browser', 'default', 'require', 'node']) {
    if (entry[condition] === undefined) continue;
    const found = typesCondition(entry[condition]);
    if (found !== null) return found;
  }
  return null;
}

// The entry declaration files to try for `subpath` ('' for the package itself), in order.
function entryCandidates(pkg, subpath) {
  const key = subpath === '' ? '.' : `./${subpath}`;
  const candidates = [];
  const exported = pkg.exports;
  if (exported !== undefined && exported !== null) {
    const byPath = typeof exported === 'object' && !Array.isArray(exported) && Object.keys(exported).some((k) => k.startsWith('.'))
      ? exported
      : { '.': exported };
    if (Object.hasOwn(byPath, key)) {
      const found = typesCondition(byPath[key]);
      if (found !== null) candidates.push(found);
    }
  }
  if (subpath === '') {
    for (const field of ['types', 'typings']) if (typeof pkg[field] === 'string') candidates.push(pkg[field]);
    candidates.push('index.d.ts');
  } else {
    candidates.push(`${subpath}.d.ts`, `${subpath}/index.d.ts`);
  }
  return candidates;
}

// The files a relative reference in a declaration file may name.
function referenceCandidates(from, reference) {
  const base = path.resolve(path.dirname(from), reference);
  if (DECLARATION.test(base)) return [base];
  // "./x.js" names x.d.ts, "./x.ts" too (TypeScript's own extension in a declaration file).
  const source = /\.([cm]?)[jt]s$/.exec(base);
  if (source) return [`${base.slice(0, -source[0].length)}.d.${source[1]}ts`];
  return [`${base}.d.ts`, path.join(base, 'index.d.ts')];
}

const REFERENCES = [
  /\bfrom\s*(['"])(\.{1,2}\/[^'"\n]+)\1/g,
  /\bimport\s*\(\s*(['"])(\.{1,2}\/[^'"\n]+)\1\s*\)/g,
  /^\s*\/\/\/\s*<reference\s+path\s*=\s*(['"])([^'"\n]+)\1/gm,
];

function references(text) {
  const out = [];
  for (const pattern of REFERENCES) {
    for (const m of text.matchAll(pattern)) out.push(m[2]);
  }
  return out;
}

// The real path of the first candidate that is a file inside `root`, or null.
async function firstFile(root, candidates) {
  for (const candidate of candidates) {
    let real;
    try {
      real = await fs.realpath(path.resolve(root, candidate));
      if (!(await fs.stat(real)).isFile()) continue;
    } catch {
      continue;
    }
    if (real.startsWith(root + path.sep)) return real;
  }
  return null;
}

async function readJson(file) {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8'));
  } catch {
    return null;
  }
}

// Gathers the declarations reachable from `entry` inside `root`, within the bounds.
async function gather(root, entry, label) {
  const seen = new Set([entry]);
  const queue = [entry];
  const parts = [];
  const left = [];
  let chars = 0;
  let read = 0;
  while (queue.length > 0) {
    const file = queue.shift();
    const shown = `${label}/${path.relative(root, file).split(path.sep).join('/')}`;
    if (read >= MAX_TYPES_FILES) {
      left.push(shown);
      continue;
    }
    read += 1;
    const text = await fs.readFile(file, 'utf8');
    const part = `// ${shown}\n${text.trimEnd()}\n`;
    if (chars + part.length > MAX_TYPES_CHARS) {
      left.push(shown);
    } else {
      parts.push(part);
      chars += part.length;
    }
    for (const reference of references(text)) {
      const next = await firstFile(root, referenceCandidates(file, reference));
      if (next !== null && !seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  if (left.length > 0) {
    const named = left.slice(0, 20).join(', ');
    parts.push(`// … ${left.length} more declaration file(s) not shown (over ${MAX_TYPES_CHARS} characters): ${named}${left.length > 20 ? ', …' : ''}\n`);
  }
  return parts.join('\n');
}

/**
 * The declarations for `name` (and `subpath`, '' for the package itself) installed in
 * `nodeModules`: { from: the package that ships them (name or @types/…), text }, or null when
 * neither the package nor an @types package has any.
 */
async function packageTypes(nodeModules, name, subpath) {
  const typesName = `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
  for (const from of [name, typesName]) {
    let root;
    try {
      root = await fs.realpath(path.join(nodeModules, from));
    } catch {
      continue;
    }
    const pkg = (await readJson(path.join(root, 'package.json'))) ?? {};
    const entry = await firstFile(root, entryCandidates(pkg, subpath));
    if (entry !== null) return { from, text: await gather(root, entry, from) };
  }
  return null;
}

module.exports = { packageTypes, MAX_TYPES_CHARS };
