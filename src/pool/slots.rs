//! Worker places: the pool has more threads than it runs runs at once (`standbyIsolates` threads
//! wait with a warm isolate), so a thread takes a place before it takes a run and gives it back
//! as soon as it has answered. The number of places is `workers`, plus one for each extra
//! worker admission starts (`grow`), minus one for each that leaves (`shrink`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

struct Count {
    /// Places in all.
    limit: usize,
    /// Places held. May exceed `limit` for a while after a `shrink`: no place is taken until it
    /// is below again.
    held: usize,
    closed: bool,
}

pub(super) struct Slots {
    count: Mutex<Count>,
    freed: Condvar,
}

impl Slots {
    pub(super) fn new(limit: usize) -> Slots {
        Slots {
            count: Mutex::new(Count {
                limit,
                held: 0,
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
    pub(super) fn take(&self) -> HeldSlot {
        let mut count = self.count();
        while !count.closed && count.held >= count.limit {
            count = self.freed.wait(count).unwrap_or_else(|p| p.into_inner());
        }
        count.held += 1;
        HeldSlot {
            given: AtomicBool::new(false),
        }
    }

    /// The places in all (`workers` plus the extra workers running).
    pub(super) fn limit(&self) -> usize {
        self.count().limit
    }

    fn give_back(&self) {
        let mut count = self.count();
        count.held = count.held.saturating_sub(1);
        drop(count);
        self.freed.notify_one();
    }

    /// One more place (an extra worker was started).
    pub(super) fn grow(&self) {
        self.count().limit += 1;
        self.freed.notify_one();
    }

    /// One place fewer (an extra worker left).
    pub(super) fn shrink(&self) {
        let mut count = self.count();
        count.limit = count.limit.saturating_sub(1);
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
    use std::time::Duration;

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
    fn grow_admits_a_waiter_shrink_holds_back_the_next_and_close_lifts_the_limit() {
        let slots = Arc::new(Slots::new(1));
        let first = slots.take();
        slots.grow();
        let _second = slots.take();
        assert_eq!(slots.limit(), 2);
        slots.shrink();
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
}
