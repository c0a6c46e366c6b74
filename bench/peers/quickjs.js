'use strict';
// quickjs-emscripten: a new QuickJS runtime and context per execution (QuickJS compiled to
// WebAssembly, release-sync variant). The host callback is promise-based rather than
// asyncified: `__host` returns a QuickJS promise that the host resolves when its async tool
// settles, then runs the runtime's pending jobs so the program continues. This is the variant
// the library recommends for async host functions that do not need to block the guest.

const { getQuickJS } = require('quickjs-emscripten');
const { wrapProgram } = require('./shim.js');
const { dispatchJson } = require('../workloads.js');

const MEMORY_LIMIT_BYTES = 128 * 1024 * 1024; // the same budget as our executor's default

// Runs the jobs a settled promise unblocked; an exception escaping a job is surfaced through the
// program's own promise, so only its handle needs freeing here.
function pump(runtime) {
  const outcome = runtime.executePendingJobs();
  if (outcome.error) outcome.error.dispose();
}

async function runOnce(QuickJS, code) {
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(MEMORY_LIMIT_BYTES);
  const context = runtime.newContext();
  // Replies that arrive after the run ended (none in these workloads) must not touch a freed
  // runtime.
  let alive = true;
  const pending = new Set();
  try {
    const host = context.newFunction('__host', (nameHandle, argsHandle) => {
      const name = context.getString(nameHandle);
      const argsJson = context.getString(argsHandle);
      const deferred = context.newPromise();
      pending.add(deferred);
      dispatchJson(name, argsJson).then((reply) => {
        if (!alive) return;
        const value = context.newString(reply);
        deferred.resolve(value);
        value.dispose();
        pending.delete(deferred);
        deferred.dispose();
        pump(runtime);
      });
      return deferred.handle;
    });
    context.setProp(context.global, '__host', host);
    host.dispose();

    const promise = context.unwrapResult(context.evalCode(wrapProgram(code), 'program.js'));
    const settled = context.resolvePromise(promise);
    promise.dispose();
    pump(runtime);
    const outcome = await settled;
    if (outcome.error) {
      const error = context.dump(outcome.error);
      outcome.error.dispose();
      throw new Error(typeof error === 'object' && error !== null ? error.message : String(error));
    }
    const value = context.dump(outcome.value);
    outcome.value.dispose();
    return value;
  } finally {
    alive = false;
    for (const deferred of pending) deferred.dispose();
    context.dispose();
    runtime.dispose();
  }
}

async function create() {
  const QuickJS = await getQuickJS();
  const version = require('quickjs-emscripten/package.json').version;
  return {
    version: `quickjs-emscripten ${version} (release-sync WebAssembly)`,
    notes: 'new QuickJS runtime + context per run; tool calls: host function returning a QuickJS promise',
    execute: (code) => runOnce(QuickJS, code),
    async dispose() {},
  };
}

module.exports = { create };
