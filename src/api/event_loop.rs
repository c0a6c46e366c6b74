//! Node's event loop reading engine output (`'process'` isolation): a libuv poll handle on each
//! engine's stdout, so a frame from an engine wakes the JavaScript thread itself instead of a
//! reader thread that then wakes it (`process::host::EventLoop`). libuv's functions are looked
//! up in the runtime's exports when an executor is made; the JS layer offers this only on Node
//! (Deno and Bun do not run libuv), and everywhere the engines' reader threads still read
//! whatever the loop leaves waiting (`process/host/output.rs`).
//!
//! Handles are touched only on the loop's thread, except through `uv_async_send`, which libuv
//! allows from any thread and which is called only while the async handle is open (checked
//! under the lock that closing takes). Every handle is unreferenced (none keeps Node alive)
//! and all are closed when the executor goes away or Node's environment ends; an async cleanup
//! hook holds that end until the last close callback ran, since a worker thread's loop must be
//! empty when Node closes it.

use crate::os;
use crate::process::host::{EventLoop, LoopReadable};
use napi::{sys, Env};
use once_cell::sync::OnceCell;
use std::alloc::Layout;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

/// libuv's `uv_handle_type` values and poll events (stable across libuv 1.x; checked against
/// `uv_handle_type_name` when loading).
const UV_ASYNC: c_int = 1;
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;

/// A libuv handle: `uv_handle_t` and its kinds begin with the public `void* data` field.
type Handle = *mut c_void;
type AsyncCb = unsafe extern "C" fn(Handle);
type PollCb = unsafe extern "C" fn(Handle, c_int, c_int);
type CloseCb = unsafe extern "C" fn(Handle);
type UvLoop = *mut sys::uv_loop_s;

type HandleSizeFn = unsafe extern "C" fn(c_int) -> usize;
type TypeNameFn = unsafe extern "C" fn(c_int) -> *const c_char;
type AsyncInitFn = unsafe extern "C" fn(UvLoop, Handle, AsyncCb) -> c_int;
type PollInitFn = unsafe extern "C" fn(UvLoop, Handle, c_int) -> c_int;
type PollStartFn = unsafe extern "C" fn(Handle, c_int, PollCb) -> c_int;
type CloseFn = unsafe extern "C" fn(Handle, CloseCb);
type HandleFn = unsafe extern "C" fn(Handle) -> c_int;
type UnrefFn = unsafe extern "C" fn(Handle);

/// The libuv functions used.
struct Uv {
    handle_size: HandleSizeFn,
    async_init: AsyncInitFn,
    async_send: HandleFn,
    poll_init: PollInitFn,
    poll_start: PollStartFn,
    poll_stop: HandleFn,
    close: CloseFn,
    unref: UnrefFn,
}

fn uv() -> Option<&'static Uv> {
    static UV: OnceCell<Option<Uv>> = OnceCell::new();
    UV.get_or_init(load_uv).as_ref()
}

fn load_uv() -> Option<Uv> {
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
    Some(Uv {
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

fn layout(uv: &Uv, kind: c_int) -> Layout {
    // SAFETY: uv_handle_size only maps a handle type to its size.
    let size = unsafe { (uv.handle_size)(kind) };
    Layout::from_size_align(size.max(8), 16).expect("a handle's size is small")
}

fn new_handle(uv: &Uv, kind: c_int) -> Handle {
    // SAFETY: the layout has a non-zero size.
    let handle = unsafe { std::alloc::alloc_zeroed(layout(uv, kind)) };
    if handle.is_null() {
        std::alloc::handle_alloc_error(layout(uv, kind));
    }
    handle.cast()
}

/// Frees a handle's memory, once libuv is done with it (after its close callback, or when its
/// init failed).
///
/// # Safety
/// `handle` came from `new_handle(uv, kind)` and libuv no longer refers to it.
unsafe fn free_handle(uv: &Uv, kind: c_int, handle: Handle) {
    // SAFETY: allocated by `new_handle` with this very layout (the caller's promise).
    unsafe { std::alloc::dealloc(handle.cast(), layout(uv, kind)) }
}

/// # Safety
/// `handle` is a live handle from `new_handle`.
unsafe fn set_data(handle: Handle, data: *mut c_void) {
    // SAFETY: every libuv handle starts with `void* data`, which libuv never touches.
    unsafe { *handle.cast::<*mut c_void>() = data }
}

/// # Safety
/// `handle` is a live handle from `new_handle`.
unsafe fn data(handle: Handle) -> *mut c_void {
    // SAFETY: as in `set_data`.
    unsafe { *handle.cast::<*mut c_void>() }
}

/// The loop of one Node environment, as the executors made there share it.
struct Shared {
    uv: &'static Uv,
    uv_loop: UvLoop,
    state: Mutex<LoopState>,
}

struct LoopState {
    /// Open until the loop closes (null then): requests to watch arrive through it.
    async_handle: Handle,
    /// Outputs to watch, handed over by other threads.
    pending: Vec<Arc<dyn LoopReadable>>,
    /// The poll handles watching now.
    watches: Vec<Handle>,
    /// Handles closed whose close callback has not run yet.
    closing: usize,
    /// Node's async cleanup hook for this loop, removed once every handle is closed, with the
    /// reference to this value that it holds.
    hook: sys::napi_async_cleanup_hook_handle,
    hook_arg: *const Shared,
}

// SAFETY: the raw handles are used only on the loop's thread, except `async_handle`, which is
// passed to uv_async_send (thread-safe by libuv's contract) under the state lock, while open.
unsafe impl Send for Shared {}
// SAFETY: as above; all mutable state is behind the mutex.
unsafe impl Sync for Shared {}

/// One watched output, the data of its poll handle.
struct Watch {
    output: Arc<dyn LoopReadable>,
    shared: Arc<Shared>,
}

/// Node's event loop, offered to a process pool; closed (on the JS thread) by [`NodeLoop::close`].
#[derive(Clone)]
pub struct NodeLoop(Arc<Shared>);

impl NodeLoop {
    /// The loop of `env`'s environment, or `None` where libuv cannot be reached.
    pub fn new(env: &Env) -> Option<NodeLoop> {
        let uv = uv()?;
        let uv_loop = env.get_uv_event_loop().ok()?;
        if uv_loop.is_null() {
            return None;
        }
        let async_handle = new_handle(uv, UV_ASYNC);
        // SAFETY: called on the JS thread, which runs this loop; the handle is zeroed memory of
        // the size libuv asked for.
        if unsafe { (uv.async_init)(uv_loop, async_handle, on_async) } != 0 {
            // SAFETY: the init failed, so libuv does not know the handle.
            unsafe { free_handle(uv, UV_ASYNC, async_handle) };
            return None;
        }
        let shared = Arc::new(Shared {
            uv,
            uv_loop,
            state: Mutex::new(LoopState {
                async_handle,
                pending: Vec::new(),
                watches: Vec::new(),
                closing: 0,
                hook: std::ptr::null_mut(),
                hook_arg: std::ptr::null(),
            }),
        });
        // SAFETY: the handle was initialized above; its data keeps one reference to `shared`,
        // taken back in `on_async_closed`. Unreferenced: it never keeps Node's loop alive.
        unsafe {
            set_data(
                async_handle,
                Arc::into_raw(shared.clone()).cast_mut().cast(),
            );
            (uv.unref)(async_handle);
        }
        let hook_arg = Arc::into_raw(shared.clone());
        let mut hook = std::ptr::null_mut();
        // SAFETY: a valid env on its own thread; `hook_arg` stays alive until the hook is
        // removed (`closed_one` takes the reference back then).
        let status = unsafe {
            sys::napi_add_async_cleanup_hook(
                env.raw(),
                Some(on_environment_end),
                hook_arg.cast_mut().cast(),
                &mut hook,
            )
        };
        if status == sys::Status::napi_ok {
            let mut state = shared.lock();
            state.hook = hook;
            state.hook_arg = hook_arg;
        } else {
            // SAFETY: the reference was leaked just above and nothing else holds the pointer.
            drop(unsafe { Arc::from_raw(hook_arg) });
        }
        Some(NodeLoop(shared))
    }

    /// Stops every watch and closes the loop's handles; the outputs go back to their reader
    /// threads. Only on the loop's (the JS) thread; a second call does nothing.
    pub fn close(&self) {
        self.0.close();
    }
}

impl EventLoop for NodeLoop {
    fn watch(&self, output: Arc<dyn LoopReadable>) {
        let mut state = self.0.lock();
        if state.async_handle.is_null() {
            return;
        }
        state.pending.push(output);
        // SAFETY: uv_async_send may be called from any thread; the handle is open while the
        // lock is held and the pointer is not null (closing clears it under this lock first).
        unsafe { (self.0.uv.async_send)(state.async_handle) };
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, LoopState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// On the loop's thread: starts watching `output`. An output that cannot be watched stays
    /// with its reader thread.
    fn start_watch(self: &Arc<Self>, output: Arc<dyn LoopReadable>) {
        let uv = self.uv;
        let handle = new_handle(uv, UV_POLL);
        // SAFETY: on the loop's thread, with zeroed memory of the size libuv asked for.
        if unsafe { (uv.poll_init)(self.uv_loop, handle, output.fd()) } != 0 {
            // SAFETY: the init failed, so libuv does not know the handle.
            unsafe { free_handle(uv, UV_POLL, handle) };
            return;
        }
        let watch = Box::new(Watch {
            output: output.clone(),
            shared: self.clone(),
        });
        // SAFETY: the handle is initialized; its data owns the watch until `on_poll_closed`.
        unsafe {
            set_data(handle, Box::into_raw(watch).cast());
            (uv.unref)(handle);
        }
        self.lock().watches.push(handle);
        output.watching();
        // SAFETY: an initialized poll handle on its loop's thread.
        if unsafe { (uv.poll_start)(handle, UV_READABLE, on_poll) } != 0 {
            self.stop_watch(handle);
        }
    }

    /// On the loop's thread: stops one watch and closes its handle.
    fn stop_watch(&self, handle: Handle) {
        let mut state = self.lock();
        let Some(at) = state.watches.iter().position(|&h| h == handle) else {
            return;
        };
        state.watches.swap_remove(at);
        state.closing += 1;
        drop(state);
        // SAFETY: a live poll handle (it was in `watches`); its data is the watch.
        let watch = unsafe { &*data(handle).cast::<Watch>() };
        watch.output.unwatched();
        // SAFETY: a live poll handle on its loop's thread; its memory is freed in the callback.
        unsafe {
            (self.uv.poll_stop)(handle);
            (self.uv.close)(handle, on_poll_closed);
        }
    }

    /// On the loop's thread: closes every handle (see [`NodeLoop::close`]).
    fn close(&self) {
        let mut state = self.lock();
        if state.async_handle.is_null() {
            return;
        }
        let async_handle = std::mem::replace(&mut state.async_handle, std::ptr::null_mut());
        state.pending.clear();
        let watches = state.watches.clone();
        state.closing += 1;
        drop(state);
        for handle in watches {
            self.stop_watch(handle);
        }
        // SAFETY: the async handle is open (it was not null) and no other thread can reach it
        // any more; its memory and reference are released in the callback.
        unsafe { (self.uv.close)(async_handle, on_async_closed) };
    }

    /// A close callback ran: once the loop is closed and none is left, Node may end the
    /// environment (the cleanup hook is removed).
    fn closed_one(&self) {
        let mut state = self.lock();
        state.closing -= 1;
        if !state.async_handle.is_null() || state.closing > 0 || state.hook.is_null() {
            return;
        }
        let hook = std::mem::replace(&mut state.hook, std::ptr::null_mut());
        let hook_arg = std::mem::replace(&mut state.hook_arg, std::ptr::null());
        drop(state);
        // SAFETY: on the JS thread; the hook was registered and not removed yet.
        unsafe { sys::napi_remove_async_cleanup_hook(hook) };
        // SAFETY: the reference the hook held, leaked in `NodeLoop::new`, taken back once.
        drop(unsafe { Arc::from_raw(hook_arg) });
    }
}

/// Borrows the `Shared` a handle's or the hook's data points at (a reference kept alive by
/// whoever owns that data).
///
/// # Safety
/// `ptr` came from `Arc::into_raw` of a `Shared` whose reference is still held.
unsafe fn borrow_shared(ptr: *const c_void) -> ManuallyDrop<Arc<Shared>> {
    // SAFETY: the caller's promise; ManuallyDrop leaves the reference count as it is.
    ManuallyDrop::new(unsafe { Arc::from_raw(ptr.cast::<Shared>()) })
}

unsafe extern "C" fn on_async(handle: Handle) {
    // SAFETY: the async handle's data holds a reference to its `Shared` while it is open.
    let shared = unsafe { borrow_shared(data(handle)) };
    let pending = std::mem::take(&mut shared.lock().pending);
    for output in pending {
        shared.start_watch(output);
    }
}

unsafe extern "C" fn on_poll(handle: Handle, status: c_int, _events: c_int) {
    // SAFETY: a poll handle's data is its watch until its close callback.
    let watch = unsafe { &*data(handle).cast::<Watch>() };
    if status < 0 || !watch.output.readable() {
        watch.shared.stop_watch(handle);
    }
}

unsafe extern "C" fn on_poll_closed(handle: Handle) {
    // SAFETY: the close callback of a poll handle: its watch, owned by the data, is taken back
    // once, and libuv is done with the handle's memory.
    let watch = unsafe { Box::from_raw(data(handle).cast::<Watch>()) };
    let shared = watch.shared.clone();
    drop(watch);
    // SAFETY: libuv no longer refers to the handle.
    unsafe { free_handle(shared.uv, UV_POLL, handle) };
    shared.closed_one();
}

unsafe extern "C" fn on_async_closed(handle: Handle) {
    // SAFETY: the close callback of the async handle: the reference its data held is taken
    // back once, and libuv is done with the handle's memory.
    let shared = unsafe { Arc::from_raw(data(handle).cast::<Shared>().cast_const()) };
    // SAFETY: libuv no longer refers to the handle.
    unsafe { free_handle(shared.uv, UV_ASYNC, handle) };
    shared.closed_one();
}

unsafe extern "C" fn on_environment_end(
    _hook: sys::napi_async_cleanup_hook_handle,
    arg: *mut c_void,
) {
    // Once the last close callback ran, `closed_one` removes the hook: Node then knows the
    // loop is empty.
    // SAFETY: the hook's argument is the reference `NodeLoop::new` leaked for it, held until
    // the hook is removed (not yet: Node is calling it).
    let shared = unsafe { borrow_shared(arg) };
    shared.close();
}
