'use strict';
// The console's HTTP side: one Node `(req, res)` handler that serves the page (console.html,
// console.js, console.css beside this file) and a small JSON API over a *source* of runs. Two
// sources exist: a runtime handle (`consoleHandler({ runtime })`, mounted in the application,
// which has the connectors: an approval resumes the run at once, a rollback reverts) and a
// store (store-source.js `storeSource`, the standalone `codemode-executor console` command, which
// has none: it records an approval and the application's runtime resumes the run).
//
// Security, in the order a request meets it:
// - every request must name the console's token as the first segment of its path
//   (`<mount>/<token>/...`; compared in constant time) and pass the host's `auth(req)` when
//   one is given; otherwise 403, before anything else is read;
// - a request that changes something is a POST whose `x-codemode-csrf` header holds the
//   page's CSRF token (a header a cross-site form or image cannot send) with a JSON body, from
//   no other site (`Sec-Fetch-Site`, `Origin`); otherwise 403;
// - every answer carries a Content-Security-Policy that allows scripts, styles and requests
//   from this origin only (no inline script, no external resource), and is never cached;
// - the page renders what programs and tools produced as text (textContent), never as markup.

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { invalidArgument } = require('../errors.js');
const { messageOf } = require('../util.js');

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

// The files of the page, read once per handler.
const STATIC = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,256}$/;
const MAX_BODY_BYTES = 16 * 1024;
const DEFAULT_LIST_LIMIT = 200;
const STATUSES = new Set(['running', 'paused', 'completed', 'error', 'rejected', 'rolled_back']);
// How long an approval's POST waits for the resumed pass before answering `running` (the page
// keeps polling and shows the rest as it lands).
const APPROVE_WAIT_MS = 3_000;

function readStatic(name) {
  return fs.readFileSync(path.join(__dirname, name), 'utf8');
}

function sameSecret(given, expected) {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

// ---- Values as text ---------------------------------------------------------------------------

// A stored value (arguments, a result) as the page shows it: indented JSON, with what JSON has
// no form for named (undefined, bigint, bytes, Map, Set). The page only ever shows this text.
function display(value) {
  if (value === undefined) return undefined;
  const seen = new WeakSet();
  try {
    const text = JSON.stringify(value, function replacer(_key, v) {
      if (typeof v === 'bigint') return `${v}n`;
      if (v === undefined) return '[undefined]';
      if (typeof v === 'function' || typeof v === 'symbol') return `[${typeof v}]`;
      if (v !== null && typeof v === 'object') {
        if (seen.has(v)) return '[circular]';
        seen.add(v);
        if (v instanceof Map) return { '[Map]': [...v.entries()] };
        if (v instanceof Set) return { '[Set]': [...v] };
        if (ArrayBuffer.isView(v)) return { [`[${v.constructor.name}]`]: Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
        if (v instanceof ArrayBuffer) return { '[ArrayBuffer]': Array.from(new Uint8Array(v)) };
      }
      return v;
    }, 2);
    return text === undefined ? String(value) : text;
  } catch (error) {
    return `[cannot be shown: ${messageOf(error)}]`;
  }
}

function preview(text, max) {
  if (typeof text !== 'string') return undefined;
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

const callCount = (log) => log.filter((entry) => entry !== undefined).length;

function summary(execution) {
  return {
    id: execution.id,
    status: execution.status,
    createdAt: execution.createdAt,
    updatedAt: execution.updatedAt,
    calls: callCount(execution.log),
    waiting: execution.log.filter((e) => e !== undefined && e.state === 'pending').map((e) => e.seq),
    program: preview(execution.code, 160),
    error: preview(execution.error, 300),
  };
}

function pendingView(p) {
  return {
    executionId: p.executionId,
    seq: p.seq,
    kind: p.kind,
    connector: p.connector,
    method: p.method,
    inDoubt: p.inDoubt === true,
    args: p.kind === 'program' ? p.code : display(p.args),
  };
}

function detail(execution, pending) {
  return {
    ...summary(execution),
    program: execution.code,
    error: execution.error,
    connectors: execution.connectors,
    idempotencyKey: execution.idempotencyKey,
    heldBy: execution.leaseUntil !== undefined && execution.leaseUntil >= Date.now() ? execution.owner : undefined,
    result: display(execution.result),
    logs: Array.isArray(execution.logs) ? execution.logs.map((line) => (typeof line === 'string' ? line : display(line))) : [],
    calls: execution.log.filter((e) => e !== undefined).map((e) => ({
      seq: e.seq,
      connector: e.connector,
      method: e.method,
      state: e.state,
      requiresApproval: e.requiresApproval === true,
      args: display(e.args),
      result: display(e.result),
      revertError: e.revertError,
    })),
    pending: pending.map(pendingView),
    leftInForce: execution.leftInForce,
  };
}

// ---- Requests ----------------------------------------------------------------------------------

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function send(res, status, type, body) {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res, status, value) {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function forbidden(res, why) {
  send(res, 403, 'text/plain; charset=utf-8', `Forbidden: ${why}\n`);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve({});
      try {
        const body = JSON.parse(text);
        if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
        resolve(body);
      } catch {
        reject(new HttpError(400, 'the request body must be a JSON object'));
      }
    });
    req.on('error', reject);
  });
}

// Why a state-changing request is refused (undefined when it is not).
function csrfRefusal(req, csrf) {
  if (!sameSecret(req.headers['x-codemode-csrf'], csrf)) return 'missing or wrong CSRF token';
  const type = String(req.headers['content-type'] || '');
  if (!/^application\/json\b/i.test(type)) return 'a state-changing request must send JSON';
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `a request from another site (${site})`;
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    let host;
    try {
      host = new URL(origin).host;
    } catch {
      return 'a malformed Origin';
    }
    if (host !== req.headers.host) return `a request from another origin (${origin})`;
  }
  return undefined;
}

function seqOf(body) {
  const seq = body.seq;
  if (seq === undefined) return undefined;
  if (!Number.isInteger(seq) || seq < 0) throw new HttpError(400, 'seq must be a non-negative integer');
  return seq;
}

/**
 * The handler over `source` (see store-source.js). Options: `token` (a string, or undefined for
 * none), `auth` (`(req) => boolean | Promise<boolean>`), `basePath` (stripped from the front of
 * `req.url` when present).
 */
function createHandler({ source, token, auth, basePath }) {
  const csrf = crypto.randomBytes(24).toString('base64url');
  const page = readStatic('console.html').replace('{{csrf}}', csrf);
  const files = Object.fromEntries(Object.keys(STATIC).map((name) => [name, readStatic(name)]));
  const prefix = basePath === undefined ? '' : basePath.replace(/\/+$/, '');

  async function api(req, res, route) {
    const url = new URL(route, 'http://console.invalid/');
    let parts;
    try {
      parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw new HttpError(400, 'a malformed path');
    }
    if (req.method === 'GET') {
      if (parts.length === 1 && parts[0] === 'overview') {
        const status = url.searchParams.get('status') || undefined;
        if (status !== undefined && !STATUSES.has(status)) throw new HttpError(400, `unknown status "${status}"`);
        const executions = await source.executions(DEFAULT_LIST_LIMIT);
        const pending = await source.pending();
        return sendJson(res, 200, {
          runtime: source.label,
          mode: source.mode,
          canRollback: source.canRollback,
          rollbackRefusal: source.rollbackRefusal,
          counts: countBy(executions),
          executions: executions.filter((e) => status === undefined || e.status === status).map(summary),
          pending: pending.map(pendingView),
        });
      }
      if (parts.length === 2 && parts[0] === 'executions') {
        const execution = await source.execution(parts[1]);
        if (execution === undefined) throw new HttpError(404, `no execution "${parts[1]}"`);
        const pending = execution.status === 'paused' ? await source.pending(execution.id) : [];
        return sendJson(res, 200, detail(execution, pending));
      }
      if (parts.length === 1 && parts[0] === 'snippets') {
        const snippets = await source.snippets();
        return sendJson(res, 200, snippets.map((s) => ({
          name: s.name, description: s.description, code: s.code, savedAt: s.savedAt, connectors: s.connectors,
          inputSchema: display(s.inputSchema),
        })));
      }
      throw new HttpError(404, 'no such page');
    }
    if (req.method !== 'POST') throw new HttpError(405, 'only GET and POST');
    const refusal = csrfRefusal(req, csrf);
    if (refusal !== undefined) return forbidden(res, refusal);
    const body = await readBody(req);
    if (parts.length !== 3 || parts[0] !== 'executions') throw new HttpError(404, 'no such action');
    const [, id, action] = parts;
    if (action === 'approve') return sendJson(res, 200, await source.approve(id, seqOf(body)));
    if (action === 'reject') {
      const seq = seqOf(body);
      if (seq === undefined) throw new HttpError(400, 'reject needs the seq of the action');
      return sendJson(res, 200, { rejected: await source.reject(id, seq) });
    }
    if (action === 'rollback') {
      if (!source.canRollback) throw new HttpError(409, source.rollbackRefusal);
      return sendJson(res, 200, await rollbackReport(source, id));
    }
    throw new HttpError(404, `no action "${action}"`);
  }

  async function handle(req, res) {
    let route = req.url || '/';
    if (prefix !== '' && (route === prefix || route.startsWith(`${prefix}/`) || route.startsWith(`${prefix}?`))) route = route.slice(prefix.length);
    if (!route.startsWith('/')) route = `/${route}`;
    if (token !== undefined) {
      const end = route.indexOf('/', 1);
      const query = route.indexOf('?');
      const first = route.slice(1, end === -1 ? (query === -1 ? undefined : query) : end);
      if (!sameSecret(first, token)) return forbidden(res, 'the console URL (with its token) is required');
      // The page's own URLs are relative: the token's segment must end with a slash.
      if (end === -1) {
        res.writeHead(308, { ...SECURITY_HEADERS, location: `${token}/${query === -1 ? '' : route.slice(query)}` });
        return res.end();
      }
      route = route.slice(end);
    }
    if (auth !== undefined) {
      let allowed = false;
      try {
        allowed = await auth(req);
      } catch (error) {
        console.error('codemode console: the auth hook threw; the request is refused', error);
      }
      if (allowed !== true) return forbidden(res, 'the host refused this request');
    }
    const pathname = route.split('?')[0];
    if (pathname === '/' || pathname === '/index.html') {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'only GET');
      return send(res, 200, 'text/html; charset=utf-8', page);
    }
    const name = pathname.slice(1);
    if (Object.prototype.hasOwnProperty.call(files, name)) {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'only GET');
      return send(res, 200, STATIC[name], files[name]);
    }
    if (pathname.startsWith('/api/')) return api(req, res, route.slice('/api'.length));
    throw new HttpError(404, 'no such page');
  }

  return function codemodeConsole(req, res) {
    handle(req, res).catch((error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpError) return sendJson(res, error.status, { error: error.message });
      sendJson(res, 500, { error: messageOf(error), code: error && typeof error.code === 'string' ? error.code : undefined });
    });
  };
}

function countBy(executions) {
  const counts = {};
  for (const e of executions) counts[e.status] = (counts[e.status] || 0) + 1;
  return counts;
}

// A rollback's report: what was reverted and what stays in force (a rollback that could not
// revert everything is an answer too, not a failure of the request).
async function rollbackReport(source, id) {
  try {
    const { reverted, leftInForce, calls = [] } = await source.rollback(id);
    return { complete: true, reverted, leftInForce, calls };
  } catch (error) {
    if (error && error.code === 'ERR_ROLLBACK_INCOMPLETE') {
      return { complete: false, reverted: error.reverted ?? 0, leftInForce: error.leftInForce ?? [], calls: error.calls ?? [], error: error.message };
    }
    throw error;
  }
}

// ---- The public entry -------------------------------------------------------------------------

const RUNTIME_METHODS = ['executions', 'execution', 'pending', 'approve', 'reject', 'rollback', 'snippets'];

// A runtime handle as a source: every decision through the application's own runtime, so an
// approval runs the next pass at once, with the application's connectors.
function runtimeSource(runtime, label) {
  return {
    label,
    mode: 'runtime',
    canRollback: true,
    executions: (limit) => runtime.executions(limit),
    execution: (id) => runtime.execution(id),
    pending: (id) => runtime.pending(id),
    snippets: () => runtime.snippets(),
    reject: (id, seq) => runtime.reject({ executionId: id, seq }),
    rollback: (id) => runtime.rollback({ executionId: id }),
    async approve(id, seq) {
      // The pass runs to its end (or next pause) in the application; the answer waits a
      // moment for it, and otherwise says it is running (the page shows the rest as it lands).
      const pass = runtime.approve({ executionId: id, seq }).then(
        (outcome) => outcomeView(outcome),
        (error) => ({ status: 'error', error: messageOf(error) }),
      );
      let timer;
      const waited = new Promise((resolve) => {
        timer = setTimeout(() => resolve({ status: 'running', note: 'Approved: the run is running again.' }), APPROVE_WAIT_MS);
      });
      try {
        return await Promise.race([pass, waited]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function outcomeView(outcome) {
  const view = { status: outcome.status, executionId: outcome.executionId };
  if (outcome.error !== undefined) view.error = String(outcome.error);
  if (outcome.status === 'completed') view.result = display(outcome.result);
  if (Array.isArray(outcome.pending)) view.pending = outcome.pending.map(pendingView);
  return view;
}

/**
 * `consoleHandler({ runtime, token?, auth?, basePath? })`: the console as a Node request
 * handler an application mounts under its own admin path. See docs/guides/console.md.
 */
function consoleHandler(options) {
  if (options === null || typeof options !== 'object') throw invalidArgument('consoleHandler: options must be an object with a runtime');
  const known = new Set(['runtime', 'token', 'auth', 'basePath', 'label']);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw invalidArgument(`consoleHandler: unknown option "${key}" (known: ${[...known].join(', ')})`);
  }
  const { runtime, auth, basePath, label } = options;
  if (runtime === null || typeof runtime !== 'object' || RUNTIME_METHODS.some((m) => typeof runtime[m] !== 'function')) {
    throw invalidArgument('consoleHandler: runtime must be a durable runtime handle (createCodemodeRuntime)');
  }
  if (auth !== undefined && typeof auth !== 'function') throw invalidArgument('consoleHandler: auth must be a function of the request');
  if (basePath !== undefined && (typeof basePath !== 'string' || !basePath.startsWith('/'))) {
    throw invalidArgument('consoleHandler: basePath must be a path starting with "/"');
  }
  return makeHandler(runtimeSource(runtime, label === undefined ? 'codemode' : String(label)), { token: options.token, auth, basePath });
}

// Checks `token` (a string of 16 to 256 URL-safe characters, false for none when `auth` is
// given; by default a random one) and builds the handler, with `token` and `path` on it.
function makeHandler(source, { token, auth, basePath }) {
  if (token === false) {
    if (auth === undefined) throw invalidArgument('consoleHandler: token: false needs an auth hook (every request must be checked by one or the other)');
    token = undefined;
  } else if (token === undefined) {
    token = auth === undefined ? crypto.randomBytes(24).toString('base64url') : undefined;
  } else if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) {
    throw invalidArgument('consoleHandler: token must be 16 to 256 characters of A-Z, a-z, 0-9, "_" and "-"');
  }
  const handler = createHandler({ source, token, auth, basePath });
  const prefix = basePath === undefined ? '' : basePath.replace(/\/+$/, '');
  Object.defineProperty(handler, 'token', { value: token, enumerable: true });
  Object.defineProperty(handler, 'path', { value: token === undefined ? `${prefix}/` : `${prefix}/${token}/`, enumerable: true });
  return handler;
}

module.exports = { consoleHandler, makeHandler, display, CSP };
