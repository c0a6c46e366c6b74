//! The pool: a bounded queue, worker threads that each run one isolate at a time, the
//! supervisor bookkeeping that replaces lost workers, and the watchdog.
//!
//! - `mod.rs`: [`Pool`] itself (queue, counters, cancellation, retained-handle registry);
//! - `worker.rs`: a worker's life (`worker_main`, `run_job`, `supervised_run`);
//! - `admission.rs`: extra workers for waiting runs while every worker is held by a long run;
//! - `retained.rs`: a thread that holds a retained isolate;
//! - `slots.rs`: the places (`workers` of them, plus extras) the pool's threads take runs in,
//!   and the count of those threads;
//! - `standby.rs`: threads started on demand to hold a warm isolate (`standbyIsolates`);
//! - `trim.rs`: returning freed memory to the kernel once the pool is idle;
//! - `local.rs`: [`LocalRunner`], the pool plus its reply routing, as a `Runner`;
//! - `watchdog.rs`: the one thread that stops runs from outside.

mod admission;
mod local;
mod retained;
mod slots;
mod standby;
mod supervise;
mod trim;
mod watchdog;
mod worker;

pub use local::LocalRunner;

use crate::bridge::{InputPump, RunEvent};
use crate::error::Fault;
use crate::limits::Limits;
use crate::run::{ErrorKind, Report, RunError, RunKind, RunRequest, Stats};
use crate::sandbox::{CodeCache, Terminator};
use crossbeam_channel::{Receiver, Sender, TrySendError};
use retained::HandleCommand;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use watchdog::Watchdog;

/// One run as the pool holds it: the request and the channel its replies arrive on.
pub struct Job {
    pub request: RunRequest,
    pub events: Receiver<RunEvent>,
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

struct Shared {
    limits: Limits,
    jobs: Receiver<Job>,
    disposed: AtomicBool,
    watchdog: Watchdog,
    /// Every thread of the pool: workers and the threads that hold retained isolates.
    workers: Mutex<HashMap<usize, JoinHandle<()>>>,
    next_worker: AtomicUsize,
    /// Workers waiting for a run.
    idle: AtomicUsize,
    /// Workers running a run, for admission (`admission.rs`).
    busy: Mutex<admission::BusyWorkers>,
    /// Replacements handed to the watchdog's thread and not started yet (`step_down`): counted
    /// in `stats().workers`, so the count does not dip while one is on its way.
    pending_starts: AtomicUsize,
    counters: Counters,
    /// Retained isolates by handle id: the channel of the thread that holds each.
    retained: Mutex<HashMap<u64, Sender<HandleCommand>>>,
    on_handle_closed: Mutex<Option<HandleClosedHook>>,
    /// Where a run awaiting a reply may read the host's messages itself (an engine process).
    input_pump: OnceLock<Arc<dyn InputPump>>,
    /// Runs in progress, by run id: how to stop each (cancellation by the host).
    running: Mutex<HashMap<u64, Terminator>>,
    /// Runs cancelled before they started, with their message: answered when dequeued.
    cancelled: Mutex<HashMap<u64, String>>,
    /// Compiled programs, shared by the workers (`codeCacheMb`).
    code_cache: CodeCache,
    /// The places runs are taken in (`workers` plus the extra workers running) and the threads
    /// serving the queue, more than the places while standby threads wait with a warm isolate.
    slots: slots::Slots,
    /// The cores this process may use: standby threads are started only while one is free.
    cores: usize,
    /// When the last run ended, for returning freed memory once idle (`trim.rs`).
    idle_trim: trim::IdleTrim,
}

impl Shared {
    fn workers(&self) -> MutexGuard<'_, HashMap<usize, JoinHandle<()>>> {
        lock(&self.workers)
    }
    fn retained(&self) -> MutexGuard<'_, HashMap<u64, Sender<HandleCommand>>> {
        lock(&self.retained)
    }
    fn handle_closed(&self, handle_id: u64, reason: &str) {
        let hook = lock(&self.on_handle_closed).clone();
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
        let threads = limits.workers;
        let shared = Arc::new(Shared {
            code_cache: CodeCache::new(limits.code_cache_bytes),
            slots: slots::Slots::new(limits.workers),
            limits,
            jobs,
            disposed: AtomicBool::new(false),
            watchdog: Watchdog::start(),
            workers: Mutex::new(HashMap::new()),
            next_worker: AtomicUsize::new(0),
            idle: AtomicUsize::new(0),
            busy: Mutex::new(admission::BusyWorkers::default()),
            pending_starts: AtomicUsize::new(0),
            counters: Counters::default(),
            retained: Mutex::new(HashMap::new()),
            on_handle_closed: Mutex::new(None),
            input_pump: OnceLock::new(),
            running: Mutex::new(HashMap::new()),
            cancelled: Mutex::new(HashMap::new()),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            idle_trim: trim::IdleTrim::new(),
        });
        for _ in 0..threads {
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

    /// Queues a fresh run, or hands a further run to the thread holding its retained isolate.
    /// A refusal (queue full, disposed, closed handle) answers the run through its completion.
    pub fn submit(&self, job: Job) {
        if let RunKind::Handle { handle_id, .. } = job.request.kind {
            return self.execute_retained(handle_id, job);
        }
        let refused = {
            let sender = lock(&self.sender);
            match sender.as_ref() {
                None => Some((Fault::disposed(), job)),
                Some(sender) => match sender.try_send(job) {
                    Ok(()) => {
                        admission::queued(&self.shared);
                        None
                    }
                    Err(TrySendError::Full(job)) => {
                        Some((Fault::queue_full(self.shared.limits.max_queue), job))
                    }
                    Err(TrySendError::Disconnected(job)) => Some((Fault::disposed(), job)),
                },
            }
        };
        if let Some((fault, job)) = refused {
            job.request.completion.finish(Err(fault));
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

    /// Lets runs awaiting a reply read the host's messages themselves (set once, by an engine).
    pub fn set_input_pump(&self, pump: Arc<dyn InputPump>) {
        let _ = self.shared.input_pump.set(pump);
    }

    /// Sets the hook told when a retained isolate goes away (expiry, disposal, a bound).
    pub fn on_handle_closed(&self, hook: HandleClosedHook) {
        *lock(&self.shared.on_handle_closed) = Some(hook);
    }

    /// Runs more code in a retained isolate. A handle that no longer exists answers
    /// `ERR_HANDLE_CLOSED`.
    fn execute_retained(&self, handle_id: u64, job: Job) {
        let sender = self.shared.retained().get(&handle_id).cloned();
        let job = match sender {
            Some(sender) => match sender.send(HandleCommand::Execute(job)) {
                Ok(()) => return,
                Err(crossbeam_channel::SendError(HandleCommand::Execute(job))) => job,
                Err(_) => return,
            },
            None => job,
        };
        job.request
            .completion
            .finish(Err(Fault::handle_closed(handle_id)));
    }

    /// Disposes of a retained isolate. Returns false when there was no such handle.
    pub fn dispose_retained(&self, handle_id: u64) -> bool {
        let sender = self.shared.retained().get(&handle_id).cloned();
        sender.is_some_and(|s| s.send(HandleCommand::Dispose).is_ok())
    }

    pub fn is_disposed(&self) -> bool {
        self.shared.disposed.load(Ordering::Acquire)
    }

    /// The runs in progress (retained isolates' runs included), read without a lock.
    pub fn runs_in_progress(&self) -> usize {
        self.shared.counters.busy.load(Ordering::Acquire)
    }

    /// The pool's counters (the process-level fields stay empty).
    pub fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        let retained = self.shared.retained().len();
        // The standby threads wait with a warm isolate and add no concurrency: not workers.
        let standby = self.shared.slots.standby();
        let threads = self.shared.workers().len();
        Stats {
            workers: (threads.saturating_sub(retained + standby)
                + self.shared.pending_starts.load(Ordering::Acquire)) as u32,
            busy: c.busy.load(Ordering::Relaxed) as u32,
            queued: self.shared.jobs.len() as u32,
            retained: retained as u32,
            completed: c.completed.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            abandoned: c.abandoned.load(Ordering::Relaxed),
            replaced: c.replaced.load(Ordering::Relaxed),
            isolates_created: c.isolates_created.load(Ordering::Relaxed),
            ..Stats::default()
        }
    }

    /// Stops accepting runs. Queued runs fail with `ERR_DISPOSED`; runs in progress finish
    /// (each within its own timeout). `done` is called once every worker has exited.
    pub fn dispose(&self, done: impl FnOnce() + Send + 'static) {
        let already = self.shared.disposed.swap(true, Ordering::AcqRel);
        lock(&self.sender).take();
        // Threads waiting for a place go on, to answer the queued runs ERR_DISPOSED and end.
        self.shared.slots.close();
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

/// Stack of each worker thread. V8 keeps its own limit below this.
const WORKER_STACK_BYTES: usize = 4 * 1024 * 1024;

/// Starts a worker thread and records it. Called at start-up.
fn spawn_worker(shared: &Arc<Shared>) {
    shared.slots.add_thread();
    start_worker(shared);
}

/// Starts the thread of a worker already counted in `slots`, or uncounts it when the pool is
/// disposed or the thread cannot start.
fn start_worker(shared: &Arc<Shared>) {
    let mut workers = shared.workers();
    if shared.disposed.load(Ordering::Acquire) {
        shared.slots.remove_thread();
        return;
    }
    let id = shared.next_worker.fetch_add(1, Ordering::Relaxed);
    let thread_shared = shared.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("codemode-worker-{id}"))
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || worker::worker_main(thread_shared, id));
    match spawned {
        Ok(handle) => {
            workers.insert(id, handle);
        }
        Err(_) => {
            shared.slots.remove_thread();
        }
    }
}

/// Answers a run that a worker dequeued but will not start: cancelled while queued, or the
/// pool was disposed meanwhile. Returns true when it did.
fn answer_unstarted(shared: &Shared, job: &Job) -> bool {
    if shared.disposed.load(Ordering::Acquire) {
        job.request.completion.finish(Err(Fault::disposed()));
        return true;
    }
    if let Some(message) = lock(&shared.cancelled).remove(&job.request.run_id) {
        let waited = job.request.enqueued_at.elapsed();
        job.request.completion.finish(Ok(Report::not_started(
            RunError::new(ErrorKind::Cancelled, message),
            waited,
        )));
        return true;
    }
    false
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
