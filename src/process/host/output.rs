//! The host's end of an engine's output (its stdout). Frames are read without blocking, under
//! one lock, by whichever thread gets there first:
//! - the host's event loop, where the host offers one ([`EventLoop`]: Node's, from the napi
//!   layer). A frame then wakes the thread that acts on it directly: tool calls and results go
//!   to JavaScript on that thread, with no reader thread and no thread hop in between;
//! - the engine's reader thread (`reader.rs`), which reads everything where no loop watches,
//!   and otherwise steps in only when the loop has left bytes unread for [`LOOP_CHECK`]: a host
//!   whose JavaScript is busy must still see heartbeats, hand queued runs on and keep the pipe
//!   drained, so the engine never waits on the host's event loop.
//!
//! Whoever reads the end of the stream (or a frame that makes no sense) records it; the reader
//! thread then reaps the engine.

use super::frames::on_message;
use super::{EventLoop, Host, LoopReadable};
use crate::os::{self, EventFd};
use crate::protocol::{max_frame_bytes, EngineMessage, FrameBuffer};
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, RawFd};
use std::process::ChildStdout;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How often the reader thread looks for bytes the event loop has left waiting (it reads them
/// once they have waited a whole period: a busy loop delays frames by at most two periods).
const LOOP_CHECK: Duration = Duration::from_millis(10);
/// The longest period between two looks while the engine holds no run (only pongs are then
/// expected); a quarter of the heartbeat timeout when that is shorter, so a blocked loop never
/// costs a healthy engine its life.
const IDLE_CHECK: Duration = Duration::from_millis(250);
/// Reads of one drain on the event loop (64 KiB each): a flood of output is taken in slices,
/// so the loop's other work is not held up by it (the descriptor stays readable meanwhile).
const FILLS_PER_DRAIN: usize = 16;

/// How an engine's output ended: cleanly, or with the protocol error that ended it.
#[derive(Clone, Debug)]
pub(super) struct Ended(pub Option<String>);

pub(super) struct EngineOutput {
    id: u64,
    host: Weak<Host>,
    fd: RawFd,
    max_frame: usize,
    reading: Mutex<Reading>,
    /// The event loop watches the descriptor: the reader thread only stands by.
    loop_watching: AtomicBool,
    /// Calls of the loop to read (the reader thread's sign that the loop keeps up).
    loop_turns: AtomicU64,
    /// Wakes the reader thread when the output ended or the loop started or stopped watching.
    wake: EventFd,
}

struct Reading {
    pipe: ChildStdout,
    buffer: FrameBuffer,
    ended: Option<Ended>,
}

impl EngineOutput {
    pub(super) fn new(
        host: &Arc<Host>,
        id: u64,
        pipe: ChildStdout,
    ) -> std::io::Result<Arc<EngineOutput>> {
        let limits = &host.limits;
        let max_frame = max_frame_bytes(
            limits.max_code_bytes,
            limits.max_reply_bytes,
            limits.max_result_bytes,
            limits.max_log_bytes,
        );
        let fd = pipe.as_raw_fd();
        // Our end only: the engine's end of the pipe stays blocking.
        os::set_nonblocking(fd, true);
        Ok(Arc::new(EngineOutput {
            id,
            host: Arc::downgrade(host),
            fd,
            max_frame,
            reading: Mutex::new(Reading {
                pipe,
                buffer: FrameBuffer::default(),
                ended: None,
            }),
            loop_watching: AtomicBool::new(false),
            loop_turns: AtomicU64::new(0),
            wake: EventFd::new()?,
        }))
    }

    /// Offers this output to the host's event loop, if it has one.
    pub(super) fn offer_to(self: &Arc<Self>, event_loop: Option<&Arc<dyn EventLoop>>) {
        if let Some(event_loop) = event_loop {
            event_loop.watch(self.clone());
        }
    }

    /// The reader thread's loop: reads (or stands by while the event loop reads) until the
    /// output ends, and says how.
    pub(super) fn read_until_end(&self, host: &Arc<Host>) -> Ended {
        // While the loop watches, this thread does not wait on the pipe: two threads woken by
        // one frame made the loop's thread wait for a core (measured: 2 ms instead of 0.2 at
        // an agent's pace). It looks every `check_period` instead, and reads only bytes the loop
        // has left waiting since the previous look.
        let mut left_waiting = false;
        let mut turns_then = 0;
        loop {
            self.wake.clear();
            if let Some(ended) = self.ended() {
                return ended;
            }
            if self.loop_watching.load(Ordering::SeqCst) {
                if self.wake.wait(self.check_period(host)) {
                    left_waiting = false;
                    continue;
                }
                let turns = self.loop_turns.load(Ordering::SeqCst);
                let waiting = os::is_readable(self.fd);
                let late = left_waiting && waiting && turns == turns_then;
                left_waiting = waiting;
                turns_then = turns;
                if !late {
                    continue;
                }
            } else if os::wait_readable_or(self.fd, &self.wake, None) {
                continue;
            }
            if let Some(ended) = self.drain(host, false) {
                return ended;
            }
        }
    }

    /// How long the reader thread waits between two looks while the loop watches: short while
    /// the engine holds runs (their frames should not wait on a busy loop for long), longer
    /// while it is idle, so an idle host is not woken 100 times a second per engine.
    fn check_period(&self, host: &Host) -> Duration {
        let holds_runs = host.lock().runs.values().any(|run| run.engine == self.id);
        if holds_runs {
            LOOP_CHECK
        } else {
            (host.limits.heartbeat_timeout / 4).clamp(LOOP_CHECK, IDLE_CHECK)
        }
    }

    fn ended(&self) -> Option<Ended> {
        self.lock().ended.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Reading> {
        self.reading.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads what the pipe holds now and acts on every whole frame, in order. Returns how the
    /// output ended, once it has.
    fn drain(&self, host: &Arc<Host>, on_loop: bool) -> Option<Ended> {
        let mut reading = self.lock();
        if let Some(ended) = &reading.ended {
            return Some(ended.clone());
        }
        let mut fills = 0;
        let ended = loop {
            let Reading { pipe, buffer, .. } = &mut *reading;
            match buffer.fill(pipe) {
                Ok(0) => {
                    let cut = buffer.holds_partial_frame();
                    let error = cut.then(|| {
                        "unreadable frame from the engine process: its output ended inside a frame"
                            .to_string()
                    });
                    break Some(Ended(error));
                }
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break None,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    let error = format!("unreadable frame from the engine process: {e}");
                    break Some(Ended(Some(error)));
                }
            }
            if let Err(error) = self.act_on_frames(host, buffer, on_loop) {
                break Some(Ended(Some(error)));
            }
            fills += 1;
            if on_loop && fills == FILLS_PER_DRAIN {
                break None;
            }
        };
        if let Some(ended) = &ended {
            reading.ended = Some(ended.clone());
            self.wake.notify();
        }
        ended
    }

    /// Acts on the whole frames `buffer` holds; the protocol error that ends the output, if any.
    fn act_on_frames(
        &self,
        host: &Arc<Host>,
        buffer: &mut FrameBuffer,
        on_loop: bool,
    ) -> Result<(), String> {
        let counters = &host.counters;
        loop {
            let body = match buffer.next_frame(self.max_frame) {
                Ok(Some(body)) => body,
                Ok(None) => return Ok(()),
                Err(e) => return Err(format!("unreadable frame from the engine process: {e}")),
            };
            // Counted before it is acted on: whoever sees a run's result sees its frames counted.
            counters.frames.fetch_add(1, Ordering::Relaxed);
            if on_loop {
                counters.frames_on_loop.fetch_add(1, Ordering::Relaxed);
            }
            match EngineMessage::decode(&body) {
                Ok(message) => on_message(host, self.id, message),
                Err(e) => return Err(format!("malformed frame from the engine process: {e}")),
            }
        }
    }
}

impl LoopReadable for EngineOutput {
    fn fd(&self) -> RawFd {
        self.fd
    }

    fn watching(&self) {
        self.loop_watching.store(true, Ordering::SeqCst);
        self.wake.notify();
    }

    fn readable(&self) -> bool {
        let Some(host) = self.host.upgrade() else {
            return false;
        };
        let ended = self.drain(&host, true);
        self.loop_turns.fetch_add(1, Ordering::SeqCst);
        ended.is_none()
    }

    fn unwatched(&self) {
        self.loop_watching.store(false, Ordering::SeqCst);
        self.wake.notify();
    }
}
