//! The pool: a bounded queue, worker threads that each run one isolate at a time, the
//! supervisor bookkeeping that replaces lost workers, and the watchdog.

mod watchdog;

use crate::bridge::{RunEvent, ToolSink};
use crate::error::Fault;
use crate::limits::Limits;
use crate::sandbox::{Program, RunOutput, Sandbox, Terminator};
use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use watchdog::{abandon_action, fire, Watchdog};

/// Stack of each worker thread. V8 keeps its own limit below this.
const WORKER_STACK_BYTES: usize = 4 * 1024 * 1024;

/// Deliberate faults, for the tests of supervision only (enabled by an environment variable
/// read by the API layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultInjection {
    /// The worker thread panics while holding the job.
    Panic,
}

/// What a finished run reports.
#[derive(Debug)]
pub struct Report {
    pub output: RunOutput,
    pub queued: Duration,
    pub run: Duration,
    pub total: Duration,
    /// Non-zero when the run's isolate was retained (`Job::retain`): the id that
    /// `Pool::execute_retained` and `Pool::dispose_retained` take.
    pub handle_id: u64,
}

impl Report {
    /// A run that ended with `message` before it could start (cancelled while queued, or
    /// refused by a bound), having waited `waited`.
    pub fn not_started(message: String, waited: Duration) -> Report {
        Report {
            output: RunOutput {
                error: Some(message),
                ..RunOutput::default()
            },
            queued: waited,
            run: Duration::ZERO,
            total: waited,
            handle_id: 0,
        }
    }
}

pub type Outcome = Result<Report, Fault>;
type Callback = Box<dyn FnOnce(Outcome) + Send>;

/// Delivers a job's outcome exactly once, whoever gets there first (its worker, or the watchdog
/// abandoning it).
#[derive(Clone)]
pub struct Completion(Arc<Mutex<Option<Callback>>>);

impl Completion {
    pub fn new(callback: impl FnOnce(Outcome) + Send + 'static) -> Self {
        Completion(Arc::new(Mutex::new(Some(Box::new(callback)))))
    }

    /// Returns false if the outcome was already delivered.
    pub fn finish(&self, outcome: Outcome) -> bool {
        let callback = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        match callback {
            Some(callback) => {
                callback(outcome);
                true
            }
            None => false,
        }
    }
}

/// One execution waiting for, or held by, a worker.
pub struct Job {
    pub run_id: u64,
    pub code: String,
    pub run_config_json: String,
    /// The executor's limits with this run's overrides applied.
    pub limits: Limits,
    pub sink: Arc<dyn ToolSink>,
    pub events: Receiver<RunEvent>,
    pub enqueued_at: Instant,
    pub completion: Completion,
    pub fault: Option<FaultInjection>,
    /// Keep the isolate after the run (if it is still usable and `max_retained` allows) and
    /// answer with a handle id: the run's id.
    pub retain: bool,
}

/// A further run in a retained isolate.
pub struct HandleJob {
    pub run_id: u64,
    pub code: String,
    /// The run's timeout; the executor's when `None`.
    pub timeout: Option<Duration>,
    pub sink: Arc<dyn ToolSink>,
    pub events: Receiver<RunEvent>,
    pub enqueued_at: Instant,
    pub completion: Completion,
}

enum HandleCommand {
    Execute(HandleJob),
    Dispose,
}

/// Told when a retained isolate goes away: its handle id and why.
pub type HandleClosedHook = Arc<dyn Fn(u64, &str) + Send + Sync>;

/// Counters, read by `stats()`.
#[derive(Default)]
struct Counters {
    busy: AtomicUsize,
    completed: AtomicU64,
    lost: AtomicU64,
    abandoned: AtomicU64,
    replaced: AtomicU64,
    isolates_created: AtomicU64,
}

/// A snapshot of the pool's counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolStats {
    pub workers: usize,
    pub busy: usize,
    pub queued: usize,
    pub completed: u64,
    pub lost: u64,
    pub abandoned: u64,
    pub replaced: u64,
    pub isolates_created: u64,
}

struct Shared {
    limits: Limits,
    jobs: Receiver<Job>,
    disposed: AtomicBool,
    watchdog: Watchdog,
    /// Every thread of the pool: workers and the threads that hold retained isolates.
    workers: Mutex<HashMap<usize, JoinHandle<()>>>,
    next_worker: AtomicUsize,
    counters: Counters,
    /// Retained isolates by handle id: the channel of the thread that holds each.
    retained: Mutex<HashMap<u64, Sender<HandleCommand>>>,
    on_handle_closed: Mutex<Option<HandleClosedHook>>,
    /// Runs in progress, by run id: how to stop each (cancellation by the host).
    running: Mutex<HashMap<u64, Terminator>>,
    /// Runs cancelled before they started, with their message: answered when dequeued.
    cancelled: Mutex<HashMap<u64, String>>,
}

impl Shared {
    fn workers(&self) -> MutexGuard<'_, HashMap<usize, JoinHandle<()>>> {
        self.workers.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn retained(&self) -> MutexGuard<'_, HashMap<u64, Sender<HandleCommand>>> {
        self.retained.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn handle_closed(&self, handle_id: u64, reason: &str) {
        let hook = self
            .on_handle_closed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(hook) = hook {
            hook(handle_id, reason);
        }
    }
}

pub struct Pool {
    shared: Arc<Shared>,
    sender: Mutex<Option<Sender<Job>>>,
}

impl Pool {
    pub fn new(limits: Limits) -> Pool {
        let (sender, jobs) = crossbeam_channel::bounded(limits.max_queue);
        let workers = limits.workers;
        let shared = Arc::new(Shared {
            limits,
            jobs,
            disposed: AtomicBool::new(false),
            watchdog: Watchdog::start(),
            workers: Mutex::new(HashMap::new()),
            next_worker: AtomicUsize::new(0),
            counters: Counters::default(),
            retained: Mutex::new(HashMap::new()),
            on_handle_closed: Mutex::new(None),
            running: Mutex::new(HashMap::new()),
            cancelled: Mutex::new(HashMap::new()),
        });
        for _ in 0..workers {
            spawn_worker(&shared);
        }
        Pool {
            shared,
            sender: Mutex::new(Some(sender)),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.shared.limits
    }

    /// Queues a job, or gives it back with the fault that refused it.
    pub fn submit(&self, job: Job) -> Result<(), (Fault, Job)> {
        let sender = self.sender.lock().unwrap_or_else(|p| p.into_inner());
        let Some(sender) = sender.as_ref() else {
            return Err((Fault::disposed(), job));
        };
        match sender.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(job)) => {
                Err((Fault::queue_full(self.shared.limits.max_queue), job))
            }
            Err(TrySendError::Disconnected(job)) => Err((Fault::disposed(), job)),
        }
    }

    /// Cancels a run: one in progress is stopped at once (its error is `message`), one still
    /// queued is answered with `message` when a worker takes it. Call it only for runs that are
    /// queued or running (a cancel for a finished run would be remembered for nothing).
    pub fn cancel(&self, run_id: u64, message: String) {
        let terminator = lock(&self.shared.running).get(&run_id).cloned();
        match terminator {
            Some(terminator) => terminator.cancel(message),
            None => {
                lock(&self.shared.cancelled).insert(run_id, message);
            }
        }
    }

    /// Retained isolates alive now.
    pub fn retained(&self) -> usize {
        self.shared.retained().len()
    }

    /// Sets the hook told when a retained isolate goes away (expiry, disposal, a bound).
    pub fn on_handle_closed(&self, hook: HandleClosedHook) {
        *self
            .shared
            .on_handle_closed
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    /// Runs more code in a retained isolate. A handle that no longer exists answers
    /// `ERR_HANDLE_CLOSED`.
    pub fn execute_retained(&self, handle_id: u64, job: HandleJob) {
        let sender = self.shared.retained().get(&handle_id).cloned();
        let job = match sender {
            Some(sender) => match sender.send(HandleCommand::Execute(job)) {
                Ok(()) => return,
                Err(crossbeam_channel::SendError(HandleCommand::Execute(job))) => job,
                Err(_) => return,
            },
            None => job,
        };
        job.completion.finish(Err(Fault::handle_closed(handle_id)));
    }

    /// Disposes of a retained isolate. Returns false when there was no such handle.
    pub fn dispose_retained(&self, handle_id: u64) -> bool {
        let sender = self.shared.retained().get(&handle_id).cloned();
        sender.is_some_and(|s| s.send(HandleCommand::Dispose).is_ok())
    }

    pub fn is_disposed(&self) -> bool {
        self.shared.disposed.load(Ordering::Acquire)
    }

    pub fn stats(&self) -> PoolStats {
        let c = &self.shared.counters;
        let retained = self.shared.retained().len();
        PoolStats {
            workers: self.shared.workers().len().saturating_sub(retained),
            busy: c.busy.load(Ordering::Relaxed),
            queued: self.shared.jobs.len(),
            completed: c.completed.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            abandoned: c.abandoned.load(Ordering::Relaxed),
            replaced: c.replaced.load(Ordering::Relaxed),
            isolates_created: c.isolates_created.load(Ordering::Relaxed),
        }
    }

    /// Stops accepting runs. Queued runs fail with `ERR_DISPOSED`; runs in progress finish
    /// (each within its own timeout). `done` is called once every worker has exited.
    pub fn dispose(&self, done: impl FnOnce() + Send + 'static) {
        let already = self.shared.disposed.swap(true, Ordering::AcqRel);
        self.sender.lock().unwrap_or_else(|p| p.into_inner()).take();
        // Retained isolates end with the pool (their threads see the channel close).
        let handles: Vec<u64> = self.shared.retained().drain().map(|(id, _)| id).collect();
        for handle_id in handles {
            self.shared
                .handle_closed(handle_id, "the executor was disposed");
        }
        let shared = self.shared.clone();
        std::thread::spawn(move || {
            if !already {
                loop {
                    let handles: Vec<_> = shared.workers().drain().map(|(_, h)| h).collect();
                    if handles.is_empty() {
                        break;
                    }
                    for handle in handles {
                        let _ = handle.join();
                    }
                }
                shared.watchdog.shutdown();
            }
            done();
        });
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if !self.is_disposed() {
            self.dispose(|| {});
        }
    }
}

/// Starts a worker thread and records it. Called at start-up and by `replace`.
fn spawn_worker(shared: &Arc<Shared>) {
    let mut workers = shared.workers();
    if shared.disposed.load(Ordering::Acquire) {
        return;
    }
    let id = shared.next_worker.fetch_add(1, Ordering::Relaxed);
    let thread_shared = shared.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("codemode-worker-{id}"))
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || worker_main(thread_shared, id));
    if let Ok(handle) = spawned {
        workers.insert(id, handle);
    }
}

/// The supervisor's one move: forget worker `id` (its thread is dead or abandoned) and start a
/// new one in its place.
fn replace(shared: &Arc<Shared>, id: usize) {
    // Dropping the JoinHandle detaches an abandoned thread; a dead one is already gone.
    shared.workers().remove(&id);
    shared.counters.replaced.fetch_add(1, Ordering::Relaxed);
    spawn_worker(shared);
}

fn worker_main(shared: Arc<Shared>, id: usize) {
    lower_priority(shared.limits.worker_nice);
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
        let Ok(job) = shared.jobs.recv() else { return };
        if shared.disposed.load(Ordering::Acquire) {
            job.completion.finish(Err(Fault::disposed()));
            continue;
        }
        if let Some(message) = lock(&shared.cancelled).remove(&job.run_id) {
            let waited = job.enqueued_at.elapsed();
            job.completion
                .finish(Ok(Report::not_started(message, waited)));
            continue;
        }
        // Set by whoever closes this job's slot first: this worker when the run returns, or
        // the abandon action when the run cannot be stopped (then this thread must exit, since a
        // replacement has been started).
        let claimed = Arc::new(AtomicBool::new(false));
        shared.counters.busy.fetch_add(1, Ordering::Relaxed);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            run_job(&shared, id, &mut warm, &job, &claimed)
        }));
        if claimed.swap(true, Ordering::AcqRel) {
            return;
        }
        shared.counters.busy.fetch_sub(1, Ordering::Relaxed);
        match outcome {
            Err(panic) => {
                let detail = panic_text(&panic);
                shared.counters.lost.fetch_add(1, Ordering::Relaxed);
                job.completion.finish(Err(Fault::worker_lost(&format!(
                    "worker panicked: {detail}"
                ))));
                replace(&shared, id);
                return;
            }
            Ok(Some((sandbox, commands))) => {
                // This thread now holds a retained isolate; a new worker takes its place.
                spawn_worker(&shared);
                hold_retained(&shared, id, job.run_id, sandbox, commands);
                return;
            }
            Ok(None) => {}
        }
    }
}

/// Raises this thread's nice value (Linux: per thread). Programs and isolate pre-creation then
/// yield the CPU to the host's event loop and to the threads that carry tool calls and replies;
/// measured on 2 cores at nice 10: a ten-tool-call run 2.2 -> 1.7 ms median in 'process'
/// isolation, 1.6 -> 1.4 ms in 'thread'. Raising a nice value needs no privilege; failure is
/// ignored (the worker just keeps the default priority).
fn lower_priority(nice: i32) {
    if nice <= 0 {
        return;
    }
    // SAFETY: gettid and setpriority take and return plain integers and touch no memory of
    // ours; PRIO_PROCESS with a thread id changes only this thread on Linux.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// One run as `supervised_run` needs it, fresh or in a retained isolate.
struct RunSpec<'a> {
    run_id: u64,
    code: &'a str,
    run_config_json: &'a str,
    limits: &'a Limits,
    sink: &'a Arc<dyn ToolSink>,
    events: &'a Receiver<RunEvent>,
    enqueued_at: Instant,
    completion: &'a Completion,
    continuation: bool,
}

/// Runs a program under the watchdog and returns its report (not yet delivered). If the run
/// cannot be stopped, the abandon action answers it and calls `on_abandon` (which must make up
/// for this thread, which is then lost); `claimed` tells the caller that happened.
fn supervised_run(
    shared: &Arc<Shared>,
    sandbox: &mut Sandbox,
    spec: RunSpec<'_>,
    claimed: &Arc<AtomicBool>,
    on_abandon: impl FnOnce() + Send + 'static,
) -> Report {
    let started = Instant::now();
    let deadline = started + spec.limits.timeout;
    let terminate_at = deadline + spec.limits.termination_grace;
    // Answers the run and gives up this thread when the run cannot be stopped: fired by the
    // watchdog long after the deadline, or by the sandbox when it must park its thread.
    let abandon = {
        let shared = shared.clone();
        let completion = spec.completion.clone();
        let claimed = claimed.clone();
        let queued = started.duration_since(spec.enqueued_at);
        let enqueued_at = spec.enqueued_at;
        let run_id = spec.run_id;
        abandon_action(move |message: String| {
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
                error: Some(message),
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
    lock(&shared.running).insert(spec.run_id, terminator.clone());
    // A cancel that arrived after the job left the queue but before it was registered above.
    if let Some(message) = lock(&shared.cancelled).remove(&spec.run_id) {
        terminator.cancel(message);
    }
    let wedge_action = abandon.clone();
    terminator.on_wedge(Box::new(move |message| fire(&wedge_action, message)));
    let armed = shared.watchdog.arm(
        terminate_at,
        terminate_at + spec.limits.abandon_after,
        terminator,
        abandon,
    );
    let output = sandbox.run(Program {
        run_id: spec.run_id,
        code: spec.code,
        run_config_json: spec.run_config_json,
        limits: spec.limits,
        deadline,
        sink: spec.sink.clone(),
        events: spec.events,
        continuation: spec.continuation,
    });
    drop(armed);
    lock(&shared.running).remove(&spec.run_id);
    lock(&shared.cancelled).remove(&spec.run_id);
    Report {
        output,
        queued: started.duration_since(spec.enqueued_at),
        run: started.elapsed(),
        total: spec.enqueued_at.elapsed(),
        handle_id: 0,
    }
}

/// Runs a job on this worker. Returns the sandbox and its command channel when the isolate was
/// retained (the handle is registered before the run is answered, so a call on the handle can
/// never arrive before it exists).
fn run_job(
    shared: &Arc<Shared>,
    id: usize,
    warm: &mut Option<Sandbox>,
    job: &Job,
    claimed: &Arc<AtomicBool>,
) -> Option<(Sandbox, Receiver<HandleCommand>)> {
    let mut sandbox = match warm.take() {
        Some(sandbox) if sandbox.limits().same_isolate_shape(&job.limits) => sandbox,
        other => {
            *warm = other;
            match Sandbox::new(&job.limits) {
                Ok(sandbox) => {
                    shared
                        .counters
                        .isolates_created
                        .fetch_add(1, Ordering::Relaxed);
                    sandbox
                }
                Err(message) => {
                    job.completion.finish(Err(Fault::worker_lost(&message)));
                    return None;
                }
            }
        }
    };
    if job.fault == Some(FaultInjection::Panic) {
        panic!("fault injected by the test hook");
    }
    let replace_me = {
        let shared = shared.clone();
        move || replace(&shared, id)
    };
    let mut report = supervised_run(
        shared,
        &mut sandbox,
        RunSpec {
            run_id: job.run_id,
            code: &job.code,
            run_config_json: &job.run_config_json,
            limits: &job.limits,
            sink: &job.sink,
            events: &job.events,
            enqueued_at: job.enqueued_at,
            completion: &job.completion,
            continuation: false,
        },
        claimed,
        replace_me,
    );
    let mut kept = None;
    if job.retain && sandbox.reusable() && !claimed.load(Ordering::Acquire) {
        let mut retained = shared.retained();
        if retained.len() < shared.limits.max_retained && !shared.disposed.load(Ordering::Acquire) {
            let (tx, rx) = crossbeam_channel::unbounded();
            retained.insert(job.run_id, tx);
            report.handle_id = job.run_id;
            kept = Some(rx);
        }
    }
    if job.completion.finish(Ok(report)) {
        shared.counters.completed.fetch_add(1, Ordering::Relaxed);
    }
    // The caller's thread was just woken to take the answer, possibly onto this CPU, and this
    // thread (below the host's priority) is about to spend a millisecond or more replacing its
    // isolate. Without yielding, the scheduler can let that run before the woken thread
    // (measured, 'thread' isolation, runs 10 ms apart: answer delivered after 1.6 ms instead of
    // 0.25 ms).
    std::thread::yield_now();
    // Otherwise the isolate is dropped here, after the caller has its answer.
    kept.map(|rx| (sandbox, rx))
}

/// The life of a thread that holds a retained isolate: further runs in the same global scope
/// until the handle is disposed, idles past `retained_idle`, or a run ends by a bound.
fn hold_retained(
    shared: &Arc<Shared>,
    id: usize,
    handle_id: u64,
    mut sandbox: Sandbox,
    commands: Receiver<HandleCommand>,
) {
    let reason = loop {
        let job = match commands.recv_timeout(shared.limits.retained_idle) {
            Ok(HandleCommand::Execute(job)) => job,
            Ok(HandleCommand::Dispose) => break "disposed",
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => break "expired (idle)",
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                break "the executor was disposed"
            }
        };
        let mut limits = sandbox.limits().clone();
        if let Some(timeout) = job.timeout {
            limits.timeout = timeout;
        }
        let claimed = Arc::new(AtomicBool::new(false));
        shared.counters.busy.fetch_add(1, Ordering::Relaxed);
        let forget = {
            let shared = shared.clone();
            move || {
                shared.retained().remove(&handle_id);
                shared.workers().remove(&id);
                shared.handle_closed(handle_id, "its run could not be stopped");
            }
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            supervised_run(
                shared,
                &mut sandbox,
                RunSpec {
                    run_id: job.run_id,
                    code: &job.code,
                    run_config_json: "",
                    limits: &limits,
                    sink: &job.sink,
                    events: &job.events,
                    enqueued_at: job.enqueued_at,
                    completion: &job.completion,
                    continuation: true,
                },
                &claimed,
                forget,
            )
        }));
        if claimed.swap(true, Ordering::AcqRel) {
            return; // abandoned: the action above has forgotten this handle and thread
        }
        shared.counters.busy.fetch_sub(1, Ordering::Relaxed);
        match outcome {
            Ok(mut report) => {
                let usable = sandbox.reusable();
                if usable {
                    report.handle_id = handle_id;
                }
                if job.completion.finish(Ok(report)) {
                    shared.counters.completed.fetch_add(1, Ordering::Relaxed);
                }
                if !usable {
                    break "its last run was ended by a bound";
                }
            }
            Err(panic) => {
                shared.counters.lost.fetch_add(1, Ordering::Relaxed);
                let detail = panic_text(&panic);
                job.completion.finish(Err(Fault::worker_lost(&format!(
                    "worker panicked: {detail}"
                ))));
                break "its worker panicked";
            }
        }
    };
    let was_live = shared.retained().remove(&handle_id).is_some();
    shared.workers().remove(&id);
    drop(sandbox);
    if was_live {
        shared.handle_closed(handle_id, reason);
    }
    // Calls that raced with the closing are answered, not left hanging.
    while let Ok(command) = commands.try_recv() {
        if let HandleCommand::Execute(job) = command {
            job.completion.finish(Err(Fault::handle_closed(handle_id)));
        }
    }
}
