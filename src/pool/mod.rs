//! The pool: a bounded queue, worker threads that each run one isolate at a time, the
//! supervisor bookkeeping that replaces lost workers, and the watchdog.

mod watchdog;

use crate::bridge::{RunEvent, ToolSink};
use crate::error::Fault;
use crate::limits::Limits;
use crate::sandbox::{Program, RunOutput, Sandbox};
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
}

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
    workers: Mutex<HashMap<usize, JoinHandle<()>>>,
    next_worker: AtomicUsize,
    counters: Counters,
}

impl Shared {
    fn workers(&self) -> MutexGuard<'_, HashMap<usize, JoinHandle<()>>> {
        self.workers.lock().unwrap_or_else(|p| p.into_inner())
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

    pub fn is_disposed(&self) -> bool {
        self.shared.disposed.load(Ordering::Acquire)
    }

    pub fn stats(&self) -> PoolStats {
        let c = &self.shared.counters;
        PoolStats {
            workers: self.shared.workers().len(),
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
        if let Err(panic) = outcome {
            let detail = panic_text(&panic);
            shared.counters.lost.fetch_add(1, Ordering::Relaxed);
            job.completion.finish(Err(Fault::worker_lost(&format!(
                "worker panicked: {detail}"
            ))));
            replace(&shared, id);
            return;
        }
    }
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

fn run_job(
    shared: &Arc<Shared>,
    id: usize,
    warm: &mut Option<Sandbox>,
    job: &Job,
    claimed: &Arc<AtomicBool>,
) {
    let started = Instant::now();
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
                    return;
                }
            }
        }
    };
    if job.fault == Some(FaultInjection::Panic) {
        panic!("fault injected by the test hook");
    }
    let deadline = started + job.limits.timeout;
    let terminate_at = deadline + job.limits.termination_grace;
    // Answers the run and replaces this worker when the run cannot be stopped: fired by the
    // watchdog long after the deadline, or by the sandbox when it must park its thread.
    let on_abandon = {
        let shared = shared.clone();
        let completion = job.completion.clone();
        let claimed = claimed.clone();
        let queued = started.duration_since(job.enqueued_at);
        let enqueued_at = job.enqueued_at;
        abandon_action(move |message: String| {
            if claimed.swap(true, Ordering::AcqRel) {
                return; // the run returned first
            }
            shared.counters.busy.fetch_sub(1, Ordering::Relaxed);
            shared.counters.abandoned.fetch_add(1, Ordering::Relaxed);
            let output = RunOutput {
                error: Some(message),
                ..RunOutput::default()
            };
            completion.finish(Ok(Report {
                output,
                queued,
                run: started.elapsed(),
                total: enqueued_at.elapsed(),
            }));
            replace(&shared, id);
        })
    };
    let terminator = sandbox.terminator();
    let wedge_action = on_abandon.clone();
    terminator.on_wedge(Box::new(move |message| fire(&wedge_action, message)));
    let armed = shared.watchdog.arm(
        terminate_at,
        terminate_at + job.limits.abandon_after,
        terminator,
        on_abandon,
    );
    let output = sandbox.run(Program {
        run_id: job.run_id,
        code: &job.code,
        run_config_json: &job.run_config_json,
        limits: &job.limits,
        deadline,
        sink: job.sink.clone(),
        events: &job.events,
    });
    drop(armed);
    let report = Report {
        output,
        queued: started.duration_since(job.enqueued_at),
        run: started.elapsed(),
        total: job.enqueued_at.elapsed(),
    };
    if job.completion.finish(Ok(report)) {
        shared.counters.completed.fetch_add(1, Ordering::Relaxed);
    }
    // The isolate is dropped here, after the caller has its answer.
    drop(sandbox);
}
