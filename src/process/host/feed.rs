//! Engines whose output the host's JavaScript thread reads (Node): instead of a reader thread
//! per engine, the engine's stdout is announced to the host's JavaScript, which watches it on
//! Node's own event loop and hands each chunk it reads to [`EngineFeeds::input`]. A frame from
//! an engine (a tool call above all) then wakes one thread of the host, the one that answers
//! it, where the reader thread would have woken first and then woken it. The frames are acted
//! on exactly as the reader thread does (`reader::on_message`); when the output closes,
//! [`EngineFeeds::ended`] reaps the engine on a thread of its own (`reader::engine_gone`).
//!
//! A host whose JavaScript thread is busy reads late: the monitor does not take that for a
//! silent engine while the engine's output holds bytes not yet read (`Host::reads_late`).

use super::reader::{engine_gone, on_message};
use super::Host;
use crate::protocol::{max_frame_bytes, EngineMessage, FrameBuffer};
use std::collections::HashMap;
use std::os::fd::RawFd;
use std::process::Child;
use std::sync::{Arc, Mutex};

/// Told of each engine whose output the host's JavaScript reads: its id and the descriptor of
/// its stdout, which the callee then owns. Returns false when it cannot take it (the engine is
/// then read by a thread, as without an announcer).
pub type EngineAnnouncer = Arc<dyn Fn(u64, RawFd) -> bool + Send + Sync>;

/// One announced engine: the bytes of a frame still coming, and the process to reap.
pub(super) struct Feed {
    buffer: FrameBuffer,
    child: Child,
}

impl Feed {
    pub(super) fn new(child: Child) -> Feed {
        Feed {
            buffer: FrameBuffer::default(),
            child,
        }
    }

    pub(super) fn child(self) -> Child {
        self.child
    }
}

/// The announced engines of one pool, by engine id.
pub(super) type Feeds = Mutex<HashMap<u64, Feed>>;

/// The host's JavaScript side of the announced engines: what it read, and that an output
/// closed.
#[derive(Clone)]
pub struct EngineFeeds {
    pub(super) host: Arc<Host>,
}

impl EngineFeeds {
    /// Bytes read from engine `id`'s output: each whole frame is acted on at once. A frame
    /// that cannot be read ends the engine (it is killed rather than trusted). Bytes of an
    /// engine already ended are dropped.
    pub fn input(&self, id: u64, mut bytes: &[u8]) {
        let host = &self.host;
        let limits = &host.limits;
        let max_frame = max_frame_bytes(
            limits.max_code_bytes,
            limits.max_reply_bytes,
            limits.max_result_bytes,
            limits.max_log_bytes,
        );
        let mut messages = Vec::new();
        let mut problem = None;
        {
            let mut feeds = lock(&host.feeds);
            let Some(feed) = feeds.get_mut(&id) else {
                return;
            };
            while !bytes.is_empty() && problem.is_none() {
                if feed.buffer.fill(&mut bytes).is_err() {
                    break;
                }
                loop {
                    match feed.buffer.next_frame(max_frame) {
                        Ok(Some(body)) => match EngineMessage::decode(&body) {
                            Ok(message) => messages.push(message),
                            Err(e) => {
                                problem =
                                    Some(format!("malformed frame from the engine process: {e}"));
                                break;
                            }
                        },
                        Ok(None) => break,
                        Err(e) => {
                            problem =
                                Some(format!("unreadable frame from the engine process: {e}"));
                            break;
                        }
                    }
                }
            }
        }
        // Acted on outside the feeds' lock (a result may start the next run, whose frames go
        // out from here), in the order they came.
        for message in messages {
            on_message(host, id, message);
        }
        if let Some(problem) = problem {
            self.ended(id, Some(problem));
        }
    }

    /// Engine `id`'s output closed (or could not be read: `problem`). The engine is reaped on a
    /// thread of its own, and the runs it held fail. Only the first call for an engine counts.
    pub fn ended(&self, id: u64, problem: Option<String>) {
        let Some(feed) = lock(&self.host.feeds).remove(&id) else {
            return;
        };
        // The child stays reachable here should no thread be had: it is then reaped on this
        // thread (its output closed, so it is exiting).
        let child = Arc::new(Mutex::new(Some(feed.child)));
        let (host, in_thread, why) = (self.host.clone(), child.clone(), problem.clone());
        let reaper = std::thread::Builder::new()
            .name("codemode-engine-reaper".into())
            .spawn(move || {
                if let Some(child) = take(&in_thread) {
                    engine_gone(&host, id, child, why);
                }
            });
        if reaper.is_err() {
            if let Some(child) = take(&child) {
                engine_gone(&self.host, id, child, problem);
            }
        }
    }
}

fn take(child: &Mutex<Option<Child>>) -> Option<Child> {
    child.lock().unwrap_or_else(|p| p.into_inner()).take()
}

pub(super) fn lock(feeds: &Feeds) -> std::sync::MutexGuard<'_, HashMap<u64, Feed>> {
    // A poisoned map is still consistent: each operation is one insert, remove or lookup.
    feeds.lock().unwrap_or_else(|p| p.into_inner())
}
