//! A worker's life: build an isolate, take a place (`slots.rs`), take a job, run it in the warm
//! isolate under the watchdog, answer it and give the place back at once: a thread waiting with
//! a warm isolate (a standby thread, `standby.rs`) takes it while this one builds its next
//! isolate. A panic is caught and answered `ERR_WORKER_LOST`; the thread then exits and
//! `replace` starts another.

use super::admission::{self, EXTRA_IDLE};
use super::retained::{hold_retained, HandleCommand};
use super::slots::HeldSlot;
use super::standby::STANDBY_IDLE;
use super::supervise::{keepable, run_ended, supervised_run};
use super::{answer_unstarted, panic_text, start_worker, Job, Shared};
use crate::error::Fault;
use crate::run::{RunKind, TestHook};
use crate::sandbox::Sandbox;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The supervisor's one move: forget worker `id` (its thread is dead or abandoned) and start a
/// new one in its place (unless extra workers already make up for it).
pub(super) fn replace(shared: &Arc<Shared>, id: usize) {
    // Dropping the JoinHandle detaches an abandoned thread; a dead one is already gone.
    shared.workers().remove(&id);
    admission::finished(shared, id);
    shared.counters.replaced.fetch_add(1, Ordering::Relaxed);
    step_down(shared);
}

/// Worker no longer serves the queue (it left, or now holds a retained isolate): count it out
/// (with one extra worker's place, or in a standby thread's stead), unless fewer than `workers`
/// would remain; then its count passes to a replacement at once (so admission never starts an
/// extra worker for a run the replacement will take).
fn step_down(shared: &Arc<Shared>) {
    if admission::leave_if_extra(shared) {
        return;
    }
    start_from_watchdog(shared);
}

/// Starts a thread already counted in `slots` from the watchdog's thread. A new thread inherits
/// its creator's nice value, and the caller may have been lowered (a long run, admission) or be
/// the host's own thread: the watchdog's thread has the priority the pool started with.
pub(super) fn start_from_watchdog(shared: &Arc<Shared>) {
    let pending = PendingStart::new(shared);
    let start = Box::new(move || {
        if let Some(shared) = pending.0.upgrade() {
            start_worker(&shared);
        }
        drop(pending);
    });
    shared.watchdog.after(Instant::now(), start);
}

/// A replacement on its way to the watchdog's thread, counted in `Shared::pending_starts`
/// until it has started or its action is dropped unrun (a watchdog that stopped).
struct PendingStart(std::sync::Weak<Shared>);

impl PendingStart {
    fn new(shared: &Arc<Shared>) -> PendingStart {
        shared.pending_starts.fetch_add(1, Ordering::AcqRel);
        PendingStart(Arc::downgrade(shared))
    }
}

impl Drop for PendingStart {
    fn drop(&mut self) {
        if let Some(shared) = self.0.upgrade() {
            shared.pending_starts.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Waits for the next run (holding a place). While the pool has extra workers, a worker waits
/// `EXTRA_IDLE` at most and then leaves; `None` means this thread must end.
fn next_job(shared: &Arc<Shared>, id: usize) -> Option<Job> {
    loop {
        shared.idle.fetch_add(1, Ordering::AcqRel);
        let extra = shared.slots.has_extra_workers(shared.limits.workers);
        let next = if extra {
            shared.jobs.recv_timeout(EXTRA_IDLE)
        } else {
            lead_while_no_run(shared).map_or_else(
                || {
                    shared
                        .jobs
                        .recv()
                        .map_err(|_| RecvTimeoutError::Disconnected)
                },
                Ok,
            )
        };
        shared.idle.fetch_sub(1, Ordering::AcqRel);
        match next {
            Ok(job) => return Some(job),
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {
                if admission::leave_if_extra(shared) {
                    shared.workers().remove(&id);
                    return None;
                }
            }
        }
    }
}

/// In an engine process, while no run is in progress, an idle worker waits on the engine's
/// input itself (`InputPump::lead`), so that the next run's `Execute` wakes the worker that will
/// run it rather than the engine's reader thread, which would then wake a worker. It stops as
/// soon as a run is in progress elsewhere (that run's awaits may then lead: a reply is on the
/// latency path of a run, an `Execute` only at its start) or the pool is disposed. `None`: the
/// caller waits on the queue as usual.
fn lead_while_no_run(shared: &Shared) -> Option<Job> {
    let pump = shared.input_pump.get()?;
    let may_lead = || {
        shared.counters.busy.load(Ordering::Acquire) == 0
            && !shared.disposed.load(Ordering::Acquire)
    };
    let stop_leading = || !shared.jobs.is_empty() || !may_lead();
    loop {
        if let Ok(job) = shared.jobs.try_recv() {
            return Some(job);
        }
        if !may_lead() {
            return None;
        }
        pump.lead(&stop_leading, None)?;
    }
}

/// Waits for a place with this thread's warm isolate. A thread that waits `STANDBY_IDLE` in vain
/// while the pool has more threads than places leaves (`None`): the standby stock shrinks once
/// runs stop coming faster than the workers rebuild their isolates.
fn take_place(shared: &Shared, id: usize) -> Option<Arc<HeldSlot>> {
    loop {
        if let Some(held) = shared.slots.take_within(STANDBY_IDLE) {
            return Some(Arc::new(held));
        }
        if shared.slots.leave_as_standby() {
            shared.workers().remove(&id);
            return None;
        }
    }
}

pub(super) fn worker_main(shared: Arc<Shared>, id: usize) {
    crate::os::lower_thread_priority(shared.limits.worker_nice);
    let mut warm: Option<Sandbox> = None;
    loop {
        // Create the next isolate while idle, ahead of demand.
        if warm.is_none() && !shared.disposed.load(Ordering::Acquire) {
            if let Ok(sandbox) = Sandbox::new(&shared.limits) {
                shared
                    .counters
                    .isolates_created
                    .fetch_add(1, Ordering::Relaxed);
                warm = Some(sandbox);
            }
        }
        let Some(held) = take_place(&shared, id) else {
            return;
        };
        let Some(job) = next_job(&shared, id) else {
            held.give_back(&shared.slots);
            return;
        };
        if answer_unstarted(&shared, &job) {
            held.give_back(&shared.slots);
            continue;
        }
        admission::started(&shared, id, job.request.run_id);
        // Set by whoever closes this job's slot first: this worker when the run returns, or
        // the abandon action when the run cannot be stopped (then this thread must exit, since a
        // replacement has been started).
        let claimed = Arc::new(AtomicBool::new(false));
        shared.counters.busy.fetch_add(1, Ordering::Relaxed);
        let mut demoted = false;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            run_job(&shared, id, &mut warm, &job, &claimed, &held, &mut demoted)
        }));
        // Given back here when the run ended without its answer (a machinery fault, a panic);
        // run_job already gave it back after answering, or the abandon action did.
        held.give_back(&shared.slots);
        if claimed.swap(true, Ordering::AcqRel) {
            return;
        }
        // (A run that panicked is still recorded as busy.)
        demoted |= admission::finished(&shared, id);
        shared.counters.busy.fetch_sub(1, Ordering::Relaxed);
        match outcome {
            Err(panic) => {
                let detail = panic_text(&panic);
                shared.counters.lost.fetch_add(1, Ordering::Relaxed);
                job.request
                    .completion
                    .finish(Err(Fault::worker_lost(&format!(
                        "worker panicked: {detail}"
                    ))));
                replace(&shared, id);
                return;
            }
            Ok(Some((sandbox, commands))) => {
                // This thread now holds a retained isolate; a new worker takes its place.
                step_down(&shared);
                hold_retained(&shared, id, job.request.run_id, sandbox, commands);
                return;
            }
            Ok(None) if demoted => {
                // Its priority was lowered for the run that held it: a fresh thread takes its
                // place if one is needed.
                shared.workers().remove(&id);
                step_down(&shared);
                return;
            }
            Ok(None) => {}
        }
    }
}

/// Runs a fresh job on this worker. Returns the sandbox and its command channel when the
/// isolate was retained (the handle is registered before the run is answered, so a call on
/// the handle can never arrive before it exists).
fn run_job(
    shared: &Arc<Shared>,
    id: usize,
    warm: &mut Option<Sandbox>,
    job: &Job,
    claimed: &Arc<AtomicBool>,
    held: &Arc<HeldSlot>,
    demoted: &mut bool,
) -> Option<(Sandbox, Receiver<HandleCommand>)> {
    let request = &job.request;
    let limits = request.overrides.apply(&shared.limits);
    let isolate_started = Instant::now();
    let mut sandbox = match warm.take() {
        Some(sandbox) if sandbox.limits().same_isolate_shape(&limits) => sandbox,
        other => {
            *warm = other;
            match Sandbox::new(&limits) {
                Ok(sandbox) => {
                    shared
                        .counters
                        .isolates_created
                        .fetch_add(1, Ordering::Relaxed);
                    sandbox
                }
                Err(message) => {
                    *demoted = admission::finished(shared, id);
                    request.completion.finish(Err(Fault::worker_lost(&message)));
                    return None;
                }
            }
        }
    };
    if request.test_hook == Some(TestHook::Panic) {
        panic!("fault injected by the test hook");
    }
    let replace_me = {
        let shared = shared.clone();
        let held = held.clone();
        move || {
            // This thread is lost to its run: its replacement needs the place.
            held.give_back(&shared.slots);
            replace(&shared, id)
        }
    };
    let isolate = isolate_started.elapsed();
    let mut report = supervised_run(
        shared,
        &mut sandbox,
        job,
        &limits,
        isolate,
        claimed,
        replace_me,
        admission::long_run(shared, id, request.run_id),
    );
    let retain = matches!(request.kind, RunKind::Fresh { retain: true, .. });
    let mut kept = None;
    if retain && keepable(&sandbox, &report) && !claimed.load(Ordering::Acquire) {
        let mut retained = shared.retained();
        if retained.len() < shared.limits.max_retained && !shared.disposed.load(Ordering::Acquire) {
            let (tx, rx) = crossbeam_channel::unbounded();
            retained.insert(request.run_id, tx);
            report.handle_id = request.run_id;
            kept = Some(rx);
        }
    }
    // Out of the busy set before the answer: whoever gets it may queue the next run at once,
    // and must not find this worker still held by a long run (admission would start an extra
    // worker for nothing).
    *demoted = admission::finished(shared, id);
    if request.completion.finish(Ok(report)) {
        shared.counters.completed.fetch_add(1, Ordering::Relaxed);
    }
    // A standby thread, its isolate built, may take the next run while this one builds its own.
    held.give_back(&shared.slots);
    run_ended(shared);
    // The caller's thread was just woken to take the answer, possibly onto this CPU, and this
    // thread (below the host's priority) is about to spend a millisecond or more replacing its
    // isolate. Without yielding, the scheduler can let that run before the woken thread
    // (measured, 'thread' isolation, runs 10 ms apart: answer delivered after 1.6 ms instead of
    // 0.25 ms).
    std::thread::yield_now();
    // Otherwise the isolate is dropped here, after the caller has its answer.
    kept.map(|rx| (sandbox, rx))
}
