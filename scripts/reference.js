#!/usr/bin/env node
'use strict';
// Writes docs/reference/ (options.md, errors.md, stats.md) from the code, so the reference
// cannot drift from what the code accepts. `node scripts/reference.js` (npm run
// docs:reference) rewrites the pages; `--check` writes nothing and exits 1 listing the pages
// that differ and any option, code or field that has no description.
//
// Where each fact comes from (one source each):
// - the executor's bounds: the native bounds table (src/limits.rs BOUNDS, through boundTable()):
//   name, unit, range, default, where it is given, when it applies, its description. A
//   default that follows the machine (src/limits.rs `impl Default`: available_parallelism) or
//   other bounds (found by making executors with those bounds changed) is written as such,
//   never as this machine's value;
// - the names of the other options: the lists the code validates with (lib/executor/index.js
//   EXECUTOR_OPTIONS, REQUEST_OPTIONS, HANDLE_OPTIONS; createCodemodeRuntime's lists, read from
//   its own refusal of an unknown name, so a renamed option is read under its current name);
//   what a runtime or store option accepts, from the code's refusal of an invalid value;
// - their descriptions, types and defaults: the doc comments of lib/index.d.ts;
// - fault codes: src/error.rs (ErrorCode and its doc comments), checked against the addon's
//   errorCodes() and lib/errors.js; ERR_NATIVE_BINARY from lib/platform.js; errorKind values
//   from src/run.rs (ErrorKind);
// - counters: lib/index.d.ts (ExecutorStats, RunTiming, RunStats, TimingPhase).

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const OUT_DIR = 'docs/reference';
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');

// ---- lib/index.d.ts: interfaces, their members and doc comments ----

/** Joins a `/** … *\/` comment's text into one line. */
function docText(comment) {
  return comment
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .filter(Boolean)
    .join(' ')
    .trim();
}

/**
 * Every `export interface` of a declaration file: its doc and its members at the first level
 * (name, optional, type as written, doc). Nested object types are kept whole in the type.
 */
function parseInterfaces(text) {
  const out = new Map();
  const head = /(\/\*\*(?:(?!\*\/)[\s\S])*\*\/\s*)?export interface (\w+)(?:\s+extends [^{]+)?\s*\{/g;
  for (let m; (m = head.exec(text));) {
    const members = [];
    let depth = 1;
    let i = head.lastIndex;
    let doc;
    let lineStart = true;
    let member;
    while (i < text.length && depth > 0) {
      if (text.startsWith('/**', i)) {
        const end = text.indexOf('*/', i) + 2;
        if (depth === 1) doc = docText(text.slice(i, end));
        i = end;
        continue;
      }
      if (text.startsWith('//', i)) {
        i = text.indexOf('\n', i);
        continue;
      }
      const c = text[i];
      if (c === '\n') {
        lineStart = true;
        i++;
        continue;
      }
      if (lineStart && depth === 1 && !/\s/.test(c)) {
        lineStart = false;
        const line = text.slice(i, text.indexOf('\n', i));
        const name = /^(?:readonly\s+)?([A-Za-z_$][\w$]*|\[[^\]]+\])(\?)?\s*[:(]/.exec(line);
        if (name) {
          member = { name: name[1], optional: name[2] === '?', type: '', doc };
          members.push(member);
          doc = undefined;
        }
      }
      if (c === '{' || c === '(' || c === '[') depth++;
      if (c === '}' || c === ')' || c === ']') depth--;
      if (depth > 0 && member && !(depth === 1 && c === '\n')) member.type += c;
      i++;
    }
    for (const mem of members) mem.type = mem.type.replace(/^[^:(]*\??\s*:\s*/, '').replace(/\s+/g, ' ').trim();
    out.set(m[2], { doc: m[1] ? docText(m[1].trim()) : undefined, members });
  }
  return out;
}

/** A `export type Name = 'a' | 'b'` union's values and its doc comment. */
function parseUnion(text, name) {
  const m = new RegExp(`(\\/\\*\\*(?:(?!\\*\\/)[\\s\\S])*\\*\\/\\s*)?export type ${name} = ([^\\n]+)`).exec(text);
  if (!m) return undefined;
  return { doc: m[1] ? docText(m[1].trim()) : undefined, values: [...m[2].matchAll(/'([^']+)'/g)].map((v) => v[1]) };
}

/** A doc's "Default …" sentence, apart from the rest. */
function splitDefault(doc) {
  if (!doc) return { def: undefined, rest: doc };
  const sentences = doc.split(/(?<=\.)\s+(?=[A-Z`'"(])/);
  const i = sentences.findIndex((s) => /^Default\b/.test(s));
  if (i < 0) {
    // "'process' (default): …" names it in place.
    const inPlace = /(`[^`]+`|'[^']+'|"[^"]+") \(default\)/.exec(doc);
    return { def: inPlace ? inPlace[1] : undefined, rest: doc };
  }
  const def = sentences[i].replace(/^Default:?\s*/, '').replace(/\.$/, '');
  return { def, rest: sentences.filter((_, j) => j !== i).join(' ') };
}

/** The number a default's text starts with ("8 MiB" → 8 388 608), or undefined. */
function numberIn(text) {
  const m = /^`?(\d[\d ]*(?:\.\d+)?)`?\s*(MiB)?/.exec(text || '');
  if (!m) return undefined;
  return Number(m[1].replace(/ /g, '')) * (m[2] ? 1024 * 1024 : 1);
}

/**
 * Every doc comment of IsolateExecutorOptions' members, nested `limits` included, by name
 * (what an editor shows for each bound).
 */
function boundComments(dts) {
  const start = dts.indexOf('export interface IsolateExecutorOptions');
  const body = dts.slice(start, dts.indexOf('\n}\n', start));
  return Object.fromEntries([...body.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(\w+)\?:/g)].map((m) => [m[2], docText(`/**${m[1]}*/`)]));
}

// ---- Rust enums with doc comments (src/error.rs ErrorCode, src/run.rs ErrorKind) ----

/** `[{ variant, doc, value }]` of `pub enum <name>` and its `<name>::V => "value"` arms. */
function rustEnum(file, name) {
  const text = read(file);
  const body = new RegExp(`pub enum ${name} \\{([\\s\\S]*?)\\n\\}`).exec(text);
  if (!body) throw new Error(`${file}: no enum ${name}`);
  const variants = [];
  let doc = [];
  for (const line of body[1].split('\n')) {
    const t = line.trim();
    if (t.startsWith('///')) doc.push(t.replace(/^\/\/\/\s?/, ''));
    else if (/^[A-Z]\w*,$/.test(t)) {
      // Rust's intra-doc links ([`X`]) read as plain code here.
      variants.push({ variant: t.slice(0, -1), doc: doc.join(' ').replace(/\[(`[^`]+`)\]/g, '$1').trim() });
      doc = [];
    }
  }
  for (const v of variants) {
    const arm = new RegExp(`${name}::${v.variant} => "([^"]+)"`).exec(text);
    v.value = arm && arm[1];
  }
  return variants;
}

// ---- The executor's bounds ----

/**
 * For each bound whose default is not a constant: why. `machine` when src/limits.rs's
 * `impl Default` reads available parallelism for its field; `dependsOn` the bounds whose
 * change moves it (found by making executors with each bound changed).
 */
async function varyingDefaults(bounds) {
  const { NativeExecutor } = require('../lib/native.js');
  const source = read('src/limits.rs');
  const fieldOf = {};
  for (const row of source.split(/\n\s*Bound \{/).slice(1)) {
    const name = /name: "(\w+)"/.exec(row);
    const get = /get: \|l\| \(?l\.(\w+)/.exec(row);
    if (name && get) fieldOf[name[1]] = get[1];
  }
  const defaults = /impl Default for Limits \{([\s\S]*?)\n\}/.exec(source)[1];
  const out = {};
  for (const b of bounds) {
    const init = new RegExp(`\\n\\s*${fieldOf[b.name]}: ([^,]*(?:\\([^)]*\\)[^,]*)*)`).exec(defaults);
    if (init && /available_parallelism/.test(init[1])) {
      const fallback = /unwrap_or\((\d+)\)/.exec(defaults.slice(init.index, init.index + 300));
      out[b.name] = { machine: true, fallback: fallback && Number(fallback[1]) };
    }
  }
  const limitsWith = async (bound, value) => {
    const executor = new NativeExecutor({ bounds: { [bound]: value }, isolation: 'thread' });
    const limits = { ...executor.limits };
    await executor.dispose();
    return limits;
  };
  const base = await limitsWith('workers', bounds.find((b) => b.name === 'workers').default);
  for (const b of bounds.filter((x) => x.place !== 'derived')) {
    const alternatives = [b.min, b.default + 1 <= b.max ? b.default + 1 : b.default - 1].filter((v) => v !== b.default);
    for (const value of alternatives) {
      // A value refused together with the other defaults (a heartbeat timeout below the
      // interval) says nothing of what follows it.
      const limits = await limitsWith(b.name, value).catch(() => undefined);
      if (limits === undefined) continue;
      for (const other of bounds) {
        if (other.name === b.name || limits[other.name] === base[other.name]) continue;
        out[other.name] = out[other.name] || {};
        out[other.name].dependsOn = [...new Set([...(out[other.name].dependsOn || []), b.name])];
      }
    }
  }
  for (const b of bounds) {
    const method = /get: \|l\| \(?l\.(\w+)\(\)/.exec(source.split(/\n\s*Bound \{/).find((row) => row.includes(`name: "${b.name}"`)) || '');
    if (out[b.name] && method) out[b.name].method = method[1];
  }
  return out;
}

const group = (n) => {
  if (!Number.isFinite(n)) return String(n);
  const [whole, frac] = String(n).split('.');
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ' ') + (frac ? `.${frac}` : '');
};

function unitOf(b) {
  if (b.kind === 'milliseconds') return 'ms';
  if (b.name.endsWith('Mb')) return 'MiB';
  if (b.name.endsWith('Bytes')) return 'bytes';
  return 'integer';
}

const MIB = 1024 * 1024;
function valueText(b, v) {
  if (unitOf(b) === 'bytes' && v >= MIB && v % MIB === 0) return `${group(v / MIB)} MiB`;
  if (unitOf(b) === 'ms' && v === 86_400_000) return '86 400 000 (1 day)';
  return group(v);
}

const SCOPE = {
  executor: 'executor',
  run: 'executor; a request may override it',
  process: "executor, `'process'` isolation only",
};

// Names the reference notes but does not change (renaming is a breaking change).
const NAMING = {
  timeout: "milliseconds without `Ms` in its name: the name Cloudflare's executor uses, kept for the drop-in",
};

function namingNote(b) {
  if (NAMING[b.name]) return NAMING[b.name];
  if (b.kind === 'milliseconds' && !b.name.endsWith('Ms')) return 'milliseconds without `Ms` in its name';
  if (b.name.endsWith('Mb')) return '`Mb` here means MiB (1 048 576 bytes)';
  return undefined;
}

// ---- The pages ----

const cell = (s) => String(s === undefined || s === '' ? '—' : s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (s) => `\`${s}\``;
function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

function banner(title, forWhom, decides, sources) {
  return [
    `# ${title}`,
    `> **For:** ${forWhom} **Decides:** ${decides}`,
    '',
    `Generated by \`node scripts/reference.js\` (\`npm run docs:reference\`) from ${sources}.`,
    'Do not edit it by hand: `__test__/docs/reference.test.js` fails when it differs from what the',
    'code says.',
    '',
  ].join('\n');
}

/** A member's description from lib/index.d.ts, or a problem when it has none. */
function describe(iface, name, problems, where) {
  const member = iface && iface.members.find((m) => m.name === name);
  if (!member || !member.doc) {
    problems.push(`${where}: ${name} has no doc comment in lib/index.d.ts`);
    return { type: member && member.type, def: undefined, rest: undefined };
  }
  return { type: member.type, ...splitDefault(member.doc) };
}

/** Calls `fn`, returning the message of the ERR_INVALID_ARGUMENT it throws (undefined if none). */
function refusal(fn) {
  // An old option name in a probe is moved to its new name with a warning, once per process:
  // probing is not using it.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    const made = fn();
    if (made && typeof made.close === 'function') made.close();
    return undefined;
  } catch (error) {
    return error && error.message;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * createCodemodeRuntime's options as the code checks them: the names it knows (from its refusal
 * of an unknown name), the old names it still accepts, and the names it accepts and ignores.
 */
function runtimeOptionNames(create, wrap, candidates) {
  const PROBE = '\u0000probe';
  const known = (message) => {
    const m = /; known: (.*)$/.exec(message || '');
    if (!m) throw new Error(`cannot read the option list from: ${message}`);
    return m[1].split(', ');
  };
  const names = known(refusal(() => create(wrap({ [PROBE]: 1 }))));
  const renamed = {};
  const ignored = [];
  for (const candidate of candidates.filter((c) => !names.includes(c))) {
    const target = names.find((name) => /is the old name of/.test(refusal(() => create(wrap({ [candidate]: 1, [name]: 1 }))) || ''));
    if (target) renamed[candidate] = target;
    else if ((refusal(() => create(wrap({ [candidate]: 1, [PROBE]: 1 }))) || '').includes(`named ${PROBE}`)) ignored.push(candidate);
  }
  return { names, renamed, ignored };
}

/** What the code accepts for an option, from its refusal of a value it cannot take. */
function accepted(create, options) {
  const message = refusal(() => create(options));
  const m = message && /must be (.*?) \(got /.exec(message);
  return m ? m[1] : undefined;
}

async function optionsPage(dts, problems) {
  const { boundTable } = require('../lib/native.js');
  const executorModule = require('../lib/executor/index.js');
  const { createCodemodeRuntime, DEFAULT_MAX_EXECUTIONS, DEFAULT_LEASE_MS } = require('../lib/runtime/index.js');
  const bounds = boundTable();
  const varying = await varyingDefaults(bounds);
  const interfaces = parseInterfaces(dts);
  const execOpts = interfaces.get('IsolateExecutorOptions');

  const out = [banner(
    'Options reference',
    'a host author writing the options of an executor, a run or a durable runtime.',
    'which name, unit and range an option takes, and what you get when you leave it out.',
    'the bounds table of `src/limits.rs`, the option lists the code validates with, and the doc comments of `lib/index.d.ts`',
  )];
  out.push(
    'Every option name is checked: an unknown one is refused with `ERR_INVALID_ARGUMENT`, naming the',
    'nearest known name, and so is a value out of range (the message gives the range). Why each',
    'bound exists and which boundary it rests on: [which bounds apply](../guides/bounds.md).',
    '',
    'Units: `…Ms` and `timeout` are milliseconds (fractions allowed); `…Mb` are MiB (1 048 576',
    'bytes); `…Bytes` are bytes; the other bounds are whole numbers.',
    '',
    '## Executor bounds',
    '',
    '`new IsolateExecutor({ workers, timeout, …, limits: { maxToolCalls, … } })`: a `limits.` bound',
    'is given inside `limits`, the others at the top. `executor.bounds` shows every value in force,',
    'the derived ones included.',
    '',
  );
  const boundRows = [];
  const comments = boundComments(dts);
  for (const b of bounds) {
    if (!b.doc) problems.push(`bound ${b.name} has no doc in src/limits.rs BOUNDS`);
    if (b.place !== 'derived') {
      const said = splitDefault(comments[b.name]).def;
      if (comments[b.name] === undefined) problems.push(`bound ${b.name} is not declared in lib/index.d.ts IsolateExecutorOptions`);
      else if (numberIn(said) !== undefined && numberIn(said) !== b.default && !(varying[b.name] || {}).machine) {
        problems.push(`lib/index.d.ts says ${b.name} defaults to ${said}; src/limits.rs says ${b.default}`);
      }
    }
    const v = varying[b.name] || {};
    let def = valueText(b, b.default);
    if (v.machine) def = `available parallelism (\`std::thread::available_parallelism\`${v.fallback ? `; ${v.fallback} if unknown` : ''})`;
    else if (b.place === 'derived' || v.dependsOn) {
      def = `derived from ${(v.dependsOn || []).map(code).join(', ') || 'other bounds'}${v.method ? ` (\`${v.method}\` in \`src/limits.rs\`)` : ''}`;
    }
    const range = b.place === 'derived' ? 'read-only' : `${valueText(b, b.min)}–${valueText(b, b.max)}`;
    const name = b.place === 'limits' ? `limits.${b.name}` : b.name;
    const applies = b.place === 'derived' ? 'shown in `executor.bounds`; follows a request\'s `memoryLimitMb`' : SCOPE[b.scope];
    const note = namingNote(b);
    boundRows.push([code(name), unitOf(b), def, range, applies, b.doc + (note ? `. Naming: ${note}` : '')]);
  }
  out.push(table(['option', 'unit', 'default', 'range', 'set on', 'what it bounds'], boundRows), '');

  // The executor's other options.
  const topBounds = new Set(bounds.filter((b) => b.place === 'top').map((b) => b.name));
  const other = executorModule.EXECUTOR_OPTIONS.filter((n) => !topBounds.has(n) && n !== 'limits');
  out.push(
    '## Other executor options',
    '',
    '`new IsolateExecutor(options)` besides the bounds.',
    '',
  );
  const otherRows = other.map((n) => {
    const d = describe(execOpts, n, problems, 'IsolateExecutor options');
    return [code(n), d.type && code(d.type), d.def, d.rest];
  });
  for (const n of executorModule.CLOUDFLARE_ONLY_OPTIONS) {
    const d = describe(execOpts, n, problems, 'IsolateExecutor options');
    otherRows.push([code(n), d.type && code(d.type), undefined, `${d.rest} (Cloudflare's option: accepted and ignored)`]);
  }
  out.push(table(['option', 'type', 'default', 'meaning'], otherRows), '');

  // Per-run options.
  const request = interfaces.get('NativeExecuteRequest');
  const runBounds = new Set(bounds.filter((b) => b.scope === 'run' && b.place !== 'derived').map((b) => b.name));
  out.push(
    '## Per-run options',
    '',
    '### `execute({ … })`, the native form',
    '',
    `A per-run bound (${[...runBounds].map(code).join(', ')}) overrides the executor's for that run, in the same unit and range.`,
    '',
  );
  const requestRows = executorModule.REQUEST_OPTIONS.filter((n) => !n.startsWith('__')).map((n) => {
    const d = describe(request, n, problems, 'execute() request');
    return [code(n), d.type && code(d.type), d.def, d.rest];
  });
  out.push(table(['option', 'type', 'default', 'meaning'], requestRows), '');

  const cfOptions = interfaces.get('ExecuteOptions');
  out.push(
    '### `execute(code, providers, options)`, the Cloudflare form',
    '',
  );
  out.push(table(['option', 'type', 'meaning'], cfOptions.members.map((m) => {
    if (!m.doc) problems.push(`ExecuteOptions: ${m.name} has no doc comment in lib/index.d.ts`);
    return [code(m.name), code(m.type), m.doc];
  })), '');

  const handleDoc = /execute\(code: string, options\?: \{([^}]*)\}/.exec(interfaces.get('ExecutionHandle').members.find((m) => m.name === 'execute').type);
  const handleTypes = Object.fromEntries([...(handleDoc ? handleDoc[1] : '').matchAll(/(\w+)\?: ([^;]+)/g)].map((m) => [m[1], m[2].trim()]));
  out.push(
    '### `handle.execute(code, options)`, a retained isolate',
    '',
    'The same meaning as in the native form\'s request.',
    '',
  );
  out.push(table(['option', 'type', 'meaning'], executorModule.HANDLE_OPTIONS.map((n) => {
    if (!handleTypes[n]) problems.push(`handle.execute options: ${n} is not typed in lib/index.d.ts ExecutionHandle.execute`);
    const d = describe(request, n, problems, 'handle.execute options');
    return [code(n), handleTypes[n] && code(handleTypes[n]), d.rest];
  })), '');

  // The durable runtime.
  const rtOpts = interfaces.get('CreateCodemodeRuntimeOptions');
  const executor = { execute() {} };
  const create = (options) => createCodemodeRuntime(options);
  const rt = runtimeOptionNames(create, (o) => o, rtOpts.members.map((m) => m.name));
  const oldNameOf = Object.fromEntries(Object.entries(rt.renamed).map(([o, n]) => [n, o]));
  out.push(
    '## Durable runtime options',
    '',
    '`createCodemodeRuntime(options)`. "Accepts" is what the code refuses any other value with, at',
    'construction.',
    '',
  );
  // The defaults the code exports win over the doc comments, which must agree with them.
  const constants = { maxExecutions: DEFAULT_MAX_EXECUTIONS, leaseMs: DEFAULT_LEASE_MS };
  const rtRows = rt.names.map((n) => {
    const member = rtOpts.members.find((m) => m.name === n) || rtOpts.members.find((m) => m.name === oldNameOf[n]);
    const d = describe(rtOpts, member ? member.name : n, problems, 'createCodemodeRuntime options');
    if (constants[n] !== undefined) {
      if (numberIn(d.def) !== constants[n]) problems.push(`createCodemodeRuntime options: lib/index.d.ts says ${n} defaults to ${d.def}, the code to ${constants[n]}`);
      d.def = group(constants[n]);
    }
    const accepts = accepted(create, { executor, connectors: [], [n]: -1 }) || accepted(create, { executor, connectors: [], [n]: '\u0000' });
    const old = oldNameOf[n] ? ` The old name \`${oldNameOf[n]}\` is still accepted, with a deprecation warning.` : '';
    return [code(n), d.type && code(d.type), d.def, accepts, (d.rest || '') + old];
  });
  for (const n of rt.ignored) {
    const d = describe(rtOpts, n, problems, 'createCodemodeRuntime options');
    rtRows.push([code(n), d.type && code(d.type), undefined, 'anything (ignored)', d.rest]);
  }
  for (const m of rtOpts.members) {
    if (!rt.names.includes(m.name) && !rt.renamed[m.name] && !rt.ignored.includes(m.name)) {
      problems.push(`createCodemodeRuntime options: lib/index.d.ts declares ${m.name}, which the code refuses`);
    }
  }
  out.push(table(['option', 'type', 'default', 'accepts', 'meaning'], rtRows), '');

  const pgOpts = interfaces.get('PostgresStoreOptions');
  const storeWrap = (o) => ({ executor, connectors: [], store: { url: 'postgres://reference.invalid/db', ...o } });
  const pg = runtimeOptionNames(create, storeWrap, pgOpts.members.map((m) => m.name));
  out.push(
    '### `store`: a PostgreSQL database',
    '',
    '`createCodemodeRuntime({ store: \'postgres://…\' })`, or `store: { url, …settings }`; see',
    '[PostgreSQL](../postgres.md).',
    '',
  );
  out.push(table(['setting', 'type', 'default', 'accepts', 'meaning'], pg.names.map((n) => {
    const d = describe(pgOpts, n, problems, 'store options');
    const accepts = n === 'url' ? undefined : accepted(create, storeWrap({ [n]: -1 })) || accepted(create, storeWrap({ [n]: 'a b' }));
    return [code(n), d.type && code(d.type), d.def, accepts, d.rest];
  })), '');
  return { text: out.join('\n'), bounds };
}

function errorsPage(dts, problems) {
  const { errorCodes } = require('../lib/native.js');
  const { CODES } = require('../lib/errors.js');
  const { loadFailure } = require('../lib/platform.js');
  const declared = rustEnum('src/error.rs', 'ErrorCode');
  const codes = declared.map((c) => c.value);
  const native = errorCodes();
  if (JSON.stringify(native) !== JSON.stringify(codes)) problems.push(`errorCodes() (${native.join(', ')}) differs from src/error.rs (${codes.join(', ')})`);
  if (JSON.stringify(Object.values(CODES)) !== JSON.stringify(codes)) problems.push('lib/errors.js CODES differs from src/error.rs ErrorCode');
  const out = [banner(
    'Error reference',
    'a host author handling what a run or a call can fail with.',
    'which `code`, `errorKind` or `errorBound` your code branches on, and what each means.',
    '`src/error.rs`, `src/run.rs`, `lib/platform.js` and the doc comments of `lib/index.d.ts`',
  )];
  out.push(
    'Two kinds of failure never mix. A program that fails (throws, breaks a bound, times out)',
    'resolves its run with an `error` and, in the native form, `errorKind` and `errorBound`: the',
    'model reads it next. A machinery fault rejects the call with an error whose `code` is below;',
    'codes never change, messages may. See [failures](../guides/failures.md).',
    '',
    '## Fault codes',
    '',
    'On `CodemodeExecutorError` (`err.code`, `ErrorCodes` lists them).',
    '',
  );
  const rows = declared.map((c) => {
    if (!c.doc) problems.push(`${c.value} has no doc comment in src/error.rs`);
    return [code(c.value), c.doc];
  });
  const platform = read('lib/platform.js');
  const binaryDoc = /\/\*\*\s*([^*]+?)\s*\*\/\s*function loadFailure/.exec(platform);
  const binaryCode = loadFailure(new Error('probe')).code;
  if (!binaryDoc) problems.push('lib/platform.js loadFailure has no doc comment');
  rows.push([code(binaryCode), `${binaryDoc ? binaryDoc[1].replace(/\s*\(code \w+\)/, '') : ''} Thrown by \`require\` or \`import\` of the package: a plain \`Error\` with \`platform\` and \`expectedPackage\`.`]);
  out.push(table(['code', 'when'], rows), '');
  out.push(
    'The commands (`codemode-executor mcp`, `console`) print codes of their own (`ERR_CLI_USAGE`, …):',
    'see [the mcp command](../guides/mcp-command.md).',
    '',
    '## `errorKind`',
    '',
    'With `error` in a native-form result (and a `run.ended` event): what ended the run, decided',
    'where it happened, never read from the message.',
    '',
  );
  const kinds = rustEnum('src/run.rs', 'ErrorKind');
  const union = parseUnion(dts, 'ErrorKind');
  out.push(table(['value', 'when'], kinds.map((k) => {
    if (!k.doc) problems.push(`errorKind ${k.value} has no doc comment in src/run.rs`);
    const seen = union.values.includes(k.value);
    return [code(k.value), seen ? k.doc : `${k.doc} Never in a result: the run's promise rejects with the signal's reason instead.`];
  })), '');
  for (const v of union.values) if (!kinds.some((k) => k.value === v)) problems.push(`lib/index.d.ts ErrorKind has ${v}, which src/run.rs does not`);
  out.push(
    '## `errorBound`',
    '',
    'With `errorKind: \'bound\'`: the option name of the bound the run broke (`maxToolCalls`,',
    '`cpuTimeMs`, `maxReplyBytes`, …), as in [the options reference](options.md#executor-bounds), without',
    'the `limits.` prefix.',
    '',
  );
  return out.join('\n');
}

function statsPage(dts, problems) {
  const interfaces = parseInterfaces(dts);
  const out = [banner(
    'Counters reference',
    'whoever exports an executor\'s metrics or alerts on them.',
    'which field of `stats()`, a result\'s `timing` or its `stats` to read, and in what unit.',
    'the doc comments of `lib/index.d.ts`',
  )];
  const section = (title, name, intro) => {
    const iface = interfaces.get(name);
    out.push(`## ${title}`, '', ...(intro ? [intro, ''] : []), ...(iface.doc ? [iface.doc, ''] : []));
    out.push(table(['field', 'type', 'meaning'], iface.members.map((m) => {
      if (!m.doc) problems.push(`${name}.${m.name} has no doc comment in lib/index.d.ts`);
      return [code(m.name) + (m.optional ? ' (optional)' : ''), code(m.type), m.doc];
    })), '');
  };
  section('`executor.stats()`', 'ExecutorStats', 'What to alert on: [deploying](../deploying.md#what-to-alert-on).');
  section('A result\'s `timing`', 'RunTiming');
  const phase = parseUnion(dts.replace(/export interface TimingPhase \{\s*name: /, 'export type TimingPhaseName = '), 'TimingPhaseName');
  const fields = interfaces.get('TimingPhase').members.map((m) => m.name);
  out.push(`Each of \`timing.phases\` is \`{ ${fields.join(', ')} }\` (milliseconds); the names, in order: ${phase.values.map(code).join(', ')}.`, '');
  section('A result\'s `stats`', 'RunStats');
  out.push('The `run.ended` event carries the same `timing` and `stats` ([observability](../guides/observability.md)).', '');
  return out.join('\n');
}

/** `{ pages: { 'docs/reference/x.md': text }, problems: [...] }` as the code says now. */
async function render() {
  const dts = read('lib/index.d.ts');
  const problems = [];
  const options = await optionsPage(dts, problems);
  const pages = {
    [`${OUT_DIR}/options.md`]: options.text,
    [`${OUT_DIR}/errors.md`]: errorsPage(dts, problems),
    [`${OUT_DIR}/stats.md`]: statsPage(dts, problems),
  };
  for (const file of Object.keys(pages)) pages[file] = pages[file].replace(/\n+$/, '\n');
  return { pages, problems };
}

/** The committed pages that differ from `pages`, with the first differing line of each. */
function differences(pages) {
  const out = [];
  for (const [file, text] of Object.entries(pages)) {
    const full = path.join(ROOT, file);
    const committed = fs.existsSync(full) ? fs.readFileSync(full, 'utf8') : undefined;
    if (committed === text) continue;
    if (committed === undefined) {
      out.push(`${file}: missing`);
      continue;
    }
    const a = committed.split('\n');
    const b = text.split('\n');
    const i = a.findIndex((line, j) => line !== b[j]);
    const at = i < 0 ? Math.min(a.length, b.length) : i;
    out.push(`${file}:${at + 1}: committed ${JSON.stringify(a[at])}, generated ${JSON.stringify(b[at])}`);
  }
  return out;
}

async function main() {
  const check = process.argv.includes('--check');
  const { pages, problems } = await render();
  for (const p of problems) console.error(`reference: ${p}`);
  if (check) {
    const diff = differences(pages);
    for (const d of diff) console.error(`reference: stale: ${d}`);
    if (diff.length > 0) console.error('reference: run `node scripts/reference.js` to rewrite docs/reference/');
    process.exitCode = diff.length > 0 || problems.length > 0 ? 1 : 0;
    return;
  }
  fs.mkdirSync(path.join(ROOT, OUT_DIR), { recursive: true });
  for (const [file, text] of Object.entries(pages)) fs.writeFileSync(path.join(ROOT, file), text);
  console.log(`reference: wrote ${Object.keys(pages).join(', ')}`);
  if (problems.length > 0) process.exitCode = 1;
}

module.exports = { render, differences, parseInterfaces, splitDefault };

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
