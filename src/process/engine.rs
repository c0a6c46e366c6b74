//! The engine side of the executor protocol: runs inside the child process, reads host frames
//! from its input, hands them to the same `pool::LocalRunner` that `'thread'` isolation uses
//! (frames in, runner calls out; nothing of a run is rebuilt here), and writes engine frames to
//! its output.
//!
//! The input is read by whichever thread gets there first ([`HostFrames`]): the reader thread,
//! asleep in `poll` until bytes arrive, or a run awaiting its tool reply (`bridge::InputPump`).
//! Such a run first polls for the reply, reading the input as it does, and then, if no other
//! run does so already, sleeps in `poll` on the input itself (it "leads"): its reply then wakes
//! the run directly, instead of waking the reader thread, which then wakes the run. The reader
//! thread stays in `poll` beside the leader as a safety net, and reads only what the leader has
//! not taken shortly after (then it wakes the leader, whose event it may have routed). Frames
//! are acted on in the order they came, under the input's lock, by whoever read them.
//!
//! While only one run is in progress and it has led, the reader thread stands aside instead of
//! waiting on the input beside it: that run reads the input itself whenever it awaits, and every
//! host frame would wake both, a second wake-up paid by the host's write and by the reader.
//! Measured with 500-call runs: a third less time per call with two workers, under load half,
//! and a quarter to a half less CPU on both sides (with one worker on a quiet VM it was slower:
//! the reader's wake-ups had kept the host's idle vCPU awake). It comes back to the input when a
//! frame starts another run or that run ends (both wake it), and looks every `STANDBY_CHECK`
//! meanwhile, so a frame that arrives while the run computes waits that long at most.
//!
//! A thread that reads the input never blocks on the host draining its pipe: what it sends
//! (pongs, handshake answers, refusals, a result it answers at once) goes through a writer
//! thread. Workers write their tool calls and results themselves, under the output lock: they
//! may wait for the host to read, but since the input is always drained, a full pipe in each
//! direction cannot deadlock the two processes.

use crate::bridge::InputPump;
use crate::limits::Limits;
use crate::pool::LocalRunner;
use crate::protocol::{
    max_frame_bytes, read_frame, EngineMessage, FrameBuffer, HostMessage, FLAG_LIVE_LOGS,
    FLAG_RETAIN, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, SHUTDOWN_NOW,
};
use crate::run::{Completion, Overrides, RunError, RunKind, RunRequest, TestHook};
use crate::run::{ToolCall, ToolSink};
use crate::runner::Runner;
use crossbeam_channel::{Receiver, Sender};
use std::cell::Cell;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};
use std::time::{Duration, Instant};

/// Exit codes of an engine process.
pub const EXIT_OK: i32 = 0;
pub const EXIT_REFUSED: i32 = 2;
pub const EXIT_PROTOCOL_ERROR: i32 = 3;

/// The handshake frame is small; anything bigger before `Hello` is a protocol error.
const MAX_HELLO_BYTES: usize = 1 << 20;

/// Why the engine stops; the main thread turns it into the process exit code.
enum Stop {
    /// Input closed (the host is gone) or a drained shutdown finished.
    Done,
    Refused,
    ProtocolError,
}

/// What the writer thread takes: a frame, or the signal that every frame before it has been
/// written and the engine may stop.
enum Outgoing {
    Frame(Vec<u8>),
    ThenStop(Stop),
}

/// The engine's stdout, shared by the writer thread and the threads that write directly.
type Output = Arc<Mutex<Box<dyn Write + Send>>>;

thread_local! {
    /// Set while a thread reads and acts on the host's frames: it must never block on the host
    /// draining its pipe.
    static IS_READER: Cell<bool> = const { Cell::new(false) };
}

/// How long the reader thread sleeps in `poll` before it looks again whether the engine has
/// stopped (a stop decided by a run that read the input).
const READER_POLL_MS: i32 = 500;

/// How long the reader thread stands aside at most before it reads what was left unread: the
/// longest a frame waits while the only run in progress computes instead of awaiting.
const STANDBY_CHECK: Duration = Duration::from_millis(2);

/// How long the reader thread, woken by bytes while a run leads, gives that run to read them
/// (see [`HostFrames::read_as_reader`]) before it reads them itself.
const LEADER_GRACE: Duration = Duration::from_micros(20);

/// Where frames go. Tool calls and results are on the latency path of a run, so the thread that
/// makes them (a worker) writes them itself: one thread wake-up less per message than a hand-off
/// to the writer thread. A thread that is reading the input only ever queues (see the module
/// comment).
#[derive(Clone)]
struct Outbox {
    queue: Sender<Outgoing>,
    output: Output,
}

impl Outbox {
    /// Queues a frame for the writer thread.
    fn frame(&self, frame: Vec<u8>) -> bool {
        self.queue.send(Outgoing::Frame(frame)).is_ok()
    }
    /// Writes a frame now from this thread (queues it when this thread is reading the input).
    fn frame_now(&self, frame: Vec<u8>) -> bool {
        if IS_READER.with(Cell::get) {
            return self.frame(frame);
        }
        let mut output = self.output.lock().unwrap_or_else(|p| p.into_inner());
        output.write_all(&frame).is_ok() && output.flush().is_ok()
    }
    /// Stops the engine once everything queued before has been written. False when the writer
    /// is gone (then nothing more can be written anyway).
    fn then_stop(&self, stop: Stop) -> bool {
        self.queue.send(Outgoing::ThenStop(stop)).is_ok()
    }
}

/// Tool calls leave as `ToolCall` frames.
struct FrameSink {
    out: Outbox,
    /// The host asked for the run's console lines as they happen (`FLAG_LIVE_LOGS`).
    live_logs: bool,
}

impl ToolSink for FrameSink {
    fn send(&self, run_id: u64, call: ToolCall) -> bool {
        self.out
            .frame_now(EngineMessage::ToolCall { run_id, call }.encode())
    }

    fn wants_logs(&self) -> bool {
        self.live_logs
    }

    fn log(&self, run_id: u64, line: &str) {
        // Written like tool calls and the result, from the run's thread: a line can then never
        // arrive after its run's result.
        let line = line.to_string();
        self.out
            .frame_now(EngineMessage::Log { run_id, line }.encode());
    }
}

/// Serves one host until its input closes or it asks for a shutdown. Blocks the calling thread
/// (the engine process's main thread) and returns the process exit code. `input` is read
/// without a buffer in front of it (see [`HostFrames`]).
pub fn serve(input: File, output: impl Write + Send + 'static, test_hooks: bool) -> i32 {
    let (out_tx, out_rx) = crossbeam_channel::unbounded::<Outgoing>();
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<Stop>(4);
    let output: Output = Arc::new(Mutex::new(Box::new(output)));
    start_writer(output.clone(), out_rx, stop_tx.clone());
    let spawned = std::thread::Builder::new()
        .name("codemode-engine-reader".into())
        .spawn(move || {
            IS_READER.with(|r| r.set(true));
            let out = Outbox {
                queue: out_tx,
                output,
            };
            let stop = read_loop(input, out.clone(), test_hooks, &stop_tx);
            // A refusal is a frame the host must see: stop after the writer has sent it (or
            // after a bounded wait, should the host not be reading).
            if let Some(stop) = stop {
                if matches!(stop, Stop::Refused) && out.then_stop(Stop::Refused) {
                    std::thread::sleep(Duration::from_secs(2));
                }
                let _ = stop_tx.send(stop);
            }
        });
    if spawned.is_err() {
        return EXIT_PROTOCOL_ERROR;
    }
    match stop_rx.recv() {
        Ok(Stop::Done) | Err(_) => EXIT_OK,
        Ok(Stop::Refused) => EXIT_REFUSED,
        Ok(Stop::ProtocolError) => EXIT_PROTOCOL_ERROR,
    }
}

fn start_writer(output: Output, queue: Receiver<Outgoing>, stop: Sender<Stop>) {
    let _ = std::thread::Builder::new()
        .name("codemode-engine-writer".into())
        .spawn(move || {
            while let Ok(item) = queue.recv() {
                let mut output = output.lock().unwrap_or_else(|p| p.into_inner());
                match item {
                    Outgoing::Frame(frame) => {
                        if output.write_all(&frame).is_err() || output.flush().is_err() {
                            return; // the host is gone; the reader sees the input close
                        }
                    }
                    Outgoing::ThenStop(then) => {
                        let _ = output.flush();
                        let _ = stop.send(then);
                        return;
                    }
                }
            }
        });
}

/// The engine's state after a successful handshake.
struct Engine {
    runner: Arc<LocalRunner>,
    out: Outbox,
    test_hooks: bool,
    /// Whether a leading run reads the input (cleared only by `TestHook::IdleLeader`).
    leader_reads: AtomicBool,
}

/// Answers the handshake, then reads the input until the engine stops. Returns the stop when
/// the handshake decided it; later stops are sent on `stop` by whichever thread read them.
fn read_loop(input: File, out: Outbox, test_hooks: bool, stop: &Sender<Stop>) -> Option<Stop> {
    let limits = match handshake(&mut &input, &out) {
        Ok(limits) => limits,
        Err(stop) => return Some(stop),
    };
    let max_frame = max_frame_bytes(
        limits.max_code_bytes,
        limits.max_reply_bytes,
        limits.max_result_bytes,
        limits.max_log_bytes,
    );
    let runner = Arc::new(LocalRunner::new(limits));
    let closed_out = out.clone();
    runner.on_handle_closed(Arc::new(move |handle_id, reason: &str| {
        closed_out.frame(
            EngineMessage::HandleClosed {
                handle_id,
                reason: reason.to_string(),
            }
            .encode(),
        );
    }));
    // Without it (no descriptor left) no run leads: the reader reads for all.
    let leader_wake = crate::os::EventFd::new().ok();
    // Without it the reader never stands aside.
    let reader_wake = leader_wake
        .as_ref()
        .and_then(|_| crate::os::EventFd::new().ok());
    let fd = input.as_raw_fd();
    // From here on the input is read without blocking, by this thread and by runs awaiting replies.
    crate::os::set_nonblocking(fd, true);
    let frames = Arc::new(HostFrames {
        input: Mutex::new(Input {
            file: input,
            buffer: FrameBuffer::default(),
        }),
        fd,
        leader: AtomicBool::new(false),
        leader_wake,
        reader_wake,
        reader_standby: AtomicBool::new(false),
        max_frame,
        stop: stop.clone(),
        stopped: AtomicBool::new(false),
        engine: Engine {
            runner: runner.clone(),
            out,
            test_hooks,
            leader_reads: AtomicBool::new(true),
        },
    });
    runner.set_input_pump(Arc::new(Pump(Arc::downgrade(&frames))));
    let mut standing_by = false;
    while !frames.stopped.load(Ordering::Acquire) {
        standing_by = frames.stand_by(standing_by);
        if !standing_by {
            crate::os::wait_readable(fd, READER_POLL_MS);
        }
        frames.read_as_reader();
    }
    None
}

/// The host's frames, read by whichever thread gets there first (see the module comment).
struct HostFrames {
    input: Mutex<Input>,
    /// The input's descriptor, for waiting on it (the file itself is behind the lock).
    fd: std::os::fd::RawFd,
    /// A run leads: it waits for its reply on the input itself (`lead`).
    leader: AtomicBool,
    /// Wakes the leading run after another thread acted on frames.
    leader_wake: Option<crate::os::EventFd>,
    /// Brings the reader thread back to the input while it stands aside (`stand_by`).
    reader_wake: Option<crate::os::EventFd>,
    /// The reader thread stands aside.
    reader_standby: AtomicBool,
    max_frame: usize,
    /// Where the stop goes, once, whichever thread decides it.
    stop: Sender<Stop>,
    stopped: AtomicBool,
    engine: Engine,
}

struct Input {
    file: File,
    buffer: FrameBuffer,
}

impl HostFrames {
    /// The input, unless another thread holds it.
    fn try_input(&self) -> Option<MutexGuard<'_, Input>> {
        match self.input.try_lock() {
            Ok(input) => Some(input),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Whether the reader thread may stand aside: exactly one run is in progress. It reads the
    /// input itself whenever it awaits (it polls, then leads); with more runs in progress none
    /// of them leads, and with none an idle worker may not be leading yet. The reader starts
    /// standing aside only once that run leads (a run that never awaits long enough to lead,
    /// as most short ones, is not worth waking the reader for at its end).
    fn may_stand_by(&self, already: bool) -> bool {
        self.engine.runner.runs_in_progress() == 1
            && (already || self.leader.load(Ordering::SeqCst))
    }

    /// The reader thread stands aside while [`Self::may_stand_by`] holds, for `STANDBY_CHECK` at
    /// most, and returns whether it did (false: it should wait on the input). A frame that
    /// starts another run, or the end of the run, wakes it (`wake_reader`); woken, it waits on
    /// the input next time round, whatever the state.
    fn stand_by(&self, already: bool) -> bool {
        let Some(wake) = self
            .reader_wake
            .as_ref()
            .filter(|_| self.may_stand_by(already))
        else {
            return false;
        };
        self.reader_standby.store(true, Ordering::SeqCst);
        // Pairs with the fence in `wake_reader`: either the waker sees the flag, or this thread
        // sees the state that changed before it woke.
        fence(Ordering::SeqCst);
        let woken = !self.may_stand_by(true) || wake.wait(STANDBY_CHECK);
        self.reader_standby.store(false, Ordering::SeqCst);
        wake.clear();
        !woken
    }

    /// Brings the reader thread back to the input if it stands aside.
    fn wake_reader(&self) {
        fence(Ordering::SeqCst);
        if self.reader_standby.load(Ordering::SeqCst) {
            if let Some(wake) = self.reader_wake.as_ref() {
                wake.notify();
            }
        }
    }

    /// A polling run reads what the host has sent, unless another thread is reading.
    fn read_if_free(&self) {
        if let Some(mut input) = self.try_input() {
            self.read(&mut input, false);
        }
    }

    /// The reader thread, woken by bytes on the input, reads them. When a run leads (it waits
    /// for its reply on the input itself, see [`HostFrames::lead`]), the same bytes woke that
    /// run: the reader leaves them to it and only makes sure, briefly, that they were read
    /// (a leader that is slow to run, lowered or short of a core, is then read for).
    fn read_as_reader(&self) {
        if self.leader.load(Ordering::SeqCst) {
            let looked_until = Instant::now() + LEADER_GRACE;
            while crate::os::is_readable(self.fd) && Instant::now() < looked_until {
                std::thread::yield_now();
            }
            if !crate::os::is_readable(self.fd) {
                return;
            }
        }
        let mut input = self.input.lock().unwrap_or_else(|p| p.into_inner());
        self.read(&mut input, false);
    }

    /// Reads what the host has sent and acts on each whole frame, in order, until the input has
    /// nothing more for now. A thread other than the leader that acted on frames wakes the
    /// leader: one of them may have been its reply.
    fn read(&self, input: &mut Input, by_leader: bool) {
        if self.stopped.load(Ordering::Acquire) {
            return;
        }
        let was_reader = IS_READER.with(|r| r.replace(true));
        let (acted, stop) = self.act_on_input(input);
        IS_READER.with(|r| r.set(was_reader));
        if let Some(stop) = stop {
            self.stopped.store(true, Ordering::Release);
            let _ = self.stop.send(stop);
        }
        if acted && !by_leader {
            // Pairs with the fence in `lead`: the leader either sees the event this thread
            // routed, or this thread sees the leader and wakes it.
            fence(Ordering::SeqCst);
            if let Some(wake) = self.leader_wake.as_ref() {
                if self.leader.load(Ordering::SeqCst) {
                    wake.notify();
                }
            }
        }
    }

    /// A thread waits until `ready()` by reading the input itself: it sleeps in `poll` on the
    /// input and acts on every frame that comes (for any run) until `ready()` holds after one of
    /// them, or `wake_at` passes. A run awaiting its reply waits this way, so the reply wakes
    /// it directly, not the reader thread first and the run after; so does an idle worker
    /// when no run is in progress, so that the next `Execute` wakes the worker that runs it.
    /// One thread leads at a time; `None` when another does, or the engine has stopped (the
    /// caller then waits as usual).
    fn lead(&self, ready: &dyn Fn() -> bool, wake_at: Option<Instant>) -> Option<bool> {
        let wake = self.leader_wake.as_ref()?;
        if self
            .leader
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let outcome = self.wait_as_leader(ready, wake_at, wake);
        self.leader.store(false, Ordering::SeqCst);
        outcome
    }

    fn wait_as_leader(
        &self,
        ready: &dyn Fn() -> bool,
        wake_at: Option<Instant>,
        wake: &crate::os::EventFd,
    ) -> Option<bool> {
        loop {
            // When another thread holds the input, it routes what it reads and then wakes this
            // one (`read`).
            if let Some(mut input) = self
                .try_input()
                .filter(|_| self.engine.leader_reads.load(Ordering::Relaxed))
            {
                self.read(&mut input, true);
            }
            fence(Ordering::SeqCst);
            if ready() {
                return Some(true);
            }
            if self.stopped.load(Ordering::Acquire) {
                return None;
            }
            let now = Instant::now();
            if wake_at.is_some_and(|at| now >= at) {
                return Some(false);
            }
            let timeout = wake_at.map(|at| at - now);
            if crate::os::wait_readable_or(self.fd, wake, timeout) {
                wake.clear();
            }
        }
    }

    /// Acts on every whole frame in the input, reading more until there is nothing for now.
    /// Returns whether any frame was acted on, and the stop one of them decided.
    fn act_on_input(&self, input: &mut Input) -> (bool, Option<Stop>) {
        let Input { file, buffer } = input;
        let mut acted = false;
        loop {
            match buffer.next_frame(self.max_frame) {
                Ok(Some(body)) => {
                    let Ok(message) = HostMessage::decode(&body) else {
                        return (acted, Some(Stop::ProtocolError));
                    };
                    drop(body);
                    acted = true;
                    let starts_run = matches!(
                        message,
                        HostMessage::Execute { .. } | HostMessage::HandleExecute { .. }
                    );
                    let stop = self.engine.handle(message);
                    if starts_run {
                        // Another run may be in progress beside the leading one: then nobody
                        // leads, and the reader must read for both.
                        self.wake_reader();
                    }
                    if let Some(stop) = stop {
                        return (acted, Some(stop));
                    }
                    continue;
                }
                Ok(None) => {}
                Err(_) => return (acted, Some(Stop::ProtocolError)),
            }
            let stop = match buffer.fill(file) {
                // The host closed its end: between frames that is the end of the session, in
                // the middle of one a cut frame.
                Ok(0) if buffer.holds_partial_frame() => Stop::ProtocolError,
                Ok(0) => Stop::Done,
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return (acted, None),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => Stop::ProtocolError,
            };
            return (acted, Some(stop));
        }
    }
}

/// A polling run's way into [`HostFrames`]. Weak: the pool that holds it is itself held by the
/// frames' engine.
struct Pump(Weak<HostFrames>);

impl InputPump for Pump {
    fn pump(&self) {
        if let Some(frames) = self.0.upgrade() {
            frames.read_if_free();
        }
    }

    fn lead(&self, ready: &dyn Fn() -> bool, wake_at: Option<Instant>) -> Option<bool> {
        self.0.upgrade()?.lead(ready, wake_at)
    }

    fn run_ended(&self) {
        if let Some(frames) = self.0.upgrade() {
            frames.wake_reader();
        }
    }
}

/// Reads `Hello`, picks the version, and answers `Ready` (or `Refuse`).
fn handshake(input: &mut impl Read, out: &Outbox) -> Result<Limits, Stop> {
    let body = match read_frame(input, MAX_HELLO_BYTES) {
        Ok(Some(body)) => body,
        Ok(None) => return Err(Stop::Done),
        Err(_) => return Err(Stop::ProtocolError),
    };
    let refuse = |reason: String| {
        out.frame(EngineMessage::Refuse { reason }.encode());
        Stop::Refused
    };
    let (min_version, max_version, config_json) = match HostMessage::decode(&body) {
        Ok(HostMessage::Hello {
            min_version,
            max_version,
            config_json,
        }) => (min_version, max_version, config_json),
        Ok(_) => return Err(refuse("the first message must be Hello".into())),
        Err(_) => return Err(Stop::ProtocolError),
    };
    let version = max_version.min(PROTOCOL_VERSION);
    if version < min_version || version < MIN_PROTOCOL_VERSION {
        return Err(refuse(format!(
            "no common protocol version: host speaks {min_version}..={max_version}, engine speaks {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION}"
        )));
    }
    let mut limits = Limits::from_options_json(&config_json).map_err(refuse)?;
    // The host hands this engine more runs than it has workers only once every run it holds
    // here has been held for `overflow_after` (see `dispatch::pump`): such a run gets an extra
    // worker at once, without a second wait.
    limits.overflow_after = std::time::Duration::ZERO;
    out.frame(
        EngineMessage::Ready {
            version,
            pid: std::process::id(),
            workers: limits.workers as u32,
            engine: format!("codemode-executor {}", env!("CARGO_PKG_VERSION")),
        }
        .encode(),
    );
    Ok(limits)
}

impl Engine {
    fn send(&self, frame: Vec<u8>) {
        self.out.frame(frame);
    }

    /// Handles one message; `Some` ends the read loop.
    fn handle(&self, message: HostMessage) -> Option<Stop> {
        match message {
            HostMessage::Hello { .. } => return Some(Stop::ProtocolError),
            HostMessage::Execute {
                run_id,
                timeout_ms,
                memory_mb,
                flags,
                fault_injection,
                program,
                run_config_json,
            } => {
                let test_hook = fault_injection
                    .filter(|_| self.test_hooks)
                    .and_then(|name| TestHook::parse(&name))
                    .and_then(|hook| self.process_hook(hook));
                let kind = RunKind::Fresh {
                    program,
                    config_json: run_config_json,
                    retain: flags & FLAG_RETAIN != 0,
                };
                self.submit(
                    run_id,
                    kind,
                    flags & FLAG_LIVE_LOGS != 0,
                    Overrides::from_wire(timeout_ms, memory_mb),
                    test_hook,
                );
            }
            HostMessage::HandleExecute {
                handle_id,
                run_id,
                timeout_ms,
                flags,
                program,
            } => {
                let kind = RunKind::Handle { handle_id, program };
                let live_logs = flags & FLAG_LIVE_LOGS != 0;
                let overrides = Overrides::from_wire(timeout_ms, 0);
                self.submit(run_id, kind, live_logs, overrides, None);
            }
            HostMessage::Reply {
                run_id,
                call_id,
                json,
            } => {
                self.runner.reply(run_id, call_id, json);
            }
            HostMessage::Cancel {
                run_id,
                reason,
                bound: None,
            } => {
                self.runner.cancel(run_id, reason);
            }
            HostMessage::Cancel {
                run_id,
                reason,
                bound: Some(bound),
            } => {
                // An oversized reply the host did not send: the run ends as that breach, as it
                // does in 'thread' isolation.
                self.runner.breach(run_id, RunError::bound(&bound, reason));
            }
            HostMessage::Ping { seq } => {
                let stats = self.runner.stats();
                self.send(EngineMessage::Pong { seq, stats }.encode());
            }
            HostMessage::Shutdown { mode } => {
                if mode == SHUTDOWN_NOW {
                    return Some(Stop::Done);
                }
                let out = self.out.clone();
                self.runner.dispose(Box::new(move || {
                    out.frame(EngineMessage::Bye.encode());
                    // If the writer is gone, the host is too: the reader stops the engine.
                    let _ = out.then_stop(Stop::Done);
                }));
            }
            HostMessage::HandleDispose { handle_id } => {
                self.runner.dispose_handle(handle_id);
            }
        }
        None
    }

    /// Hands one run to the runner; its outcome goes back as a `Result` frame carrying the
    /// engine's counters as they are once it is answered.
    fn submit(
        &self,
        run_id: u64,
        kind: RunKind,
        live_logs: bool,
        overrides: Result<Overrides, crate::error::Fault>,
        test_hook: Option<TestHook>,
    ) {
        let out = self.out.clone();
        let runner = self.runner.clone();
        let completion = Completion::new(move |outcome| {
            let stats = runner.stats();
            out.frame_now(
                EngineMessage::Result {
                    run_id,
                    outcome,
                    stats,
                }
                .encode(),
            );
            // The host thread this frame woke may have been queued on this core (a pipe's
            // wake-up tells the scheduler the writer is about to sleep), but this thread goes
            // on to drop the isolate and warm the next one: measured, the result waited ~1.5 ms
            // for that at an agent's pace. Let it run first.
            std::thread::yield_now();
        });
        let overrides = match overrides {
            Ok(overrides) => overrides,
            Err(fault) => {
                completion.finish(Err(fault));
                return;
            }
        };
        self.runner.submit(RunRequest {
            run_id,
            kind,
            overrides,
            test_hook,
            sink: Arc::new(FrameSink {
                out: self.out.clone(),
                live_logs,
            }),
            completion,
            enqueued_at: Instant::now(),
        });
    }
}

impl Engine {
    /// Acts on the test hooks that concern the engine process itself, at once; the hook that
    /// acts on a worker (a panic) travels on with the run.
    fn process_hook(&self, hook: TestHook) -> Option<TestHook> {
        match hook {
            TestHook::Panic => Some(TestHook::Panic),
            TestHook::IdleLeader => {
                self.leader_reads.store(false, Ordering::Relaxed);
                None
            }
            // The process dies as V8 does on a fatal error.
            TestHook::Abort => std::process::abort(),
            // The engine stops reading (and so stops answering pings) but stays alive.
            TestHook::Hang => loop {
                std::thread::sleep(Duration::from_secs(3600));
            },
            // Memory grows outside V8's accounting until the host's process watchdog acts.
            TestHook::Leak => {
                std::thread::spawn(|| {
                    let mut hoard: Vec<Vec<u8>> = Vec::new();
                    for _ in 0..256 {
                        hoard.push(vec![1u8; 16 << 20]);
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    std::thread::sleep(Duration::from_secs(3600));
                    drop(hoard);
                });
                None
            }
        }
    }
}

/// The entry point of an engine process: serves the executor protocol on stdin/stdout until
/// the host closes it or asks for a shutdown, then ends the process at once.
pub fn serve_stdio() -> ! {
    for fd in [0, 1] {
        // The engine reads and writes its pipes from its own threads with blocking calls,
        // whatever the parent runtime set.
        crate::os::set_nonblocking(fd, false);
    }
    let code = serve(
        crate::os::raw_stdin(),
        crate::os::raw_stdout(),
        TestHook::enabled(),
    );
    crate::os::exit_now(code)
}
