'use strict';
// The command line that starts an engine process ('process' isolation): the running runtime's
// own executable, loading the addon from the file it was itself loaded from (addonPath(), which
// the dynamic loader reports) and serving the protocol. Nothing of lib/ has to exist beside it,
// so an app bundled with esbuild or copied elsewhere still starts its engines, and so does an
// app whose entry point is an ES module (Deno reads a .js entry as ESM).
const { addonPath } = require('../native.js');

function engineCommand() {
  const addon = addonPath();
  if (typeof addon !== 'string') {
    throw new Error('isolation \'process\': the addon cannot tell where it was loaded from, so no engine process can be started (use isolation \'thread\')');
  }
  const file = JSON.stringify(addon);
  // Deno: `deno eval` runs ES module code with every permission (an engine needs FFI to load
  // the addon); `require` comes from node:module.
  if (typeof globalThis.Deno === 'object' && globalThis.Deno !== null) {
    return [process.execPath, 'eval', `import { createRequire } from 'node:module'; createRequire(import.meta.url)(${file}).serveEngine();`];
  }
  // Node and Bun: `-e` evaluates a CommonJS script.
  return [process.execPath, '-e', `require(${file}).serveEngine()`];
}

module.exports = { engineCommand };
