//! The host side of `'process'` isolation: starts engine processes, hands them runs (never more
//! at once than an engine has workers, so runs still waiting in the host queue survive the loss
//! of an engine), forwards tool calls to the host's sink, and supervises: an engine that dies,
//! stops answering pings, outgrows its memory cap or sits on a run past its deadline is killed
//! and replaced, and only the runs it held fail, with `ERR_WORKER_LOST`.
//!
//! Threads: one monitor per pool (start, ping, memory, deadlines, restart backoff), and per
//! engine a frame reader and a stderr reader. Frames to an engine are written by whoever
//! produces them, without ever blocking (`engine_input`): what the pipe cannot take at once is
//! written by a short-lived flusher thread, so an engine that stops reading cannot stall the
//! host's JavaScript thread or the monitor that will kill it.

use super::engine_input::EngineInput;
use crate::bridge::{check_size, ToolCall, ToolSink};
use crate::error::{ErrorCode, Fault};
use crate::limits::Limits;
use crate::pool::{Completion, Outcome, Report};
use crate::protocol::{
    max_frame_bytes, read_frame, EngineMessage, EngineStats, HostMessage, RunResult, FLAG_RETAIN,
    MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, SHUTDOWN_DRAIN,
};
use crate::sandbox::RunOutput;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::process::{Child, Command, Stdio};
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

/// How to start an engine process.
#[derive(Clone, Debug)]
pub struct EngineCommand {
    pub program: String,
    pub args: Vec<String>,
}

/// What a run asks of an engine.
pub enum RunKind {
    Fresh {
        code: String,
        run_config_json: String,
        /// 0: the executor's default.
        timeout_ms: f64,
        /// 0: the executor's default.
        memory_mb: u32,
        retain: bool,
        fault_injection: Option<String>,
    },
    /// A further run in a retained isolate, which lives in one particular engine.
    Handle {
        handle_id: u64,
        code: String,
        timeout_ms: f64,
    },
}

/// One run handed to the process pool.
pub struct Submission {
    pub run_id: u64,
    pub kind: RunKind,
    /// This run's timeout (for the host's own deadline).
    pub timeout: Duration,
    pub max_reply_bytes: usize,
    pub sink: Arc<dyn ToolSink>,
    pub completion: Completion,
    pub enqueued_at: Instant,
}

/// A run an engine holds.
struct InFlight {
    engine: u64,
    sink: Arc<dyn ToolSink>,
    completion: Completion,
    max_reply_bytes: usize,
    enqueued_at: Instant,
    /// Past this, the engine is considered wedged and is replaced.
    give_up_at: Instant,
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
    stats: EngineStats,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Submission>,
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
    gone: EngineStats,
}

#[derive(Default)]
struct Counters {
    completed: AtomicU64,
    lost: AtomicU64,
    engines_started: AtomicU64,
    engines_lost: AtomicU64,
    engines_retired: AtomicU64,
}

struct Host {
    limits: Limits,
    command: EngineCommand,
    config_json: String,
    state: Mutex<State>,
    wake: Condvar,
    counters: Counters,
}

/// A snapshot of the process pool's counters.
#[derive(Clone, Debug, Default)]
pub struct ProcessStats {
    pub engine: EngineStats,
    pub queued: usize,
    pub in_flight: usize,
    pub completed: u64,
    pub lost: u64,
    pub processes: usize,
    pub engines_started: u64,
    pub engines_lost: u64,
    pub engines_retired: u64,
    pub retained: usize,
    pub crash_loop: Option<String>,
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
    pub fn new(limits: Limits, command: EngineCommand) -> ProcessPool {
        let config_json = limits.to_options_json();
        let host = Arc::new(Host {
            limits,
            command,
            config_json,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            counters: Counters::default(),
        });
        let monitor_host = host.clone();
        std::thread::Builder::new()
            .name("codemode-engine-monitor".into())
            .spawn(move || monitor(&monitor_host))
            .expect("spawn the engine monitor thread");
        ProcessPool { host }
    }

    pub fn limits(&self) -> &Limits {
        &self.host.limits
    }

    /// Accepts a run, or gives it back with the fault that refused it.
    pub fn submit(&self, submission: Submission) -> Result<(), (Fault, Submission)> {
        let host = &self.host;
        let mut state = host.lock();
        if state.disposed {
            return Err((Fault::disposed(), submission));
        }
        if let RunKind::Handle { handle_id, .. } = submission.kind {
            let Some(&engine_id) = state.handles.get(&handle_id) else {
                return Err((Fault::handle_closed(handle_id), submission));
            };
            let frame = encode_run(&submission);
            let stdin = register(host, &mut state, engine_id, submission, false);
            drop(state);
            stdin.send(&frame);
            return Ok(());
        }
        if state.queue.len() >= host.limits.max_queue {
            return Err((Fault::queue_full(host.limits.max_queue), submission));
        }
        if state.crash_loop.is_some() && state.restart_at.is_none() {
            // Try again (after the longest backoff) now that someone wants a run.
            state.restart_at = Some(Instant::now() + host.limits.restart_backoff_max);
            host.wake.notify_all();
        }
        state.queue.push_back(submission);
        let ready = pump(host, &mut state);
        drop(state);
        write_all(ready);
        Ok(())
    }

    /// Hands a tool reply to the engine holding the run. False when the run is gone or the reply
    /// broke `maxReplyBytes` (the run is then told to end, naming the bound).
    pub fn reply(&self, run_id: u64, call_id: u32, json: String) -> bool {
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
            run.max_reply_bytes,
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
            Err(reason) => (HostMessage::Cancel { run_id, reason }.encode(), false),
        };
        drop(state);
        stdin.send(&frame) && delivered
    }

    /// Cancels a run: one still in the host queue is answered with `message` at once; one an
    /// engine holds is sent `Cancel` (the engine stops it and answers). False for unknown runs.
    pub fn cancel(&self, run_id: u64, message: String) -> bool {
        let mut state = self.host.lock();
        if let Some(at) = state.queue.iter().position(|s| s.run_id == run_id) {
            let submission = state.queue.remove(at).expect("position is in range");
            drop(state);
            let waited = submission.enqueued_at.elapsed();
            submission
                .completion
                .finish(Ok(Report::not_started(message, waited)));
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
        }
        .encode();
        stdin.send(&frame)
    }

    /// Disposes of a retained isolate. False when the handle is unknown (closed already).
    pub fn dispose_handle(&self, handle_id: u64) -> bool {
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

    pub fn stats(&self) -> ProcessStats {
        let state = self.host.lock();
        let mut engine = state.gone.clone();
        for e in state.engines.values() {
            add_stats(&mut engine, &e.stats);
            engine.busy += e.stats.busy;
            engine.queued += e.stats.queued;
            engine.retained += e.stats.retained;
        }
        // The workers the pool provides: those of every engine that serves or is starting (a
        // retiring engine's only finish what they hold).
        let serving = state.engines.values().filter(|e| !e.retiring).count() + state.starting;
        engine.workers = (serving * self.host.limits.workers) as u32;
        let c = &self.host.counters;
        ProcessStats {
            engine,
            queued: state.queue.len(),
            in_flight: state.runs.len(),
            completed: c.completed.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            processes: state
                .engines
                .values()
                .filter(|e| e.ready && !e.retiring)
                .count(),
            engines_started: c.engines_started.load(Ordering::Relaxed),
            engines_lost: c.engines_lost.load(Ordering::Relaxed),
            engines_retired: c.engines_retired.load(Ordering::Relaxed),
            retained: state.handles.len(),
            crash_loop: state.crash_loop.clone(),
        }
    }

    /// The pids of the live engine processes (for tests and diagnostics).
    pub fn pids(&self) -> Vec<u32> {
        let state = self.host.lock();
        let mut pids: Vec<u32> = state.engines.values().map(|e| e.pid).collect();
        pids.sort_unstable();
        pids
    }

    pub fn is_disposed(&self) -> bool {
        self.host.lock().disposed
    }

    /// Stops accepting runs; queued runs fail with `ERR_DISPOSED`; runs held by engines finish;
    /// each engine is asked to drain and exit. `done` runs once every engine has exited (and
    /// been reaped).
    pub fn dispose(&self, done: impl FnOnce() + Send + 'static) {
        let host = &self.host;
        let mut state = host.lock();
        let queued: Vec<Submission> = state.queue.drain(..).collect();
        let first = !state.disposed;
        state.disposed = true;
        if state.engines.is_empty() && state.starting == 0 {
            drop(state);
            host.wake.notify_all(); // the monitor exits
            fail_all(queued, Fault::disposed());
            done();
            return;
        }
        state.on_disposed.push(Box::new(done));
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

impl Drop for ProcessPool {
    fn drop(&mut self) {
        if !self.is_disposed() {
            self.dispose(|| {});
        }
    }
}

fn add_stats(into: &mut EngineStats, from: &EngineStats) {
    into.completed += from.completed;
    into.lost += from.lost;
    into.abandoned += from.abandoned;
    into.replaced += from.replaced;
    into.isolates_created += from.isolates_created;
}

fn fail_all(submissions: Vec<Submission>, fault: Fault) {
    for s in submissions {
        s.completion.finish(Err(fault.clone()));
    }
}

fn encode_run(submission: &Submission) -> Vec<u8> {
    match &submission.kind {
        RunKind::Fresh {
            code,
            run_config_json,
            timeout_ms,
            memory_mb,
            retain,
            fault_injection,
        } => HostMessage::Execute {
            run_id: submission.run_id,
            timeout_ms: *timeout_ms,
            memory_mb: *memory_mb,
            flags: if *retain { FLAG_RETAIN } else { 0 },
            fault_injection: fault_injection.clone(),
            code: code.clone(),
            run_config_json: run_config_json.clone(),
        }
        .encode(),
        RunKind::Handle {
            handle_id,
            code,
            timeout_ms,
        } => HostMessage::HandleExecute {
            handle_id: *handle_id,
            run_id: submission.run_id,
            timeout_ms: *timeout_ms,
            code: code.clone(),
        }
        .encode(),
    }
}

/// Records a run as held by an engine; returns that engine's stdin.
fn register(
    host: &Host,
    state: &mut State,
    engine_id: u64,
    submission: Submission,
    takes_slot: bool,
) -> Arc<EngineInput> {
    let limits = &host.limits;
    let give_up_at = Instant::now()
        + submission.timeout
        + limits.termination_grace
        + limits.abandon_after
        + DEADLINE_MARGIN;
    let engine = state
        .engines
        .get_mut(&engine_id)
        .expect("register on a live engine");
    if takes_slot {
        engine.in_flight += 1;
    }
    let stdin = engine.stdin.clone();
    state.runs.insert(
        submission.run_id,
        InFlight {
            engine: engine_id,
            sink: submission.sink,
            completion: submission.completion,
            max_reply_bytes: submission.max_reply_bytes,
            enqueued_at: submission.enqueued_at,
            give_up_at,
            takes_slot,
        },
    );
    stdin
}

/// Moves queued runs to engines with a free worker. Returns the frames to write (outside the
/// state lock).
fn pump(host: &Host, state: &mut State) -> Vec<(Arc<EngineInput>, Vec<u8>)> {
    let mut out = Vec::new();
    while !state.queue.is_empty() {
        let free = state
            .engines
            .iter()
            .filter(|(_, e)| {
                e.ready
                    && !e.exiting
                    && !e.retiring
                    && e.kill_reason.is_none()
                    && e.in_flight < e.capacity
            })
            .min_by_key(|(_, e)| e.in_flight)
            .map(|(&id, _)| id);
        let Some(engine_id) = free else { break };
        let submission = state.queue.pop_front().expect("queue is not empty");
        let frame = encode_run(&submission);
        let stdin = register(host, state, engine_id, submission, true);
        out.push((stdin, frame));
    }
    out
}

fn write_all(frames: Vec<(Arc<EngineInput>, Vec<u8>)>) {
    for (stdin, frame) in frames {
        stdin.send(&frame);
    }
}

fn backoff(limits: &Limits, failures: u32) -> Duration {
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    (limits.restart_backoff_min * factor).min(limits.restart_backoff_max)
}

/// The monitor: keeps the engines started, pings them, watches their memory and the deadlines
/// of their runs, and finishes disposal.
fn monitor(host: &Arc<Host>) {
    let limits = &host.limits;
    let mut state = host.lock();
    loop {
        let now = Instant::now();
        if state.disposed && state.engines.is_empty() && state.starting == 0 {
            let callbacks = std::mem::take(&mut state.on_disposed);
            drop(state);
            for done in callbacks {
                done();
            }
            return;
        }
        // Start engines up to the configured number, respecting the backoff.
        let wanted = limits.processes;
        let due = state.restart_at.is_none_or(|at| at <= now);
        let serving = state.engines.values().filter(|e| !e.retiring).count();
        if !state.disposed && serving + state.starting < wanted && due {
            if state.crash_loop.is_some() && state.queue.is_empty() && state.restart_at.is_none() {
                // Crash loop: wait for a run to ask for another try.
            } else {
                state.starting += 1;
                state.restart_at = None;
                drop(state);
                let started = spawn_engine(host);
                state = host.lock();
                state.starting -= 1;
                match started {
                    Ok((id, engine)) => {
                        let late_shutdown = state.disposed.then(|| engine.stdin.clone());
                        state.engines.insert(id, engine);
                        host.counters
                            .engines_started
                            .fetch_add(1, Ordering::Relaxed);
                        if let Some(stdin) = late_shutdown {
                            // Disposed while this engine was starting: it drains at once.
                            drop(state);
                            let mode = SHUTDOWN_DRAIN;
                            stdin.send(&HostMessage::Shutdown { mode }.encode());
                            state = host.lock();
                        }
                    }
                    Err(reason) => start_failed(host, &mut state, reason),
                }
                continue;
            }
        }
        let mut kills: Vec<(u32, String)> = Vec::new();
        let mut pings = Vec::new();
        for engine in state.engines.values_mut() {
            if engine.exiting || engine.kill_reason.is_some() {
                continue;
            }
            let reason = if !engine.ready {
                (now.duration_since(engine.spawned_at) > START_TIMEOUT).then(|| {
                    format!(
                        "the engine process did not become ready within {} s",
                        START_TIMEOUT.as_secs()
                    )
                })
            } else if engine.stdin.overflowed() {
                Some(format!(
                    "the engine process stopped reading its input (over {} MB waited for it) and was killed",
                    limits.engine_backlog_cap() >> 20
                ))
            } else if now.duration_since(engine.last_pong) > limits.heartbeat_timeout {
                Some(format!(
                    "the engine process stopped answering heartbeats for {} ms and was killed",
                    limits.heartbeat_timeout.as_millis()
                ))
            } else {
                rss_bytes(engine.pid)
                    .filter(|&rss| rss > limits.process_memory_cap())
                    .map(|rss| {
                        format!(
                            "the engine process used {} MB of memory, over its cap of {} MB (processMemoryLimitMb), and was killed",
                            rss >> 20,
                            limits.process_memory_cap() >> 20
                        )
                    })
            };
            if let Some(reason) = reason {
                kills.push((engine.pid, reason.clone()));
                engine.kill_reason = Some(reason);
            } else if engine.ready
                && now.duration_since(engine.last_ping) >= limits.heartbeat_interval
            {
                engine.ping_seq += 1;
                engine.last_ping = now;
                pings.push((
                    engine.stdin.clone(),
                    HostMessage::Ping {
                        seq: engine.ping_seq,
                    }
                    .encode(),
                ));
            }
        }
        // A run its engine has not answered well past its own deadline: the engine is wedged.
        let overdue: Vec<(u64, u64)> = state
            .runs
            .iter()
            .filter(|(_, r)| r.give_up_at <= now)
            .map(|(&run_id, r)| (run_id, r.engine))
            .collect();
        for (run_id, engine_id) in overdue {
            if let Some(engine) = state.engines.get_mut(&engine_id) {
                if !engine.exiting && engine.kill_reason.is_none() {
                    let reason = format!(
                        "the engine process did not answer run {run_id} by its deadline and was killed"
                    );
                    kills.push((engine.pid, reason.clone()));
                    engine.kill_reason = Some(reason);
                }
            }
        }
        // Killed under the lock: the reader marks `exiting` under it before reaping, so the pid
        // cannot have been reused.
        for (pid, _) in &kills {
            kill(*pid);
        }
        let wait = limits.heartbeat_interval.min(Duration::from_millis(250));
        let wait = match state.restart_at {
            Some(at) if at > now => wait.min(at - now),
            _ => wait,
        };
        drop(state);
        for (stdin, frame) in pings {
            stdin.send(&frame);
        }
        state = host.lock();
        let (next, _) = host
            .wake
            .wait_timeout(state, wait)
            .unwrap_or_else(|p| p.into_inner());
        state = next;
    }
}

fn start_failed(host: &Host, state: &mut State, reason: String) {
    state.start_failures += 1;
    host.counters.engines_lost.fetch_add(1, Ordering::Relaxed);
    if state.start_failures >= host.limits.max_start_failures {
        let message = format!(
            "the engine process failed to start {} times in a row (last: {reason})",
            state.start_failures
        );
        state.crash_loop = Some(message.clone());
        state.restart_at = None;
        let queued: Vec<Submission> = state.queue.drain(..).collect();
        fail_all(queued, Fault::worker_lost(&message));
    } else {
        state.restart_at = Some(Instant::now() + backoff(&host.limits, state.start_failures));
    }
}

/// Kills an engine process. The caller holds the state lock and has checked that the engine
/// has not been reaped.
fn kill(pid: u32) {
    // SAFETY: kill(2) has no memory effects; `pid` is a child of this process that has not been
    // reaped yet (see the caller), so it cannot name an unrelated process.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
}

/// Resident memory of a process, from /proc (Linux). `None` where unavailable.
fn rss_bytes(pid: u32) -> Option<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Spawns an engine and sends `Hello`; its reader thread takes it from there.
fn spawn_engine(host: &Arc<Host>) -> Result<(u64, Engine), String> {
    let mut command = Command::new(&host.command.program);
    command
        .args(&host.command.args)
        // The engine is a plain Node process running our entry point: options meant for the
        // host (inspector ports, preloads) must not leak into it.
        .env_remove("NODE_OPTIONS")
        // Under Electron, `process.execPath` is the Electron binary: run it as plain Node.
        .env("ELECTRON_RUN_AS_NODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", host.command.program))?;
    let pid = child.id();
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let stdin = EngineInput::new(stdin, host.limits.engine_backlog_cap());
    let hello = HostMessage::Hello {
        min_version: MIN_PROTOCOL_VERSION,
        max_version: PROTOCOL_VERSION,
        config_json: host.config_json.clone(),
    }
    .encode();
    stdin.send(&hello);
    let id = {
        let mut state = host.lock();
        state.next_engine += 1;
        state.next_engine
    };
    let stderr_tail = Arc::new(Mutex::new(Vec::new()));
    let tail = stderr_tail.clone();
    let _ = std::thread::Builder::new()
        .name("codemode-engine-stderr".into())
        .spawn(move || keep_tail(stderr, &tail));
    let reader_host = host.clone();
    std::thread::Builder::new()
        .name("codemode-engine-reader".into())
        .spawn(move || read_engine(&reader_host, id, stdout, child))
        .map_err(|e| format!("cannot start a reader thread: {e}"))?;
    let now = Instant::now();
    Ok((
        id,
        Engine {
            pid,
            stdin,
            ready: false,
            exiting: false,
            said_bye: false,
            retiring: false,
            capacity: 0,
            in_flight: 0,
            spawned_at: now,
            last_pong: now,
            last_ping: now,
            ping_seq: 0,
            kill_reason: None,
            refuse_reason: None,
            stats: EngineStats::default(),
            stderr_tail,
        },
    ))
}

fn keep_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            return;
        }
        let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > STDERR_TAIL_BYTES {
            let cut = tail.len() - STDERR_TAIL_BYTES;
            tail.drain(..cut);
        }
    }
}

/// The most telling line of an engine's stderr: V8's fatal-error line if there is one.
fn stderr_summary(tail: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches('#').trim())
        .filter(|l| !l.is_empty())
        .collect();
    let line = lines
        .iter()
        .rev()
        .find(|l| l.contains("Fatal") || l.contains("Check failed") || l.contains("panicked"))
        .or(lines.last())?;
    let mut line = line.to_string();
    if line.len() > 300 {
        let mut cut = 300;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    Some(line)
}

fn read_engine(host: &Arc<Host>, id: u64, stdout: impl Read, child: Child) {
    let limits = &host.limits;
    let max_frame = max_frame_bytes(
        limits.max_code_bytes,
        limits.max_reply_bytes,
        limits.max_result_bytes,
        limits.max_log_bytes,
    );
    let mut stdout = std::io::BufReader::with_capacity(64 * 1024, stdout);
    let protocol_error = loop {
        let body = match read_frame(&mut stdout, max_frame) {
            Ok(Some(body)) => body,
            Ok(None) => break None,
            Err(e) => break Some(format!("unreadable frame from the engine process: {e}")),
        };
        match EngineMessage::decode(&body) {
            Ok(message) => on_message(host, id, message),
            Err(e) => break Some(format!("malformed frame from the engine process: {e}")),
        }
    };
    engine_gone(host, id, child, protocol_error);
}

fn on_message(host: &Arc<Host>, id: u64, message: EngineMessage) {
    match message {
        EngineMessage::Ready {
            version, workers, ..
        } => {
            let mut state = host.lock();
            let usable = (MIN_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&version);
            if let Some(engine) = state.engines.get_mut(&id) {
                if usable {
                    engine.ready = true;
                    engine.capacity = (workers as usize).max(1);
                    engine.last_pong = Instant::now();
                } else if engine.kill_reason.is_none() && !engine.exiting {
                    let reason = format!("the engine process chose protocol version {version}, which this host does not speak");
                    kill(engine.pid);
                    engine.kill_reason = Some(reason);
                }
            }
            let frames = pump(host, &mut state);
            drop(state);
            write_all(frames);
        }
        EngineMessage::Refuse { reason } => {
            if let Some(engine) = host.lock().engines.get_mut(&id) {
                engine.refuse_reason = Some(reason);
            }
        }
        EngineMessage::ToolCall {
            run_id,
            call_id,
            provider,
            tool,
            args_json,
        } => {
            let sink = host.lock().runs.get(&run_id).map(|r| r.sink.clone());
            let Some(sink) = sink else { return };
            let delivered = sink.send(
                run_id,
                ToolCall {
                    call_id,
                    provider,
                    tool,
                    args_json,
                },
            );
            if !delivered {
                let stdin = host.lock().engines.get(&id).map(|e| e.stdin.clone());
                if let Some(stdin) = stdin {
                    let reason = "The host can no longer take tool calls".to_string();
                    stdin.send(&HostMessage::Cancel { run_id, reason }.encode());
                }
            }
        }
        EngineMessage::Result {
            run_id,
            result,
            stats,
        } => {
            let mut state = host.lock();
            let run = state.runs.remove(&run_id);
            let mut handle = None;
            let retire = update_stats(&mut state, id, stats);
            if let Some(engine) = state.engines.get_mut(&id) {
                if run.as_ref().is_some_and(|r| r.takes_slot) {
                    engine.in_flight = engine.in_flight.saturating_sub(1);
                }
            }
            if let RunResult::Done(report) = &result {
                if report.handle_id != 0 {
                    handle = Some(report.handle_id);
                }
            }
            if let Some(handle_id) = handle {
                state.handles.insert(handle_id, id);
            }
            let frames = pump(host, &mut state);
            drop(state);
            write_all(frames);
            retire_if(host, retire);
            if let Some(run) = run {
                let outcome = outcome_of(result, run.enqueued_at);
                if outcome.is_ok() {
                    host.counters.completed.fetch_add(1, Ordering::Relaxed);
                }
                run.completion.finish(outcome);
            }
        }
        EngineMessage::Pong { stats, .. } => {
            let mut state = host.lock();
            let retire = update_stats(&mut state, id, stats);
            if let Some(engine) = state.engines.get_mut(&id) {
                engine.last_pong = Instant::now();
                if now_healthy(engine) {
                    state.start_failures = 0;
                    state.crash_loop = None;
                }
            }
            drop(state);
            retire_if(host, retire);
        }
        EngineMessage::HandleClosed { handle_id, .. } => {
            let mut state = host.lock();
            if state.handles.get(&handle_id) == Some(&id) {
                state.handles.remove(&handle_id);
            }
        }
        EngineMessage::Bye => {
            if let Some(engine) = host.lock().engines.get_mut(&id) {
                engine.said_bye = true;
            }
        }
    }
}

/// Records an engine's counters. When they show a newly abandoned thread, marks the engine
/// retiring and returns its stdin, to be sent `Shutdown` (drain) outside the lock.
fn update_stats(state: &mut State, id: u64, stats: EngineStats) -> Option<Arc<EngineInput>> {
    let engine = state.engines.get_mut(&id)?;
    let abandoned_more = stats.abandoned > engine.stats.abandoned;
    engine.stats = stats;
    if abandoned_more && !engine.retiring && !engine.exiting {
        engine.retiring = true;
        return Some(engine.stdin.clone());
    }
    None
}

/// Asks a retiring engine to finish its runs and exit; the monitor starts its replacement.
fn retire_if(host: &Host, stdin: Option<Arc<EngineInput>>) {
    if let Some(stdin) = stdin {
        host.counters
            .engines_retired
            .fetch_add(1, Ordering::Relaxed);
        let mode = SHUTDOWN_DRAIN;
        stdin.send(&HostMessage::Shutdown { mode }.encode());
        host.wake.notify_all();
    }
}

fn now_healthy(engine: &Engine) -> bool {
    engine.ready && engine.spawned_at.elapsed() >= HEALTHY_AFTER
}

fn outcome_of(result: RunResult, enqueued_at: Instant) -> Outcome {
    match result {
        RunResult::Done(r) => {
            let total = enqueued_at.elapsed();
            let run = Duration::from_secs_f64(r.run_ms.max(0.0) / 1000.0).min(total);
            Ok(Report {
                output: RunOutput {
                    result_json: r.result_json,
                    error: r.error,
                    logs: r.logs,
                    tool_calls: r.tool_calls,
                    heap_used_bytes: r.heap_used_bytes as u64,
                },
                queued: total - run,
                run,
                total,
                handle_id: r.handle_id,
            })
        }
        RunResult::Fault { code, message } => Err(Fault::new(
            ErrorCode::from_code(&code).unwrap_or(ErrorCode::WorkerLost),
            message,
        )),
    }
}

/// The engine's output closed: reap it, fail the runs it held, and schedule a replacement.
fn engine_gone(host: &Arc<Host>, id: u64, mut child: Child, protocol_error: Option<String>) {
    {
        let mut state = host.lock();
        if let Some(engine) = state.engines.get_mut(&id) {
            engine.exiting = true;
            if let (Some(reason), false) = (&protocol_error, engine.kill_reason.is_some()) {
                // A confused engine is killed rather than trusted.
                kill(engine.pid);
                engine.kill_reason = Some(reason.clone());
            }
        }
    }
    let status = child.wait();
    let mut state = host.lock();
    let Some(engine) = state.engines.remove(&id) else {
        return;
    };
    add_stats(&mut state.gone, &engine.stats);
    let lost: Vec<u64> = state
        .runs
        .iter()
        .filter(|(_, r)| r.engine == id)
        .map(|(&run_id, _)| run_id)
        .collect();
    let runs: Vec<InFlight> = lost
        .iter()
        .filter_map(|run_id| state.runs.remove(run_id))
        .collect();
    state.handles.retain(|_, engine_id| *engine_id != id);
    let clean = engine.said_bye && runs.is_empty();
    let tail = engine
        .stderr_tail
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let cause = death_cause(&engine, status.ok(), &tail);
    if !clean {
        host.counters.engines_lost.fetch_add(1, Ordering::Relaxed);
        if !engine.ready {
            start_failed(host, &mut state, cause.clone());
        } else if !state.disposed {
            // A run took the engine down (or it was killed): restart at once; the cause is the
            // run, not the engine.
            state.restart_at = Some(Instant::now() + host.limits.restart_backoff_min);
        }
    }
    let frames = pump(host, &mut state);
    drop(state);
    host.wake.notify_all();
    write_all(frames);
    host.counters
        .lost
        .fetch_add(runs.len() as u64, Ordering::Relaxed);
    let detail = match runs.len() {
        1 => format!("this execution's engine process died: {cause}"),
        n => format!("the engine process died while it held {n} executions: {cause}"),
    };
    for run in runs {
        run.completion.finish(Err(Fault::worker_lost(&detail)));
    }
}

fn death_cause(engine: &Engine, status: Option<std::process::ExitStatus>, tail: &[u8]) -> String {
    if let Some(reason) = &engine.kill_reason {
        return reason.clone();
    }
    if let Some(reason) = &engine.refuse_reason {
        return format!("the engine process refused the handshake: {reason}");
    }
    let how = match status {
        Some(status) => {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => format!("exited with code {code}"),
                (None, Some(signal)) => {
                    format!("killed by signal {signal} ({})", signal_name(signal))
                }
                _ => "ended".to_string(),
            }
        }
        None => "ended".to_string(),
    };
    match stderr_summary(tail) {
        Some(line) => format!("the engine process {how}: {line}"),
        None => format!("the engine process {how}"),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => "SIGABRT",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGFPE => "SIGFPE",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let limits = Limits::default();
        assert_eq!(backoff(&limits, 1), limits.restart_backoff_min);
        assert_eq!(backoff(&limits, 2), limits.restart_backoff_min * 2);
        assert_eq!(backoff(&limits, 40), limits.restart_backoff_max);
    }

    #[test]
    fn the_fatal_line_of_stderr_explains_a_death() {
        let tail = b"\n\n#\n# Fatal error in , line 0\n# Fatal JavaScript out of memory: invalid array length\n#\n#\n#\n#FailureMessage Object: 0x7ffd\n";
        assert_eq!(
            stderr_summary(tail).unwrap(),
            "Fatal JavaScript out of memory: invalid array length"
        );
        assert_eq!(stderr_summary(b"plain\nlast line\n").unwrap(), "last line");
        assert!(stderr_summary(b"\n#\n").is_none());
    }
}
