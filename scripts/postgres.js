#!/usr/bin/env node
'use strict';
// A PostgreSQL server for the tests and the bench: the one CODEMODE_PG_URL names, or else a
// throwaway cluster started here (initdb into a temporary directory, a free loopback port, no
// fsync) and removed by stop(). initdb refuses to run as root, so as root the cluster belongs to
// the `postgres` user. `node scripts/postgres.js` starts one and prints its URL until killed.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

// The server binaries: CODEMODE_PG_BIN, the PATH, or Debian's /usr/lib/postgresql/<version>/bin
// (newest first).
function binaries() {
  const candidates = [];
  if (process.env.CODEMODE_PG_BIN) candidates.push(process.env.CODEMODE_PG_BIN);
  for (const dir of (process.env.PATH || '').split(path.delimiter)) if (dir) candidates.push(dir);
  try {
    const versions = fs.readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => b - a);
    for (const v of versions) candidates.push(path.join('/usr/lib/postgresql', v, 'bin'));
  } catch {
    // no Debian packages
  }
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl')));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Runs a server binary, as the `postgres` user when this process is root.
function run(bin, args, asUser) {
  const [command, argv] = asUser === undefined ? [bin, args] : ['runuser', ['-u', asUser, '--', bin, ...args]];
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${path.basename(bin)} failed (${result.error ? result.error.message : `exit ${result.status}`}): ${(result.stderr || result.stdout || '').trim().slice(-2000)}`);
  }
  return result.stdout;
}

/**
 * The server to use: `{ url, stop(), started }`, or `{ skipped: why }` when CODEMODE_PG_URL is
 * unset and no cluster can be started here. `{ own: true }` always starts a cluster, which then
 * also has `halt()` (the server shuts down; its data stays) and `restart()`, for tests of a
 * database that goes away. `{ durable: true }`: the server's own defaults (every commit waits
 * for the disk), for measurements. `{ tls: { cert, key, only } }` (PEM texts): the server speaks
 * TLS with that certificate, and with `only` refuses connections without it.
 */
async function startPostgres({ own = false, durable = false, tls } = {}) {
  if (process.env.CODEMODE_PG_URL && !own) return { url: process.env.CODEMODE_PG_URL, stop() {}, started: false };
  const bin = binaries();
  if (bin === undefined) return { skipped: 'CODEMODE_PG_URL is unset and no initdb/pg_ctl was found (install postgresql, or set CODEMODE_PG_BIN)' };
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const user = root ? 'postgres' : undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-pg-'));
  const data = path.join(dir, 'data');
  if (root) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout);
    if (!Number.isInteger(uid) || uid <= 0) return { skipped: 'running as root and there is no postgres user to own the cluster' };
    fs.chownSync(dir, uid, uid);
  }
  const port = await freePort();
  const halt = () => {
    try {
      run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], user);
    } catch {
      // already stopped
    }
  };
  const stop = () => {
    halt();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // fsync off: a throwaway cluster's data need not survive the machine, only the server (a
  // commit is still written to the operating system before it is acknowledged, so a server the
  // tests stop the hard way keeps what it committed). Enough connections for every store a test
  // file keeps open.
  const fast = durable ? '' : ' -c fsync=off -c full_page_writes=off';
  const ssl = tls ? ' -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key' : '';
  const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${fast}${ssl} -c max_connections=400`;
  const restart = () => run(path.join(bin, 'pg_ctl'), ['-D', data, '-o', settings, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start'], user);
  try {
    run(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C'], user);
    if (tls) serveTls(data, tls, root);
    restart();
  } catch (error) {
    stop();
    return { skipped: `a throwaway cluster could not be started: ${error.message}` };
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, halt, restart, started: true, dir };
}

// The server's certificate and key in its data directory (the key readable by the server's
// user only, as PostgreSQL demands); with `only`, TCP connections must use TLS.
function serveTls(data, { cert, key, only }, root) {
  const owned = (file, text, mode) => {
    fs.writeFileSync(path.join(data, file), text, { mode });
    if (root) {
      const { uid, gid } = fs.statSync(data);
      fs.chownSync(path.join(data, file), uid, gid);
    }
  };
  owned('server.crt', cert, 0o644);
  owned('server.key', key, 0o600);
  if (only) {
    const hba = path.join(data, 'pg_hba.conf');
    fs.writeFileSync(hba, fs.readFileSync(hba, 'utf8').replace(/^host(\s)/gm, 'hostssl$1'));
  }
}

module.exports = { startPostgres };

if (require.main === module) {
  startPostgres().then((pg) => {
    if (pg.skipped) {
      console.error(`postgres: ${pg.skipped}`);
      process.exit(1);
    }
    console.log(pg.url);
    const end = () => {
      pg.stop();
      process.exit(0);
    };
    process.on('SIGINT', end);
    process.on('SIGTERM', end);
    setInterval(() => {}, 1 << 30);
  });
}
