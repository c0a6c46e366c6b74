//! Admission while the workers are held: when every worker has been busy with one run for
//! `overflow_after` and runs are waiting, an extra worker is started for each (up to
//! `overflowWorkers` in all)
//! and the long runs drop to the lowest priority, so a healthy run is not queued behind
//! runaways (or behind runs awaiting slow tools) until their budgets run out. An extra worker
//! leaves once it has been idle for `EXTRA_IDLE`; a demoted worker leaves after its run.
//!
//! Long runs: a run that has used `LONG_RUN_CPU` of CPU on its worker drops to `LONG_RUN_NICE`
//! (when `workerNice` is below it), so a CPU-bound program yields to the host's event loop and
//! to the threads carrying other runs' tool calls, while short runs keep the host's priority:
//! a worker thread below the priority of other work on a loaded machine waits for a core at
//! every wake-up (measured on 2 cores beside two nice-19 CPU-bound processes, ten-tool-call
//! run in 'process': 7.9-9.1 ms median at nice 10, 3.8-4.7 ms at nice 0).
//!
//! The check runs when a run is queued with no idle worker, when a worker takes a run with
//! others still waiting, and on the watchdog's timer while the busy runs are still young.

use super::watchdog::LongRun;
use super::{lock, standby, start_worker, Shared};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Nice value of a worker whose run made the pool start an extra worker: the lowest priority.
const DEMOTED_NICE: i32 = 19;

/// CPU time a run uses on its worker before it is a long run (time awaiting tools and timers
/// does not count).
const LONG_RUN_CPU: Duration = Duration::from_millis(100);

/// Nice value of a worker holding a long run.
const LONG_RUN_NICE: i32 = 10;

/// How long a worker above `workers` waits for a run before it leaves.
pub(super) const EXTRA_IDLE: Duration = Duration::from_secs(1);

/// A worker that is running a run: which run, since when, its thread, and its nice value
/// (above `workerNice` once demoted: then it leaves after the run).
pub(super) struct Busy {
    run_id: u64,
    since: Instant,
    tid: u32,
    nice: i32,
}

/// The busy workers, by worker id.
#[derive(Default)]
pub(super) struct BusyWorkers {
    workers: HashMap<usize, Busy>,
    /// The earliest admission check already armed on the watchdog.
    check_at: Option<Instant>,
}

/// Records that worker `id` (the calling thread) starts run `run_id`; checks admission for the
/// runs still waiting.
pub(super) fn started(shared: &Arc<Shared>, id: usize, run_id: u64) {
    let busy = Busy {
        run_id,
        since: Instant::now(),
        tid: crate::os::current_thread_id(),
        nice: shared.limits.worker_nice,
    };
    lock(&shared.busy).workers.insert(id, busy);
    if !shared.jobs.is_empty() {
        check(shared);
    }
}

/// Records that worker `id` finished its run. Returns whether the worker was demoted (then it
/// must leave: its thread cannot be given its priority back without a privilege).
pub(super) fn finished(shared: &Shared, id: usize) -> bool {
    lock(&shared.busy)
        .workers
        .remove(&id)
        .is_some_and(|b| b.nice > shared.limits.worker_nice)
}

/// The watchdog's action for run `run_id` on worker `id` once it is a long run (`None` when
/// the workers already run at `LONG_RUN_NICE` or below).
pub(super) fn long_run(shared: &Arc<Shared>, id: usize, run_id: u64) -> Option<LongRun> {
    if shared.limits.worker_nice >= LONG_RUN_NICE {
        return None;
    }
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let action = Box::new(move || {
        let Some(shared) = weak.upgrade() else { return };
        // Under the busy map's lock, like `check`: the thread is alive while it is listed.
        let mut busy = lock(&shared.busy);
        if let Some(b) = busy.workers.get_mut(&id) {
            if b.run_id == run_id && b.nice < LONG_RUN_NICE {
                crate::os::set_thread_nice(b.tid, LONG_RUN_NICE);
                b.nice = LONG_RUN_NICE;
            }
        }
    });
    Some(LongRun::after_cpu(LONG_RUN_CPU, action))
}

/// A run was queued: unless a worker is idle and will take it, start a standby thread if the
/// run waits for an isolate (`standby.rs`), or check admission if it waits for a place.
pub(super) fn queued(shared: &Arc<Shared>) {
    if shared.idle.load(Ordering::Acquire) == 0 {
        standby::queued(shared);
        check(shared);
    }
}

/// Starts extra workers for the waiting runs if no worker is free, every worker has held its
/// run for `overflow_after` and the extra workers are not all in use; otherwise, if only the runs' age
/// stands in the way, looks again when the youngest is old enough.
fn check(shared: &Arc<Shared>) {
    let limits = &shared.limits;
    if shared.disposed.load(Ordering::Acquire)
        || shared.jobs.is_empty()
        || shared.idle.load(Ordering::Acquire) > 0
    {
        return;
    }
    let most_places = limits.workers + limits.overflow_workers;
    if shared.slots.limit() >= most_places {
        return;
    }
    let now = Instant::now();
    let mut busy = lock(&shared.busy);
    // A place not held by a run: its worker is between runs, or a standby thread is about to
    // take it, and then the waiting run.
    if busy.workers.len() < shared.slots.limit() {
        return;
    }
    let youngest = busy.workers.values().map(|b| b.since).max();
    if let Some(youngest) = youngest {
        let old_enough_at = youngest + limits.overflow_after;
        if old_enough_at > now {
            if busy.check_at.is_none_or(|at| at > old_enough_at) {
                busy.check_at = Some(old_enough_at);
                let weak: Weak<Shared> = Arc::downgrade(shared);
                let recheck = Box::new(move || {
                    if let Some(shared) = weak.upgrade() {
                        lock(&shared.busy).check_at = None;
                        check(&shared);
                    }
                });
                shared.watchdog.after(old_enough_at, recheck);
            }
            return;
        }
    }
    // The busy map's lock is held: a worker leaves it (and may exit) only under this lock, so
    // every thread id here names a live thread of this process.
    for b in busy.workers.values_mut().filter(|b| b.nice < DEMOTED_NICE) {
        crate::os::set_thread_nice(b.tid, DEMOTED_NICE);
        b.nice = DEMOTED_NICE;
    }
    drop(busy);
    // One extra worker per waiting run at once: runs queued behind the long ones are all
    // admitted now, not one per `overflow_after`.
    for _ in 0..shared.jobs.len() {
        if !shared.slots.add_extra_worker(most_places) {
            break;
        }
        start_worker(shared);
    }
}

/// Whether a worker may leave because the pool can spare it (it then counts itself out, with
/// an extra worker's place if there is one, or else in a standby thread's stead).
pub(super) fn leave_if_extra(shared: &Shared) -> bool {
    shared.slots.leave_if_extra(shared.limits.workers)
}
