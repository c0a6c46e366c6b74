'use strict';
// The Cloudflare form of execute (docs/cloudflare-compat.md §2): execute(code, providersOrFns, options?) with
// Cloudflare's pre-flight validation, messages, transport codec and result shape, on top of the
// executor's native runner.
const { transportStringify, transportParse, cloneStringify, cloneParse, CONTROL_KEY } = require('./codec.js');
const { programForRun } = require('./normalize.js');
const { unwrapProgram } = require('../program-text.js');
const { nameProblem, sanitizeToolName } = require('./names.js');
const { invalidArgument } = require('../errors.js');
const { messageOf } = require('../util.js');
const { EXECUTION_ID } = require('../events.js');

// The key of a Cloudflare-form execute() option (not in Cloudflare's form) that the durable
// runtime passes: a function called with the run's RunSecrets (lib/executor/secrets.js) when the
// run starts, so a pass redacts what a connector returns with the values this run knows before
// it records it. Declared here, where the option is read, so cloudflare/ needs nothing of
// executor/ (which builds on it).
const RUN_SECRETS = Symbol('codemode.runSecrets');

const DEPRECATION = '[@cloudflare/codemode] Passing raw fns to executor.execute() is deprecated. ' +
  'Use ResolvedProvider[] instead. This will be removed in the next major version.';

// Pre-flight validation, in the order of docs/cloudflare-compat.md §2.3 (first failure wins). Returns
// { error } or { namespaces, tables }.
function prepare(providers, connectors) {
  const seen = new Set();
  for (const provider of providers) {
    const name = provider && provider.name;
    const problem = nameProblem('Provider', name);
    if (problem) return { error: problem };
    if (seen.has(name)) return { error: `Duplicate provider name "${name}"` };
    seen.add(name);
  }
  for (const connector of connectors) {
    const name = connector && connector.name;
    const problem = nameProblem('Connector', name);
    if (problem) return { error: problem };
    if (seen.has(name)) return { error: `Duplicate name "${name}" (connector clashes with provider)` };
    seen.add(name);
  }
  const namespaces = [];
  const tables = new Map();
  for (const provider of providers) {
    const fns = new Map();
    const original = new Map();
    const record = provider.fns && typeof provider.fns === 'object' ? provider.fns : {};
    for (const key of Object.keys(record)) {
      const safe = sanitizeToolName(key);
      if (original.has(safe)) {
        return { error: `Tool names "${original.get(safe)}" and "${key}" both sanitize to "${safe}" in provider "${provider.name}"` };
      }
      original.set(safe, key);
      fns.set(safe, record[key]);
    }
    const space = { name: provider.name, kind: 'provider', tools: [...fns.keys()] };
    if (typeof provider.prelude === 'string') space.prelude = provider.prelude;
    namespaces.push(space);
    tables.set(provider.name, { kind: 'provider', fns });
  }
  for (const connector of connectors) {
    namespaces.push({ name: connector.name, kind: 'connector' });
    tables.set(connector.name, { kind: 'connector', binding: connector.binding });
  }
  return { namespaces, tables };
}

// Answers one provider call the way Cloudflare's ToolDispatcher does.
async function callProvider(fns, tool, argsJson) {
  const fn = fns.get(tool);
  if (fn === undefined) return transportStringify({ error: `Tool "${tool}" not found` });
  try {
    let args = argsJson ? transportParse(argsJson) : [];
    if (!Array.isArray(args)) args = [args];
    const result = await fn(...args);
    return transportStringify({ result });
  } catch (error) {
    return transportStringify({ error: messageOf(error) });
  }
}

// Answers one connector call: the binding never rejects; a throw becomes an error marker.
async function callConnector(binding, method, argsJson) {
  try {
    const [first] = cloneParse(argsJson) || [];
    return cloneStringify(await binding.callTool(method, first));
  } catch (error) {
    return cloneStringify({ [CONTROL_KEY]: 'error', message: messageOf(error) });
  }
}

// `sourceBreach`: the executor's maxCodeBytes message for `code`, when it is too large; checked
// before normalizeCode parses it (a parse of megabytes of source costs the host hundreds of MB).
function execute(run, code, providersOrFns, options, sourceBreach) {
  if (sourceBreach !== undefined) return Promise.resolve({ result: undefined, error: sourceBreach, logs: [] });
  let providers;
  if (Array.isArray(providersOrFns)) {
    providers = providersOrFns;
  } else {
    console.warn(DEPRECATION);
    providers = [{ name: 'codemode', fns: providersOrFns || {} }];
  }
  const connectors = (options && Array.isArray(options.connectors)) ? options.connectors : [];
  const prepared = prepare(providers, connectors);
  if (prepared.error !== undefined) return Promise.resolve({ result: undefined, error: prepared.error });
  const { namespaces, tables } = prepared;
  const dispatch = (name, tool, argsJson) => {
    const entry = tables.get(name);
    if (entry === undefined) return transportStringify({ error: `Unknown namespace ${name}` });
    return entry.kind === 'provider' ? callProvider(entry.fns, tool, argsJson) : callConnector(entry.binding, tool, argsJson);
  };
  // `options.signal` (an AbortSignal; not in Cloudflare's form) cancels the run as in the
  // native form: the promise rejects with the signal's reason.
  const signal = options ? options.signal : undefined;
  // `options.params` and `options.onLog` (not in Cloudflare's form) as in the native form.
  const params = options ? options.params : undefined;
  const onLog = options ? options.onLog : undefined;
  // `options.replay` (not in Cloudflare's form): time and randomness that repeat on every pass.
  const replay = options ? options.replay : undefined;
  // `options.secrets` (not in Cloudflare's form): this run's secrets for fetch (network guide).
  const secrets = options ? options.secrets : undefined;
  // `options.onEvent` (lib/events.js) as in the native form; the durable runtime names the
  // execution a pass belongs to under EXECUTION_ID.
  const onEvent = options ? options.onEvent : undefined;
  const executionId = options ? options[EXECUTION_ID] : undefined;
  // `options[RUN_SECRETS]` (the durable runtime's): told the run's secrets (secrets.js).
  const onSecrets = options ? options[RUN_SECRETS] : undefined;
  const program = programForRun(unwrapProgram(code));
  return run({ ...program, params, onLog, onEvent, executionId, replay, secrets, onSecrets, namespaces, resultMode: 'clone', dispatch, signal }).then((report) => {
    const logs = report.logs;
    if (report.error !== undefined && report.error !== null) return { result: undefined, error: report.error, logs };
    return { result: cloneParse(report.resultJson), logs };
  });
}

// modules: extra ES modules for dynamic import(specifier). `executor.js` is reserved for the
// harness in Cloudflare and silently dropped. Returns the modules to send, or undefined.
function checkModules(modules) {
  if (modules === undefined || modules === null) return undefined;
  if (typeof modules !== 'object' || Array.isArray(modules)) {
    throw invalidArgument('modules must be an object mapping specifiers to module source');
  }
  const out = {};
  for (const [specifier, source] of Object.entries(modules)) {
    if (specifier === 'executor.js') continue;
    if (typeof source !== 'string') throw invalidArgument(`modules["${specifier}"] must be module source text`);
    out[specifier] = source;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

module.exports = { execute, checkModules, DEPRECATION, RUN_SECRETS };
