'use strict';
// Cloudflare's DynamicWorkerExecutor under workerd, driven from Node over loopback HTTP.
// This process starts `workerd serve --experimental` (the npm `workerd` binary) with the config
// from workerd/config.js, posts each program to it, and serves the tool calls the Worker makes
// back to it (workerd/worker.mjs explains the path). workerd is a child of this process, so the
// bench's /proc accounting charges its CPU and RSS to this peer.

const http = require('node:http');
const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { writeConfig, packageDir } = require('./workerd/config.js');
const { dispatchJson } = require('../workloads.js');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// The loopback server answering tool calls: POST /tool/<name> with the JSON argument array.
function startToolServer() {
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(req.url.replace(/^\/tool\//, ''));
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const reply = await dispatchJson(name, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function post(agent, port, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: '/', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`workerd answered ${res.statusCode}: ${text.slice(0, 500)}`));
        else resolve(text);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function waitUntilServing(agent, port, child, stderr) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}: ${stderr().slice(-2000)}`);
    try {
      return await post(agent, port, JSON.stringify({ code: 'async () => 1' }));
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`workerd did not serve within 30 s: ${error.message}; ${stderr().slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function create() {
  const binary = path.join(packageDir('workerd'), 'bin', 'workerd');
  const toolServer = await startToolServer();
  const listenPort = await freePort();
  const config = writeConfig({ listenPort, hostPort: toolServer.address().port });
  const child = spawn(binary, ['serve', '--experimental', config.file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errText = '';
  child.stderr.on('data', (chunk) => { errText = (errText + chunk).slice(-20_000); });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  try {
    await waitUntilServing(agent, listenPort, child, () => errText);
  } catch (error) {
    child.kill('SIGKILL');
    toolServer.close();
    throw error;
  }
  const workerdVersion = require(path.join(packageDir('workerd'), 'package.json')).version;
  const codemodeVersion = require(path.join(packageDir('@cloudflare/codemode'), 'package.json')).version;
  return {
    version: `@cloudflare/codemode ${codemodeVersion} DynamicWorkerExecutor on workerd ${workerdVersion}`,
    notes: 'one HTTP request per run; DynamicWorkerExecutor loads a new dynamic Worker per run; tool calls: Workers RPC to the host Worker, then loopback HTTP to the Node process',
    async execute(code) {
      const outcome = JSON.parse(await post(agent, listenPort, JSON.stringify({ code })));
      if (outcome.error !== undefined) throw new Error(outcome.error);
      return outcome.result;
    },
    async dispose() {
      agent.destroy();
      child.kill('SIGTERM');
      toolServer.close();
      fs.rmSync(config.dir, { recursive: true, force: true });
    },
  };
}

module.exports = { create };
