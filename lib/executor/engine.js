'use strict';
// The entry point of an engine process ('process' isolation). The host starts it with
// `node lib/executor/engine.js`, speaks the executor protocol (docs/protocol.md) on its stdin/stdout,
// and supervises it. All the work happens in the addon's threads; this main thread only waits
// in serveEngine() until the host closes the pipe or asks for a shutdown; serveEngine ends the
// process itself (it never returns).

const { serveEngine } = require('../../binding.js');

serveEngine();
