//! The engine process's standard streams as raw, blocking byte pipes, and the one place that
//! switches a descriptor between blocking and non-blocking.

use std::fs::File;
use std::io::BufWriter;
use std::os::fd::{FromRawFd, RawFd};

/// Clears O_NONBLOCK on stdin and stdout: the engine reads and writes them from its own
/// threads with blocking calls, whatever the parent runtime set.
pub fn make_blocking() {
    for fd in [0, 1] {
        set_nonblocking(fd, false);
    }
}

/// Sets or clears O_NONBLOCK on `fd` (on its open file description: another process's end of
/// the same pipe is not affected). An invalid descriptor is left alone.
pub fn set_nonblocking(fd: RawFd, on: bool) {
    // SAFETY: fcntl with F_GETFL/F_SETFL only reads and changes a descriptor's status flags; an
    // invalid descriptor makes it return -1, which is checked or ignored.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return;
        }
        let wanted = if on {
            flags | libc::O_NONBLOCK
        } else {
            flags & !libc::O_NONBLOCK
        };
        if wanted != flags {
            libc::fcntl(fd, libc::F_SETFL, wanted);
        }
    }
}

/// Stdout without Rust's line buffering (frames are binary: a line buffer would flush at every
/// 0x0A byte), behind a plain buffer that the engine's writer flushes per burst.
pub fn raw_stdout() -> BufWriter<File> {
    // SAFETY: fd 1 (stdout) stays open for the engine process's life; nothing else in it writes
    // there or closes it, so this File is its only owner.
    let file = unsafe { File::from_raw_fd(1) };
    BufWriter::with_capacity(64 * 1024, file)
}

/// Ends the engine process at once. An engine may still hold a thread it gave up (a run that
/// ignored termination, still running V8 code): the normal exit path (atexit handlers, static
/// destructors) would run beside it and can wait on a lock it holds. Every frame has been
/// written and flushed before this is called, and stderr is unbuffered, so nothing is lost.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit(2) terminates the process immediately; it touches no memory of ours.
    unsafe { libc::_exit(code) }
}
