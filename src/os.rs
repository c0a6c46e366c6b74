//! Every call into the operating system's C interface (libc), so that the `unsafe` blocks that
//! talk to the kernel sit in one file. Linux only, like the rest of the package.

use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::io::BufWriter;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

/// Raises the calling thread's nice value (Linux: per thread). Workers call it with
/// `workerNice` (the pool's admission lowers long runs further, `pool/admission.rs`). Raising a
/// nice value needs no privilege; failure is ignored (the thread just keeps the default
/// priority).
pub fn lower_thread_priority(nice: i32) {
    set_thread_nice(current_thread_id(), nice);
}

/// The kernel's id of the calling thread (what `set_thread_nice` takes).
pub fn current_thread_id() -> u32 {
    // SAFETY: gettid takes no arguments and touches no memory.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// Sets the nice value of thread `tid` of this process (only ever raised: lowering it needs a
/// privilege, and failure is ignored). The caller must know the thread is alive, so the id
/// cannot name a thread of another process that reused it.
pub fn set_thread_nice(tid: u32, nice: i32) {
    if nice <= 0 {
        return;
    }
    // SAFETY: setpriority takes and returns plain integers and touches no memory of ours;
    // PRIO_PROCESS with a thread id changes only that thread on Linux.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice);
    }
}

/// Sends SIGKILL to `pid`. The caller must know that `pid` is a child of this process that has
/// not been reaped yet (so it cannot name an unrelated process).
pub fn kill_child(pid: u32) {
    // SAFETY: kill(2) has no memory effects; the caller guarantees `pid` is an unreaped child
    // (see above), so the signal cannot reach a process that reused the number.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
}

/// The usual name of a signal that ends a process (for messages).
pub fn signal_name(signal: i32) -> &'static str {
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

/// Resident memory of a process, from /proc (Linux). `None` where unavailable.
pub fn rss_bytes(pid: u32) -> Option<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
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

/// Waits until `fd` can take bytes, its reader is gone, or `timeout_ms` passed.
pub fn wait_writable(fd: RawFd, timeout_ms: i32) {
    let _ = poll_one(fd, libc::POLLOUT, timeout_ms);
}

/// Waits until `fd` has bytes to read, its writer is gone, or `timeout_ms` passed.
pub fn wait_readable(fd: RawFd, timeout_ms: i32) {
    let _ = poll_one(fd, libc::POLLIN, timeout_ms);
}

/// Waits until `fd` or `signal` has bytes to read (or its writer is gone), or `timeout` (if
/// any) passed, to the microsecond (a run waiting on its input this way wakes for its timers).
/// Returns whether `signal` was readable.
pub fn wait_readable_or(fd: RawFd, signal: &EventFd, timeout: Option<Duration>) -> bool {
    let timeout = timeout.map(|timeout| libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    });
    let timeout_ptr = timeout
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    let mut polls = [fd, signal.0.as_raw_fd()].map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    // SAFETY: ppoll touches only the two pollfds and the timespec (null: no limit), all on this
    // stack frame; a null signal mask leaves the thread's mask as it is.
    let ready = unsafe { libc::ppoll(polls.as_mut_ptr(), 2, timeout_ptr, std::ptr::null()) };
    ready > 0 && polls[1].revents != 0
}

/// A counter one thread bumps to wake another that polls it (Linux's eventfd).
pub struct EventFd(OwnedFd);

impl EventFd {
    pub fn new() -> std::io::Result<EventFd> {
        // SAFETY: eventfd takes two integers and returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and nothing else owns it.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes the descriptor readable until the next `clear`.
    pub fn notify(&self) {
        let one: u64 = 1;
        // SAFETY: writes the 8 bytes of `one`, which lives on this stack frame, to a descriptor
        // this value owns; a full counter (EAGAIN) still leaves it readable, which is the point.
        unsafe { libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    /// Waits until the counter is bumped or `timeout` passed; whether it was bumped.
    pub fn wait(&self, timeout: Duration) -> bool {
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        poll_one(self.0.as_raw_fd(), libc::POLLIN, ms) != 0
    }

    /// Makes the descriptor unreadable again.
    pub fn clear(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads at most 8 bytes into `count`, on this stack frame, from a descriptor this
        // value owns; a counter already at zero answers EAGAIN (it is non-blocking).
        unsafe { libc::read(self.0.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
    }
}

/// Whether `fd` has bytes to read (or its writer is gone) right now.
pub fn is_readable(fd: RawFd) -> bool {
    poll_one(fd, libc::POLLIN, 0) != 0
}

/// Polls one descriptor; returns the revents seen (0 on a timeout or an error).
fn poll_one(fd: RawFd, events: libc::c_short, timeout_ms: i32) -> libc::c_short {
    let mut poll = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: poll reads and writes exactly the one pollfd passed, which lives on this stack
    // frame; an fd that is not open makes poll report POLLNVAL, which is ignored.
    let ready = unsafe { libc::poll(&mut poll, 1, timeout_ms) };
    if ready > 0 {
        poll.revents
    } else {
        0
    }
}

/// Stdin as a plain file, without Rust's buffer in front: the engine reads its frames from it
/// with a buffer of its own, shared by the threads that read (`process::engine`), so no byte
/// may wait in a buffer only one of them sees.
pub fn raw_stdin() -> File {
    // SAFETY: fd 0 (stdin) stays open for the engine process's life; nothing else in it reads
    // it or closes it (std's Stdin is never used there), so this File is its only owner.
    unsafe { File::from_raw_fd(0) }
}

/// Stdout without Rust's line buffering (frames are binary: a line buffer would flush at every
/// 0x0A byte), behind a plain buffer that the engine's writer flushes per burst.
pub fn raw_stdout() -> BufWriter<File> {
    // SAFETY: fd 1 (stdout) stays open for the engine process's life; nothing else in it writes
    // there or closes it, so this File is its only owner.
    let file = unsafe { File::from_raw_fd(1) };
    BufWriter::with_capacity(64 * 1024, file)
}

/// Ends the process at once. An engine may still hold a thread it gave up (a run that ignored
/// termination, still running V8 code): the normal exit path (atexit handlers, static
/// destructors) would run beside it and can wait on a lock it holds. Every frame has been
/// written and flushed before this is called, and stderr is unbuffered, so nothing is lost.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit(2) terminates the process immediately; it touches no memory of ours.
    unsafe { libc::_exit(code) }
}

/// CPU time consumed by the calling thread so far.
pub fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `now`.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// The file this code was loaded from (the addon's `.node`), as the dynamic loader knows it.
/// Engine processes are started from it, so they work wherever the addon was copied to
/// (a bundled or relocated app has no `lib/` beside it). `None` if the loader cannot say.
pub fn own_library_path() -> Option<PathBuf> {
    // SAFETY: Dl_info is a plain C struct of pointers and integers, for which all-zero bytes
    // are a valid (empty) value; dladdr only writes into it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let address = own_library_path as *const libc::c_void;
    // SAFETY: dladdr reads the loader's tables for an address inside this library (this very
    // function) and fills `info`, which lives on this stack frame.
    let found = unsafe { libc::dladdr(address, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: on success dli_fname is the loaded object's NUL-terminated path, owned by the
    // loader and valid while the object is loaded (for the process's life: never unloaded).
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(OsStr::from_bytes(name.to_bytes()));
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

/// The address of a function the process has loaded under `name` (the runtime's own exports
/// included), or `None`.
pub fn find_symbol(name: &CStr) -> Option<*mut libc::c_void> {
    // SAFETY: dlsym only reads the loader's tables; `name` is NUL-terminated.
    let address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!address.is_null()).then_some(address)
}

/// The CPU-time clock of one thread, readable from any thread of the process (the watchdog
/// bills a run's own thread, so time spent waiting on tools is never counted).
#[derive(Clone, Copy, Debug)]
pub struct ThreadCpuClock(libc::clockid_t);

impl ThreadCpuClock {
    /// The calling thread's clock.
    pub fn current() -> Option<ThreadCpuClock> {
        let mut id: libc::clockid_t = 0;
        // SAFETY: pthread_self() names the calling thread, which is alive during the call;
        // pthread_getcpuclockid writes one clockid_t into `id`, which lives on this frame.
        let status = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        (status == 0).then_some(ThreadCpuClock(id))
    }

    /// CPU time the thread has used so far; `None` once the thread is gone.
    pub fn elapsed(&self) -> Option<Duration> {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `now`;
        // a clock of a thread that has exited makes it return an error (checked).
        let status = unsafe { libc::clock_gettime(self.0, &mut now) };
        (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
    }
}

/// Fills `buf` from the operating system's random source (`/dev/urandom`, opened once): the
/// sandbox's `crypto.getRandomValues` and V8's entropy, and the store's per-execution seeds.
pub fn random_bytes(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    use std::sync::{Mutex, OnceLock};
    static SOURCE: OnceLock<Mutex<File>> = OnceLock::new();
    let source = match SOURCE.get() {
        Some(source) => source,
        None => {
            let file = File::open("/dev/urandom")?;
            SOURCE.get_or_init(|| Mutex::new(file))
        }
    };
    source
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .read_exact(buf)
}

/// Returns the C heap's free memory to the kernel (glibc's `malloc_trim`): memory that freed
/// isolates left in the allocator's per-thread arenas, which glibc otherwise keeps resident
/// (measured: about 0.3 MiB per worker thread after a burst). Does nothing on other C libraries.
pub fn release_free_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim takes a byte count, touches only the allocator's own state under its
    // locks, and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
