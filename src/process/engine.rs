//! The engine side of the executor protocol: runs inside the child process, reads host frames
//! from its input, hands them to the same `pool::LocalRunner` that `'thread'` isolation uses
//! (frames in, runner calls out; nothing of a run is rebuilt here), and writes engine frames to
//! its output. The frame reader never blocks on the host draining its pipe: what it sends (pongs,
//! handshake answers, refusals) goes through a writer thread. Workers write their tool calls and
//! results themselves, under the output lock: they may wait for the host to read, but since the
//! reader always drains the input, a full pipe in each direction cannot deadlock the two
//! processes.

use crate::bridge::{ToolCall, ToolSink};
use crate::limits::Limits;
use crate::pool::LocalRunner;
use crate::protocol::{
    max_frame_bytes, read_frame, EngineMessage, HostMessage, FLAG_LIVE_LOGS, FLAG_RETAIN,
    MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, SHUTDOWN_NOW,
};
use crate::run::{Completion, Overrides, RunError, RunKind, RunRequest, TestHook};
use crate::runner::Runner;
use crossbeam_channel::{Receiver, Sender};
use std::cell::Cell;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
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
    /// Set on the frame-reading thread, which must never block on the host draining its pipe.
    static IS_READER: Cell<bool> = const { Cell::new(false) };
}

/// Where frames go. Tool calls and results are on the latency path of a run, so the thread that
/// makes them (a worker) writes them itself: one thread wake-up less per message than a hand-off
/// to the writer thread. The reader thread only ever queues (see the module comment).
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
    /// Writes a frame now from this thread (queues it when called on the reader thread).
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
/// (the engine process's main thread) and returns the process exit code.
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
    test_hooks: bool,
) -> i32 {
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
            let stop = read_loop(input, out.clone(), test_hooks);
            // A refusal is a frame the host must see: stop after the writer has sent it (or
            // after a bounded wait, should the host not be reading).
            if matches!(stop, Stop::Refused) && out.then_stop(Stop::Refused) {
                std::thread::sleep(Duration::from_secs(2));
            }
            let _ = stop_tx.send(stop);
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
}

fn read_loop(mut input: impl Read, out: Outbox, test_hooks: bool) -> Stop {
    let limits = match handshake(&mut input, &out) {
        Ok(limits) => limits,
        Err(stop) => return stop,
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
    let engine = Engine {
        runner,
        out,
        test_hooks,
    };
    loop {
        let body = match read_frame(&mut input, max_frame) {
            Ok(Some(body)) => body,
            Ok(None) => return Stop::Done,
            Err(_) => return Stop::ProtocolError,
        };
        let Ok(message) = HostMessage::decode(&body) else {
            return Stop::ProtocolError;
        };
        drop(body);
        if let Some(stop) = engine.handle(message) {
            return stop;
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
                    .and_then(process_hook);
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

/// Acts on the test hooks that concern the engine process itself, at once; the hook that acts
/// on a worker (a panic) travels on with the run.
fn process_hook(hook: TestHook) -> Option<TestHook> {
    match hook {
        TestHook::Panic => Some(TestHook::Panic),
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

/// The entry point of an engine process: serves the executor protocol on stdin/stdout until
/// the host closes it or asks for a shutdown, then ends the process at once.
pub fn serve_stdio() -> ! {
    for fd in [0, 1] {
        // The engine reads and writes its pipes from its own threads with blocking calls,
        // whatever the parent runtime set.
        crate::os::set_nonblocking(fd, false);
    }
    let code = serve(
        std::io::stdin(),
        crate::os::raw_stdout(),
        TestHook::enabled(),
    );
    crate::os::exit_now(code)
}
