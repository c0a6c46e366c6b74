//! The engine side of the executor protocol: runs inside the child process, reads host frames
//! from its input, hands them to the same `pool::LocalRunner` that `'thread'` isolation uses
//! (frames in, runner calls out; nothing of a run is rebuilt here), and writes engine frames to
//! its output.
//!
//! Its parts: `input.rs` reads the host's frames (who reads when: the reader thread, a run
//! awaiting its reply, stand-by and wake-ups, with their invariants), `output.rs` writes the
//! engine's (the writer thread, tool calls and results written by workers), `handshake.rs`
//! answers `Hello`; this file serves a host and acts on each frame (`Engine::handle`).

mod handshake;
mod input;
mod output;

use handshake::handshake;
use input::{HostFrames, Input, Pump, READER_POLL_MS};
use output::{start_writer, FrameSink, Outbox, Outgoing, Output, IS_READER};

use crate::pool::LocalRunner;
use crate::protocol::{
    max_frame_bytes, EngineMessage, FrameBuffer, HostMessage, FLAG_LIVE_LOGS, FLAG_RETAIN,
    SHUTDOWN_NOW,
};
use crate::run::{Completion, Overrides, RunError, RunKind, RunRequest, TestHook};
use crate::runner::Runner;
use crossbeam_channel::Sender;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Exit codes of an engine process.
pub const EXIT_OK: i32 = 0;
pub const EXIT_REFUSED: i32 = 2;
pub const EXIT_PROTOCOL_ERROR: i32 = 3;

/// Why the engine stops; the main thread turns it into the process exit code.
enum Stop {
    /// Input closed (the host is gone) or a drained shutdown finished.
    Done,
    Refused,
    ProtocolError,
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
                bounds,
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
                    overrides_of(&bounds),
                    test_hook,
                );
            }
            HostMessage::HandleExecute {
                handle_id,
                run_id,
                bounds,
                flags,
                program,
            } => {
                let kind = RunKind::Handle { handle_id, program };
                let live_logs = flags & FLAG_LIVE_LOGS != 0;
                let overrides = overrides_of(&bounds);
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

/// A run's bounds as the host sent them, checked as the napi layer checks them (a conforming
/// host sends only what it checked; anything else fails that run with the reason).
fn overrides_of(bounds: &[(String, f64)]) -> Result<Overrides, crate::error::Fault> {
    Overrides::parse(bounds.iter().map(|(name, value)| (name.as_str(), *value)))
}
