'use strict';
// An entry point of an engine process ('process' isolation): `node lib/executor/engine.js`
// speaks the executor protocol (docs/protocol.md) on its stdin/stdout. The executor itself starts
// engines from the addon's own file instead (engine-command.js), so a bundled or relocated app
// needs nothing of lib/; this file is for tools and tests that start an engine by hand. All the work happens in the addon's threads; this main thread only waits
// in serveEngine() until the host closes the pipe or asks for a shutdown; serveEngine ends the
// process itself (it never returns).

const { serveEngine } = require('../native.js');

serveEngine();
