'use strict';
// `@supolka/codemode-executor/console`: the console as a request handler an application mounts
// (handler.js), over the application's own runtime handle. The standalone command is
// lib/cli/console.js.
const { consoleHandler } = require('./handler.js');

module.exports = { consoleHandler };
