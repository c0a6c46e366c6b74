'use strict';
// Conformance of a real engine process (`node lib/executor/engine.js`) to docs/protocol.md, driven with raw
// frames. The encoder and decoder below are written from the document alone: they share nothing
// with the addon's own implementation of the protocol.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ENGINE = path.join(__dirname, '..', '..', 'lib', 'executor', 'engine.js');
const TIMEOUT = 20000; // per test

// ---------------------------------------------------------------------------------------------
// Encoding (host → engine)

const T = {
  Hello: 0x01, Execute: 0x02, Reply: 0x03, Cancel: 0x04, Ping: 0x05, Shutdown: 0x06,
  HandleExecute: 0x07, HandleDispose: 0x08,
  Ready: 0x41, Refuse: 0x42, ToolCall: 0x43, Result: 0x44, Pong: 0x45, HandleClosed: 0x46, Bye: 0x47, Log: 0x48,
};
// The protocol version this build speaks (docs/protocol.md's title).
const VERSION = 4;
const NAMES = Object.fromEntries(Object.entries(T).map(([k, v]) => [v, k]));

class Writer {
  constructor() { this.parts = []; }
  u8(v) { const b = Buffer.alloc(1); b.writeUInt8(v); this.parts.push(b); return this; }
  u16(v) { const b = Buffer.alloc(2); b.writeUInt16LE(v); this.parts.push(b); return this; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.parts.push(b); return this; }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.parts.push(b); return this; }
  f64(v) { const b = Buffer.alloc(8); b.writeDoubleLE(v); this.parts.push(b); return this; }
  str(s) { const b = Buffer.from(s, 'utf8'); this.u32(b.length); this.parts.push(b); return this; }
  opt(s) { if (s === undefined || s === null) return this.u8(0); return this.u8(1).str(s); }
  list(a) { this.u32(a.length); for (const s of a) this.str(s); return this; }
  // A run's bounds by option name: u8 count, then each name and value.
  bounds(o) { const e = Object.entries(o); this.u8(e.length); for (const [k, v] of e) this.str(k).f64(v); return this; }
  raw(b) { this.parts.push(Buffer.from(b)); return this; }
  body() { return Buffer.concat(this.parts); }
}

// A frame: length:u32 (type + body) type:u8 body.
function frame(type, body = Buffer.alloc(0)) {
  const head = Buffer.alloc(5);
  head.writeUInt32LE(1 + body.length, 0);
  head.writeUInt8(type, 4);
  return Buffer.concat([head, body]);
}

const enc = {
  hello: (min, max, config = '{}') => frame(T.Hello, new Writer().u16(min).u16(max).str(config).body()),
  // The program: its flags (1 TypeScript, 2 statements, 4 explain), params (JSON or absent), code.
  execute: ({ runId, bounds = {}, flags = 0, fault, programFlags = 0, params, code, runConfig = RC() }) =>
    frame(T.Execute, new Writer().u64(runId).bounds(bounds).u8(flags).opt(fault)
      .u8(programFlags).opt(params).str(code).str(runConfig).body()),
  reply: (runId, callId, json) => frame(T.Reply, new Writer().u64(runId).u32(callId).str(json).body()),
  cancel: (runId, reason, bound) => frame(T.Cancel, new Writer().u64(runId).str(reason).opt(bound).body()),
  ping: (seq) => frame(T.Ping, new Writer().u64(seq).body()),
  shutdown: (mode) => frame(T.Shutdown, new Writer().u8(mode).body()),
  handleExecute: (handleId, runId, bounds, code, { flags = 0, programFlags = 0, params } = {}) =>
    frame(T.HandleExecute, new Writer().u64(handleId).u64(runId).bounds(bounds).u8(flags)
      .u8(programFlags).opt(params).str(code).body()),
  handleDispose: (handleId) => frame(T.HandleDispose, new Writer().u64(handleId).body()),
};

// The sandbox's run configuration (the JSON its bootstrap reads).
function RC(namespaces = []) { return JSON.stringify({ resultMode: 'json', namespaces }); }
const TOOLS = RC([{ name: 'tools', kind: 'provider', tools: ['add'] }]);

// ---------------------------------------------------------------------------------------------
// Decoding (engine → host)

class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  need(n) { if (this.pos + n > this.buf.length) throw new Error(`short body: need ${n} at ${this.pos} of ${this.buf.length}`); }
  u8() { this.need(1); return this.buf.readUInt8(this.pos++); }
  u16() { this.need(2); const v = this.buf.readUInt16LE(this.pos); this.pos += 2; return v; }
  u32() { this.need(4); const v = this.buf.readUInt32LE(this.pos); this.pos += 4; return v; }
  u64() { this.need(8); const v = this.buf.readBigUInt64LE(this.pos); this.pos += 8; return v; }
  f64() { this.need(8); const v = this.buf.readDoubleLE(this.pos); this.pos += 8; return v; }
  str() {
    const n = this.u32();
    this.need(n);
    const bytes = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  }
  opt() {
    const flag = this.u8();
    if (flag === 0) return undefined;
    if (flag !== 1) throw new Error(`bad presence flag ${flag}`);
    return this.str();
  }
  list() { const n = this.u32(); const out = []; for (let i = 0; i < n; i++) out.push(this.str()); return out; }
  end() { if (this.pos !== this.buf.length) throw new Error(`trailing bytes: ${this.buf.length - this.pos}`); }
  stats() {
    return {
      workers: this.u32(), busy: this.u32(), queued: this.u32(), retained: this.u32(),
      completed: this.u64(), lost: this.u64(), abandoned: this.u64(), replaced: this.u64(),
      isolatesCreated: this.u64(),
    };
  }
}

function decode(type, body) {
  const r = new Reader(body);
  let f;
  switch (type) {
    case T.Ready: f = { version: r.u16(), pid: r.u32(), workers: r.u32(), engine: r.str() }; break;
    case T.Refuse: f = { reason: r.str() }; break;
    case T.ToolCall: f = { runId: r.u64(), callId: r.u32(), provider: r.str(), tool: r.str(), argsJson: r.str() }; break;
    case T.Result: {
      f = { runId: r.u64(), status: r.u8() };
      if (f.status === 0) {
        Object.assign(f, {
          resultJson: r.opt(), error: r.opt(), errorKind: r.u8(), errorBound: r.opt(), logs: r.list(), queuedMs: r.f64(), runMs: r.f64(),
          toolCalls: r.u32(), heapUsedBytes: r.f64(), handleId: r.u64(),
          isolateMs: r.f64(), compileMs: r.f64(), toolWaitMs: r.f64(), cpuMs: r.f64(), codeCacheHit: r.u8(),
        });
      } else if (f.status === 1) {
        Object.assign(f, { code: r.str(), message: r.str() });
      } else {
        throw new Error(`unknown Result status ${f.status}`);
      }
      f.stats = r.stats();
      break;
    }
    case T.Pong: f = { seq: r.u64(), stats: r.stats() }; break;
    case T.HandleClosed: f = { handleId: r.u64(), reason: r.str() }; break;
    case T.Bye: f = {}; break;
    case T.Log: f = { runId: r.u64(), line: r.str() }; break;
    default: throw new Error(`unknown engine frame type 0x${type.toString(16)}`);
  }
  r.end();
  return { type: NAMES[type], ...f };
}

// ---------------------------------------------------------------------------------------------
// A live engine process

const live = new Set();

function startEngine(extraEnv = {}) {
  const env = { ...process.env, ...extraEnv };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [ENGINE], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdin.on('error', () => {}); // EPIPE after the engine exits is expected in some tests

  const frames = []; // decoded, not yet taken
  const waiters = []; // { resolve, reject, timer }
  let pending = Buffer.alloc(0);
  let failure = null; // a decoding failure or end of stream, reported to every later next()

  const push = (f) => {
    const w = waiters.shift();
    if (w) { clearTimeout(w.timer); w.resolve(f); } else frames.push(f);
  };
  const fail = (err) => {
    failure = failure || err;
    for (const w of waiters.splice(0)) { clearTimeout(w.timer); w.reject(failure); }
  };

  child.stdout.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const len = pending.readUInt32LE(0);
      if (len < 1) { fail(new Error('engine sent a frame of length 0')); return; }
      if (pending.length < 4 + len) break;
      const type = pending.readUInt8(4);
      const body = Buffer.from(pending.subarray(5, 4 + len));
      pending = pending.subarray(4 + len);
      try { push(decode(type, body)); } catch (e) { fail(e); return; }
    }
  });
  child.stdout.on('end', () => {
    fail(new Error(`engine stdout ended${pending.length ? ` with ${pending.length} stray bytes` : ''}`));
  });

  const exit = new Promise((resolve) => {
    child.on('exit', (code, signal) => { live.delete(child); resolve({ code, signal }); });
  });

  const engine = {
    child,
    pid: child.pid,
    get stderr() { return stderr; },
    exit,
    send(buf) { child.stdin.write(buf); },
    next(timeoutMs = 5000) {
      if (frames.length) return Promise.resolve(frames.shift());
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        const w = { resolve, reject, timer: null };
        w.timer = setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          reject(new Error(`no engine frame within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    // The next frame, asserted to be of the given type.
    async expect(type, timeoutMs) {
      const f = await engine.next(timeoutMs);
      assert.equal(f.type, type, `expected ${type}, got ${JSON.stringify(f, big)}`);
      return f;
    },
    // Frames already received and not yet taken (for "nothing more was sent" checks).
    get buffered() { return frames.slice(); },
    async exitWithin(ms = 5000) {
      let timer;
      const t = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`engine did not exit within ${ms} ms; stderr: ${stderr.slice(-2000)}`)), ms); });
      try { return await Promise.race([exit, t]); } finally { clearTimeout(timer); }
    },
    kill() { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); },
  };
  return engine;
}

const big = (_k, v) => (typeof v === 'bigint' ? `${v}n` : v);

// Start an engine and complete the handshake.
async function ready(config = '{"workers":2}', env) {
  const e = startEngine(env);
  e.send(enc.hello(VERSION, VERSION, config));
  e.ready = await e.expect('Ready');
  return e;
}

// Run a test body with an engine that is always killed afterwards.
function withEngine(fn) {
  return async () => {
    const engines = [];
    const start = (env) => { const e = startEngine(env); engines.push(e); return e; };
    const readyOne = async (config, env) => { const e = await ready(config, env); engines.push(e); return e; };
    try {
      await fn({ start, ready: readyOne });
    } finally {
      for (const e of engines) e.kill();
    }
  };
}

test.after(() => { for (const c of live) c.kill('SIGKILL'); });

function assertStats(stats, workers) {
  assert.equal(typeof stats, 'object');
  assert.equal(stats.workers, workers);
  for (const k of ['busy', 'queued', 'retained']) assert.equal(typeof stats[k], 'number', k);
  for (const k of ['completed', 'lost', 'abandoned', 'replaced', 'isolatesCreated']) assert.equal(typeof stats[k], 'bigint', k);
}

// Wait for the Result of a run, answering nothing else; fails on any other frame.
async function result(e, runId, timeoutMs) {
  const f = await e.expect('Result', timeoutMs);
  assert.equal(f.runId, BigInt(runId));
  return f;
}

// ---------------------------------------------------------------------------------------------
// 1. Handshake and version negotiation

test('handshake: Hello → Ready with version 4, the child pid and the configured workers', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  e.send(enc.hello(VERSION, VERSION, '{"workers":2}'));
  const r = await e.expect('Ready');
  assert.equal(r.version, VERSION);
  assert.equal(r.pid, e.pid);
  assert.equal(r.workers, 2);
  assert.equal(typeof r.engine, 'string');
}));

test('version negotiation picks min(max_version, 4)', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  e.send(enc.hello(1, 7, '{"workers":2}'));
  const r = await e.expect('Ready');
  assert.equal(r.version, VERSION);
}));

// A refused handshake: the engine answers exactly one Refuse and exits with status 2. The engine
// is started ATTEMPTS times per case (a few at once) and every start must see the Refuse: a
// Refuse that is only sometimes written is not the documented behaviour.
const ATTEMPTS = 16;
async function assertRefused(start, firstFrame) {
  const once = async () => {
    const e = start();
    e.send(firstFrame);
    const exit = await e.exitWithin();
    let f;
    try { f = await e.next(1000); } catch (err) { f = { type: `(nothing: ${err.message})` }; }
    return { exit, f, rest: e.buffered };
  };
  const outcomes = [];
  for (let i = 0; i < ATTEMPTS; i += 4) outcomes.push(...await Promise.all([once(), once(), once(), once()]));
  for (const o of outcomes) assert.deepEqual(o.exit, { code: 2, signal: null });
  const missing = outcomes.filter((o) => o.f.type !== 'Refuse').length;
  assert.equal(missing, 0, `Refuse missing in ${missing} of ${outcomes.length} refused handshakes (all exited with status 2)`);
  for (const o of outcomes) {
    assert.ok(o.f.reason.length > 0, 'the Refuse gives a reason');
    assert.deepEqual(o.rest, [], 'Refuse is the only frame');
  }
}

test('versions 1 to 3 are no longer spoken → Refuse, exit 2', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  await assertRefused(start, enc.hello(1, 3, '{"workers":2}'));
}));

test('no common version → Refuse, exit 2', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  await assertRefused(start, enc.hello(50, 60, '{"workers":2}'));
}));

test('a first frame other than Hello → Refuse, exit 2', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  await assertRefused(start, enc.ping(1));
}));

for (const config of ['{"workers":0}', '{"noSuchOption":1}', '{"workers":"two"}', '[]', 'not json']) {
  test(`bad configuration ${config} → Refuse, exit 2`, { timeout: TIMEOUT }, withEngine(async ({ start }) => {
    await assertRefused(start, enc.hello(VERSION, VERSION, config));
  }));
}

// ---------------------------------------------------------------------------------------------
// 2. Runs

test('Execute → Result status 0 with result_json, no error, no logs and stats', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 1, code: 'async () => 1 + 1', runConfig: '{"resultMode":"json","namespaces":[]}' }));
  const r = await result(e, 1);
  assert.equal(r.status, 0);
  assert.equal(r.resultJson, '2');
  assert.equal(r.error, undefined);
  assert.equal(r.errorKind, 0);
  assert.equal(r.errorBound, undefined);
  assert.deepEqual(r.logs, []);
  assert.equal(r.toolCalls, 0);
  assert.equal(r.handleId, 0n);
  assert.ok(r.queuedMs >= 0 && r.runMs >= 0);
  assertStats(r.stats, 2);
}));

test('a failed run: error with error_kind 1 (program); a broken bound: kind 4 with its name', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  e.send(enc.hello(VERSION, VERSION, '{"workers":1,"maxLogLines":1}'));
  await e.expect('Ready');
  e.send(enc.execute({ runId: 3, code: 'async () => { throw new Error("nope") }', runConfig: '{"resultMode":"json","namespaces":[]}' }));
  const thrown = await result(e, 3);
  assert.deepEqual([thrown.status, thrown.error, thrown.errorKind, thrown.errorBound], [0, 'nope', 1, undefined]);
  e.send(enc.execute({ runId: 4, code: 'async () => { console.log(1); console.log(2); }', runConfig: '{"resultMode":"json","namespaces":[]}' }));
  const bound = await result(e, 4);
  assert.equal(bound.errorKind, 4);
  assert.equal(bound.errorBound, 'maxLogLines');
}));

test('tool calls: ToolCall frames with distinct call ids, Reply results and errors', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  const code = `async () => {
    const a = await tools.add({ a: 1, b: 2 });
    const b = await tools.add({ a: 1, b: 2 });
    let message;
    try { await tools.add({ a: 1, b: 2 }); } catch (err) { message = err instanceof Error ? err.message : 'not an Error'; }
    return { a, b, message };
  }`;
  e.send(enc.execute({ runId: 7, code, runConfig: TOOLS }));
  const ids = [];
  for (let i = 0; i < 3; i++) {
    const c = await e.expect('ToolCall');
    assert.equal(c.runId, 7n);
    assert.equal(c.provider, 'tools');
    assert.equal(c.tool, 'add');
    assert.equal(c.argsJson, '[{"a":1,"b":2}]');
    ids.push(c.callId);
    e.send(enc.reply(7, c.callId, i < 2 ? '{"result":3}' : '{"error":"boom"}'));
  }
  assert.equal(new Set(ids).size, 3, `distinct call ids: ${ids}`);
  const r = await result(e, 7);
  assert.equal(r.status, 0);
  assert.equal(r.error, undefined);
  assert.deepEqual(JSON.parse(r.resultJson), { a: 3, b: 3, message: 'boom' });
  assert.equal(r.toolCalls, 3);
}));

test('console output arrives in Result.logs', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 2, code: 'async () => { console.log("hello", 42); console.log("second"); return null }' }));
  const r = await result(e, 2);
  assert.equal(r.status, 0);
  assert.equal(r.resultJson, 'null');
  assert.equal(r.logs.length, 2);
  assert.match(r.logs[0], /hello 42/);
  assert.match(r.logs[1], /second/);
}));

test('FLAG_LIVE_LOGS (2): each console line comes as a Log frame before the Result, and stays in Result.logs', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 21, flags: 2, code: 'async () => { console.log("one"); console.warn("two"); return 1 }' }));
  const first = await e.expect('Log');
  const second = await e.expect('Log');
  assert.deepEqual([first.runId, first.line, second.line], [21n, 'one', '[warn] two']);
  const r = await result(e, 21);
  assert.deepEqual(r.logs, ['one', '[warn] two']);
  // Without the flag, no Log frame: the next frame is the Result.
  e.send(enc.execute({ runId: 22, code: 'async () => { console.log("quiet"); return 2 }' }));
  const r2 = await result(e, 22);
  assert.deepEqual(r2.logs, ['quiet']);
}));

test('program flags and params: TypeScript stripped (1), statements (2), params as the entry argument; metrics in the Result', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 23, programFlags: 1, params: '{"n":20}', code: 'async (p: { n: number }): Promise<number> => p.n + 1' }));
  const r = await result(e, 23);
  assert.equal(r.resultJson, '21');
  assert.equal(r.codeCacheHit, 0);
  for (const k of ['isolateMs', 'compileMs', 'toolWaitMs', 'cpuMs']) assert.ok(r[k] >= 0, k);
  assert.ok(r.cpuMs > 0, 'the run used some CPU');
  // The same source again (other params) comes from the engine's code cache.
  e.send(enc.execute({ runId: 24, programFlags: 1, params: '{"n":1}', code: 'async (p: { n: number }): Promise<number> => p.n + 1' }));
  const again = await result(e, 24);
  assert.deepEqual([again.resultJson, again.codeCacheHit], ['2', 1]);
  // Without flag 1 the same text is JavaScript, and does not compile.
  e.send(enc.execute({ runId: 25, params: '{"n":1}', code: 'async (p: { n: number }) => p.n' }));
  const js = await result(e, 25);
  assert.equal(js.errorKind, 0, 'syntax');
  e.send(enc.execute({ runId: 26, programFlags: 2, code: 'const a = 20;\nreturn a + 2' }));
  assert.equal((await result(e, 26)).resultJson, '22');
}));

test('a program that throws, or does not parse, finishes with status 0 and the error text', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 3, code: 'async () => { throw new Error("kaput") }' }));
  const r = await result(e, 3);
  assert.equal(r.status, 0);
  assert.equal(r.resultJson, undefined);
  assert.match(r.error, /kaput/);

  e.send(enc.execute({ runId: 4, code: 'async () => { return 1 +* }' }));
  const s = await result(e, 4);
  assert.equal(s.status, 0);
  assert.equal(s.resultJson, undefined);
  assert.ok(s.error && s.error.length > 0, 'a syntax error is reported in error');
  assert.match(s.error, /SyntaxError|Unexpected/);
}));

// ---------------------------------------------------------------------------------------------
// 3. Heartbeat, cancel, concurrency, bounds

test('Ping → Pong with the same seq and stats, also while a run waits on a tool call', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.ping(41));
  const p = await e.expect('Pong');
  assert.equal(p.seq, 41n);
  assertStats(p.stats, 2);

  e.send(enc.execute({ runId: 9, code: 'async () => tools.add({ a: 1, b: 2 })', runConfig: TOOLS }));
  const c = await e.expect('ToolCall');
  const started = Date.now();
  e.send(enc.ping(42));
  e.send(enc.ping(43));
  const p2 = await e.expect('Pong', 1000);
  const p3 = await e.expect('Pong', 1000);
  assert.ok(Date.now() - started < 1000, 'answered promptly');
  assert.equal(p2.seq, 42n);
  assert.equal(p3.seq, 43n);
  assert.equal(p2.stats.busy, 1);
  e.send(enc.reply(9, c.callId, '{"result":3}'));
  const r = await result(e, 9);
  assert.equal(r.resultJson, '3');
}));

test('Cancel ends a run waiting on a tool call with the reason; unknown run ids are ignored', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 11, code: 'async () => tools.add({ a: 1, b: 2 })', runConfig: TOOLS }));
  const c = await e.expect('ToolCall');
  e.send(enc.cancel(11, 'stopped by the host'));
  const r = await result(e, 11);
  assert.equal(r.status, 0);
  assert.equal(r.error, 'stopped by the host');
  assert.equal(r.resultJson, undefined);

  // A late reply for the ended run, and a cancel and reply for runs that never existed.
  e.send(enc.reply(11, c.callId, '{"result":3}'));
  e.send(enc.cancel(999, 'nobody'));
  e.send(enc.reply(998, 0, '{"result":1}'));
  e.send(enc.ping(5));
  const p = await e.expect('Pong');
  assert.equal(p.seq, 5n);
  e.send(enc.execute({ runId: 12, code: 'async () => "still here"' }));
  assert.equal((await result(e, 12)).resultJson, '"still here"');
}));

test('concurrent runs: replies in reverse order, each Result matches its run', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready('{"workers":5}');
  const ids = [101, 102, 103, 104, 105];
  for (const id of ids) {
    e.send(enc.execute({ runId: id, code: `async () => (await tools.add({ a: ${id}, b: 0 })) * 10 + ${id % 10}`, runConfig: TOOLS }));
  }
  const calls = new Map();
  while (calls.size < ids.length) {
    const c = await e.expect('ToolCall');
    const id = Number(c.runId);
    assert.ok(ids.includes(id));
    assert.ok(!calls.has(id), 'one call per run');
    assert.equal(c.argsJson, `[{"a":${id},"b":0}]`);
    calls.set(id, c.callId);
  }
  const results = new Map();
  for (const id of [...ids].reverse()) {
    e.send(enc.reply(id, calls.get(id), JSON.stringify({ result: id })));
  }
  while (results.size < ids.length) {
    const r = await e.expect('Result');
    results.set(Number(r.runId), r);
  }
  for (const id of ids) {
    const r = results.get(id);
    assert.equal(r.status, 0);
    assert.equal(r.error, undefined);
    assert.equal(r.resultJson, String(id * 10 + (id % 10)));
  }
}));

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

// A run waiting longer than its reply poll (50 µs) waits on the engine's input itself and
// reads every frame that comes meanwhile: the others' frames must still be acted on, and its
// own timers must still fire while it sleeps there.
test('a run waiting on its reply acts on the frames of others and fires its own timers on time', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  const raced = 'async () => { const timer = new Promise((r) => setTimeout(() => r("timer"), 60)); '
    + 'const call = tools.add({ a: 1, b: 2 }); return [await Promise.race([timer, call]), await call]; }';
  const started = Date.now();
  e.send(enc.execute({ runId: 71, code: raced, runConfig: TOOLS }));
  const call = await e.expect('ToolCall');
  await pause(20);
  e.send(enc.ping(7));
  assert.equal((await e.expect('Pong', 1000)).seq, 7n);
  e.send(enc.execute({ runId: 72, code: 'async () => "beside"' }));
  assert.equal((await result(e, 72, 2000)).resultJson, '"beside"');
  e.send(enc.execute({ runId: 73, code: 'async () => tools.add({ a: 2, b: 2 })', runConfig: TOOLS }));
  const other = await e.expect('ToolCall', 2000);
  assert.equal(other.runId, 73n);
  e.send(enc.reply(73, other.callId, '{"result":4}'));
  assert.equal((await result(e, 73, 2000)).resultJson, '4');
  // The reply comes well after the timer: had the timer not fired while the run waited, the
  // race would settle with the call.
  await pause(Math.max(0, started + 300 - Date.now()));
  e.send(enc.reply(71, call.callId, '{"result":3}'));
  assert.equal((await result(e, 71, 2000)).resultJson, '["timer",3]');
}));

test('more runs than workers are queued and all answered', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready('{"workers":1}');
  for (let id = 1; id <= 4; id++) e.send(enc.execute({ runId: id, code: `async () => ${id}` }));
  const seen = new Map();
  while (seen.size < 4) {
    const r = await e.expect('Result');
    seen.set(Number(r.runId), r.resultJson);
  }
  assert.deepEqual([...seen.keys()].sort(), [1, 2, 3, 4]);
  for (const [id, json] of seen) assert.equal(json, String(id));
}));

test('bounds.timeout ends a busy loop with "Execution timed out"', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  const started = Date.now();
  e.send(enc.execute({ runId: 21, bounds: { timeout: 200 }, code: 'async () => { while (true) {} }' }));
  const r = await result(e, 21, 5000);
  assert.equal(r.status, 0);
  assert.equal(r.error, 'Execution timed out');
  assert.ok(Date.now() - started < 5000);
}));

test('bounds.memoryLimitMb out of range, or a name that is not a per-run bound → status 1 ERR_INVALID_ARGUMENT', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  const cases = [[22, { memoryLimitMb: 1 }, /memoryLimitMb/], [23, { workers: 2 }, /workers is not a per-run bound/], [24, { nope: 1 }, /nope/]];
  for (const [runId, bounds, message] of cases) {
    e.send(enc.execute({ runId, bounds, code: 'async () => 1' }));
    const r = await result(e, runId);
    assert.equal(r.status, 1);
    assert.equal(r.code, 'ERR_INVALID_ARGUMENT');
    assert.match(r.message, message);
    assertStats(r.stats, 2);
  }
}));

// ---------------------------------------------------------------------------------------------
// 4. Retained isolates

test('retained isolates: handle_id, HandleExecute in the same global scope, HandleDispose, ERR_HANDLE_CLOSED', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 31, flags: 1, code: 'async () => { globalThis.n = 1; return 1 }' }));
  const r = await result(e, 31);
  assert.equal(r.status, 0);
  assert.equal(r.resultJson, '1');
  assert.notEqual(r.handleId, 0n);
  const handle = r.handleId;

  e.send(enc.handleExecute(handle, 32, {}, 'async () => ++globalThis.n'));
  const r2 = await result(e, 32);
  assert.equal(r2.status, 0);
  assert.equal(r2.resultJson, '2');
  assert.equal(r2.error, undefined);

  e.send(enc.handleDispose(handle));
  const closed = await e.expect('HandleClosed');
  assert.equal(closed.handleId, handle);
  assert.equal(typeof closed.reason, 'string');

  e.send(enc.handleExecute(handle, 33, {}, 'async () => ++globalThis.n'));
  const r3 = await result(e, 33);
  assert.equal(r3.status, 1);
  assert.equal(r3.code, 'ERR_HANDLE_CLOSED');
}));

test('HandleExecute on a handle that never existed → ERR_HANDLE_CLOSED', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.handleExecute(424242, 34, {}, 'async () => 1'));
  const r = await result(e, 34);
  assert.equal(r.status, 1);
  assert.equal(r.code, 'ERR_HANDLE_CLOSED');
}));

// ---------------------------------------------------------------------------------------------
// 5. Shutdown and end of input

test('Shutdown drain: live runs finish, new runs get ERR_DISPOSED, then Bye and exit 0', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 41, code: 'async () => tools.add({ a: 1, b: 2 })', runConfig: TOOLS }));
  const c = await e.expect('ToolCall');
  e.send(enc.shutdown(0));
  e.send(enc.execute({ runId: 42, code: 'async () => 1' }));
  const refused = await result(e, 42);
  assert.equal(refused.status, 1);
  assert.equal(refused.code, 'ERR_DISPOSED');
  e.send(enc.reply(41, c.callId, '{"result":3}'));
  const r = await result(e, 41);
  assert.equal(r.status, 0);
  assert.equal(r.resultJson, '3');
  await e.expect('Bye');
  assert.deepEqual(await e.exitWithin(), { code: 0, signal: null });
  await assert.rejects(e.next(500), /ended|no engine frame/); // Bye is the last frame
}));

test('Shutdown drain drops retained isolates with HandleClosed before Bye', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 43, flags: 1, code: 'async () => 1' }));
  const r = await result(e, 43);
  assert.notEqual(r.handleId, 0n);
  e.send(enc.shutdown(0));
  const closed = await e.expect('HandleClosed');
  assert.equal(closed.handleId, r.handleId);
  await e.expect('Bye');
  assert.deepEqual(await e.exitWithin(), { code: 0, signal: null });
}));

test('Shutdown now → exit 0 answering nothing', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 44, code: 'async () => tools.add({ a: 1, b: 2 })', runConfig: TOOLS }));
  await e.expect('ToolCall');
  e.send(enc.shutdown(1));
  assert.deepEqual(await e.exitWithin(), { code: 0, signal: null });
  await assert.rejects(e.next(200), /ended/);
}));

test('closing stdin → exit 0', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready();
  e.send(enc.execute({ runId: 45, code: 'async () => tools.add({ a: 1, b: 2 })', runConfig: TOOLS }));
  await e.expect('ToolCall');
  e.child.stdin.end();
  assert.deepEqual(await e.exitWithin(), { code: 0, signal: null });
}));

test('closing stdin before Hello → exit 0', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  e.child.stdin.end();
  assert.deepEqual(await e.exitWithin(), { code: 0, signal: null });
}));

// ---------------------------------------------------------------------------------------------
// 6. Protocol errors: exit 3, nothing more written

function u32le(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); return b; }

const protocolErrors = {
  'a frame of length 0': u32le(0),
  'an oversized length prefix (0xFFFFFFF0)': u32le(0xFFFFFFF0),
  'a frame above the configured maximum': Buffer.concat([u32le(1 + 1024 * 1024 * 1024), Buffer.from([T.Ping])]),
  'an unknown frame type': frame(0x7f, Buffer.alloc(0)),
  'an engine → host type sent to the engine': frame(T.Pong, new Writer().u64(1).body()),
  'trailing bytes in a body': frame(T.Ping, new Writer().u64(1).u8(0).body()),
  'a short body': frame(T.Ping, Buffer.from([1, 0, 0])),
  'a presence flag other than 0/1': frame(T.Execute, new Writer().u64(1).f64(0).u32(0).u8(0).u8(2).str('async () => 1').str(RC()).body()),
  'invalid UTF-8 in a str': frame(T.Execute, new Writer().u64(1).f64(0).u32(0).u8(0).u8(0).u8(0).u8(0).u32(2).raw([0xc3, 0x28]).str(RC()).body()),
  'a second Hello': enc.hello(VERSION, VERSION, '{"workers":2}'),
};

for (const [name, bytes] of Object.entries(protocolErrors)) {
  test(`protocol error: ${name} → exit 3`, { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
    const e = await ready();
    e.send(bytes);
    assert.deepEqual(await e.exitWithin(), { code: 3, signal: null });
    assert.deepEqual(e.buffered, [], 'nothing written after a protocol error');
  }));
}

test('protocol error before Hello: an oversized frame (> 1 MiB) → exit 3', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  e.send(Buffer.concat([u32le(1024 * 1024 + 2), Buffer.from([T.Hello])]));
  assert.deepEqual(await e.exitWithin(), { code: 3, signal: null });
}));

test('before Hello a frame of exactly 1 MiB is accepted', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  const config = '{"workers":2}';
  // length = type(1) + min(2) + max(2) + str length(4) + config bytes
  const padded = config + ' '.repeat(1024 * 1024 - 9 - config.length);
  const hello = enc.hello(VERSION, VERSION, padded);
  assert.equal(hello.readUInt32LE(0), 1024 * 1024);
  e.send(hello);
  const r = await e.expect('Ready');
  assert.equal(r.workers, 2);
}));

test('before Hello a frame of 1 MiB + 1 → exit 3', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  const config = '{"workers":2}';
  const padded = config + ' '.repeat(1024 * 1024 - 9 - config.length + 1);
  const hello = enc.hello(VERSION, VERSION, padded);
  assert.equal(hello.readUInt32LE(0), 1024 * 1024 + 1);
  e.send(hello);
  assert.deepEqual(await e.exitWithin(), { code: 3, signal: null });
  assert.deepEqual(e.buffered, []);
}));

// After Hello: max(maxCodeBytes, maxReplyBytes, maxResultBytes) + 2 × maxLogBytes + 1 MiB.
const SMALL = JSON.stringify({ workers: 2, maxCodeBytes: 1000, maxReplyBytes: 2000, maxResultBytes: 3000, maxLogBytes: 4000 });
const SMALL_MAX = 3000 + 2 * 4000 + 1024 * 1024;
// A Reply for a run that does not exist (ignored) whose frame length is exactly `length`.
function replyOfLength(length) {
  const json = ' '.repeat(length - 1 - 8 - 4 - 4);
  const f = enc.reply(777, 0, json);
  assert.equal(f.readUInt32LE(0), length);
  return f;
}

test('after Hello a frame of exactly the configured maximum size is accepted', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready(SMALL);
  e.send(replyOfLength(SMALL_MAX));
  e.send(enc.ping(8));
  assert.equal((await e.expect('Pong')).seq, 8n);
}));

test('after Hello a frame one byte above the configured maximum → exit 3', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready(SMALL);
  // Only the length prefix and type: the length is checked before the body arrives.
  e.send(Buffer.concat([u32le(SMALL_MAX + 1), Buffer.from([T.Reply])]));
  assert.deepEqual(await e.exitWithin(), { code: 3, signal: null });
  assert.deepEqual(e.buffered, []);
}));

test('frames split into single bytes and coalesced are read alike', { timeout: TIMEOUT }, withEngine(async ({ start }) => {
  const e = start();
  const bytes = Buffer.concat([enc.hello(VERSION, VERSION, '{"workers":2}'), enc.ping(1), enc.execute({ runId: 1, code: 'async () => "ok"' }), enc.ping(2)]);
  for (let i = 0; i < bytes.length; i++) {
    e.send(bytes.subarray(i, i + 1));
    if (i % 7 === 0) await new Promise((r) => setImmediate(r));
  }
  await e.expect('Ready');
  assert.equal((await e.expect('Pong')).seq, 1n);
  const got = [await e.next(), await e.next()];
  const r = got.find((f) => f.type === 'Result');
  const p = got.find((f) => f.type === 'Pong');
  assert.equal(r.resultJson, '"ok"');
  assert.equal(p.seq, 2n);
}));

// ---------------------------------------------------------------------------------------------
// 7. Fault injection

const FAULTS = { CODEMODE_EXECUTOR_FAULT_INJECTION: '1' };

test('fault "abort" kills the engine by SIGABRT without a Result', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready('{"workers":2}', FAULTS);
  e.send(enc.execute({ runId: 51, fault: 'abort', code: 'async () => 1' }));
  const { code, signal } = await e.exitWithin(10000);
  assert.equal(code, null);
  assert.equal(signal, 'SIGABRT');
  assert.deepEqual(e.buffered.filter((f) => f.type === 'Result'), []);
}));

test('fault "panic" → ERR_WORKER_LOST, and the engine serves the next run', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready('{"workers":2}', FAULTS);
  e.send(enc.execute({ runId: 52, fault: 'panic', code: 'async () => 1' }));
  const r = await result(e, 52, 10000);
  assert.equal(r.status, 1);
  assert.equal(r.code, 'ERR_WORKER_LOST');
  e.send(enc.execute({ runId: 53, code: 'async () => "after"' }));
  const r2 = await result(e, 53, 10000);
  assert.equal(r2.status, 0);
  assert.equal(r2.resultJson, '"after"');
  e.send(enc.ping(1));
  const p = await e.expect('Pong');
  assert.equal(p.stats.lost, 1n);
}));

// "idle-leader": the run waiting on the engine's input does not read it, as when its thread gets
// no core; the reader thread reads for it and must wake it for each of its own events. Without
// that wake-up the run would sleep until its deadline (5 s here).
test('fault "idle-leader": a waiting run or idle worker that does not read the input is woken for its reply, its cancel, its timers and the next run', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready('{"workers":2,"timeout":5000}', FAULTS);
  e.send(enc.execute({ runId: 81, fault: 'idle-leader', code: 'async () => "set"' }));
  assert.equal((await result(e, 81)).resultJson, '"set"');

  e.send(enc.execute({ runId: 82, code: 'async () => tools.add({ a: 1, b: 2 })', runConfig: TOOLS }));
  const c = await e.expect('ToolCall');
  await pause(30);
  e.send(enc.reply(82, c.callId, '{"result":3}'));
  const replied = await result(e, 82, 2000);
  assert.equal(replied.resultJson, '3');
  assert.equal(replied.error, undefined);

  e.send(enc.execute({ runId: 83, code: 'async () => tools.add({ a: 1, b: 2 })', runConfig: TOOLS }));
  await e.expect('ToolCall');
  await pause(30);
  e.send(enc.cancel(83, 'stopped while it waited'));
  assert.equal((await result(e, 83, 2000)).error, 'stopped while it waited');

  // Two runs wait at once (one of them on the input): each reply reaches its own run.
  for (const runId of [84, 85]) {
    e.send(enc.execute({ runId, code: `async () => (await tools.add({ a: ${runId}, b: 0 })) + 1`, runConfig: TOOLS }));
  }
  const calls = [await e.expect('ToolCall'), await e.expect('ToolCall')];
  await pause(30);
  for (const call of calls.reverse()) e.send(enc.reply(Number(call.runId), call.callId, `{"result":${call.runId}}`));
  const results = [await e.expect('Result', 2000), await e.expect('Result', 2000)];
  assert.deepEqual(results.map((r) => [Number(r.runId), r.resultJson]).sort(), [[84, '85'], [85, '86']]);

  const timed = 'async () => { await new Promise((r) => setTimeout(r, 100)); return tools.add({ a: 0, b: 0 }); }';
  const started = Date.now();
  e.send(enc.execute({ runId: 86, code: timed, runConfig: TOOLS }));
  const late = await e.expect('ToolCall', 2000);
  assert.ok(Date.now() - started < 2000, 'the timer fired on time');
  e.send(enc.reply(86, late.callId, '{"result":0}'));
  assert.equal((await result(e, 86, 2000)).resultJson, '0');

  // With no run in progress, an idle worker waits on the input for the next Execute; with one
  // worker only it can run it, so the reader must wake it for each.
  const one = await ready('{"workers":1,"timeout":5000}', FAULTS);
  one.send(enc.execute({ runId: 91, fault: 'idle-leader', code: 'async () => "set"' }));
  assert.equal((await result(one, 91)).resultJson, '"set"');
  for (let runId = 92; runId < 95; runId++) {
    await pause(30);
    one.send(enc.execute({ runId, code: `async () => ${runId}` }));
    assert.equal((await result(one, runId, 2000)).resultJson, String(runId));
  }
}));

test('without the environment variable a fault is ignored', { timeout: TIMEOUT }, withEngine(async ({ ready }) => {
  const e = await ready('{"workers":2}', { CODEMODE_EXECUTOR_FAULT_INJECTION: '' });
  e.send(enc.execute({ runId: 54, fault: 'abort', code: 'async () => "fine"' }));
  const r = await result(e, 54);
  assert.equal(r.status, 0);
  assert.equal(r.resultJson, '"fine"');
}));
