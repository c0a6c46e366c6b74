//! Returning freed memory once the pool is idle: a dropped isolate frees its C++ objects into
//! the C allocator, which keeps that memory resident in the freeing thread's arena, so after a
//! burst an engine stayed about 0.3 MiB per worker thread larger than before it (measured with
//! 32 workers). Once no run has been in progress for `TRIM_AFTER`, the watchdog's thread hands
//! the free memory back (`os::release_free_heap`), once per idle period. Not between runs that
//! come back to back: trimming costs the next allocations a fresh page each.

use super::Shared;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How long the pool has had no run in progress before its free memory is returned.
pub(super) const TRIM_AFTER: Duration = Duration::from_secs(1);

/// When the last run ended, and whether a check is armed on the watchdog.
pub(super) struct IdleTrim {
    started: Instant,
    /// Nanoseconds from `started` to the end of the latest run.
    last_end: AtomicU64,
    armed: AtomicBool,
    /// Whether the memory was returned since the latest run ended (nothing to do until another).
    done: AtomicBool,
}

impl IdleTrim {
    pub(super) fn new() -> IdleTrim {
        IdleTrim {
            started: Instant::now(),
            last_end: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            done: AtomicBool::new(true),
        }
    }

    fn last_end(&self) -> Instant {
        self.started + Duration::from_nanos(self.last_end.load(Ordering::Acquire))
    }

    /// What the check armed at a run's end decides, given whether runs are in progress now.
    fn decide(&self, busy: bool, now: Instant) -> Decision {
        if busy || self.done.load(Ordering::Acquire) {
            // A run in progress arms the next check when it ends.
            return Decision::Nothing;
        }
        let due = self.last_end() + TRIM_AFTER;
        if now < due {
            Decision::Later(due)
        } else {
            self.done.store(true, Ordering::Release);
            Decision::Release
        }
    }
}

#[derive(Debug, PartialEq)]
enum Decision {
    Nothing,
    Later(Instant),
    Release,
}

/// A run ended (its isolate is about to be dropped): arm a check `TRIM_AFTER` from now unless
/// one is armed.
pub(super) fn run_ended(shared: &Arc<Shared>) {
    let trim = &shared.idle_trim;
    let since = trim.started.elapsed().as_nanos() as u64;
    trim.last_end.store(since, Ordering::Release);
    trim.done.store(false, Ordering::Release);
    if !trim.armed.swap(true, Ordering::AcqRel) {
        arm(shared, Instant::now() + TRIM_AFTER);
    }
}

fn arm(shared: &Arc<Shared>, at: Instant) {
    let weak: Weak<Shared> = Arc::downgrade(shared);
    shared.watchdog.after(
        at,
        Box::new(move || {
            if let Some(shared) = weak.upgrade() {
                check(&shared);
            }
        }),
    );
}

fn check(shared: &Arc<Shared>) {
    let trim = &shared.idle_trim;
    // Disarmed first: a run ending from here on arms a check of its own.
    trim.armed.store(false, Ordering::Release);
    let busy = shared.counters.busy.load(Ordering::Acquire) > 0;
    match trim.decide(busy, Instant::now()) {
        Decision::Nothing => {}
        Decision::Later(at) => {
            if !trim.armed.swap(true, Ordering::AcqRel) {
                arm(shared, at);
            }
        }
        Decision::Release => crate::os::release_free_heap(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_returned_once_per_idle_period_and_only_after_trim_after_without_a_run() {
        let trim = IdleTrim::new();
        let t0 = trim.started;
        // Nothing ran yet: nothing to return.
        assert_eq!(trim.decide(false, t0 + TRIM_AFTER * 2), Decision::Nothing);
        trim.last_end.store(1_000, Ordering::Release);
        trim.done.store(false, Ordering::Release);
        let end = trim.last_end();
        assert_eq!(trim.decide(true, end + TRIM_AFTER), Decision::Nothing);
        assert_eq!(
            trim.decide(false, end + TRIM_AFTER / 2),
            Decision::Later(end + TRIM_AFTER)
        );
        assert_eq!(trim.decide(false, end + TRIM_AFTER), Decision::Release);
        assert_eq!(
            trim.decide(false, end + TRIM_AFTER * 3),
            Decision::Nothing,
            "returned twice in one idle period"
        );
    }
}
