'use strict';
// 'process' isolation on Node: the engines' output is read on this thread, by Node's own event
// loop, instead of by a reader thread per engine in the addon (src/process/host/feed.rs). A
// frame from an engine (a tool call above all) then wakes one thread of this process, the one
// that answers it, where the reader thread would have woken first and then woken this one.
// Bun and Deno keep the reader threads: their runtimes are not asked to watch a raw pipe.

const net = require('node:net');
const { messageOf } = require('../util.js');

// Whether this runtime reads the engines' output itself. CODEMODE_ENGINE_OUTPUT=thread keeps
// the reader threads on Node too (the tests run that arrangement as well).
function readsEngineOutput() {
  if (process.env.CODEMODE_ENGINE_OUTPUT === 'thread') return false;
  if (typeof process.versions.bun === 'string') return false;
  if (typeof globalThis.Deno === 'object' && globalThis.Deno !== null) return false;
  return true;
}

// The callback the addon calls with each new engine's id and the descriptor of its stdout,
// which this side then owns. `native()` is the executor's NativeExecutor (the first call comes
// after the constructor has returned: the addon queues it for this thread).
function engineOutputReader(native) {
  return (engineId, fd) => {
    let ended = false;
    const end = (problem) => {
      if (ended) return;
      ended = true;
      native().engineEnded(engineId, problem);
    };
    let socket;
    try {
      socket = new net.Socket({ fd, readable: true, writable: false });
    } catch (error) {
      end(`the engine process's output cannot be read: ${messageOf(error)}`);
      return;
    }
    // An engine's pipe never keeps the process alive: a run in flight does (its promise).
    socket.unref();
    socket.on('data', (chunk) => {
      if (!ended) native().engineInput(engineId, chunk);
    });
    // The output closed: the engine exited (or is exiting); the addon reaps it and explains.
    socket.on('end', () => end(null));
    socket.on('close', () => end(null));
    socket.on('error', () => end(null));
  };
}

module.exports = { readsEngineOutput, engineOutputReader };
