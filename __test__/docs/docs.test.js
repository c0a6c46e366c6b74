'use strict';
// The documentation is kept true by running it (issues 18 and 33):
// - every fenced block marked ```<kind> run in README.md and docs/ is a complete program, run
//   exactly as written: the test writes it verbatim to a file of the kind its fence names
//   (`mjs` → `sample.mjs`, `cjs` → `.cjs`, `js` → `.js`) in a temporary project where
//   @supolka/codemode-executor is installed from its packed tarballs (not this checkout) beside
//   its peer dependencies (`ai`, the MCP SDK), and runs that file with `node` in a child process, injecting nothing
//   (no `require` shim, no wrapper). Mock models and local tools only, no network: a sample
//   that stops working, or that only works pasted somewhere else, fails here;
// - the convention is one kind for every sample: an ES module (```mjs run: a file such as
//   `first.mjs`, with `import` and top-level `await`), which every supported Node runs as is;
//   examples/first-run.mjs (`npm run example`) is the README's first one;
// - every relative link between documents points at a file that exists, and at a heading that
//   exists when it names one;
// - every page in docs/ says in its first lines who it is for and what decision it helps make
//   (`> **For:** … **Decides:** …`), the Cloudflare contract (cloudflare-compat.md) included.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');

function markdownFiles(dir) {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(rel);
    return entry.name.endsWith('.md') ? [rel] : [];
  });
}

const PAGES = ['README.md', ...markdownFiles('docs').sort()];

/** Fenced blocks of a page: `{ info, body, line }`. */
function fences(text) {
  const out = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^([ \t]*)(`{3,})(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, ticks, info] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j].startsWith(`${indent}${ticks}`); j++) body.push(lines[j].slice(indent.length));
    out.push({ info: info.trim(), body: body.join('\n'), line: i + 1 });
    i = j;
  }
  return out;
}

/** The page without its fenced blocks (headings inside code are not headings). */
function withoutFences(text) {
  return text.replace(/^([ \t]*)(`{3,})[^\n]*\n[\s\S]*?\n\1\2[^\n]*$/gm, '');
}

/** The page without its code, fenced or inline (links inside code are not links). */
function prose(text) {
  return withoutFences(text).replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor for a heading. */
function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchors(file) {
  const text = withoutFences(fs.readFileSync(path.join(ROOT, file), 'utf8'));
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1])));
}

// A runnable sample's fence: its language names the kind of file it is written as.
const RUN_FENCE = /^(js|mjs|cjs)\s+run\b/;
const EXTENSION = { js: '.js', mjs: '.mjs', cjs: '.cjs' };
// The one kind every runnable sample is written as (see the header).
const CONVENTION = 'mjs';

const SAMPLES = PAGES.flatMap((page) => fences(fs.readFileSync(path.join(ROOT, page), 'utf8'))
  .map((f) => ({ page, ...f, kind: (RUN_FENCE.exec(f.info) || [])[1] }))
  .filter((f) => f.kind !== undefined));

test('the documentation has runnable samples to check', () => {
  assert.ok(SAMPLES.length >= 10, `only ${SAMPLES.length} runnable samples found`);
});

test(`every runnable sample is written as one kind of file: \`\`\`${CONVENTION} run (an ES module)`, () => {
  const other = SAMPLES.filter((s) => s.kind !== CONVENTION).map((s) => `${s.page}:${s.line} (\`\`\`${s.info})`);
  assert.deepEqual(other, []);
});

test("examples/first-run.mjs (`npm run example`) is the README's first example as written", () => {
  const first = SAMPLES.find((s) => s.page === 'README.md');
  const example = fs.readFileSync(path.join(ROOT, 'examples', 'first-run.mjs'), 'utf8');
  assert.ok(example.includes(`${first.body}\n`), `examples/first-run.mjs differs from README.md:${first.line}`);
});

// A project as a user has it after `npm install @supolka/codemode-executor` and the peer
// dependencies: the package comes from its tarballs, not from this checkout (`scripts/package.js
// --no-build` packs the root package and the platform package with the binary the suite tested,
// as `npm run package` does), unpacked into node_modules as npm lays them out; a file the
// tarball lacks (one `files` in package.json leaves out) fails the sample that needs it. The
// package's dependencies and peers are linked from the checkout's node_modules (no network
// here), and nothing else is there (no package.json: a file's own extension decides its kind).
// Made once, removed at the end. Besides the peers, the packages a user installs beside them for
// what a guide shows (an OpenTelemetry SDK, docs/guides/observability.md; TanStack AI's code
// mode and Mastra, docs/guides/agent-loop.md).
const ALONGSIDE = ['@opentelemetry/sdk-trace-base', '@opentelemetry/context-async-hooks', '@tanstack/ai', '@tanstack/ai-code-mode', '@mastra/core'];
let project;
function unpack(tarball, into) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-docs-tgz-'));
  const untar = spawnSync('tar', ['-xzf', tarball, '-C', scratch], { encoding: 'utf8' });
  assert.equal(untar.status, 0, `tar -xzf ${tarball}: ${untar.stderr}`);
  fs.mkdirSync(path.dirname(into), { recursive: true });
  fs.renameSync(path.join(scratch, 'package'), into);
  fs.rmSync(scratch, { recursive: true, force: true });
}
function sampleProject() {
  if (project !== undefined) return project;
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-docs-'));
  const packed = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'package.js'), '--no-build'], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 });
  assert.equal(packed.status, 0, `scripts/package.js --no-build: ${packed.stderr}${packed.stdout}`);
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const dist = path.join(ROOT, 'dist');
  for (const name of [pkg.name, ...Object.keys(pkg.optionalDependencies || {})]) {
    const tarball = `${name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;
    unpack(path.join(dist, tarball), path.join(project, 'node_modules', ...name.split('/')));
  }
  // The packages docs/guides/programs-and-packages.md lets its sample's programs import, as the
  // user's app would have them installed.
  const imported = ['zod', 'date-fns'];
  const linked = [...Object.keys(pkg.dependencies || {}), ...Object.keys(pkg.peerDependencies || {}), ...imported, ...ALONGSIDE];
  for (const name of linked) {
    const at = path.join(project, 'node_modules', ...name.split('/'));
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules', name), at, 'dir');
  }
  return project;
}
test.after(() => {
  if (project !== undefined) fs.rmSync(project, { recursive: true, force: true });
});

for (const sample of SAMPLES) {
  test(`${sample.page}:${sample.line} runs as written, as a ${EXTENSION[sample.kind]} file`, { timeout: 120_000 }, () => {
    const dir = sampleProject();
    const file = path.join(dir, `${sample.page.replace(/[/.]/g, '_')}_${sample.line}${EXTENSION[sample.kind]}`);
    fs.writeFileSync(file, sample.body + '\n');
    const result = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 90_000 });
    assert.equal(result.status, 0, `${sample.page}:${sample.line} exited ${result.status ?? result.signal}\n${(result.stderr || '').slice(-3000)}\n${(result.stdout || '').slice(-1000)}`);
  });
}

test('every relative link between documents points at a file and heading that exist', () => {
  const broken = [];
  for (const page of PAGES) {
    const text = prose(fs.readFileSync(path.join(ROOT, page), 'utf8'));
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
      const [file, anchor] = target.split('#');
      const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      if (!fs.existsSync(path.join(ROOT, resolved))) {
        broken.push(`${page}: ${target} (no file ${resolved})`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
        broken.push(`${page}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('every page in docs/ says in its first lines who it is for and what it helps decide', () => {
  const missing = [];
  for (const page of PAGES.filter((p) => p.startsWith('docs/'))) {
    const lines = fs.readFileSync(path.join(ROOT, page), 'utf8').split('\n').filter((l) => l.trim() !== '');
    if (!(lines[0] || '').startsWith('# ') || !/^> \*\*For:\*\* .+\*\*Decides:\*\* .+/.test(lines[1] || '')) missing.push(page);
  }
  assert.deepEqual(missing, [], 'a page opens with "# Title" then "> **For:** … **Decides:** …"');
});

test('docs/README.md links every page in docs/', () => {
  const map = fs.readFileSync(path.join(ROOT, 'docs', 'README.md'), 'utf8');
  const linked = new Set([...prose(map).matchAll(/\]\(([^)#\s]+)/g)].map((m) => path.posix.normalize(path.posix.join('docs', m[1]))));
  const unlinked = PAGES.filter((p) => p.startsWith('docs/') && p !== 'docs/README.md' && !linked.has(p));
  assert.deepEqual(unlinked, []);
});
