'use strict';
// The order in which one pass hands recorded results to its program (issue 36).
//
// A program's calls leave its isolate one at a time, from one thread, and the isolate takes one
// reply at a time, running everything that reply sets off before it takes the next. So the order
// in which a program issues its calls (and so their seqs) is decided by the order in which it
// receives its replies. The store gives every recorded result the next place in its run's
// delivery order (0, 1, 2, …), and every pass hands results over in that order: a later pass
// replays the earlier passes' deliveries exactly, so `Promise.all`, `Promise.race` and
// continuations that call again issue the same calls at the same seqs; results recorded during
// the pass take the next places and are handed over in turn, once every earlier place has been.
//
// Places recorded by earlier passes that this pass's program never reaches (it took another
// path: something it read outside the log, or a timer, which is not replayed) would hold up
// every later place: once nothing has moved for GRACE_MS, such a place is passed over, and the
// divergence check on the calls that follow reports what changed.
//
// What is not recorded (a pause, an error marker, a search) is handed over at once.

// How long the pass waits for its program to reach a place recorded by an earlier pass while
// later places are ready, before it passes over that place.
const GRACE_MS = 1000;

class DeliveryOrder {
  /** The next place to hand over. */
  #next = 0;
  /** Places recorded by earlier passes: [0, known). */
  #known;
  /** Places this pass has reached and will hand over (decided, or recording). */
  #reached = new Set();
  /** Results waiting for their turn: place → release function. */
  #waiting = new Map();
  #graceMs;
  #timer;
  #flushing = false;

  constructor(known, graceMs = GRACE_MS) {
    this.#known = known;
    this.#graceMs = graceMs;
  }

  /** This pass has reached the call holding `place` (it will be handed over once it is ready). */
  reached(place) {
    if (place !== undefined) this.#reached.add(place);
  }

  /**
   * Resolves when it is the turn of the result at `place` (undefined: not in the order, at
   * once). Every place taken in this pass must be handed over, or passed over with `passOver`.
   */
  turn(place) {
    if (place === undefined || place < this.#next) return Promise.resolve();
    this.#reached.add(place);
    return new Promise((release) => {
      this.#waiting.set(place, release);
      this.#flushSoon();
    });
  }

  /** A place taken by something the program never receives (the program's own approval). */
  passOver(place) {
    if (place === undefined || place < this.#next) return;
    this.#waiting.set(place, () => {});
    this.#flushSoon();
  }

  // Releases the results whose turn has come, in order, a microtask later: by then the result
  // whose turn it is has begun to wait too, so its reply leaves for the program first (one
  // released at once, inside turn(), would follow the others it released).
  #flushSoon() {
    if (this.#flushing) return;
    this.#flushing = true;
    queueMicrotask(() => {
      this.#flushing = false;
      this.#flush();
    });
  }

  #flush() {
    for (let release = this.#waiting.get(this.#next); release !== undefined; release = this.#waiting.get(this.#next)) {
      this.#waiting.delete(this.#next);
      this.#reached.delete(this.#next);
      this.#next++;
      release();
    }
    this.#watch();
  }

  // Passes over a place of an earlier pass that this pass has not reached, once results behind
  // it have waited GRACE_MS with nothing moving. A place recorded in this pass is never passed
  // over: its call is being recorded and will be handed over.
  #watch() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.size === 0 || this.#next >= this.#known || this.#reached.has(this.#next)) return;
    const stuck = this.#next;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#next !== stuck || this.#reached.has(stuck)) return;
      this.#next++;
      this.#flush();
    }, this.#graceMs);
  }

  /** Stops the grace timer (the pass has ended). */
  close() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const release of this.#waiting.values()) release();
    this.#waiting.clear();
  }
}

module.exports = { DeliveryOrder, GRACE_MS };
