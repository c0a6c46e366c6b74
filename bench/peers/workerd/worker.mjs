// The workerd side of the Cloudflare peer: a Worker that runs each POSTed program with
// Cloudflare's real DynamicWorkerExecutor (from @cloudflare/codemode), which loads a new
// dynamic Worker per execution through the LOADER (worker-loader) binding.
//
// Tools are host callbacks in the Node bench process: each `tools.<name>(...)` in the program
// travels sandbox → (Workers RPC, ToolDispatcher) → this Worker → HTTP over loopback (the HOST
// service binding, an external service) → the Node process, and back the same way. That is the
// shape a Node application driving workerd would have; it adds one loopback HTTP round trip per
// tool call, which the report states.

import { DynamicWorkerExecutor } from "codemode/index.js";

const TOOL_NAMES = ["get", "rows"];

function hostTools(env) {
  const call = async (name, args) => {
    const response = await env.HOST.fetch(`http://host/tool/${name}`, {
      method: "POST",
      body: JSON.stringify(args),
    });
    const reply = await response.json();
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply.result;
  };
  const fns = {};
  for (const name of TOOL_NAMES) fns[name] = (...args) => call(name, args);
  return fns;
}

export default {
  async fetch(request, env) {
    const { code } = await request.json();
    const executor = new DynamicWorkerExecutor({ loader: env.LOADER });
    const outcome = await executor.execute(code, [{ name: "tools", fns: hostTools(env) }]);
    return Response.json(outcome);
  },
};
