'use strict';
// node:vm: a fresh context per execution in the bench process's own isolate. Not a sandbox (a
// context shares the heap, the event loop and the process with the host, and is escapable); it
// is the floor: what a new realm costs without any isolation.

const vm = require('node:vm');
const { wrapProgram } = require('./shim.js');
const { dispatchJson } = require('../workloads.js');

async function create() {
  return {
    version: `node ${process.versions.node} (V8 ${process.versions.v8})`,
    notes: 'new vm.Context per run; tool calls: a host async function put in the context',
    execute(code) {
      const context = vm.createContext({ __host: dispatchJson });
      return vm.runInContext(wrapProgram(code), context);
    },
    async dispose() {},
  };
}

module.exports = { create };
