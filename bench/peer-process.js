'use strict';
// The orchestrator's handle on one peer child (child.js): start it, send it a command and await
// the answer, stop it. Every child gets the same Node flags: --no-node-snapshot (isolated-vm
// requires it; the others get it too so no peer runs under a different Node) and --expose-gc
// (child.js collects garbage between batches).

const path = require('node:path');
const { fork } = require('node:child_process');

const CHILD = path.join(__dirname, 'child.js');
const NODE_FLAGS = ['--no-node-snapshot', '--expose-gc'];

class PeerProcess {
  #child;
  #waiting = [];
  #exitError = null;
  #ready;

  constructor(id, overrides) {
    this.id = id;
    const args = [id];
    if (overrides) args.push(JSON.stringify(overrides));
    this.#child = fork(CHILD, args, { execArgv: NODE_FLAGS, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.pid = this.#child.pid;
    this.#child.on('message', (message) => {
      const next = this.#waiting.shift();
      if (next) next(message);
    });
    this.#child.on('exit', (code, signal) => {
      this.#exitError = new Error(`peer ${id} exited (${signal || code})`);
      for (const next of this.#waiting.splice(0)) next({ ok: false, error: this.#exitError.message });
    });
    // Registered now: the child's first message may arrive before anyone calls ready().
    this.#ready = this.#reply();
    this.#ready.catch(() => {});
  }

  #reply() {
    if (this.#exitError) return Promise.reject(this.#exitError);
    return new Promise((resolve, reject) => {
      this.#waiting.push((message) => (message.ok ? resolve(message.ready || message.result) : reject(new Error(message.error))));
    });
  }

  // Resolves with { version, notes, workloads } once the peer is built.
  ready() {
    return this.#ready;
  }

  request(message) {
    const answer = this.#reply();
    this.#child.send(message);
    return answer;
  }

  // Asks the child to dispose its peer and exit; kills it if it has not within 10 s.
  stop() {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#child.kill('SIGKILL'), 10_000);
      this.#child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      try {
        this.#child.send({ type: 'exit' });
      } catch {
        this.#child.kill('SIGKILL');
      }
    });
  }
}

module.exports = { PeerProcess };
