'use strict';
// The native addon, loaded through the generated loader (binding.js). Every file of lib/
// reaches the addon through here, so a missing or unloadable binary fails with one clear
// error (lib/platform.js) wherever it is first needed.
const { loadFailure } = require('./platform.js');

let native;
try {
  native = require('../binding.js');
} catch (error) {
  throw loadFailure(error);
}

module.exports = native;
