//! The host's end of an engine's stdin. Sending never blocks the sender: a frame goes straight
//! into the pipe while the pipe has room (the common case, with no thread hop), and whatever
//! does not fit waits, in order, for a flusher thread that writes it as the engine reads. An
//! engine that stops reading (wedged, stopped by a debugger, frozen by the system) then costs
//! the bytes waiting here until the monitor kills it — never a blocked host thread. (A blocking
//! write from the host's JavaScript thread would freeze its event loop, and while it held the
//! input it would also stop the monitor's pings, so the wedged engine would never be killed.)

use std::collections::VecDeque;
use std::io::{ErrorKind, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::process::ChildStdin;
use std::sync::{Arc, Mutex};

/// How long the flusher waits for room in the pipe before looking again (it also wakes as soon
/// as the engine reads, or its end closes).
const FLUSH_POLL_MS: i32 = 250;

pub struct EngineInput {
    inner: Mutex<Inner>,
    fd: RawFd,
    /// The most bytes the backlog may hold (`Limits::engine_backlog_cap`).
    cap: usize,
}

struct Inner {
    pipe: ChildStdin,
    /// Bytes accepted but not yet in the pipe, in order.
    backlog: VecDeque<u8>,
    /// A write failed (the engine's end is closed), or the backlog overflowed: everything sent
    /// from now on is dropped.
    broken: bool,
    /// The backlog outgrew its cap: the engine has stopped reading (the monitor kills it).
    overflowed: bool,
    /// A flusher thread is draining the backlog.
    flushing: bool,
}

impl EngineInput {
    pub fn new(pipe: ChildStdin, cap: usize) -> Arc<EngineInput> {
        let fd = pipe.as_raw_fd();
        // Only the host's end of the pipe becomes non-blocking; the engine's stays blocking.
        crate::os::set_nonblocking(fd, true);
        Arc::new(EngineInput {
            inner: Mutex::new(Inner {
                pipe,
                backlog: VecDeque::new(),
                broken: false,
                overflowed: false,
                flushing: false,
            }),
            fd,
            cap,
        })
    }

    /// Whether more than the cap waited for the engine to read it.
    pub fn overflowed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .overflowed
    }

    /// Queues one whole frame for the engine, writing what fits at once. False once the
    /// engine's end is known to be closed (its reader then reports the engine gone).
    pub fn send(self: &Arc<Self>, frame: &[u8]) -> bool {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.broken {
            return false;
        }
        let rest = if inner.backlog.is_empty() {
            match write_available(&mut inner.pipe, frame) {
                Ok(written) => &frame[written..],
                Err(_) => {
                    inner.give_up();
                    return false;
                }
            }
        } else {
            frame
        };
        if rest.is_empty() {
            return true;
        }
        if inner.backlog.len() + rest.len() > self.cap {
            // The stream the engine would read is cut here, so it cannot continue: it is
            // killed by the monitor, which sees `overflowed`.
            inner.give_up();
            inner.overflowed = true;
            return false;
        }
        inner.backlog.extend(rest);
        if !inner.flushing {
            let input = self.clone();
            let started = std::thread::Builder::new()
                .name("codemode-engine-input".into())
                .spawn(move || input.flush());
            if started.is_err() {
                inner.give_up();
                return false;
            }
            inner.flushing = true;
        }
        true
    }

    /// The flusher: writes the backlog as the pipe makes room, then ends.
    fn flush(&self) {
        loop {
            {
                let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
                let inner = &mut *inner;
                while !inner.broken && !inner.backlog.is_empty() {
                    let (front, _) = inner.backlog.as_slices();
                    let wanted = front.len();
                    match write_available(&mut inner.pipe, front) {
                        Ok(written) => {
                            inner.backlog.drain(..written);
                            if written < wanted {
                                break; // the pipe is full
                            }
                        }
                        Err(_) => inner.give_up(),
                    }
                }
                if inner.backlog.is_empty() {
                    inner.flushing = false;
                    return;
                }
            }
            self.wait_for_room();
        }
    }

    /// Waits until the pipe can take bytes, its reader is gone, or the poll interval passed.
    /// The descriptor stays open while `self` (which owns it) is alive.
    fn wait_for_room(&self) {
        crate::os::wait_writable(self.fd, FLUSH_POLL_MS);
    }
}

impl Inner {
    /// Nothing more reaches this engine: what waits is dropped, later sends are refused.
    fn give_up(&mut self) {
        self.broken = true;
        self.backlog = VecDeque::new();
    }
}

/// Writes as much of `bytes` as the pipe takes without blocking; returns how much that was.
fn write_available(pipe: &mut ChildStdin, bytes: &[u8]) -> std::io::Result<usize> {
    let mut written = 0;
    while written < bytes.len() {
        match pipe.write(&bytes[written..]) {
            Ok(0) => break,
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}
