'use strict';
// Plain node: the program string evaluated in the bench process's own global scope, no
// sandbox, no new context. Only the CPU loop (W3) runs here; it is the reference its ratio is
// taken against.

async function create() {
  return {
    version: `node ${process.versions.node} (V8 ${process.versions.v8})`,
    notes: 'indirect eval of the program in the main realm; W3 only',
    workloads: ['W3'],
    execute(code) {
      // oxlint-disable-next-line no-eval -- this peer is plain eval, the reference for the CPU loop
      return (0, eval)(`(${code})`)();
    },
    async dispose() {},
  };
}

module.exports = { create };
