//! The engine side of the executor protocol: runs inside the child process, reads host frames
//! from its input, runs them on an ordinary in-process pool, and writes engine frames to its
//! output. The frame reader never blocks on the host draining its pipe: what it sends (pongs,
//! handshake answers, refusals) goes through a writer thread. Workers write their tool calls and
//! results themselves, under the output lock: they may wait for the host to read, but since the
//! reader always drains the input, a full pipe in each direction cannot deadlock the two
//! processes.

use crate::bridge::{ReplyRouter, ToolCall, ToolSink};
use crate::error::Fault;
use crate::limits::Limits;
use crate::pool::{Completion, FaultInjection, HandleJob, Job, Outcome, Pool, PoolStats};
use crate::protocol::{
    max_frame_bytes, read_frame, EngineMessage, EngineStats, HostMessage, RunReport, RunResult,
    MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, SHUTDOWN_NOW,
};
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

pub fn stats_of(s: &PoolStats, retained: usize) -> EngineStats {
    EngineStats {
        workers: s.workers as u32,
        busy: s.busy as u32,
        queued: s.queued as u32,
        retained: retained as u32,
        completed: s.completed,
        lost: s.lost,
        abandoned: s.abandoned,
        replaced: s.replaced,
        isolates_created: s.isolates_created,
    }
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
}

impl ToolSink for FrameSink {
    fn send(&self, run_id: u64, call: ToolCall) -> bool {
        let frame = EngineMessage::ToolCall {
            run_id,
            call_id: call.call_id,
            provider: call.provider,
            tool: call.tool,
            args_json: call.args_json,
        }
        .encode();
        self.out.frame_now(frame)
    }
}

fn result_frame(run_id: u64, outcome: Outcome, stats: EngineStats) -> Vec<u8> {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let result = match outcome {
        Ok(report) => RunResult::Done(RunReport {
            result_json: report.output.result_json,
            error: report.output.error,
            logs: report.output.logs,
            queued_ms: ms(report.queued),
            run_ms: ms(report.run),
            tool_calls: report.output.tool_calls,
            heap_used_bytes: report.output.heap_used_bytes as f64,
            handle_id: report.handle_id,
        }),
        Err(fault) => RunResult::Fault {
            code: fault.code.as_str().to_string(),
            message: fault.message,
        },
    };
    EngineMessage::Result {
        run_id,
        result,
        stats,
    }
    .encode()
}

/// Serves one host until its input closes or it asks for a shutdown. Blocks the calling thread
/// (the engine process's main thread) and returns the process exit code.
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
    fault_injection_enabled: bool,
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
            let stop = read_loop(input, out.clone(), fault_injection_enabled);
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
    pool: Arc<Pool>,
    router: Arc<ReplyRouter>,
    out: Outbox,
    fault_injection_enabled: bool,
}

fn read_loop(mut input: impl Read, out: Outbox, fault_injection_enabled: bool) -> Stop {
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
    let pool = Arc::new(Pool::new(limits));
    let closed_out = out.clone();
    pool.on_handle_closed(Arc::new(move |handle_id, reason: &str| {
        closed_out.frame(
            EngineMessage::HandleClosed {
                handle_id,
                reason: reason.to_string(),
            }
            .encode(),
        );
    }));
    let engine = Engine {
        pool,
        router: Arc::new(ReplyRouter::new()),
        out,
        fault_injection_enabled,
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
    let limits = Limits::from_options_json(&config_json).map_err(refuse)?;
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
    fn stats(&self) -> EngineStats {
        stats_of(&self.pool.stats(), self.pool.retained())
    }

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
                code,
                run_config_json,
            } => {
                let fault = match fault_injection.as_deref() {
                    Some(kind) if self.fault_injection_enabled => match engine_fault(kind) {
                        EngineFault::Pool(f) => Some(f),
                        EngineFault::None => None,
                    },
                    _ => None,
                };
                self.execute(
                    run_id,
                    timeout_ms,
                    memory_mb,
                    flags,
                    fault,
                    code,
                    run_config_json,
                );
            }
            HostMessage::Reply {
                run_id,
                call_id,
                json,
            } => {
                self.router.route(run_id, call_id, json);
            }
            HostMessage::Cancel { run_id, reason } => {
                // A waiting run sees the message on its channel; a busy one is terminated.
                if self.router.end(run_id, reason.clone()) {
                    self.pool.cancel(run_id, reason);
                }
            }
            HostMessage::Ping { seq } => {
                let stats = self.stats();
                self.send(EngineMessage::Pong { seq, stats }.encode());
            }
            HostMessage::Shutdown { mode } => {
                if mode == SHUTDOWN_NOW {
                    return Some(Stop::Done);
                }
                let out = self.out.clone();
                self.pool.dispose(move || {
                    out.frame(EngineMessage::Bye.encode());
                    // If the writer is gone, the host is too: the reader stops the engine.
                    let _ = out.then_stop(Stop::Done);
                });
            }
            HostMessage::HandleExecute {
                handle_id,
                run_id,
                timeout_ms,
                code,
            } => {
                let job = HandleJob {
                    run_id,
                    code,
                    timeout: positive_ms(timeout_ms),
                    sink: Arc::new(FrameSink {
                        out: self.out.clone(),
                    }),
                    events: self.router.open(run_id, self.pool.limits().max_reply_bytes),
                    enqueued_at: Instant::now(),
                    completion: self.completion(run_id),
                };
                self.pool.execute_retained(handle_id, job);
            }
            HostMessage::HandleDispose { handle_id } => {
                self.pool.dispose_retained(handle_id);
            }
        }
        None
    }

    /// Answers a run with a `Result` frame and closes its reply route.
    fn completion(&self, run_id: u64) -> Completion {
        let out = self.out.clone();
        let router = self.router.clone();
        let pool = self.pool.clone();
        Completion::new(move |outcome| {
            router.close(run_id);
            let stats = stats_of(&pool.stats(), pool.retained());
            out.frame_now(result_frame(run_id, outcome, stats));
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        run_id: u64,
        timeout_ms: f64,
        memory_mb: u32,
        flags: u8,
        fault: Option<FaultInjection>,
        code: String,
        run_config_json: String,
    ) {
        let completion = self.completion(run_id);
        let mut limits = self.pool.limits().clone();
        if let Some(timeout) = positive_ms(timeout_ms) {
            limits.timeout = timeout;
        }
        if memory_mb > 0 {
            if let Err(message) = limits.set("memoryLimitMb", memory_mb as f64) {
                completion.finish(Err(Fault::invalid(message)));
                return;
            }
        }
        let events = self.router.open(run_id, limits.max_reply_bytes);
        let job = Job {
            run_id,
            code,
            run_config_json,
            limits,
            sink: Arc::new(FrameSink {
                out: self.out.clone(),
            }),
            events,
            enqueued_at: Instant::now(),
            completion,
            fault,
            retain: flags & crate::protocol::FLAG_RETAIN != 0,
        };
        if let Err((fault, job)) = self.pool.submit(job) {
            job.completion.finish(Err(fault));
        }
    }
}

fn positive_ms(ms: f64) -> Option<Duration> {
    (ms.is_finite() && ms > 0.0 && ms <= crate::limits::MAX_TIMEOUT_MS)
        .then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// Test hooks (honoured only when fault injection is enabled in the engine's environment).
enum EngineFault {
    None,
    Pool(FaultInjection),
}

/// Faults that act on the engine process itself happen here, at once; worker faults go to the
/// pool with the job.
fn engine_fault(kind: &str) -> EngineFault {
    match kind {
        "panic" => EngineFault::Pool(FaultInjection::Panic),
        // The process dies as V8 does on a fatal error.
        "abort" => std::process::abort(),
        // The engine stops reading (and so stops answering pings) but stays alive.
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        // Memory grows outside V8's accounting until the host's process watchdog acts.
        "leak" => {
            std::thread::spawn(|| {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                for _ in 0..256 {
                    hoard.push(vec![1u8; 16 << 20]);
                    std::thread::sleep(Duration::from_millis(5));
                }
                std::thread::sleep(Duration::from_secs(3600));
                drop(hoard);
            });
            EngineFault::None
        }
        _ => EngineFault::None,
    }
}
