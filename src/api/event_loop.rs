//! Node's event loop reading engine output (`'process'` isolation): a libuv poll handle on each
//! engine's stdout, so a frame from an engine wakes the JavaScript thread itself instead of a
//! reader thread that then wakes it (`process::host::EventLoop`). libuv itself is `crate::uv`'s
//! (safe handles checked to their loop's thread); this file keeps which outputs are watched and
//! Node's side: the loop of an environment (from napi) and the async cleanup hook that holds the
//! environment's end until the last handle closed, since a worker thread's loop must be empty
//! when Node closes it. The JS layer offers this only on Node (Deno and Bun do not run libuv),
//! and everywhere the engines' reader threads still read whatever the loop leaves waiting
//! (`process/host/output.rs`).
//!
//! Every handle is made, started and closed on the loop's (the JS) thread; outputs to watch
//! arrive from other threads through the async handle's wake-up. Every handle is closed when
//! the executor goes away or Node's environment ends.

use crate::process::host::{EventLoop, LoopReadable};
use crate::uv::{Async, Loop, Poll};
use napi::{sys, Env};
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

/// The loop of one Node environment, as the executors made there share it.
struct Shared {
    uv: Loop,
    state: Mutex<LoopState>,
}

struct LoopState {
    /// Open until the loop closes (`None` then): requests to watch arrive through it.
    wake: Option<Async>,
    /// Outputs to watch, handed over by other threads.
    pending: Vec<Arc<dyn LoopReadable>>,
    /// The outputs watched now, each with its poll handle, by watch number.
    watches: Vec<(u64, Poll, Arc<dyn LoopReadable>)>,
    next_watch: u64,
    /// Handles closed whose close callback has not run yet.
    closing: usize,
    /// Node's async cleanup hook for this loop, removed once every handle is closed.
    hook: Option<CleanupHook>,
}

/// Node's async cleanup hook, and the reference to the loop's `Shared` that it holds.
struct CleanupHook {
    handle: sys::napi_async_cleanup_hook_handle,
    arg: *const Shared,
}

// SAFETY: the hook's handle and argument are used only on the JS thread (registered in
// `NodeLoop::new`, removed in `closed_one`, which runs in a libuv close callback there).
unsafe impl Send for CleanupHook {}

/// Node's event loop, offered to a process pool; closed (on the JS thread) by [`NodeLoop::close`].
#[derive(Clone)]
pub struct NodeLoop(Arc<Shared>);

impl NodeLoop {
    /// The loop of `env`'s environment, or `None` where libuv cannot be reached.
    pub fn new(env: &Env) -> Option<NodeLoop> {
        let raw = env.get_uv_event_loop().ok()?;
        // SAFETY: Node's loop of this environment, run by this (its JavaScript) thread. Every
        // handle made on the loop is closed before the environment ends: the cleanup hook below
        // holds that end until the last close callback ran.
        let uv = unsafe { Loop::of_this_thread(raw.cast::<c_void>()) }?;
        let shared = Arc::new(Shared {
            uv,
            state: Mutex::new(LoopState {
                wake: None,
                pending: Vec::new(),
                watches: Vec::new(),
                next_watch: 0,
                closing: 0,
                hook: None,
            }),
        });
        // The handle's callback holds the loop until the handle is closed.
        let woken = shared.clone();
        let wake = Async::open(&uv, move || woken.start_pending())?;
        shared.lock().wake = Some(wake);
        let arg = Arc::into_raw(shared.clone());
        let mut handle = std::ptr::null_mut();
        // SAFETY: a valid env on its own thread; `arg` stays alive until the hook is removed
        // (`closed_one` takes the reference back then).
        let status = unsafe {
            sys::napi_add_async_cleanup_hook(
                env.raw(),
                Some(on_environment_end),
                arg.cast_mut().cast(),
                &mut handle,
            )
        };
        if status == sys::Status::napi_ok {
            shared.lock().hook = Some(CleanupHook { handle, arg });
        } else {
            // SAFETY: the reference was leaked just above and nothing else holds the pointer.
            drop(unsafe { Arc::from_raw(arg) });
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
        let Some(wake) = &state.wake else {
            return;
        };
        let wake = wake.clone();
        state.pending.push(output);
        drop(state);
        wake.wake();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, LoopState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// On the loop's thread: starts watching what other threads handed over.
    fn start_pending(self: &Arc<Self>) {
        let pending = std::mem::take(&mut self.lock().pending);
        for output in pending {
            self.start_watch(output);
        }
    }

    /// On the loop's thread: starts watching `output`. An output that cannot be watched stays
    /// with its reader thread.
    fn start_watch(self: &Arc<Self>, output: Arc<dyn LoopReadable>) {
        let id = {
            let mut state = self.lock();
            state.next_watch += 1;
            state.next_watch
        };
        // The poll handle's callback holds the loop and the output until the handle is closed.
        let shared = self.clone();
        let readable = output.clone();
        let on_event = move |status: i32| {
            if status < 0 || !readable.readable() {
                shared.stop_watch(id);
            }
        };
        let Some(poll) = Poll::start(&self.uv, output.fd(), on_event) else {
            return;
        };
        self.lock().watches.push((id, poll, output.clone()));
        output.watching();
    }

    /// On the loop's thread: stops one watch and closes its handle.
    fn stop_watch(self: &Arc<Self>, id: u64) {
        let mut state = self.lock();
        let Some(at) = state.watches.iter().position(|(watch, ..)| *watch == id) else {
            return;
        };
        let (_, poll, output) = state.watches.swap_remove(at);
        state.closing += 1;
        drop(state);
        output.unwatched();
        let shared = self.clone();
        poll.close(move || shared.closed_one());
    }

    /// On the loop's thread: closes every handle (see [`NodeLoop::close`]).
    fn close(self: &Arc<Self>) {
        let mut state = self.lock();
        let Some(wake) = state.wake.take() else {
            return;
        };
        state.pending.clear();
        let watches: Vec<u64> = state.watches.iter().map(|(id, ..)| *id).collect();
        state.closing += 1;
        drop(state);
        for id in watches {
            self.stop_watch(id);
        }
        let shared = self.clone();
        wake.close(move || shared.closed_one());
    }

    /// A close callback ran: once the loop is closed and none is left, Node may end the
    /// environment (the cleanup hook is removed).
    fn closed_one(&self) {
        let mut state = self.lock();
        state.closing -= 1;
        if state.wake.is_some() || state.closing > 0 {
            return;
        }
        let Some(hook) = state.hook.take() else {
            return;
        };
        drop(state);
        // SAFETY: on the JS thread (a libuv close callback); the hook was registered and not
        // removed yet.
        unsafe { sys::napi_remove_async_cleanup_hook(hook.handle) };
        // SAFETY: the reference the hook held, leaked in `NodeLoop::new`, taken back once.
        drop(unsafe { Arc::from_raw(hook.arg) });
    }
}

unsafe extern "C" fn on_environment_end(
    _hook: sys::napi_async_cleanup_hook_handle,
    arg: *mut c_void,
) {
    // SAFETY: the hook's argument is the reference `NodeLoop::new` leaked for it, held until
    // the hook is removed (not yet: Node is calling it); ManuallyDrop leaves its count as is.
    let shared = ManuallyDrop::new(unsafe { Arc::from_raw(arg.cast::<Shared>().cast_const()) });
    // Once the last close callback ran, `closed_one` removes the hook: Node then knows the
    // loop is empty.
    shared.close();
}
