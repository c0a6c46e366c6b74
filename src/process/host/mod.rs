//! The host side of `'process'` isolation: starts engine processes, hands them runs (never more
//! at once than an engine has workers, so runs still waiting in the host queue survive the loss
//! of an engine), forwards tool calls to the host's sink, and supervises: an engine that dies,
//! stops answering pings, outgrows its memory cap or sits on a run past its deadline is killed
//! and replaced, and only the runs it held fail, with `ERR_WORKER_LOST`.
//!
//! Threads: one monitor per pool (start, ping, memory, deadlines, restart backoff:
//! `monitor.rs`), and per engine a frame reader (`reader.rs`) and a stderr reader (`spawn.rs`).
//! Which engine takes which run is `dispatch.rs`; this file is the caller's side (the
//! `Runner`) and the state all of them share under one lock. Frames to an engine are written by whoever
//! produces them, without ever blocking (`engine_input`): what the pipe cannot take at once is
//! written by a short-lived flusher thread, so an engine that stops reading cannot stall the
//! host's JavaScript thread or the monitor that will kill it.

mod death;
mod dispatch;
mod frames;
mod monitor;
mod output;
mod reader;
mod spawn;

use super::engine_input::EngineInput;
use crate::bridge::check_size;
use crate::error::Fault;
use crate::limits::Limits;
use crate::protocol::{HostMessage, SHUTDOWN_DRAIN};
use crate::run::ToolSink;
use crate::run::{Completion, ErrorKind, Report, RunError, RunKind, RunRequest, Stats};
use crate::runner::Runner;
use dispatch::{fail_all, pump, register, write_all};
use std::collections::{HashMap, VecDeque};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long an engine may take from spawn to `Ready`.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// An engine that lives this long counts as started: the start-failure streak resets.
const HEALTHY_AFTER: Duration = Duration::from_secs(2);
/// Bytes of an engine's stderr kept to explain its death.
const STDERR_TAIL_BYTES: usize = 8 * 1024;
/// Margin past a run's own deadline (timeout, grace, abandon delay) before the host stops
/// waiting for the engine to answer it.
const DEADLINE_MARGIN: Duration = Duration::from_secs(5);

/// A host's event loop that reads engine output on its own thread (Node's, offered by the
/// napi layer): an engine's frame then wakes the thread that acts on it (tool calls and
/// results go to JavaScript there), with no reader thread in between.
pub trait EventLoop: Send + Sync {
    /// Asks for `output.readable()` to be called on the loop's thread each time its descriptor
    /// is readable: from `output.watching()` on, until `readable` returns false or the loop
    /// stops (`output.unwatched()` then). A loop that has stopped ignores the request.
    fn watch(&self, output: Arc<dyn LoopReadable>);
}

/// An engine's output, as an [`EventLoop`] sees it.
pub trait LoopReadable: Send + Sync {
    fn fd(&self) -> RawFd;
    /// The loop watches from now on.
    fn watching(&self);
    /// The descriptor is readable: reads and acts on what came. False ends the watch.
    fn readable(&self) -> bool;
    /// The loop no longer watches.
    fn unwatched(&self);
}

/// How to start an engine process.
#[derive(Clone, Debug)]
pub struct EngineCommand {
    pub program: String,
    pub args: Vec<String>,
}

/// A run an engine holds.
struct InFlight {
    engine: u64,
    sink: Arc<dyn ToolSink>,
    completion: Completion,
    enqueued_at: Instant,
    /// Past this, the engine is considered wedged and is replaced.
    give_up_at: Instant,
    /// When the engine was handed it (admission beyond an engine's workers looks at this).
    sent_at: Instant,
    /// Runs sent as `HandleExecute` do not take a worker slot.
    takes_slot: bool,
}

struct Engine {
    pid: u32,
    stdin: Arc<EngineInput>,
    ready: bool,
    /// Set once the reader saw the engine's output close (it is being reaped: never kill it).
    exiting: bool,
    said_bye: bool,
    /// Asked to drain and exit because it gave up a thread it could not stop (an abandoned run
    /// may still burn CPU in it); takes no new runs, and a replacement is started.
    retiring: bool,
    capacity: usize,
    in_flight: usize,
    spawned_at: Instant,
    last_pong: Instant,
    last_ping: Instant,
    ping_seq: u64,
    /// Why the host killed it, if it did.
    kill_reason: Option<String>,
    refuse_reason: Option<String>,
    stats: Stats,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<RunRequest>,
    engines: HashMap<u64, Engine>,
    runs: HashMap<u64, InFlight>,
    /// Retained isolates: handle id → the engine that holds it.
    handles: HashMap<u64, u64>,
    next_engine: u64,
    starting: usize,
    disposed: bool,
    on_disposed: Vec<Box<dyn FnOnce() + Send>>,
    /// Engines that failed to start, in a row.
    start_failures: u32,
    restart_at: Option<Instant>,
    /// Set when `start_failures` reached the bound: the reason, reported to runs.
    crash_loop: Option<String>,
    /// Counters of engines that are gone, so totals survive replacements.
    gone: Stats,
    /// When queued runs may go to an engine beyond its workers (see `dispatch::pump`): the
    /// monitor wakes then.
    overflow_check_at: Option<Instant>,
}

#[derive(Default)]
struct Counters {
    completed: AtomicU64,
    lost: AtomicU64,
    engines_started: AtomicU64,
    engines_lost: AtomicU64,
    engines_retired: AtomicU64,
    /// Frames from engines, and how many of them the host's event loop read.
    frames: AtomicU64,
    frames_on_loop: AtomicU64,
}

struct Host {
    limits: Limits,
    command: EngineCommand,
    config_json: String,
    /// Where engine output is read on the host's event loop (none: reader threads read it).
    event_loop: Option<Arc<dyn EventLoop>>,
    state: Mutex<State>,
    wake: Condvar,
    counters: Counters,
}

pub struct ProcessPool {
    host: Arc<Host>,
}

impl Host {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ProcessPool {
    pub fn new(
        limits: Limits,
        command: EngineCommand,
        event_loop: Option<Arc<dyn EventLoop>>,
    ) -> ProcessPool {
        let config_json = limits.to_options_json();
        let host = Arc::new(Host {
            limits,
            command,
            config_json,
            event_loop,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            counters: Counters::default(),
        });
        let monitor_host = host.clone();
        std::thread::Builder::new()
            .name("codemode-engine-monitor".into())
            .spawn(move || monitor::monitor(&monitor_host))
            .expect("spawn the engine monitor thread");
        ProcessPool { host }
    }
}

impl Runner for ProcessPool {
    fn isolation(&self) -> &'static str {
        "process"
    }

    fn limits(&self) -> &Limits {
        &self.host.limits
    }

    fn submit(&self, request: RunRequest) {
        let host = &self.host;
        let mut state = host.lock();
        let refusal = if state.disposed {
            Some(Fault::disposed())
        } else if let RunKind::Handle { handle_id, .. } = request.kind {
            // A retained isolate lives in one particular engine: the run goes straight there.
            match state.handles.get(&handle_id) {
                None => Some(Fault::handle_closed(handle_id)),
                Some(&engine_id) => {
                    let frame = register(host, &mut state, engine_id, request);
                    drop(state);
                    write_all(vec![frame]);
                    return;
                }
            }
        } else if state.queue.len() >= host.limits.max_queue + free_slots(host, &state) {
            Some(Fault::queue_full(host.limits.max_queue))
        } else {
            None
        };
        if let Some(fault) = refusal {
            drop(state);
            request.completion.finish(Err(fault));
            return;
        }
        if state.crash_loop.is_some() && state.restart_at.is_none() {
            // Try again (after the longest backoff) now that someone wants a run.
            state.restart_at = Some(Instant::now() + host.limits.restart_backoff_max);
            host.wake.notify_all();
        }
        state.queue.push_back(request);
        let ready = pump(host, &mut state);
        drop(state);
        write_all(ready);
    }

    /// Hands a tool reply to the engine holding the run. False when the run is gone or the reply
    /// broke `maxReplyBytes` (the run is then told to end, naming the bound). The size is checked
    /// here, before the reply crosses the pipe; the engine's router checks it again only because
    /// it is the same router `'thread'` isolation uses.
    fn reply(&self, run_id: u64, call_id: u32, json: String) -> bool {
        let state = self.host.lock();
        let Some(run) = state.runs.get(&run_id) else {
            return false;
        };
        let Some(engine) = state.engines.get(&run.engine) else {
            return false;
        };
        let stdin = engine.stdin.clone();
        let (frame, delivered) = match check_size(
            "A tool reply",
            json.len(),
            self.host.limits.max_reply_bytes,
            "maxReplyBytes",
        ) {
            Ok(()) => (
                HostMessage::Reply {
                    run_id,
                    call_id,
                    json,
                }
                .encode(),
                true,
            ),
            Err(reason) => (
                HostMessage::Cancel {
                    run_id,
                    reason,
                    bound: Some("maxReplyBytes".to_string()),
                }
                .encode(),
                false,
            ),
        };
        drop(state);
        stdin.send(&frame) && delivered
    }

    /// Cancels a run: one still in the host queue is answered with `message` at once; one an
    /// engine holds is sent `Cancel` (the engine stops it and answers). False for unknown runs.
    fn cancel(&self, run_id: u64, message: String) -> bool {
        let mut state = self.host.lock();
        if let Some(at) = state.queue.iter().position(|r| r.run_id == run_id) {
            let request = state.queue.remove(at).expect("position is in range");
            drop(state);
            let waited = request.enqueued_at.elapsed();
            request.completion.finish(Ok(Report::not_started(
                RunError::new(ErrorKind::Cancelled, message),
                waited,
            )));
            return true;
        }
        let Some(engine) = state.runs.get(&run_id).map(|r| r.engine) else {
            return false;
        };
        let Some(stdin) = state.engines.get(&engine).map(|e| e.stdin.clone()) else {
            return false;
        };
        drop(state);
        let frame = HostMessage::Cancel {
            run_id,
            reason: message,
            bound: None,
        }
        .encode();
        stdin.send(&frame)
    }

    /// Disposes of a retained isolate. False when the handle is unknown (closed already).
    fn dispose_handle(&self, handle_id: u64) -> bool {
        let mut state = self.host.lock();
        let Some(engine_id) = state.handles.remove(&handle_id) else {
            return false;
        };
        let Some(stdin) = state.engines.get(&engine_id).map(|e| e.stdin.clone()) else {
            return false;
        };
        drop(state);
        stdin.send(&HostMessage::HandleDispose { handle_id }.encode())
    }

    /// The engines' counters added together (those of engines that are gone included), with
    /// the host's own: its queue, the runs engines hold, and the engines' lives.
    fn stats(&self) -> Stats {
        let state = self.host.lock();
        let mut engines = state.gone.clone();
        for e in state.engines.values() {
            engines.add_totals(&e.stats);
            engines.queued += e.stats.queued;
        }
        // The workers the pool provides: those of every engine that serves or is starting (a
        // retiring engine's only finish what they hold).
        let serving = state.engines.values().filter(|e| !e.retiring).count() + state.starting;
        let c = &self.host.counters;
        let engines_lost = c.engines_lost.load(Ordering::Relaxed);
        Stats {
            workers: (serving * self.host.limits.workers) as u32,
            busy: state.runs.len() as u32,
            queued: state.queue.len() as u32 + engines.queued,
            retained: state.handles.len() as u32,
            completed: c.completed.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed) + engines.lost,
            abandoned: engines.abandoned,
            replaced: engines.replaced + engines_lost,
            isolates_created: engines.isolates_created,
            live_runs: state.runs.len() as u32,
            processes: state
                .engines
                .values()
                .filter(|e| e.ready && !e.retiring)
                .count() as u32,
            engines_started: c.engines_started.load(Ordering::Relaxed),
            engines_lost,
            engines_retired: c.engines_retired.load(Ordering::Relaxed),
            engine_frames: c.frames.load(Ordering::Relaxed),
            engine_frames_on_loop: c.frames_on_loop.load(Ordering::Relaxed),
            crash_loop: state.crash_loop.clone(),
        }
    }

    /// The pids of the live engine processes (for tests and diagnostics).
    fn pids(&self) -> Vec<u32> {
        let state = self.host.lock();
        let mut pids: Vec<u32> = state.engines.values().map(|e| e.pid).collect();
        pids.sort_unstable();
        pids
    }

    fn is_disposed(&self) -> bool {
        self.host.lock().disposed
    }

    /// Stops accepting runs; queued runs fail with `ERR_DISPOSED`; runs held by engines finish;
    /// each engine is asked to drain and exit. `done` runs once every engine has exited (and
    /// been reaped).
    fn dispose(&self, done: Box<dyn FnOnce() + Send>) {
        let host = &self.host;
        let mut state = host.lock();
        let queued: Vec<RunRequest> = state.queue.drain(..).collect();
        let first = !state.disposed;
        state.disposed = true;
        if state.engines.is_empty() && state.starting == 0 {
            drop(state);
            host.wake.notify_all(); // the monitor exits
            fail_all(queued, Fault::disposed());
            done();
            return;
        }
        state.on_disposed.push(done);
        let stdins: Vec<_> = if first {
            state.engines.values().map(|e| e.stdin.clone()).collect()
        } else {
            Vec::new()
        };
        drop(state);
        host.wake.notify_all();
        fail_all(queued, Fault::disposed());
        let frame = HostMessage::Shutdown {
            mode: SHUTDOWN_DRAIN,
        }
        .encode();
        for stdin in stdins {
            stdin.send(&frame);
        }
    }
}

/// Worker slots the pool offers and no run holds: the engines it keeps (`processes`, each with
/// `workers` threads; none while in a crash loop) less the runs they hold. A run waiting in the
/// host queue for a slot that exists, or for an engine that is still starting, takes one of
/// these, not a `maxQueue` place: both arrangements then accept the same work (`'thread'` lets
/// each worker hold one run besides the `maxQueue` waiting).
fn free_slots(host: &Host, state: &State) -> usize {
    if state.crash_loop.is_some() {
        return 0;
    }
    let offered = host.limits.processes * host.limits.workers;
    let held: usize = state
        .engines
        .values()
        .filter(|e| !e.retiring)
        .map(|e| e.in_flight)
        .sum();
    offered.saturating_sub(held)
}

impl Drop for ProcessPool {
    fn drop(&mut self) {
        if !self.is_disposed() {
            self.dispose(Box::new(|| {}));
        }
    }
}
