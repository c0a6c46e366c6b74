//! Places and threads: the pool runs at most as many runs at once as it has places (`workers`,
//! plus one for each extra worker admission starts), and may have more threads than places:
//! standby threads (up to `standbyIsolates`, started on demand by `standby.rs`) wait here with a
//! warm isolate for a place. A thread takes a place before it takes a run and gives it back as
//! soon as it has answered, so a waiting thread takes the next run while the one that answered
//! builds its next isolate.
//!
//! The threads are counted here, under the same lock as the places, because which thread may
//! leave depends on both: an extra worker leaves with its place, a standby thread (a thread
//! beyond the places) without one. Two counters updated apart could let two threads each see
//! the other's surplus and both leave.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct Count {
    /// Places in all.
    limit: usize,
    /// Places held. May exceed `limit` for a while after a leaving extra worker's place is
    /// removed: no place is taken until it is below again.
    held: usize,
    /// Threads serving the queue (extra workers and standby threads included; not those that
    /// hold retained isolates).
    threads: usize,
    /// Threads waiting in `take` for a place.
    waiting: usize,
    closed: bool,
}

impl Count {
    /// Threads beyond the places: the standby threads.
    fn standby(&self) -> usize {
        self.threads.saturating_sub(self.limit)
    }
}

/// What `start_standby` sees of the pool besides the ledger.
pub(super) struct StandbyRoom {
    /// `standbyIsolates`: the most standby threads at once.
    pub most: usize,
    /// Threads waiting on the queue for a run (they hold places and use no CPU).
    pub idle: usize,
    /// The cores this process may use.
    pub cores: usize,
}

pub(super) struct Slots {
    count: Mutex<Count>,
    freed: Condvar,
}

impl Slots {
    /// `limit` places and no threads yet (each is counted by `add_thread` as it is started).
    pub(super) fn new(limit: usize) -> Slots {
        Slots {
            count: Mutex::new(Count {
                limit,
                held: 0,
                threads: 0,
                waiting: 0,
                closed: false,
            }),
            freed: Condvar::new(),
        }
    }

    fn count(&self) -> MutexGuard<'_, Count> {
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a place. Once the pool is closed there is no limit: every thread goes on to
    /// answer what is left in the queue and end.
    #[cfg(test)]
    pub(super) fn take(&self) -> HeldSlot {
        loop {
            if let Some(held) = self.take_within(Duration::from_secs(3600)) {
                return held;
            }
        }
    }

    /// Waits up to `wait` for a place; `None` when none came (the caller may then leave, if it
    /// is a standby thread no longer needed: `leave_as_standby`).
    pub(super) fn take_within(&self, wait: Duration) -> Option<HeldSlot> {
        let deadline = Instant::now() + wait;
        let mut count = self.count();
        count.waiting += 1;
        while !count.closed && count.held >= count.limit {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                count.waiting -= 1;
                return None;
            }
            count = self
                .freed
                .wait_timeout(count, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        count.waiting -= 1;
        count.held += 1;
        Some(HeldSlot {
            given: AtomicBool::new(false),
        })
    }

    /// The places in all (`workers` plus the extra workers running).
    pub(super) fn limit(&self) -> usize {
        self.count().limit
    }

    /// The standby threads now (threads beyond the places, those on their way included).
    pub(super) fn standby(&self) -> usize {
        self.count().standby()
    }

    fn give_back(&self) {
        let mut count = self.count();
        count.held = count.held.saturating_sub(1);
        drop(count);
        self.freed.notify_one();
    }

    /// One more thread (a worker about to be started).
    pub(super) fn add_thread(&self) {
        self.count().threads += 1;
    }

    /// One thread fewer (one that could not be started, or one that ended on its own).
    pub(super) fn remove_thread(&self) {
        let mut count = self.count();
        count.threads = count.threads.saturating_sub(1);
    }

    /// Whether the pool has extra workers beyond `workers` (then an idle worker waits only a
    /// while for a run before it leaves).
    pub(super) fn has_extra_workers(&self, workers: usize) -> bool {
        self.count().limit > workers
    }

    /// An extra worker with its own place, if fewer than `most` places in all: counts the
    /// thread and the place. The caller then starts it.
    pub(super) fn add_extra_worker(&self, most: usize) -> bool {
        let mut count = self.count();
        if count.closed || count.limit >= most {
            return false;
        }
        count.limit += 1;
        count.threads += 1;
        drop(count);
        self.freed.notify_one();
        true
    }

    /// A thread no longer serving the queue counts itself out if the pool can spare it: with
    /// an extra worker's place while there are more places than `workers`, or alone while there
    /// are standby threads (one of them serves in its place). False: the caller must be
    /// replaced.
    pub(super) fn leave_if_extra(&self, workers: usize) -> bool {
        let mut count = self.count();
        if count.limit > workers {
            count.limit -= 1;
        } else if count.standby() == 0 {
            return false;
        }
        count.threads -= 1;
        true
    }

    /// A standby thread that waited for a place in vain counts itself out, if there are still
    /// more threads than places. False: it is needed (a place is its own again).
    pub(super) fn leave_as_standby(&self) -> bool {
        let mut count = self.count();
        if count.closed || count.standby() == 0 {
            return false;
        }
        count.threads -= 1;
        true
    }

    /// Counts one more standby thread if a run waits for an isolate rather than for a place
    /// (a place is free, so every thread is busy building or dropping one), a core is free for
    /// it to build on, and fewer than `room.most` exist. The caller then starts it.
    pub(super) fn start_standby(&self, room: &StandbyRoom) -> bool {
        let mut count = self.count();
        let place_free = count.held < count.limit;
        // Threads neither waiting for a place nor for a run: running, building or dropping an
        // isolate (or about to wait), each possibly on a core.
        let on_cores = count.threads.saturating_sub(count.waiting + room.idle);
        if count.closed || !place_free || count.standby() >= room.most || on_cores >= room.cores {
            return false;
        }
        count.threads += 1;
        true
    }

    /// Lifts the limit and wakes every waiting thread (the pool is disposed).
    pub(super) fn close(&self) {
        self.count().closed = true;
        self.freed.notify_all();
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.count().held
    }
}

/// A place held by one thread for one run. Given back once: by the worker as soon as it has
/// answered, or by the abandon action when its run cannot be stopped (the thread is then lost,
/// and a replacement needs the place), whichever comes first.
pub(super) struct HeldSlot {
    given: AtomicBool,
}

impl HeldSlot {
    pub(super) fn give_back(&self, slots: &Slots) {
        if !self.given.swap(true, Ordering::AcqRel) {
            slots.give_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn no_more_places_are_held_than_there_are_and_each_is_given_back_once() {
        let slots = Arc::new(Slots::new(1));
        let first = slots.take();
        let waiter = {
            let slots = slots.clone();
            std::thread::spawn(move || {
                slots.take();
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "a second place was taken out of one");
        first.give_back(&slots);
        first.give_back(&slots);
        waiter.join().unwrap();
        assert_eq!(slots.held(), 1, "a place given back twice freed two");
    }

    #[test]
    fn an_extra_worker_admits_a_waiter_its_leaving_holds_back_the_next_and_close_lifts_the_limit() {
        let slots = Arc::new(Slots::new(1));
        slots.add_thread();
        let first = slots.take();
        assert!(slots.add_extra_worker(2));
        assert!(
            !slots.add_extra_worker(2),
            "a place beyond the most was added"
        );
        let _second = slots.take();
        assert_eq!(slots.limit(), 2);
        assert!(slots.has_extra_workers(1));
        assert!(slots.leave_if_extra(1));
        assert!(!slots.has_extra_workers(1));
        first.give_back(&slots);
        // Two places were held and one is left: one holder, no room for another.
        let waiter = {
            let slots = slots.clone();
            std::thread::spawn(move || {
                slots.take();
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !waiter.is_finished(),
            "a place was taken beyond the shrunk limit"
        );
        slots.close();
        waiter.join().unwrap();
        let _third = slots.take();
        assert_eq!(slots.held(), 3);
    }

    fn room(most: usize, idle: usize, cores: usize) -> StandbyRoom {
        StandbyRoom { most, idle, cores }
    }

    #[test]
    fn a_standby_thread_starts_only_for_a_run_waiting_on_an_isolate_with_a_core_free() {
        // One worker, building its next isolate: its place is free.
        let slots = Slots::new(1);
        slots.add_thread();
        assert!(
            !slots.start_standby(&room(0, 0, 4)),
            "standbyIsolates: 0 started one"
        );
        assert!(
            !slots.start_standby(&room(4, 0, 1)),
            "started one with no core free"
        );
        assert!(slots.start_standby(&room(4, 0, 2)));
        assert_eq!(slots.standby(), 1);
        // Two threads now building on two cores: no core free.
        assert!(!slots.start_standby(&room(4, 0, 2)));
        // A thread idle on the queue uses no core.
        assert!(slots.start_standby(&room(4, 1, 2)));
        assert!(
            !slots.start_standby(&room(2, 3, 8)),
            "more than standbyIsolates started"
        );
        // Every place held: the run waits for a place, and a standby thread would not help.
        let slots = Slots::new(1);
        slots.add_thread();
        let held = slots.take();
        assert!(!slots.start_standby(&room(4, 0, 8)));
        held.give_back(&slots);
        assert!(slots.start_standby(&room(4, 0, 8)));
        slots.close();
        assert!(
            !slots.start_standby(&room(4, 0, 8)),
            "started one after close"
        );
    }

    #[test]
    fn only_threads_beyond_the_places_leave_as_standby_and_a_leaving_worker_takes_a_standby_place_first_an_extra_one_before(
    ) {
        let slots = Slots::new(1);
        slots.add_thread();
        assert!(
            !slots.leave_as_standby(),
            "the one worker left as a standby thread"
        );
        assert!(
            !slots.leave_if_extra(1),
            "the one worker left without a replacement"
        );
        assert!(slots.start_standby(&room(4, 0, 8)));
        assert!(slots.start_standby(&room(4, 0, 8)));
        assert!(slots.leave_as_standby());
        // A worker stepping down while a standby thread exists: that thread serves in its place.
        assert!(slots.leave_if_extra(1));
        assert_eq!(slots.standby(), 0);
        assert!(!slots.leave_if_extra(1));
        // With an extra worker and a standby thread, the leaving worker takes the extra place.
        assert!(slots.add_extra_worker(2));
        assert!(slots.start_standby(&room(4, 0, 8)));
        assert!(slots.leave_if_extra(1));
        assert_eq!((slots.limit(), slots.standby()), (1, 1));
    }

    #[test]
    fn take_within_gives_up_after_its_wait_and_counts_its_waiting_thread() {
        let slots = Slots::new(1);
        slots.add_thread();
        let held = slots.take();
        let started = Instant::now();
        assert!(slots.take_within(Duration::from_millis(30)).is_none());
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert_eq!(slots.count().waiting, 0);
        held.give_back(&slots);
        assert!(slots.take_within(Duration::from_millis(30)).is_some());
    }
}
