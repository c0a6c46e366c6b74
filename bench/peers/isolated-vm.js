'use strict';
// isolated-vm: a new ivm.Isolate (and context) per execution, disposed afterwards. The host
// callback is an ivm.Reference to an async function; the sandbox calls it with
// `apply(..., { result: { promise: true, copy: true } })`, which gives the isolate a promise that
// settles when the host's promise does. The program's result is copied out (structured clone).
// Needs Node started with --no-node-snapshot (run.js starts every child that way).

const ivm = require('isolated-vm');
const { wrapProgram } = require('./shim.js');
const { dispatchJson } = require('../workloads.js');

const MEMORY_LIMIT_MB = 128; // the same heap budget as our executor's default

async function create() {
  const version = require('isolated-vm/package.json').version;
  return {
    version: `isolated-vm ${version}`,
    notes: 'new Isolate + context per run; tool calls: ivm.Reference.apply with result.promise',
    async execute(code) {
      const isolate = new ivm.Isolate({ memoryLimit: MEMORY_LIMIT_MB });
      try {
        const context = await isolate.createContext();
        const source = `const __host = (name, argsJson) => $0.apply(undefined, [name, argsJson], { result: { promise: true, copy: true } });
return ${wrapProgram(code)};`;
        return await context.evalClosure(source, [dispatchJson], {
          arguments: { reference: true },
          result: { promise: true, copy: true },
        });
      } finally {
        isolate.dispose();
      }
    },
    async dispose() {},
  };
}

module.exports = { create };
