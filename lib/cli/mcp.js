'use strict';
// `codemode-executor mcp --config mcp.json`: one code-mode MCP server in front of the MCP servers
// an mcp.json file lists (the `mcpServers` format of Claude Desktop, Claude Code and Cursor).
// Programs call every upstream tool as `<server>.<tool>(args)` in one durable run (the runtime's
// approvals, replay and rollback); each upstream connects, fails and reconnects on its own
// (lib/mcp/upstream.js). Served over stdio, or Streamable HTTP with `--http PORT`.
// Documented in docs/guides/mcp-command.md.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { randomUUID } = require('node:crypto');

const { sanitizeToolName, providerNameProblem } = require('../cloudflare/names.js');
const { READS_PROGRAMS } = require('../cloudflare/normalize.js');

const USAGE = `NAME
    codemode-executor mcp - code mode in front of the MCP servers of an mcp.json file

SYNOPSIS
    codemode-executor mcp --config FILE [--http PORT [--host HOST]] [options]

DESCRIPTION
    Starts every server of FILE's "mcpServers" (stdio entries: command, args, env, cwd;
    remote entries: url, headers, and type "http" or "sse") and serves ONE MCP server whose
    "code" tool runs a JavaScript program that calls their tools as <server>.<tool>(args),
    in a fresh V8 isolate, as a durable run: calls marked for approval wait for a person, and
    runs survive a restart. Tools: code, pending, search, describe (and approve, reject,
    rollback with --approval-tools). The upstreams' resources are listed and readable, and
    their prompts listed as <server>/<prompt>. An upstream's sampling and elicitation
    requests go to the client whose code call is running, when it supports them; their
    roots/list requests go to the client that last declared roots, and its
    roots/list_changed notifications reach every upstream.

    A server that cannot be started is left out until it can: programs that call it get an
    error naming it and why, the others work, and it is tried again (backoff 0.5 s doubling
    to 30 s) on the next use. A server whose connection ends is reconnected on the next use.

    Per entry, "codemode": { "approve": ["tool", ...], "timeout": MS } marks tools whose
    calls wait for a person's approval, and sets that server's call timeout.

OPTIONS
    --config FILE        the mcp.json file (required)
    --http PORT          serve Streamable HTTP at http://HOST:PORT/mcp (one session per
                         client) instead of stdio
    --host HOST          the address --http binds (default 127.0.0.1)
    --store PATH|URL     the durable store: a SQLite file, or a postgres:// URL
                         (default DATA_DIR/runtime.db)
    --data-dir DIR       where the SQLite store lives (default $XDG_DATA_HOME/codemode-executor,
                         else ~/.local/share/codemode-executor; macOS: ~/Library/Application
                         Support/codemode-executor; Windows: %LOCALAPPDATA%\\codemode-executor)
    --timeout MS         how long one program may run, its tool calls included (default 300000)
    --call-timeout MS    how long one upstream call may take unless its entry sets
                         codemode.timeout (default: --timeout)
    --start-timeout MS   how long an upstream has to start and list its tools (default 30000)
    --memory MB          heap of one program's isolate (default: the executor's, 128)
    --approval-tools     also give the client approve, reject and rollback tools (the model
                         can call them: only for clients that confirm each call with a person)
    -h, --help           this text

EXIT STATUS
    0 after a clean shutdown (stdin closed, SIGINT, SIGTERM); 2 for a usage error
    (ERR_CLI_USAGE, ERR_MCP_CONFIG); 1 when serving fails (ERR_PORT_IN_USE, ERR_DATA_DIR,
    ERR_STORE, ERR_MCP_SDK_MISSING). Errors are one line: "codemode-executor mcp: CODE: message".

NOTES
    The command needs the MCP SDK (@modelcontextprotocol/sdk), an optional peer of the
    package. With npx, name both packages:
    npx -y -p @modelcontextprotocol/sdk -p @supolka/codemode-executor codemode-executor mcp ...

EXAMPLE
    codemode-executor mcp --config ~/.config/codemode/mcp.json --http 8765
`;

class CliError extends Error {
  constructor(code, message, exitCode = 2) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}
const usageError = (message) => new CliError('ERR_CLI_USAGE', message);
const configError = (file, message) => new CliError('ERR_MCP_CONFIG', `${file}: ${message}`);

const VALUE_OPTIONS = ['--config', '--http', '--host', '--store', '--data-dir', '--timeout', '--call-timeout', '--start-timeout', '--memory'];
const FLAGS = ['--approval-tools', '--help', '-h'];

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    if (eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    if (FLAGS.includes(arg)) {
      if (value !== undefined) throw usageError(`${arg} takes no value`);
      options[arg === '-h' ? 'help' : arg.slice(2)] = true;
      continue;
    }
    if (!VALUE_OPTIONS.includes(arg)) throw usageError(`unknown option "${arg}" (see --help)`);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw usageError(`${arg} needs a value`);
    }
    options[arg.slice(2)] = value;
  }
  return options;
}

function integerOption(options, name, fallback, min, max) {
  if (options[name] === undefined) return fallback;
  const text = options[name];
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw usageError(`--${name} must be an integer from ${min} to ${max} (got "${text}")`);
  }
  return n;
}

/** The per-user data directory (XDG on Linux). */
function defaultDataDir(env = process.env, platform = process.platform, home = os.homedir()) {
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'codemode-executor');
  if (platform === 'win32') return path.join(env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'codemode-executor');
  const base = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, '.local', 'share');
  return path.join(base, 'codemode-executor');
}

const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const stringArray = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string');
const stringRecord = (v) => isPlain(v) && Object.values(v).every((s) => typeof s === 'string');

// The namespace a server's key gets in the sandbox: sanitized, and never a reserved name.
function namespaceOf(key) {
  const name = sanitizeToolName(key);
  return name === 'codemode' || providerNameProblem(name) !== null ? `${name}_` : name;
}

/** Reads and checks an mcp.json file: `[{ server, name, entry, approve, timeoutMs }]`. */
function readConfig(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw configError(file, `cannot read it (${error.code || error.message})`);
  }
  let config;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw configError(file, `is not valid JSON (${error.message})`);
  }
  if (!isPlain(config) || !isPlain(config.mcpServers)) throw configError(file, 'needs an "mcpServers" object ({ "mcpServers": { "<name>": { "command": ... } } })');
  const servers = [];
  const names = new Map();
  for (const [server, entry] of Object.entries(config.mcpServers)) {
    const where = `mcpServers["${server}"]`;
    if (!isPlain(entry)) throw configError(file, `${where} must be an object`);
    if (entry.disabled === true) continue;
    const hasCommand = entry.command !== undefined;
    const hasUrl = entry.url !== undefined;
    if (hasCommand === hasUrl) throw configError(file, `${where} needs either "command" (a stdio server) or "url" (a remote one)`);
    if (hasCommand && (typeof entry.command !== 'string' || entry.command === '')) throw configError(file, `${where}.command must be a non-empty string`);
    if (entry.args !== undefined && !stringArray(entry.args)) throw configError(file, `${where}.args must be an array of strings`);
    if (entry.env !== undefined && !stringRecord(entry.env)) throw configError(file, `${where}.env must be an object of strings`);
    if (entry.cwd !== undefined && typeof entry.cwd !== 'string') throw configError(file, `${where}.cwd must be a string`);
    if (hasUrl) {
      let url;
      try {
        url = new URL(entry.url);
      } catch {
        throw configError(file, `${where}.url is not a URL (got ${JSON.stringify(entry.url)})`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw configError(file, `${where}.url must be http:// or https://`);
      if (entry.headers !== undefined && !stringRecord(entry.headers)) throw configError(file, `${where}.headers must be an object of strings`);
      if (entry.type !== undefined && !['http', 'sse', 'streamable-http', 'streamableHttp'].includes(entry.type)) {
        throw configError(file, `${where}.type must be "http" or "sse" for a url entry (got ${JSON.stringify(entry.type)})`);
      }
    }
    const extra = entry.codemode ?? {};
    if (!isPlain(extra)) throw configError(file, `${where}.codemode must be an object`);
    for (const key of Object.keys(extra)) {
      if (key !== 'approve' && key !== 'timeout') throw configError(file, `${where}.codemode has an unknown key "${key}" (known: approve, timeout)`);
    }
    if (extra.approve !== undefined && !stringArray(extra.approve)) throw configError(file, `${where}.codemode.approve must be an array of tool names`);
    if (extra.timeout !== undefined && (!Number.isSafeInteger(extra.timeout) || extra.timeout < 1)) {
      throw configError(file, `${where}.codemode.timeout must be a positive integer of milliseconds`);
    }
    const name = namespaceOf(server);
    if (names.has(name)) throw configError(file, `servers "${names.get(name)}" and "${server}" both become the namespace "${name}"; rename one`);
    names.set(name, server);
    servers.push({ server, name, entry, approve: extra.approve ?? [], timeoutMs: extra.timeout });
  }
  return servers;
}

// The executor as the runtime sees it, running each program under the MCP request that asked
// for it: the request's signal cancels it, and the calls it makes run in that request's context
// (the upstream calls read the signal and progress from it; a native callback does not carry
// the async context on its own).
function requestBoundExecutor(executor, requestContext) {
  return {
    [READS_PROGRAMS]: executor[READS_PROGRAMS],
    execute(code, providers, options) {
      const request = requestContext.getStore();
      if (request === undefined) return executor.execute(code, providers, options);
      const bound = { ...options };
      if (request.signal) bound.signal = request.signal;
      if (Array.isArray(bound.connectors)) {
        bound.connectors = bound.connectors.map((c) => ({
          ...c,
          binding: { ...c.binding, callTool: (method, args) => requestContext.run(request, () => c.binding.callTool(method, args)) },
        }));
      }
      return executor.execute(code, providers, bound);
    },
  };
}

// A JSON-RPC error answer over HTTP.
function reply(res, status, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

// The upstreams' resources and prompts, on `server` (the SDK's low-level Server, before it
// connects): resources listed together and read from the server that listed them (else from
// the first that can read the URI: a tool's resource_link may name one no listing has);
// prompts named `<server>/<prompt>`.
function forwardResourcesAndPrompts(server, connectors) {
  const types = require('@modelcontextprotocol/sdk/types.js');
  server.registerCapabilities({ resources: {}, prompts: {} });
  const owners = new Map(); // uri → connector, from the last listing
  const settled = async (fn) => (await Promise.allSettled(connectors.map(fn))).flatMap((r, i) => (r.status === 'fulfilled' ? [[connectors[i], r.value]] : []));
  server.setRequestHandler(types.ListResourcesRequestSchema, async () => {
    const lists = await settled((c) => c.listResources());
    for (const [c, list] of lists) for (const r of list) owners.set(r.uri, c);
    return { resources: lists.flatMap(([, list]) => list) };
  });
  server.setRequestHandler(types.ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: (await settled((c) => c.listResourceTemplates())).flatMap(([, list]) => list),
  }));
  server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const first = owners.get(uri);
    const reasons = [];
    for (const c of first ? [first, ...connectors.filter((x) => x !== first)] : connectors) {
      try {
        return await c.readResource(uri);
      } catch (error) {
        reasons.push(`${c.server}: ${error.message}`);
      }
    }
    throw new types.McpError(types.ErrorCode.InvalidParams, `No upstream server could read ${uri} (${reasons.join('; ') || 'no servers'})`);
  });
  server.setRequestHandler(types.ListPromptsRequestSchema, async () => ({
    prompts: (await settled((c) => c.listPrompts())).flatMap(([c, list]) => list.map((p) => ({ ...p, name: `${c.server}/${p.name}` }))),
  }));
  server.setRequestHandler(types.GetPromptRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    const slash = name.indexOf('/');
    const c = connectors.find((x) => x.server === name.slice(0, slash));
    if (slash < 0 || !c) throw new types.McpError(types.ErrorCode.InvalidParams, `Unknown prompt "${name}" (prompts are named <server>/<prompt>)`);
    return c.getPrompt(name.slice(slash + 1), args);
  });
}

function print(line) {
  process.stderr.write(`codemode-executor mcp: ${line}\n`);
}

// The MCP SDK is an optional peer of the package: the command says how to get it.
function checkSdk() {
  try {
    require.resolve('@modelcontextprotocol/sdk/server/mcp.js');
  } catch {
    throw new CliError('ERR_MCP_SDK_MISSING', 'the mcp command needs the MCP SDK, an optional peer of this package: npm install @modelcontextprotocol/sdk (with npx: npx -y -p @modelcontextprotocol/sdk -p @supolka/codemode-executor codemode-executor mcp ...)', 1);
  }
}

async function serve(options) {
  checkSdk();
  const configFile = path.resolve(options.config);
  const servers = readConfig(configFile);
  const timeout = integerOption(options, 'timeout', 300_000, 100, 86_400_000);
  const callTimeout = integerOption(options, 'call-timeout', timeout, 1, 86_400_000);
  const startTimeout = integerOption(options, 'start-timeout', 30_000, 1, 3_600_000);
  const memory = integerOption(options, 'memory', undefined, 8, 65_536);
  const port = integerOption(options, 'http', undefined, 0, 65_535);
  const host = options.host ?? '127.0.0.1';
  if (options.host !== undefined && port === undefined) throw usageError('--host applies only with --http');

  let storeOptions;
  if (options.store !== undefined && /^postgres(ql)?:\/\//.test(options.store)) {
    storeOptions = { store: options.store };
  } else {
    const file = options.store !== undefined ? path.resolve(options.store) : path.join(path.resolve(options['data-dir'] ?? defaultDataDir()), 'runtime.db');
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
    } catch (error) {
      throw new CliError('ERR_DATA_DIR', `cannot create ${path.dirname(file)} (${error.code || error.message}); pass --data-dir or --store`, 1);
    }
    storeOptions = { path: file };
  }

  const { IsolateExecutor, createCodemodeRuntime } = require('../index.js');
  const { runtimeMcpServer } = require('../mcp/index.js');
  const { UpstreamConnector, requestContext } = require('../mcp/upstream.js');
  const { loadSetup } = require('../runtime/pass.js');
  const { searchConnectors, describeTarget } = require('../runtime/search.js');
  const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');

  // The port is bound before anything starts, so one in use is refused at once.
  let handle = (_req, res) => reply(res, 503, 'Starting');
  let httpServer;
  if (port !== undefined) {
    httpServer = http.createServer((req, res) => handle(req, res));
    try {
      await new Promise((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, resolve);
      });
    } catch (error) {
      if (error.code === 'EADDRINUSE') throw new CliError('ERR_PORT_IN_USE', `port ${port} on ${host} is in use; pick another with --http`, 1);
      throw new CliError('ERR_LISTEN', `cannot listen on ${host}:${port} (${error.code || error.message})`, 1);
    }
  }

  // The roots of the client that last connected declaring them (or said they changed); an
  // upstream that asks before one has gets an error, and is told when one arrives.
  const roots = {
    server: undefined,
    list(timeout) {
      if (roots.server === undefined) {
        const { McpError, ErrorCode } = require('@modelcontextprotocol/sdk/types.js');
        throw new McpError(ErrorCode.MethodNotFound, 'codemode-executor: no connected client supports roots');
      }
      return roots.server.listRoots(undefined, { timeout });
    },
    from(server) {
      if (!server.getClientCapabilities()?.roots) return;
      roots.server = server;
      for (const c of connectors) c.rootsChanged();
    },
  };
  const connectors = servers.map((s) => new UpstreamConnector({
    name: s.name, server: s.server, entry: s.entry, approve: s.approve, timeoutMs: s.timeoutMs ?? callTimeout, startTimeoutMs: startTimeout, roots,
  }));
  // Started at once, each on its own; a failure is reported and tried again on next use.
  let stopping;
  for (const c of connectors) c.connect().catch((error) => { if (!stopping) print(`warning: ${error.message}`); });

  const executor = new IsolateExecutor({ timeout, ...(memory !== undefined ? { memoryLimitMb: memory } : {}) });
  let runtime;
  try {
    runtime = createCodemodeRuntime({ executor: requestBoundExecutor(executor, requestContext), connectors, ...storeOptions });
    await runtime.pending();
  } catch (error) {
    stopping = true;
    httpServer?.close();
    await Promise.all(connectors.map((c) => c.close()));
    await executor.dispose();
    throw new CliError('ERR_STORE', `cannot open the durable store: ${error.message}`, 1);
  }

  // The runtime, with search and describe over what the upstreams offer now (the runtime's own
  // keep their first answer for the life of the handle).
  const fresh = async () => (await loadSetup(connectors)).descriptions;
  const facade = {
    tool: (o) => runtime.tool(o),
    execute: (o) => runtime.execute(o),
    approve: (o) => runtime.approve(o),
    reject: (o) => runtime.reject(o),
    rollback: (o) => runtime.rollback(o),
    pending: (id) => runtime.pending(id),
    execution: (id) => runtime.execution(id),
    search: async (query) => searchConnectors(query, await fresh(), await runtime.snippets()),
    describe: async (target) => describeTarget(target, await fresh(), await runtime.snippets()),
  };
  // Each code call runs in its request's context: its signal, and its progress relayed to the
  // client (one notification per upstream progress, numbered, when the client asked for it).
  // An upstream's sampling and elicitation requests go to this client, when it supports them.
  const withRequest = (mcp, extra, run) => {
    const token = extra?._meta?.progressToken;
    let n = 0;
    const progress = token === undefined ? undefined : (message) => {
      extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++n, message } }).catch(() => {});
    };
    const forward = (method, params, schema, timeout) => extra.sendRequest({ method, params }, schema, { signal: extra.signal, timeout });
    return requestContext.run({ signal: extra?.signal, progress, forward, capabilities: mcp.server.getClientCapabilities() ?? {} }, run);
  };
  const newServer = () => {
    const mcp = new McpServer({ name: 'codemode-executor', version: require('../../package.json').version });
    const server = runtimeMcpServer({
      runtime: facade,
      server: mcp,
      approvalTools: options['approval-tools'] === true,
      withRequest: (extra, run) => withRequest(mcp, extra, run),
      readOnly: (connector, method) => connectors.find((c) => c.name() === connector)?.isReadOnly(method) === true,
    });
    forwardResourcesAndPrompts(server.server, connectors);
    // Relay the client's roots to the upstreams: at its start and whenever it says they changed.
    const { RootsListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');
    server.server.oninitialized = () => roots.from(server.server);
    server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => roots.from(server.server));
    const closed = server.server.onclose;
    server.server.onclose = () => {
      if (roots.server === server.server) roots.server = undefined;
      closed?.();
    };
    return server;
  };

  const closers = [];
  if (httpServer) {
    closers.push(() => new Promise((resolve) => {
      httpServer.closeAllConnections?.();
      httpServer.close(() => resolve());
    }));
  }
  const stop = () => {
    stopping ??= (async () => {
      for (const close of closers) await close().catch(() => {});
      await Promise.all(connectors.map((c) => c.close()));
      runtime.close();
      await executor.dispose().catch(() => {});
    })();
    return stopping;
  };

  if (port === undefined) {
    const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
    const server = newServer();
    const transport = new StdioServerTransport();
    const ended = new Promise((resolve) => {
      transport.onclose = resolve;
      process.stdin.once('end', resolve);
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.connect(transport);
    closers.push(() => server.close());
    print(`serving ${connectors.length} server(s) over stdio; store: ${storeOptions.path ?? 'PostgreSQL'}`);
    await ended;
    await stop();
    return 0;
  }

  const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { isInitializeRequest } = require('@modelcontextprotocol/sdk/types.js');
  const sessions = new Map(); // session id → { transport, server }
  closers.push(async () => {
    for (const { server } of sessions.values()) await server.close().catch(() => {});
  });
  const readBody = (req) => new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
  // On a loopback address, only requests addressed to it (Host) and from no web page of another
  // site (Origin): a page elsewhere cannot reach the server through DNS rebinding.
  const loopback = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);
  const boundPort = httpServer.address().port;
  const local = new Set(['127.0.0.1', 'localhost', '[::1]'].map((h) => `${h}:${boundPort}`));
  const allowed = (req) => {
    if (!loopback) return true;
    if (!local.has(String(req.headers.host))) return false;
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    try {
      return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(origin).hostname);
    } catch {
      return false;
    }
  };
  handle = async (req, res) => {
    try {
      if (!allowed(req)) return reply(res, 403, 'Forbidden: this server answers only requests addressed to its loopback address');
      if (new URL(req.url, 'http://localhost').pathname !== '/mcp') return reply(res, 404, 'Not found: the MCP endpoint is /mcp');
      const id = req.headers['mcp-session-id'];
      let body;
      if (req.method === 'POST') {
        const text = await readBody(req);
        try {
          body = JSON.parse(text);
        } catch {
          return reply(res, 400, 'Parse error: the body is not JSON');
        }
      }
      if (typeof id === 'string' && sessions.has(id)) return await sessions.get(id).transport.handleRequest(req, res, body);
      if (id === undefined && req.method === 'POST' && isInitializeRequest(body)) {
        const server = newServer();
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, { transport, server }),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
          server.close().catch(() => {});
        };
        await server.connect(transport);
        return await transport.handleRequest(req, res, body);
      }
      return reply(res, id === undefined ? 400 : 404, id === undefined ? 'Bad request: no session (start with initialize)' : 'Session not found');
    } catch (error) {
      if (!res.headersSent) reply(res, 500, `Internal error: ${error.message}`);
    }
  };
  print(`serving ${connectors.length} server(s) at http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${boundPort}/mcp; store: ${storeOptions.path ?? 'PostgreSQL'}`);
  await new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await stop();
  return 0;
}

/** `codemode-executor mcp [options]`: resolves the exit code. */
async function main(argv) {
  const exitSoon = () => setTimeout(() => process.exit(process.exitCode ?? 0), 2_000).unref();
  try {
    const options = parseArgs(argv);
    if (options.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (options.config === undefined) throw usageError('--config FILE is required (see --help)');
    const code = await serve(options);
    // Shut down: whatever a library left running does not keep the process.
    exitSoon();
    return code;
  } catch (error) {
    if (error instanceof CliError) {
      print(`${error.code}: ${error.message}`);
      return error.exitCode;
    }
    print(`ERR_CLI_FAILED: ${error && error.message ? error.message : String(error)}`);
    return 1;
  }
}

module.exports = { main, readConfig, defaultDataDir, USAGE };
