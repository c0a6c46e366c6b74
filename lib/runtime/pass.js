'use strict';
// One pass of a durable execution (docs/cloudflare-compat.md §6.7): the connectors' setup, the
// bindings and the `codemode` platform provider that route every call through the store, and the
// outcome read back from storage. Also the one cache policy for connector setup (SetupCache).

const { durableConstants } = require('../native.js');
const { createHash } = require('node:crypto');
const { snippetProgram, READS_PROGRAMS } = require('../cloudflare/normalize.js');
const { runCode } = require('../cloudflare/run-code.js');
const { messageOf } = require('../util.js');
const { PROGRAM_GATE } = require('./store.js');
const { searchConnectors, describeWithPackages } = require('./search.js');
const { DeliveryOrder } = require('./delivery.js');
const { PACKAGE_VERSIONS, installedPackages } = require('../packages.js');
const { CodemodeExecutorError, CODES } = require('../errors.js');

// The step connector's name comes from the store (src/store), the control markers from the
// codec both sides load.
const { stepConnector: STEP_CONNECTOR } = durableConstants();
const { CONTROL_KEY, PAUSE_MARKER: PAUSE_SENTINEL } = require('../cloudflare/codec.js');

// In the sandbox: `codemode.step(name, fn)` records fn's value once and replays it afterwards.
const STEP_PRELUDE = `
codemode.step = async (name, fn) => {
  const decision = await codemode.__stepDecide(name);
  if (decision.kind === "replay") return decision.result;
  if (decision.kind !== "execute") throw new Error("${PAUSE_SENTINEL}");
  const value = await fn();
  await codemode.__stepRecord(decision.seq, value, String(name));
  return value;
};`;

function missingConnectors(required, available) {
  return (required || []).filter((name) => !available.has(name));
}

function requiresMessage(subject, missing) {
  return `${subject} requires connector(s) ${missing.map((m) => `"${m}"`).join(', ')} that are not configured on this runtime.`;
}

// ---- Connector setup ---------------------------------------------------------------------------

async function loadSetup(connectors) {
  const connectorsByName = new Map();
  const descriptions = [];
  const annotations = new Map();
  for (const connector of connectors) {
    const name = connector.name();
    const description = await connector.describe();
    connectorsByName.set(name, connector);
    descriptions.push(description);
    for (const [method, annotation] of Object.entries(description.annotations || {})) {
      annotations.set(`${name}.${method}`, annotation);
    }
  }
  return { connectorsByName, descriptions, annotations };
}

// Connector setup loaded on first use and kept; a failed load is not kept (a long-lived Node
// process would otherwise be stuck with one transient describe() failure). The handle holds one
// for search() and describe() (once per handle, §6.9) and each tool object its own (once per tool
// object, §6.8); approve() deliberately loads fresh setup instead (see there).
class SetupCache {
  #connectors;
  #setup;

  constructor(connectors) {
    this.#connectors = connectors;
  }

  /** @returns {Promise<{ connectorsByName: Map, descriptions: object[], annotations: Map }>} */
  get() {
    if (this.#setup === undefined) {
      this.#setup = loadSetup(this.#connectors);
      this.#setup.catch(() => { this.#setup = undefined; });
    }
    return this.#setup;
  }
}

// ---- One pass (§6.7) -------------------------------------------------------------------------

async function eachConnector(connectors, hook) {
  await Promise.all([...connectors].map(async (connector) => {
    try {
      await hook(connector);
    } catch {
      // Hooks never turn a finished run into a failure.
    }
  }));
}

function withGlobalsHint(message, setup) {
  if (!/\bis not defined\b/.test(message)) return message;
  return `${message} (the only globals available in the sandbox are: ${[...setup.connectorsByName.keys(), 'codemode'].join(', ')})`;
}

// A store that cannot be reached is a fault of the machinery, not of the program: the pass
// stops where it is (the program is paused, as for an approval) and the run keeps its state.
const STORE_UNAVAILABLE = CODES.STORE_UNAVAILABLE;
const storeUnreachable = (error) => error !== null && typeof error === 'object' && error.code === STORE_UNAVAILABLE;

// Keeps `call` (a promise) in `pass.inFlight` until it settles, and returns it.
function track(pass, call) {
  pass.inFlight.add(call);
  call.then(() => pass.inFlight.delete(call), () => pass.inFlight.delete(call));
  return call;
}

// Waits until every call the pass started has settled (its result recorded, or its failure
// reported), calls started meanwhile included.
async function callsEnded(pass) {
  while (pass.inFlight.size > 0) await Promise.allSettled(pass.inFlight);
}

// Hands a recorded result to the program in its turn (lib/runtime/delivery.js), with the time it
// was recorded, which becomes the program's clock (the sandbox takes the value out of the
// marker) when the pass replays deterministically. `delivery`: { ordinal, at }, or undefined
// for a result that is not recorded.
async function handOver(pass, delivery, value) {
  await pass.order.turn(delivery === undefined ? undefined : delivery.ordinal);
  if (delivery === undefined || !pass.replays) return value;
  return { [CONTROL_KEY]: 'value', value, at: delivery.at };
}

// Connector bindings for one pass: each call takes the next seq, asks the store, and runs,
// replays or pauses; results reach the program in the order the store recorded them. A binding
// never rejects: failures become the error marker, and a store that cannot be reached pauses the program and is kept in `pass.storeFault`. Calls under way are
// kept in `pass.inFlight`: the pass answers, and lets the run go, only once they have ended and
// been recorded, however it ends (issue 33).
function connectorBindings(setup, facet, id, cursor, pass) {
  return setup.descriptions.map((description) => ({
    name: description.name,
    binding: {
      callTool: (method, args) => track(pass, (async () => {
        // The place of a result recorded by an earlier pass, once decided.
        let place;
        try {
          const seq = cursor.next();
          const annotation = setup.annotations.get(`${description.name}.${method}`) || {};
          const decision = await facet.decide(id, seq, description.name, method, args, annotation.requiresApproval === true, annotation.replay === 'reexecute', annotation.idempotent === true);
          place = decision.delivery;
          pass.order.reached(place && place.ordinal);
          if (decision.kind === 'replay') return await handOver(pass, decision.delivery, decision.result);
          if (decision.kind === 'pause') return { [CONTROL_KEY]: 'pause' };
          const connector = setup.connectorsByName.get(description.name);
          // A copy of a secret's value in the result is redacted before it is recorded: the
          // durable log, its replays and everything read from it only hold the placeholder.
          const result = redactSecrets(pass, await connector.executeTool(method, args, callContext(id, seq)));
          // A read re-executed on every pass keeps the place it took first.
          const delivery = await facet.recordResult(id, seq, description.name, method, result);
          place = undefined;
          return await handOver(pass, delivery ?? decision.delivery, result);
        } catch (error) {
          if (place !== undefined) pass.order.passOver(place.ordinal);
          if (storeUnreachable(error)) {
            pass.storeFault ??= error;
            return { [CONTROL_KEY]: 'pause' };
          }
          const shown = redactSecrets(pass, error);
          console.error(`codemode: ${description.name}.${method} failed (execution ${id})`, shown);
          return { [CONTROL_KEY]: 'error', message: messageOf(shown) };
        }
      })()),
    },
  }));
}

// `value` with the values of the secrets the pass's runs know replaced by their placeholders
// (lib/executor/secrets.js): each run of the pass (the program's, a snippet's) reports its
// secrets when it starts.
function redactSecrets(pass, value) {
  let out = value;
  for (const secrets of pass.secrets) out = secrets.redactValue(out);
  return out;
}

// What a tool's execute and revert are told about the call: the same on every pass of the
// execution, so a retried call in doubt can be recognised by its idempotency key.
function callContext(executionId, seq) {
  return { executionId, seq, idempotencyKey: `${executionId}:${seq}` };
}

// A step's store operation: a store that cannot be reached stops the pass as a binding's does
// (the step's prelude reads anything but a decision as a pause).
async function stepStore(pass, operation) {
  try {
    return await operation();
  } catch (error) {
    if (!storeUnreachable(error)) throw error;
    pass.storeFault ??= error;
    return { kind: 'pause' };
  }
}

function platformProvider(setup, bindings, facet, executor, id, cursor, pass) {
  const provider = {
    name: 'codemode',
    prelude: STEP_PRELUDE,
    fns: {
      search: async (query) => searchConnectors(String(query), setup.descriptions, await facet.snippets(), installedPackages(executor)),
      describe: async (target) => describeWithPackages(String(target), setup.descriptions, await facet.snippets(), executor),
      // Tracked as the pass's calls are: a snippet's run is a program of its own, whose calls
      // must not start after the pass has ended.
      run: (...args) => track(pass, (async () => {
        const name = String(args[0]);
        const snippet = await facet.snippet(name);
        if (snippet === undefined) return { error: `Snippet "${args[0]}" not found.` };
        const missing = missingConnectors(snippet.connectors, new Set(setup.connectorsByName.keys()));
        if (missing.length > 0) return { error: requiresMessage(`Snippet "${args[0]}"`, missing) };
        const code = snippetProgram(snippet.code, JSON.stringify(args[1]));
        // The packages it imports are checked as a program's are (a step of their own), when
        // it runs: another version installed keeps the run for recover().
        try {
          if (!(await samePackages(facet, id, cursor, code, executor, pass))) throw new Error(PAUSE_SENTINEL);
        } catch (error) {
          if (error.code !== CODES.PACKAGE_VERSION) throw error;
          pass.keptFault ??= error;
          throw new Error(PAUSE_SENTINEL);
        }
        const output = await runCode({ code, executor, providers: [provider], connectors: bindings, onSecrets: pass.onSecrets });
        return output.result;
      })()),
      // A step is run again when an earlier pass left it unrecorded (its function threw, or the
      // pass died): it has no effect outside the program, so it is never a call in doubt.
      // Both answer in the step's turn in the delivery order: a replayed step's value, or the
      // word that a fresh one was recorded.
      __stepDecide: (name) => track(pass, (async () => {
        const decision = await stepStore(pass, () => facet.decide(id, cursor.next(), STEP_CONNECTOR, String(name), undefined, false, false, true));
        if (decision.kind === 'replay') {
          pass.order.reached(decision.delivery && decision.delivery.ordinal);
          await handOver(pass, decision.delivery);
        }
        return { kind: decision.kind, seq: decision.seq, result: decision.result };
      })()),
      __stepRecord: (seq, value, name) => track(pass, (async () => {
        const recorded = await stepStore(pass, () => facet.recordResult(id, Number(seq), STEP_CONNECTOR, String(name), value));
        if (recorded !== undefined && recorded.kind === 'pause') throw new Error(PAUSE_SENTINEL);
        await handOver(pass, recorded);
        return true;
      })()),
    },
  };
  return provider;
}

async function applyTransform(transformResult, result) {
  if (typeof transformResult !== 'function') return result;
  try {
    return await transformResult(result);
  } catch (error) {
    console.warn('codemode: transformResult threw; returning the raw result.', error);
    return result;
  }
}

// Whether a gated run's program may run now: the store decides its seq 0 (approved since it
// paused: recorded as applied; replayed on later passes; still waiting: no).
// Its place in the delivery order is passed over: the program never receives it. Resolves
// undefined while it waits, else the approval's place ({ ordinal, at }; null if it has none).
async function programApproved(facet, id, cursor, code, order) {
  const seq = cursor.next();
  const decision = await facet.decide(id, seq, PROGRAM_GATE.connector, PROGRAM_GATE.method, { code }, true, false, false);
  if (decision.kind === 'pause') return undefined;
  let delivery = decision.delivery;
  if (decision.kind === 'execute') delivery = await facet.recordResult(id, seq, PROGRAM_GATE.connector, PROGRAM_GATE.method, true);
  if (delivery === undefined) return null;
  order.passOver(delivery.ordinal);
  return delivery;
}

// The step that holds the versions of the allowed packages a run's program imports.
const PACKAGES_STEP = '#packages';

// Every pass imports the package versions the run's program began with: the first records the
// installed versions of the allowed packages the program imports (a step, just before the
// program runs: a run that imports none records nothing), later passes compare. A different
// version (or none installed) throws ERR_PACKAGE_VERSION naming each package and both
// versions: the run is kept for recover() (see KEEPS_RUN). Resolves false when the store
// cannot be reached (kept in `pass.storeFault`: the program does not run).
async function samePackages(facet, id, cursor, code, executor, pass) {
  if (typeof executor[PACKAGE_VERSIONS] !== 'function') return true;
  const installed = executor[PACKAGE_VERSIONS](code);
  if (Object.keys(installed).length === 0) return true;
  // A run begun before versions were recorded has a call where the step would go: it is
  // replayed as it was, unchecked, rather than taken for a divergence.
  const execution = await stepStore(pass, () => facet.getExecution(id));
  if (execution === undefined || execution.kind === 'pause') return false;
  const there = (execution.log || []).find((entry) => entry.seq === cursor.peek());
  if (there !== undefined && !(there.connector === STEP_CONNECTOR && there.method === PACKAGES_STEP)) return true;
  const seq = cursor.next();
  const decision = await stepStore(pass, () => facet.decide(id, seq, STEP_CONNECTOR, PACKAGES_STEP, undefined, false, false, true));
  if (decision.kind === 'pause') return false;
  let delivery = decision.delivery;
  if (decision.kind === 'execute') {
    delivery = await stepStore(pass, () => facet.recordResult(id, seq, STEP_CONNECTOR, PACKAGES_STEP, installed));
    if (delivery !== undefined && delivery.kind === 'pause') return false;
  }
  // The program never receives this step's result.
  if (delivery !== undefined && delivery !== null) pass.order.passOver(delivery.ordinal);
  if (decision.kind !== 'replay') return true;
  const recorded = decision.result !== null && typeof decision.result === 'object' ? decision.result : {};
  const changed = Object.keys(recorded).sort()
    .filter((name) => installed[name] !== recorded[name])
    .map((name) => `${name} ${recorded[name]} when it began, ${typeof installed[name] === 'string' ? `${installed[name]} installed now` : 'not installed (or not allowed) now'}`);
  if (changed.length > 0) {
    throw new CodemodeExecutorError(CODES.PACKAGE_VERSION, `This run's program imports other package versions than it began with: ${changed.join('; ')}. Install the recorded versions again and resume it with recover(), or reject it`);
  }
  return true;
}

// How the program's clock and randomness repeat on every pass (src/sandbox/bootstrap.js): the
// run's seed (a run begun before seeds were stored: one derived from its id), and the clock at
// the program's start.
function replayOptions(id, plan) {
  const seed = plan.seed ?? createHash('sha256').update(`codemode replay seed ${id}`).digest('hex');
  return { seed, start: plan.start };
}

// How long a pass waits, once its program has ended, for calls it started that are still
// running, before it answers: this many leases (60 s with the default lease). Past that it
// answers what the store holds and hands the calls on: it keeps holding the run (its lease
// renewed) until they have ended and been recorded, and only then lets the run go, so no other
// pass takes a call still running for one in doubt, and a tool that never settles cannot keep
// execute() or approve() from answering.
const DRAIN_LEASES = 2;

// Resolves true once every call of the pass has ended, or false after `ms` (they go on).
function drainedWithin(ended, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  return Promise.race([ended.then(() => true), late]).finally(() => clearTimeout(timer));
}

// Faults of the machinery, not of the program: the run goes back to where it was (running, held
// by nobody) and is retried, instead of being ended by them.
const MACHINERY_FAULTS = new Set([CODES.WORKER_LOST, CODES.QUEUE_FULL, CODES.DISPOSED]);
// Faults that keep the run as they find it, as the machinery's do, but that a retry at once
// would meet again: the host's installed packages differ from the run's (samePackages).
const KEEPS_RUN = new Set([...MACHINERY_FAULTS, CODES.PACKAGE_VERSION]);
// Passes tried at once after a machinery fault before the run is left for recover().
const MACHINERY_RETRIES = 2;

/**
 * Runs passes over a run this process holds (begin, resume or claim took its lease) until one
 * ends without a machinery fault, at most 1 + MACHINERY_RETRIES; the lease is renewed while a
 * pass runs. `options`: { leaseMs, transformResult }.
 */
async function runPass(id, code, setup, facet, executor, options) {
  for (let attempt = 0; ; attempt++) {
    const outcome = await onePass(id, code, setup, facet, executor, options);
    // A store that cannot be reached now would not be reached by a retry at once either.
    if (outcome.interrupted === undefined || !MACHINERY_FAULTS.has(outcome.interrupted) || attempt >= MACHINERY_RETRIES) return outcome;
    if (!(await facet.claim(id, options.leaseMs))) return outcome; // another process took it up
  }
}

async function onePass(id, code, setup, facet, executor, { leaseMs, transformResult, gated }) {
  let n = 0;
  const cursor = { next: () => n++, peek: () => n };
  // `order`: the delivery order (replaced once the run's plan is read); `replays`: whether the
  // executor is this package's, whose sandbox replays time and randomness.
  // `secrets`: the RunSecrets of the pass's runs, which `onSecrets` collects (redactSecrets).
  // `keptFault`: a snippet's ERR_PACKAGE_VERSION, which keeps the run as a program's does.
  const pass = { inFlight: new Set(), storeFault: undefined, keptFault: undefined, order: new DeliveryOrder(0), replays: executor[READS_PROGRAMS] === true, secrets: [] };
  pass.onSecrets = (secrets) => pass.secrets.push(secrets);
  const bindings = connectorBindings(setup, facet, id, cursor, pass);
  const provider = platformProvider(setup, bindings, facet, executor, id, cursor, pass);
  const connectors = [...setup.connectorsByName.values()];
  const renewal = setInterval(() => {
    // A failed renewal is retried on the next tick; the lease runs a few ticks long.
    facet.renew(id, leaseMs).catch(() => {});
  }, Math.max(10, Math.floor(leaseMs / 3)));
  renewal.unref();
  let ended = false;
  // Set once the program has ended: whether the pass's calls ended within DRAIN_LEASES.
  let allEnded;
  let drained = true;
  const endPass = async (status) => {
    ended = true;
    await eachConnector(connectors, (c) => c.onPassEnd(id, status));
    if (status !== 'paused') await eachConnector(connectors, (c) => c.disposeExecution(id, status));
  };
  try {
    let output;
    let threw;
    try {
      // A gated run's program is its first action (seq 0): decided like a call, so it runs only
      // once approved, and a later pass replays the approval. Paused, the program does not run.
      const plan = await facet.replayPlan(id);
      if (plan !== undefined) pass.order = new DeliveryOrder(plan.places);
      const approval = gated === true ? await programApproved(facet, id, cursor, code, pass.order) : null;
      if (approval !== undefined && await samePackages(facet, id, cursor, code, executor, pass)) {
        // Approved in this very pass: the plan read before did not have the approval's time,
        // which later passes take as the program's start (replay_plan), so this one does too.
        if (plan !== undefined && approval !== null && approval.at > plan.start) plan.start = approval.at;
        const replay = pass.replays && plan !== undefined ? replayOptions(id, plan) : undefined;
        try {
          output = await runCode({ code, executor, providers: [provider], connectors: bindings, replay, onSecrets: pass.onSecrets });
        } finally {
          // The program has ended: results still waiting for their turn go (to nobody).
          pass.order.close();
        }
      }
    } catch (error) {
      threw = error;
    }
    // The calls this pass started end, and are recorded, before it answers or lets the run go,
    // whether the program paused, failed, timed out or was cut short: a call still running is not
    // in doubt, and no later pass may take it for one (an approval would retry it: issue 33). The
    // pass holds the run meanwhile (its lease renewed), so approvals, rejections, recovery and
    // rollbacks wait for it.
    allEnded = callsEnded(pass);
    drained = await drainedWithin(allEnded, DRAIN_LEASES * leaseMs);
    // Lets the run go now, or (calls still running: handed on) once they have ended.
    const releaseRun = async () => {
      if (drained) return facet.release(id);
      allEnded.then(() => facet.release(id)).catch(() => {});
    };
    const fault = pass.storeFault ?? pass.keptFault ?? (threw !== undefined && KEEPS_RUN.has(threw.code) ? threw : undefined);
    // The stored status is the source of truth, not what the program threw.
    let execution;
    try {
      execution = await facet.getExecution(id);
    } catch (error) {
      if (fault === undefined || !storeUnreachable(error)) throw error;
    }
    if (fault !== undefined && (execution === undefined || (execution.status === 'running' && facet.holds(execution)))) {
      // The program did not fail; its pass was cut short with the run still running (or a store
      // that cannot be reached to say otherwise). The run is let go as it stands, for a retry
      // (recover() takes it); when the store cannot be reached, its lease lapses instead.
      ended = true;
      try {
        await releaseRun();
      } catch (error) {
        if (!storeUnreachable(error)) throw error;
      }
      return {
        status: 'error',
        executionId: id,
        error: `The pass was interrupted (${fault.code}: ${messageOf(fault)}); the run was kept and can be resumed by recover()`,
        interrupted: fault.code,
      };
    }
    // Below, a pass cut short answers as one that ended: what it committed before (the next
    // pause, a failure) stands and is the answer, not an interruption that recover() would not
    // take up (issue 33).
    threw ??= fault;
    const calls = execution && execution.log;
    if (execution && execution.status === 'running' && !facet.holds(execution)) {
      ended = true; // not ours any more: the process that took it over ends it
      return { status: 'error', executionId: id, error: 'This pass lost its hold on the run (its lease lapsed and another process took it over)', calls };
    }
    if (execution && execution.status === 'paused') {
      await endPass('paused');
      // Held until here, so an approval cannot resume the run while this pass still ends.
      await releaseRun();
      return { status: 'paused', executionId: id, pending: await facet.listPending(id), calls };
    }
    if (execution && execution.status === 'error') {
      await endPass('error');
      return { status: 'error', executionId: id, error: execution.error ?? 'Codemode execution failed', calls };
    }
    // A run rejected or expired while this pass was under way keeps that outcome.
    const endedElsewhere = async () => {
      const now = await facet.getExecution(id);
      return { status: 'error', executionId: id, error: (now && now.error) ?? 'Codemode execution failed', calls };
    };
    if (threw !== undefined) {
      const message = withGlobalsHint(messageOf(threw), setup);
      const failed = await facet.fail(id, message);
      await endPass('error');
      return failed ? { status: 'error', executionId: id, error: message, calls } : endedElsewhere();
    }
    const result = output && output.result;
    if (!(await facet.complete(id, result, output && output.logs))) {
      await endPass('error');
      return endedElsewhere();
    }
    await endPass('completed');
    return { status: 'completed', executionId: id, result: await applyTransform(transformResult, result), logs: output && output.logs, calls };
  } finally {
    // Calls handed on keep the lease renewed until they end.
    if (drained) clearInterval(renewal);
    else allEnded.finally(() => clearInterval(renewal)).catch(() => {});
    if (!ended) await endPass('error');
  }
}

module.exports = {
  SetupCache,
  loadSetup,
  eachConnector,
  connectorBindings,
  platformProvider,
  applyTransform,
  runPass,
  callContext,
  missingConnectors,
  requiresMessage,
};
