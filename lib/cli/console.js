'use strict';
// `codemode-executor console --store <file | postgres URL> [--port N] [--host H] [--name N]`:
// the console as a local web server over a store, without the application's connectors.
// Approvals are recorded and the application's runtime runs them when it recovers runs
// (lib/console/store-source.js); rollback is the application's (docs/guides/console.md).
const http = require('node:http');
const fs = require('node:fs');
const net = require('node:net');
const { parseArgs } = require('node:util');
const { makeHandler } = require('../console/handler.js');
const { storeSource } = require('../console/store-source.js');

const USAGE = `usage: codemode-executor console --store <file | postgres URL> [options]

Serves a web page to review the durable runtime's executions, approve or reject what waits,
and read snippets. Every request needs the printed URL (it holds a random token).

options:
  --store <file | url>   the runtime's SQLite file (it must exist) or a postgres:// URL
  --name <name>          the runtime name (createCodemodeRuntime's name; default "default")
  --schema <name>        with a postgres:// URL: the schema the application's store option
                         names (default: the server's search_path)
  --port <n>             the port (default 0: any free port)
  --host <address>       the address to listen on (default 127.0.0.1; anything but a loopback
                         address makes the console reachable from other machines)
  -h, --help             this text

Approving here records the decision; the application's runtime (which has the connectors)
runs the approved call when it next recovers runs: runtime.recover(), or recoverEveryMs.
Rollback needs the connectors too: do it from the application, or mount the console there
(consoleHandler from @supolka/codemode-executor/console).
`;

const NAME_PATTERN = /^[a-zA-Z0-9_.-]+$/;

function usageError(message) {
  process.stderr.write(`codemode-executor console: ERR_CLI_USAGE: ${message}\n\n${USAGE}`);
  return 2;
}

function isLoopback(host) {
  return host === 'localhost' || host === '::1' || (net.isIPv4(host) && host.startsWith('127.'));
}

async function main(argv, { signal } = {}) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        store: { type: 'string' },
        name: { type: 'string', default: 'default' },
        schema: { type: 'string' },
        port: { type: 'string', default: '0' },
        host: { type: 'string', default: '127.0.0.1' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return usageError(error.message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.store === undefined || values.store === '') return usageError('--store is required');
  const isUrl = /^postgres(ql)?:\/\//.test(values.store);
  if (!isUrl) {
    if (values.store === ':memory:') return usageError('--store :memory: would be a new, empty store; name the file the application uses');
    if (!fs.existsSync(values.store) || !fs.statSync(values.store).isFile()) return usageError(`no store file at ${values.store} (the console opens the application's file, it does not create one)`);
  }
  if (values.schema !== undefined && !isUrl) return usageError('--schema applies to a postgres:// store only');
  if (!NAME_PATTERN.test(values.name)) return usageError(`--name "${values.name}" is not a runtime name (letters, digits, "_", "-" or ".")`);
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) return usageError(`--port must be a number from 0 to 65535 (got "${values.port}")`);

  const source = storeSource(values.store, values.name, values.schema);
  await source.check(); // a store that cannot be read fails here, with its code
  const handler = makeHandler(source, {});
  const server = http.createServer(handler);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, values.host, resolve);
  });
  const address = server.address();
  const host = address.family === 'IPv6' || address.family === 6 ? `[${address.address}]` : address.address;
  const where = isUrl ? `${values.store.replace(/\/\/[^@/]*@/, '//…@')}${values.schema === undefined ? '' : ` (schema ${values.schema})`}` : values.store;
  if (!isLoopback(values.host)) {
    process.stderr.write(`codemode-executor console: listening on ${values.host}, not a loopback address: anyone who can reach it and has the URL can approve runs\n`);
  }
  process.stdout.write(`codemode console for runtime "${values.name}" in ${where}\n  http://${host}:${address.port}${handler.path}\n`);

  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      server.close(() => resolve(0));
      server.closeAllConnections?.();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (signal) signal.addEventListener('abort', stop, { once: true });
  });
}

module.exports = { main };
