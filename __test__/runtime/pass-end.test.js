'use strict';
// How a pass of a durable run ends (issue 33): it answers only once the calls it started have
// ended and been recorded, so no later pass can take a call that is still running for a call in
// doubt; and a pass cut short by the machinery answers what the store holds, not a guess.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IsolateExecutor, createCodemodeRuntime, CodemodeConnector } = require('../../lib/index.js');
const { CONTROL_KEY } = require('../../lib/cloudflare/codec.js');
const { KIND, storeOptions } = require('./stores.js');

const executor = new IsolateExecutor({ workers: 2 });
test.after(() => executor.dispose());

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The store of a fresh directory. Over PostgreSQL with one connection, so that the calls a
// program makes at once reach the store in the order they were made (as on a SQLite file):
// the tests below depend on which of two parallel calls pauses first.
function store() {
  const options = storeOptions(fs.mkdtempSync(path.join(os.tmpdir(), 'codemode-pass-end-')));
  return KIND === 'postgres' ? { store: { ...options.store, maxConnections: 1 } } : options;
}

// A shop whose `buy` needs approval and records every real invocation of its execute.
class Shop extends CodemodeConnector {
  constructor(buy) {
    super();
    this.buy = buy;
  }

  name() { return 'shop'; }

  tools() {
    return { buy: { description: 'Buy an item', requiresApproval: true, execute: this.buy } };
  }
}

// FINDING (fixed, issue 33): the pass after an approval answered `paused` (on the next call)
// while the approved call it had started was still running; a second approve found that call
// `executing`, took it for a call in doubt, and a third approve (without seq) retried it: apple
// bought twice, with nothing crashed.
test('approve answers only once the approved call it started has ended: a call still running is never retried as in doubt', async () => {
  const bought = [];
  const calls = [];
  let secondApple;
  const appleAgain = new Promise((r) => { secondApple = r; });
  const shop = new Shop(async ({ item }) => {
    bought.push(item);
    const call = (async () => {
      if (item === 'apple' && bought.filter((i) => i === 'apple').length === 1) {
        // The first apple takes a while: until a second apple is bought (the failure), or
        // 300 ms (which is all it waits when nothing buys it again).
        await Promise.race([appleAgain, sleep(300)]);
      } else if (item === 'apple') {
        secondApple();
      }
      return { item, bought: true };
    })();
    calls.push(call);
    return call;
  });
  const runtime = createCodemodeRuntime({ executor, connectors: [shop], ...store() });
  const paused = await runtime.execute({ code: "async () => Promise.all(['apple', 'cherry'].map((item) => shop.buy({ item })))" });
  assert.equal(paused.status, 'paused', JSON.stringify(paused));
  assert.deepEqual(paused.pending.map((p) => p.args.item), ['apple']);
  const id = paused.executionId;

  const first = await runtime.approve({ executionId: id, seq: paused.pending[0].seq });
  const second = await runtime.approve({ executionId: id });
  const third = await runtime.approve({ executionId: id });
  await Promise.all(calls);

  assert.deepEqual(bought.filter((i) => i === 'apple'), ['apple'], `apple bought ${bought.filter((i) => i === 'apple').length} times; answers: ${JSON.stringify([first, second, third].map((o) => ({ status: o.status, pending: o.pending, error: o.error })))}`);
  // The first approval ran apple and paused on cherry, apple recorded.
  assert.equal(first.status, 'paused', JSON.stringify(first));
  assert.deepEqual(first.pending.map((p) => p.args.item), ['cherry']);
  assert.equal(first.calls[0].state, 'applied');
  // The second replayed apple and bought cherry; nothing was left for the third.
  assert.equal(second.status, 'completed', JSON.stringify(second));
  assert.deepEqual(second.result, [{ item: 'apple', bought: true }, { item: 'cherry', bought: true }]);
  assert.equal(third.status, 'error');
  assert.match(third.error, /is not paused \(status: completed\)/);
  assert.deepEqual(bought.sort(), ['apple', 'cherry']);
});

// The same holds when the pass ends by an error: a program that throws while a call it started
// is still running leaves that call recorded, not executing, once execute() has answered.
test('a pass that ends in an error answers only once the calls it started are recorded', async () => {
  const bought = [];
  let finish;
  const running = new Promise((r) => { finish = r; });
  class Slow extends CodemodeConnector {
    name() { return 'slow'; }
    tools() {
      return {
        read: {
          description: 'A slow read',
          execute: async ({ n }) => {
            bought.push(n);
            await sleep(100);
            finish();
            return n;
          },
        },
      };
    }
  }
  const runtime = createCodemodeRuntime({ executor, connectors: [new Slow()], ...store() });
  const out = await runtime.execute({ code: 'async () => { slow.read({ n: 1 }); await null; throw new Error("gave up"); }' });
  assert.equal(out.status, 'error');
  assert.match(out.error, /gave up/);
  const stored = await runtime.execution(out.executionId);
  assert.deepEqual(stored.log.map((e) => e.state), ['applied'], 'the call it started was recorded before the answer');
  if (bought.length > 0) await running;
  assert.deepEqual(bought, [1]);
});

// FINDING (fixed, issue 33): an engine lost after the pass had committed the next pause (pending()
// already listed it) was answered `{ status: 'error', interrupted: 'ERR_WORKER_LOST', error: '…
// can be resumed by recover()' }` without pending, while the run was paused: recover() takes only
// running runs, so a host that followed the answer left the run waiting.
test('an engine lost right after the next pause was committed: approve answers paused, with what waits', async () => {
  const engine = new IsolateExecutor({ isolation: 'process', workers: 1 });
  try {
    const bought = [];
    const shop = new Shop(async ({ item }) => {
      bought.push(item);
      return { item, bought: true };
    });
    let armed = false;
    let killed = false;
    // Passes the runtime's connector bindings on, and, once armed, kills the engine that runs the
    // program the moment a binding answers `pause` (the pause is committed in the store by then),
    // before the program hears of it.
    const killing = {
      execute(code, providers, options) {
        let settled;
        const ended = new Promise((r) => { settled = r; });
        const connectors = options.connectors.map(({ name, binding }) => ({
          name,
          binding: {
            callTool: async (method, args) => {
              const answer = await binding.callTool(method, args);
              if (armed && answer !== null && typeof answer === 'object' && answer[CONTROL_KEY] === 'pause') {
                armed = false;
                killed = true;
                for (const pid of engine.stats().enginePids) process.kill(pid, 'SIGKILL');
                await ended; // the program never hears of the pause: its engine is gone
              }
              return answer;
            },
          },
        }));
        const run = engine.execute(code, providers, { ...options, connectors });
        run.then(settled, settled);
        return run;
      },
    };
    const runtime = createCodemodeRuntime({ executor: killing, connectors: [shop], ...store() });
    const code = "async () => { const a = await shop.buy({ item: 'apple' }); const c = await shop.buy({ item: 'cherry' }); return [a.item, c.item]; }";
    const paused = await runtime.execute({ code });
    assert.deepEqual(paused.pending.map((p) => p.args.item), ['apple']);
    const id = paused.executionId;

    armed = true;
    const out = await runtime.approve({ executionId: id, seq: paused.pending[0].seq });
    assert.equal(killed, true, 'the engine was killed at the pause');
    const stored = await runtime.execution(id);
    assert.equal(stored.status, 'paused');
    assert.deepEqual(out, { status: 'paused', executionId: id, pending: await runtime.pending(id), calls: stored.log }, 'the answer is what the store holds');
    assert.deepEqual(out.pending.map((p) => p.args.item), ['cherry']);
    assert.deepEqual(await runtime.recover(), [], 'nothing for recover(): the run waits for an approval');

    const done = await runtime.approve({ executionId: id, seq: out.pending[0].seq });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result, ['apple', 'cherry']);
    assert.deepEqual(bought, ['apple', 'cherry']);
  } finally {
    await engine.dispose();
  }
});

// FINDING (fixed): once a pass waited for every call it started, a tool that never settles kept
// execute() (and approve()) from answering at all. A pass now waits DRAIN_LEASES leases for its
// calls, then answers what the store holds and hands the calls on: it holds the run until they
// end and are recorded, so none is taken for a call in doubt meanwhile.
test('a call still running long after its program ended is handed on: the pass answers, and holds the run until the call is recorded', async () => {
  let finish;
  const stuck = new Promise((resolve) => { finish = resolve; });
  class Slow extends CodemodeConnector {
    name() { return 'slow'; }
    tools() { return { wait: { description: 'Waits until the test lets it finish', execute: () => stuck } }; }
  }
  const runtime = createCodemodeRuntime({ executor, connectors: [new Slow()], leaseMs: 200, ...store() });
  // The program does not await its call: it completes while the call still runs.
  const answer = runtime.execute({ code: 'async () => { slow.wait(); return "done" }' });
  const outcome = await Promise.race([answer, sleep(20_000).then(() => 'no answer')]);
  assert.notEqual(outcome, 'no answer', 'execute() never answered while its call was still running');
  assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
  // The call is still running and not in doubt: nothing recorded it yet, and a recovery takes nothing.
  const during = await runtime.execution(outcome.executionId);
  assert.equal(during.log[0].state, 'executing');
  assert.deepEqual(await runtime.recover(), []);
  finish({ ok: true });
  let after;
  for (let i = 0; i < 200; i++) {
    after = await runtime.execution(outcome.executionId);
    if (after.log[0].state === 'applied') break;
    await sleep(10);
  }
  assert.equal(after.log[0].state, 'applied', 'the late call was recorded');
  runtime.close();
});
