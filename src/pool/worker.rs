//! A worker's life: take a job, run it in the warm isolate under the watchdog, answer it, build
//! the next isolate while idle. A panic is caught and answered `ERR_WORKER_LOST`; the thread
//! then exits and `replace` starts another.

use super::admission::{self, EXTRA_IDLE};
use super::retained::{hold_retained, HandleCommand};
use super::watchdog::{abandon_action, fire, CpuBudget, LongRun};
use super::{answer_unstarted, lock, panic_text, Job, Shared};
use crate::bridge::InputPump;
use crate::error::Fault;
use crate::limits::Limits;
use crate::run::{Report, RunError, RunKind, RunOutput, TestHook};
use crate::sandbox::{Program, Sandbox};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Stack of each worker thread. V8 keeps its own limit below this.
const WORKER_STACK_BYTES: usize = 4 * 1024 * 1024;

/// Starts a worker thread and records it. Called at start-up and by admission.
pub(super) fn spawn_worker(shared: &Arc<Shared>) {
    shared.live.fetch_add(1, Ordering::AcqRel);
    start_worker(shared);
}

/// Starts the thread of a worker already counted in `live`, or uncounts it when the pool is
/// disposed or the thread cannot start.
fn start_worker(shared: &Arc<Shared>) {
    let mut workers = shared.workers();
    if shared.disposed.load(Ordering::Acquire) {
        shared.live.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let id = shared.next_worker.fetch_add(1, Ordering::Relaxed);
    let thread_shared = shared.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("codemode-worker-{id}"))
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || worker_main(thread_shared, id));
    match spawned {
        Ok(handle) => {
            workers.insert(id, handle);
        }
        Err(_) => {
            shared.live.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The supervisor's one move: forget worker `id` (its thread is dead or abandoned) and start a
/// new one in its place (unless extra workers already make up for it).
pub(super) fn replace(shared: &Arc<Shared>, id: usize) {
    // Dropping the JoinHandle detaches an abandoned thread; a dead one is already gone.
    shared.workers().remove(&id);
    admission::finished(shared, id);
    shared.counters.replaced.fetch_add(1, Ordering::Relaxed);
    step_down(shared);
}

/// Worker no longer serves the queue (it left, or now holds a retained isolate): count it out,
/// unless fewer than `workers` would remain; then its place in `live` passes to a replacement
/// at once (so admission never starts an extra worker for a run the replacement will take).
fn step_down(shared: &Arc<Shared>) {
    let workers = shared.limits.workers;
    let counted_out = shared
        .live
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n > workers).then(|| n - 1)
        })
        .is_ok();
    if counted_out {
        return;
    }
    // A new thread inherits its creator's nice value, and the thread stepping down may have
    // been lowered (a long run, admission): the watchdog's thread, at the priority the pool
    // started with, starts the replacement.
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

/// Waits for the next run. A worker above `workers` (an extra one) waits `EXTRA_IDLE` at most
/// and then leaves; `None` means this thread must end.
fn next_job(shared: &Arc<Shared>, id: usize) -> Option<Job> {
    loop {
        shared.idle.fetch_add(1, Ordering::AcqRel);
        let extra = shared.live.load(Ordering::Acquire) > shared.limits.workers;
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

/// The engine's input as a run of this pool may read it: a run awaiting its reply waits on the
/// input itself (leads) only while it is the only run in progress. With others in progress the
/// leader is woken by their frames too, one wake-up more per frame than the reader's alone,
/// which costs a busy pool more CPU than the wake-up it saves on the leader's own replies
/// (500 ten-call runs submitted at once on 2 workers, 8 interleaved pairs: 0.94x the time of
/// the same burst with every run free to lead).
struct RunPump<'a> {
    inner: &'a dyn InputPump,
    /// The runs in progress in the pool (`Counters::busy`).
    running_runs: &'a AtomicUsize,
}

impl InputPump for RunPump<'_> {
    fn pump(&self) {
        self.inner.pump();
    }

    fn lead(&self, ready: &dyn Fn() -> bool, wake_at: Option<Instant>) -> Option<bool> {
        let alone = || self.running_runs.load(Ordering::Acquire) <= 1;
        if !alone() {
            return None;
        }
        self.inner.lead(&|| ready() || !alone(), wake_at)
    }
}

/// Tells the engine's input that a run ended (after its answer, off its latency path): a reader
/// that stood aside while it was the only run reads again.
pub(super) fn run_ended(shared: &Shared) {
    if let Some(pump) = shared.input_pump.get() {
        pump.run_ended();
    }
}

fn worker_main(shared: Arc<Shared>, id: usize) {
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
        let Some(job) = next_job(&shared, id) else {
            return;
        };
        if answer_unstarted(&shared, &job) {
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
            run_job(&shared, id, &mut warm, &job, &claimed, &mut demoted)
        }));
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

/// Whether the isolate that produced `report` may serve another run (`retainHandles`): not if a
/// bound ended the run, whether the sandbox stopped it from outside (a spinning loop) or the run
/// ended at the bound itself (a deadline reached awaiting a tool, an oversized reply).
pub(super) fn keepable(sandbox: &Sandbox, report: &Report) -> bool {
    sandbox.reusable()
        && !report
            .output
            .error
            .as_ref()
            .is_some_and(RunError::ended_by_bound)
}

/// Runs a program under the watchdog and returns its report (not yet delivered). If the run
/// cannot be stopped, the abandon action answers it and calls `on_abandon` (which must make up
/// for this thread, which is then lost); `claimed` tells the caller that happened.
/// `continuation`: a further run in a retained isolate (its namespaces are installed already).
/// `isolate`: how long getting the sandbox took (none when a warm one served). `long_run`: what
/// the watchdog does if the run is still going at its instant (`admission::long_run`).
#[allow(clippy::too_many_arguments)]
pub(super) fn supervised_run(
    shared: &Arc<Shared>,
    sandbox: &mut Sandbox,
    job: &Job,
    limits: &Limits,
    isolate: Duration,
    claimed: &Arc<AtomicBool>,
    on_abandon: impl FnOnce() + Send + 'static,
    long_run: Option<LongRun>,
) -> Report {
    let request = &job.request;
    let started = Instant::now();
    let deadline = started + limits.timeout;
    let terminate_at = deadline + limits.termination_grace;
    // Answers the run and gives up this thread when the run cannot be stopped: fired by the
    // watchdog long after the deadline, or by the sandbox when it must park its thread.
    let abandon = {
        let shared = shared.clone();
        let completion = request.completion.clone();
        let claimed = claimed.clone();
        let queued = started.duration_since(request.enqueued_at);
        let enqueued_at = request.enqueued_at;
        let run_id = request.run_id;
        abandon_action(move |error: RunError| {
            if claimed.swap(true, Ordering::AcqRel) {
                return; // the run returned first
            }
            lock(&shared.running).remove(&run_id);
            shared.counters.busy.fetch_sub(1, Ordering::Relaxed);
            shared.counters.abandoned.fetch_add(1, Ordering::Relaxed);
            // Forget this thread before answering: whoever learns of the answer may dispose of
            // the pool at once, and disposal must not find (and wait for) a thread that never
            // ends.
            on_abandon();
            let output = RunOutput {
                error: Some(error),
                ..RunOutput::default()
            };
            completion.finish(Ok(Report {
                output,
                queued,
                run: started.elapsed(),
                total: enqueued_at.elapsed(),
                handle_id: 0,
            }));
        })
    };
    let terminator = sandbox.terminator();
    lock(&shared.running).insert(request.run_id, terminator.clone());
    // A cancel that arrived after the job left the queue but before it was registered above.
    if let Some(message) = lock(&shared.cancelled).remove(&request.run_id) {
        terminator.cancel(message);
    }
    let wedge_action = abandon.clone();
    terminator.on_wedge(Box::new(move |error| fire(&wedge_action, error)));
    let armed = shared.watchdog.arm(
        terminate_at,
        terminate_at + limits.abandon_after,
        terminator,
        abandon,
        CpuBudget::for_this_thread(limits.cpu_time, limits.abandon_after),
        long_run,
    );
    let (run_config_json, continuation) = match &request.kind {
        RunKind::Fresh { config_json, .. } => (config_json.as_str(), false),
        RunKind::Handle { .. } => ("", true),
    };
    let pump = shared.input_pump.get().map(|inner| RunPump {
        inner: &**inner,
        running_runs: &shared.counters.busy,
    });
    let cpu_before = crate::os::thread_cpu_time();
    let mut output = sandbox.run(Program {
        run_id: request.run_id,
        input: request.kind.program(),
        cache: &shared.code_cache,
        run_config_json,
        limits,
        deadline,
        sink: request.sink.clone(),
        events: &job.events,
        pump: pump.as_ref().map(|pump| pump as &dyn InputPump),
        continuation,
    });
    output.metrics.cpu = crate::os::thread_cpu_time().saturating_sub(cpu_before);
    output.metrics.isolate = isolate;
    drop(armed);
    lock(&shared.running).remove(&request.run_id);
    lock(&shared.cancelled).remove(&request.run_id);
    Report {
        output,
        queued: started.duration_since(request.enqueued_at),
        run: started.elapsed(),
        total: request.enqueued_at.elapsed(),
        handle_id: 0,
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
        move || replace(&shared, id)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// An input where a leader sees `ready` checked once per scripted step, as after each
    /// frame it acts on.
    struct ScriptedInput {
        /// What happens before each check: the number of runs in progress then.
        steps: Vec<usize>,
        running: Arc<AtomicUsize>,
        led: Mutex<Vec<bool>>,
    }

    impl InputPump for ScriptedInput {
        fn pump(&self) {}

        fn lead(&self, ready: &dyn Fn() -> bool, _wake_at: Option<Instant>) -> Option<bool> {
            for &running in &self.steps {
                self.running.store(running, Ordering::Release);
                if ready() {
                    self.led.lock().unwrap().push(true);
                    return Some(true);
                }
            }
            self.led.lock().unwrap().push(false);
            Some(false)
        }
    }

    #[test]
    fn a_run_leads_only_while_it_is_the_only_run_in_progress() {
        let running = Arc::new(AtomicUsize::new(1));
        let input = ScriptedInput {
            steps: vec![1, 1, 2],
            running: running.clone(),
            led: Mutex::new(Vec::new()),
        };
        let pump = RunPump {
            inner: &input,
            running_runs: &running,
        };
        // Alone: it leads, and stops at the first check after a second run started.
        assert_eq!(pump.lead(&|| false, None), Some(true));
        // Another run in progress: it does not lead at all.
        running.store(2, Ordering::Release);
        assert_eq!(pump.lead(&|| false, None), None);
        assert_eq!(*input.led.lock().unwrap(), vec![true]);
        // Alone again, its own event ends the wait.
        running.store(1, Ordering::Release);
        assert_eq!(pump.lead(&|| true, None), Some(true));
    }
}
