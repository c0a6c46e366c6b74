//! libuv, and the only place the crate touches it: the runtime's (Node's) own libuv, its
//! functions looked up in the process's exports, behind two safe handle types.
//!
//! - [`Async`]: `wake()` from any thread runs its callback on the loop (uv_async_send).
//! - [`Poll`]: a callback on the loop when a descriptor is readable (uv_poll).
//!
//! Invariants this file keeps, so its users need no `unsafe`:
//! - a handle is made, started and closed only on the thread that runs its loop: [`Loop`]
//!   records that thread, and every loop-side method checks it (a call from another thread
//!   panics instead of racing libuv); `Async::wake` is the one call libuv allows from any
//!   thread, and it reaches the handle only while it is open, under the lock `close` takes;
//! - a handle's memory and callbacks live until libuv's close callback for it has run (the
//!   callbacks are owned by the handle's `data`, freed there, after `on_closed`);
//! - every handle is unreferenced: none keeps the loop (hence Node) alive.
//!
//! Callbacks run on the loop's thread, inside libuv; they may close their own handle.

use crate::os;
use once_cell::sync::OnceCell;
use std::alloc::Layout;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::addr_of_mut;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// libuv's `uv_handle_type` values and poll events (stable across libuv 1.x; checked against
/// `uv_handle_type_name` when loading).
const UV_ASYNC: c_int = 1;
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;

/// A libuv handle: `uv_handle_t` and its kinds begin with the public `void* data` field.
type RawHandle = *mut c_void;
type RawLoop = *mut c_void;
type AsyncCb = unsafe extern "C" fn(RawHandle);
type PollCb = unsafe extern "C" fn(RawHandle, c_int, c_int);
type CloseCb = unsafe extern "C" fn(RawHandle);

type HandleSizeFn = unsafe extern "C" fn(c_int) -> usize;
type TypeNameFn = unsafe extern "C" fn(c_int) -> *const c_char;
type AsyncInitFn = unsafe extern "C" fn(RawLoop, RawHandle, AsyncCb) -> c_int;
type PollInitFn = unsafe extern "C" fn(RawLoop, RawHandle, c_int) -> c_int;
type PollStartFn = unsafe extern "C" fn(RawHandle, c_int, PollCb) -> c_int;
type CloseFn = unsafe extern "C" fn(RawHandle, CloseCb);
type HandleFn = unsafe extern "C" fn(RawHandle) -> c_int;
type UnrefFn = unsafe extern "C" fn(RawHandle);

/// The libuv functions used.
struct Fns {
    handle_size: HandleSizeFn,
    async_init: AsyncInitFn,
    async_send: HandleFn,
    poll_init: PollInitFn,
    poll_start: PollStartFn,
    poll_stop: HandleFn,
    close: CloseFn,
    unref: UnrefFn,
}

fn fns() -> Option<&'static Fns> {
    static FNS: OnceCell<Option<Fns>> = OnceCell::new();
    FNS.get_or_init(load).as_ref()
}

fn load() -> Option<Fns> {
    macro_rules! find {
        ($name:literal, $type:ty) => {{
            let address = os::find_symbol($name)?;
            // SAFETY: the runtime exports libuv's function under this name, with this C
            // signature (libuv 1.x's, unchanged since the functions appeared).
            unsafe { std::mem::transmute::<*mut c_void, $type>(address) }
        }};
    }
    let type_name = find!(c"uv_handle_type_name", TypeNameFn);
    let named = |kind: c_int, expected: &str| {
        // SAFETY: uv_handle_type_name returns a static NUL-terminated name, or null for a value
        // it does not know.
        let name = unsafe { type_name(kind) };
        // SAFETY: a non-null result points at a static C string.
        !name.is_null() && unsafe { CStr::from_ptr(name) }.to_bytes() == expected.as_bytes()
    };
    if !named(UV_ASYNC, "async") || !named(UV_POLL, "poll") {
        return None;
    }
    Some(Fns {
        handle_size: find!(c"uv_handle_size", HandleSizeFn),
        async_init: find!(c"uv_async_init", AsyncInitFn),
        async_send: find!(c"uv_async_send", HandleFn),
        poll_init: find!(c"uv_poll_init", PollInitFn),
        poll_start: find!(c"uv_poll_start", PollStartFn),
        poll_stop: find!(c"uv_poll_stop", HandleFn),
        close: find!(c"uv_close", CloseFn),
        unref: find!(c"uv_unref", UnrefFn),
    })
}

/// The loop a thread runs (Node's, for its JavaScript thread), where handles are made.
#[derive(Clone, Copy)]
pub struct Loop {
    raw: RawLoop,
    fns: &'static Fns,
    thread: ThreadId,
}

// SAFETY: the raw loop is only handed to libuv on `thread` (`check_thread`), where it runs.
unsafe impl Send for Loop {}
// SAFETY: as above; `Loop` has no interior state.
unsafe impl Sync for Loop {}

impl Loop {
    /// The loop `raw` points at, which the calling thread runs; `None` where libuv's functions
    /// cannot be found (a runtime without libuv) or `raw` is null.
    ///
    /// # Safety
    /// `raw` is a `uv_loop_t*` that the calling thread runs and that outlives every handle
    /// made on it (Node's loop for the environment whose JavaScript thread calls this).
    pub unsafe fn of_this_thread(raw: *mut c_void) -> Option<Loop> {
        let fns = fns()?;
        (!raw.is_null()).then(|| Loop {
            raw,
            fns,
            thread: std::thread::current().id(),
        })
    }

    fn check_thread(&self) {
        assert_eq!(
            std::thread::current().id(),
            self.thread,
            "a libuv handle was used off its loop's thread"
        );
    }

    fn layout(&self, kind: c_int) -> Layout {
        // SAFETY: uv_handle_size only maps a handle type to its size.
        let size = unsafe { (self.fns.handle_size)(kind) };
        Layout::from_size_align(size.max(8), 16).expect("a handle's size is small")
    }

    /// Zeroed memory for a handle of `kind`, its data the callbacks (not yet given to libuv).
    fn new_handle(&self, kind: c_int, callbacks: Callbacks) -> RawHandle {
        let layout = self.layout(kind);
        // SAFETY: the layout has a non-zero size.
        let handle: RawHandle = unsafe { std::alloc::alloc_zeroed(layout) }.cast();
        if handle.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let data = Box::into_raw(Box::new(HandleData {
            kind,
            fns: self.fns,
            callbacks,
        }));
        // SAFETY: every libuv handle starts with `void* data`, which libuv never touches; the
        // memory is ours until an init succeeds.
        unsafe { *handle.cast::<*mut HandleData>() = data };
        handle
    }
}

/// What a handle's `data` owns: its callbacks, and how to free it.
struct HandleData {
    kind: c_int,
    fns: &'static Fns,
    callbacks: Callbacks,
}

struct Callbacks {
    /// An async wake-up (status 0) or a poll event (libuv's status).
    on_event: Box<dyn FnMut(c_int) + Send>,
    /// Set by `close`, run by the close callback.
    on_closed: Option<Box<dyn FnOnce() + Send>>,
}

/// The data of a live handle.
///
/// # Safety
/// `handle` came from `Loop::new_handle` and its close callback has not run.
unsafe fn data_of(handle: RawHandle) -> *mut HandleData {
    // SAFETY: the caller's promise: the first field holds the data pointer set at creation.
    unsafe { *handle.cast::<*mut HandleData>() }
}

/// Frees a handle libuv no longer refers to (after its close callback, or a failed init),
/// with its data.
///
/// # Safety
/// `handle` came from `Loop::new_handle`, libuv does not refer to it, and it is freed once.
unsafe fn free_handle(handle: RawHandle) -> HandleData {
    // SAFETY: the caller's promise; the data was boxed by `new_handle` and is taken back once.
    let data = unsafe { Box::from_raw(data_of(handle)) };
    let layout = Layout::from_size_align(
        // SAFETY: uv_handle_size only maps a handle type to its size.
        unsafe { (data.fns.handle_size)(data.kind) }.max(8),
        16,
    )
    .expect("a handle's size is small");
    // SAFETY: allocated by `new_handle` with this very layout.
    unsafe { std::alloc::dealloc(handle.cast(), layout) };
    *data
}

/// Runs a live handle's event callback (on the loop's thread, from libuv).
///
/// # Safety
/// `handle` is live (its close callback has not run).
unsafe fn fire(handle: RawHandle, status: c_int) {
    // SAFETY: live per the caller; only the `on_event` field is borrowed, so the callback may
    // close its own handle (which writes `on_closed` alone).
    let on_event = unsafe { &mut *addr_of_mut!((*data_of(handle)).callbacks.on_event) };
    on_event(status);
}

unsafe extern "C" fn on_async(handle: RawHandle) {
    // SAFETY: libuv calls this only for an open async handle of ours.
    unsafe { fire(handle, 0) }
}

unsafe extern "C" fn on_poll(handle: RawHandle, status: c_int, _events: c_int) {
    // SAFETY: libuv calls this only for an active poll handle of ours.
    unsafe { fire(handle, status) }
}

unsafe extern "C" fn on_close(handle: RawHandle) {
    // SAFETY: the close callback: libuv is done with the handle, which is freed once here.
    let data = unsafe { free_handle(handle) };
    if let Some(on_closed) = data.callbacks.on_closed {
        on_closed();
    }
}

/// Closes a live handle on its loop's thread: `on_closed` runs once libuv is done with it.
///
/// # Safety
/// `handle` is live, on `uv`'s loop, and closed once.
unsafe fn close_handle(
    uv: &Loop,
    handle: RawHandle,
    stop_poll: bool,
    on_closed: Box<dyn FnOnce() + Send>,
) {
    // SAFETY: live per the caller; only `on_closed` is written (a running `on_event` of the
    // same handle keeps its own field).
    unsafe { *addr_of_mut!((*data_of(handle)).callbacks.on_closed) = Some(on_closed) };
    // SAFETY: a live handle on its loop's thread (checked by the callers); its memory is
    // freed in `on_close`.
    unsafe {
        if stop_poll {
            (uv.fns.poll_stop)(handle);
        }
        (uv.fns.close)(handle, on_close);
    }
}

/// An async handle: `wake` from any thread runs `on_wake` on the loop.
#[derive(Clone)]
pub struct Async(Arc<AsyncShared>);

struct AsyncShared {
    uv: Loop,
    /// The handle while open; null once `close` began.
    handle: Mutex<RawHandle>,
}

// SAFETY: the raw handle is reached from other threads only by `wake`, through
// uv_async_send (thread-safe by libuv's contract), under the lock, while open.
unsafe impl Send for AsyncShared {}
// SAFETY: as above; the pointer is behind the mutex.
unsafe impl Sync for AsyncShared {}

impl Async {
    /// Opens an async handle on `uv` (on its thread). `None` if libuv refused.
    pub fn open(uv: &Loop, on_wake: impl FnMut() + Send + 'static) -> Option<Async> {
        uv.check_thread();
        let mut on_wake = on_wake;
        let handle = uv.new_handle(
            UV_ASYNC,
            Callbacks {
                on_event: Box::new(move |_| on_wake()),
                on_closed: None,
            },
        );
        // SAFETY: on the loop's thread, with zeroed memory of the size libuv asked for.
        if unsafe { (uv.fns.async_init)(uv.raw, handle, on_async) } != 0 {
            // SAFETY: the init failed, so libuv does not know the handle.
            drop(unsafe { free_handle(handle) });
            return None;
        }
        // SAFETY: an initialized handle on its loop's thread.
        unsafe { (uv.fns.unref)(handle) };
        Some(Async(Arc::new(AsyncShared {
            uv: *uv,
            handle: Mutex::new(handle),
        })))
    }

    /// Runs the callback on the loop soon (from any thread); `false` once closed.
    pub fn wake(&self) -> bool {
        let handle = self.0.handle.lock().unwrap_or_else(|p| p.into_inner());
        if handle.is_null() {
            return false;
        }
        // SAFETY: uv_async_send may be called from any thread; the handle is open while the
        // lock is held and the pointer is not null (close clears it under this lock first).
        unsafe { (self.0.uv.fns.async_send)(*handle) };
        true
    }

    /// Closes the handle (on the loop's thread); `on_closed` runs when libuv is done with it.
    /// A second close does nothing (and drops `on_closed` unrun).
    pub fn close(&self, on_closed: impl FnOnce() + Send + 'static) {
        self.0.uv.check_thread();
        let handle = std::mem::replace(
            &mut *self.0.handle.lock().unwrap_or_else(|p| p.into_inner()),
            std::ptr::null_mut(),
        );
        if handle.is_null() {
            return;
        }
        // SAFETY: open until now (not null) and no `wake` can reach it any more.
        unsafe { close_handle(&self.0.uv, handle, false, Box::new(on_closed)) };
    }
}

/// A poll handle: `on_event` runs on the loop while its descriptor is readable (with libuv's
/// status, negative on an error).
pub struct Poll {
    uv: Loop,
    handle: RawHandle,
}

// SAFETY: the handle is used only on the loop's thread (`check_thread` in every method); the
// value may be held by a structure other threads also use.
unsafe impl Send for Poll {}
// SAFETY: as above; `&Poll` exposes nothing that touches the handle.
unsafe impl Sync for Poll {}

impl Poll {
    /// Starts watching `fd` for reading on `uv` (on its thread). `None` if libuv refused.
    pub fn start(
        uv: &Loop,
        fd: c_int,
        on_event: impl FnMut(c_int) + Send + 'static,
    ) -> Option<Poll> {
        uv.check_thread();
        let handle = uv.new_handle(
            UV_POLL,
            Callbacks {
                on_event: Box::new(on_event),
                on_closed: None,
            },
        );
        // SAFETY: on the loop's thread, with zeroed memory of the size libuv asked for.
        if unsafe { (uv.fns.poll_init)(uv.raw, handle, fd) } != 0 {
            // SAFETY: the init failed, so libuv does not know the handle.
            drop(unsafe { free_handle(handle) });
            return None;
        }
        // SAFETY: an initialized handle on its loop's thread.
        unsafe { (uv.fns.unref)(handle) };
        let poll = Poll { uv: *uv, handle };
        // SAFETY: as above.
        if unsafe { (uv.fns.poll_start)(handle, UV_READABLE, on_poll) } != 0 {
            poll.close(|| {});
            return None;
        }
        Some(poll)
    }

    /// Stops watching and closes the handle (on the loop's thread; also from its own
    /// callback); `on_closed` runs when libuv is done with it.
    pub fn close(self, on_closed: impl FnOnce() + Send + 'static) {
        self.uv.check_thread();
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `self` is the handle's only owner, consumed here (its drop will not run):
        // closed once, while live.
        unsafe { close_handle(&this.uv, this.handle, true, Box::new(on_closed)) };
    }
}

impl Drop for Poll {
    /// A poll handle dropped without `close` is closed (on its loop's thread; elsewhere it
    /// would race libuv, so it is left open, leaked, rather than touched).
    fn drop(&mut self) {
        if std::thread::current().id() == self.uv.thread {
            // SAFETY: live (never closed: `close` skips this drop) and on its loop's thread.
            unsafe { close_handle(&self.uv, self.handle, true, Box::new(|| {})) };
        }
    }
}
