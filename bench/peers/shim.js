'use strict';
// The sandbox-side wrapper for peers that have no tool namespace of their own (node:vm,
// isolated-vm, QuickJS). It binds `tools.<name>(...args)` to one host function
// `__host(name, argsJson) → Promise<replyJson>` that each peer provides in its own way, and
// calls the program. Values cross as JSON text in both directions, as in our executor's native
// form, so every sandbox does the same serialization work per call.

const { TOOL_NAMES } = require('../workloads.js');

// `code` is an expression evaluating to a function; it is spliced into a scope where `tools`
// is a local, so the program sees it as a free variable, as it would a global namespace.
function wrapProgram(code) {
  const bindings = TOOL_NAMES.map((name) => `${JSON.stringify(name)}: (...args) => __call(${JSON.stringify(name)}, args)`);
  return `(() => {
  const __call = async (name, args) => {
    const reply = JSON.parse(await __host(name, JSON.stringify(args)));
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply.result;
  };
  const tools = { ${bindings.join(', ')} };
  return (${code})();
})()`;
}

module.exports = { wrapProgram };
