//! The engine's output: the writer thread, and the frames workers write themselves.
//!
//! A thread that reads the input never blocks on the host draining its pipe: what it sends
//! (pongs, handshake answers, refusals, a result it answers at once) goes through a writer
//! thread. Workers write their tool calls and results themselves, under the output lock: they
//! may wait for the host to read, but since the input is always drained, a full pipe in each
//! direction cannot deadlock the two processes.

use super::Stop;
use crate::protocol::EngineMessage;
use crate::run::{ToolCall, ToolSink};
use crossbeam_channel::{Receiver, Sender};
use std::cell::Cell;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// What the writer thread takes: a frame, or the signal that every frame before it has been
/// written and the engine may stop.
pub(super) enum Outgoing {
    Frame(Vec<u8>),
    ThenStop(Stop),
}

/// The engine's stdout, shared by the writer thread and the threads that write directly.
pub(super) type Output = Arc<Mutex<Box<dyn Write + Send>>>;

thread_local! {
    /// Set while a thread reads and acts on the host's frames: it must never block on the host
    /// draining its pipe.
    pub(super) static IS_READER: Cell<bool> = const { Cell::new(false) };
}

/// Where frames go. Tool calls and results are on the latency path of a run, so the thread that
/// makes them (a worker) writes them itself: one thread wake-up less per message than a hand-off
/// to the writer thread. A thread that is reading the input only ever queues (see the module
/// comment).
#[derive(Clone)]
pub(super) struct Outbox {
    pub(super) queue: Sender<Outgoing>,
    pub(super) output: Output,
}

impl Outbox {
    /// Queues a frame for the writer thread.
    pub(super) fn frame(&self, frame: Vec<u8>) -> bool {
        self.queue.send(Outgoing::Frame(frame)).is_ok()
    }
    /// Writes a frame now from this thread (queues it when this thread is reading the input).
    pub(super) fn frame_now(&self, frame: Vec<u8>) -> bool {
        if IS_READER.with(Cell::get) {
            return self.frame(frame);
        }
        let mut output = self.output.lock().unwrap_or_else(|p| p.into_inner());
        output.write_all(&frame).is_ok() && output.flush().is_ok()
    }
    /// Stops the engine once everything queued before has been written. False when the writer
    /// is gone (then nothing more can be written anyway).
    pub(super) fn then_stop(&self, stop: Stop) -> bool {
        self.queue.send(Outgoing::ThenStop(stop)).is_ok()
    }
}

/// Tool calls leave as `ToolCall` frames.
pub(super) struct FrameSink {
    pub(super) out: Outbox,
    /// The host asked for the run's console lines as they happen (`FLAG_LIVE_LOGS`).
    pub(super) live_logs: bool,
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

pub(super) fn start_writer(output: Output, queue: Receiver<Outgoing>, stop: Sender<Stop>) {
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
