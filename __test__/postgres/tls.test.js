'use strict';
// TLS to the durable store's PostgreSQL database (issue 17): a server that accepts only TLS is
// reached with `sslmode=require` and the CA that signed its certificate (`ca`), and the store's
// connections are seen encrypted by the server itself (pg_stat_ssl); a certificate no trusted
// authority signed, or a URL that does not ask for TLS, is refused with ERR_STORE_UNAVAILABLE
// and a message that says why. Runs its own cluster with a certificate made here (openssl);
// only in npm test's PostgreSQL pass.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { IsolateExecutor, createCodemodeRuntime } = require('../../lib/index.js');
const { startPostgres } = require('../../scripts/postgres.js');

// A CA, and a server certificate it signed for localhost and 127.0.0.1.
function certificates() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-tls-'));
  const at = (name) => path.join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.crt'), '-days', '2', '-subj', '/CN=codemode test CA');
  openssl('req', ...ec, '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=localhost');
  fs.writeFileSync(at('ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', at('server.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at('server.crt'), '-days', '2', '-extfile', at('ext'));
  const read = (name) => fs.readFileSync(at(name), 'utf8');
  const out = { ca: read('ca.crt'), cert: read('server.crt'), key: read('server.key') };
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

const executor = new IsolateExecutor({ workers: 1 });
let pg;
let certs;
test.before(async () => {
  certs = certificates();
  pg = await startPostgres({ own: true, tls: { cert: certs.cert, key: certs.key, only: true } });
  if (pg.skipped) throw new Error(`these tests need a PostgreSQL cluster of their own: ${pg.skipped}`);
});
test.after(async () => {
  await executor.dispose();
  if (pg && !pg.skipped) pg.stop();
});

test('sslmode=require with the CA: runs go through, on connections the server sees encrypted', async () => {
  const runtime = createCodemodeRuntime({ executor, connectors: [], store: { url: `${pg.url}?sslmode=require&application_name=codemode-tls`, ca: certs.ca, schema: 'tls_ok' } });
  assert.equal((await runtime.execute({ code: 'async () => 6 * 7' })).result, 42);
  const sql = "SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'codemode-tls'";
  const [encrypted, all] = execFileSync('psql', ['-X', '-At', '-F', ' ', '-c', sql, `${pg.url}?sslmode=require`], { encoding: 'utf8' }).trim().split(' ').map(Number);
  assert.ok(all >= 1, 'the store holds a connection');
  assert.equal(encrypted, all, 'every connection of the store is encrypted');
});

test('a certificate no trusted authority signed is refused, saying so; so is a URL that does not ask for TLS', async () => {
  // The public authorities only: the test CA is not among them.
  const untrusted = createCodemodeRuntime({ executor, connectors: [], store: { url: `${pg.url}?sslmode=require`, schema: 'tls_no' } });
  await assert.rejects(untrusted.execute({ code: 'async () => 1' }), (e) => e.code === 'ERR_STORE_UNAVAILABLE' && /certificate/i.test(e.message) && /UnknownIssuer/.test(e.message));
  // Plain TCP (the default): this server takes TLS connections only.
  const plain = createCodemodeRuntime({ executor, connectors: [], store: { url: pg.url, schema: 'tls_plain' } });
  await assert.rejects(plain.execute({ code: 'async () => 1' }), (e) => e.code === 'ERR_STORE_UNAVAILABLE' && /no encryption/.test(e.message));
  // A CA that is not one.
  assert.throws(() => createCodemodeRuntime({ executor, connectors: [], store: { url: pg.url, ca: 'not a certificate' } }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /ca must be PEM certificates/.test(e.message));
});
