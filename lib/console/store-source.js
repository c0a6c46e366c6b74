'use strict';
// The standalone console's source of runs: the store itself (a SQLite file or a PostgreSQL
// database), without the application's connectors. What it can do follows from that:
// - it reads everything (executions, their logs, pending actions, snippets);
// - approve records the decision and runs nothing: the run goes from paused to running (the
//   store's `resume`, the same transition runtime.approve() makes, in one transaction, with
//   the same `seq` check) and this process gives up its hold on it at once, so the run is
//   orphaned-running. The application's runtime, which has the connectors, takes it up with
//   recover() (or `recoverEveryMs`) and runs its next pass: the approved call runs then;
// - reject ends the run `rejected` (no connector is needed for that);
// - rollback is refused: it calls the connectors' revert, which only the application has.

const { storeAt, storeOn, RuntimeStore } = require('../runtime/store.js');

// The hold the console takes while it records an approval, before it releases it.
const RESUME_LEASE_MS = 10_000;
// How long an approval or a rejection waits for the pass that paused the run to finish ending.
const HELD_WAIT_MS = 2_000;

const ROLLBACK_REFUSAL = 'Rollback calls the connectors\' revert functions, which this standalone console does not have: roll back from the application (runtime.rollback(), or the console mounted in it with consoleHandler).';

function refusalText(id, outcome, seq) {
  switch (outcome.kind) {
    case 'missing':
      return `No execution "${id}".`;
    case 'not_paused':
      return `Execution "${id}" is not paused (status: ${outcome.status}); only a paused run can be approved.`;
    case 'leased':
      return `Execution "${id}" is still held by the pass that paused it; try again in a moment.`;
    default:
      return `Execution "${id}" has no single action ${seq} awaiting approval now (waiting: ${(outcome.waiting || []).join(', ') || 'nothing'}).`;
  }
}

/**
 * A source over `store` (a SQLite file path or a `postgres://` URL, with `schema` when the
 * application names one) for the runtime `name`.
 */
function storeSource(store, name, schema) {
  const native = /^postgres(ql)?:\/\//.test(store) ? storeOn(schema === undefined ? { url: store } : { url: store, schema }) : storeAt(store);
  const facet = new RuntimeStore(native, name);

  // Runs `attempt` until it answers other than `leased` (the pass that paused the run is still
  // ending), for HELD_WAIT_MS, or at once when that pass's process is known to be dead.
  async function whenUnheld(id, attempt) {
    const until = Date.now() + HELD_WAIT_MS;
    for (;;) {
      const outcome = await attempt();
      const kind = typeof outcome === 'string' ? outcome : outcome.kind;
      if (kind !== 'leased') return outcome;
      const now = await facet.getExecution(id);
      if (now !== undefined && await facet.clearDeadOwner(id, now.owner)) continue;
      if (Date.now() >= until) return outcome;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  return {
    label: name,
    mode: 'store',
    canRollback: false,
    rollbackRefusal: ROLLBACK_REFUSAL,
    /** Fails fast on a store that cannot be read (a bad file, an unreachable database). */
    check: () => facet.listExecutions(1),
    executions: (limit) => facet.listExecutions(limit),
    execution: (id) => facet.getExecution(id),
    pending: (id) => facet.listPending(id),
    snippets: () => facet.snippets(),
    async approve(id, seq) {
      const outcome = await whenUnheld(id, () => facet.resume(id, RESUME_LEASE_MS, seq));
      if (outcome.kind !== 'resumed') return { status: 'error', executionId: id, error: refusalText(id, outcome, seq) };
      // Orphaned now: the first recover() of a runtime with the connectors runs it.
      await facet.release(id);
      return {
        status: 'approved',
        executionId: id,
        note: 'Approval recorded. This console has no connectors: the application\'s runtime runs the approved call when it next recovers runs (recover(), or recoverEveryMs).',
      };
    },
    async reject(id, seq) {
      return (await whenUnheld(id, () => facet.reject(id, seq))) === 'rejected';
    },
    rollback() {
      return Promise.reject(new Error(ROLLBACK_REFUSAL));
    },
  };
}

module.exports = { storeSource, ROLLBACK_REFUSAL };
