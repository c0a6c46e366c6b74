//! Why a run was stopped, and the handle that stops it from any thread.

use crate::run::RunError;
use std::sync::atomic::{AtomicU32, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Called (once) when the isolate's thread is about to be parked for good; receives the error
/// text for the run. Set by whoever can answer the run and replace the thread.
pub type WedgeHook = Box<dyn FnOnce(RunError) + Send>;

/// The reason recorded by whoever stopped a run first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The wall-clock deadline passed.
    Timeout = 1,
    /// The heap or the ArrayBuffer budget was exhausted.
    Memory = 2,
    /// A message bound was broken (the run's state holds the message).
    Breach = 3,
    /// The host cancelled the run (its message is in the termination state).
    Cancelled = 4,
    /// The run's thread used its CPU-time budget (`cpuTimeMs`).
    CpuTime = 5,
}

impl StopReason {
    fn from_u8(v: u8) -> Option<StopReason> {
        match v {
            1 => Some(StopReason::Timeout),
            2 => Some(StopReason::Memory),
            3 => Some(StopReason::Breach),
            4 => Some(StopReason::Cancelled),
            5 => Some(StopReason::CpuTime),
            _ => None,
        }
    }
}

/// Shared between the isolate's thread, the watchdog, V8's heap callback and the allocator.
pub(crate) struct TerminationState {
    reason: AtomicU8,
    handle: OnceLock<v8::IsolateHandle>,
    /// How often the near-heap-limit callback has granted extra room to unwind.
    pub(crate) heap_grants: AtomicU32,
    pub(crate) heap_limit_bytes: usize,
    /// Heap size when the budget was first found exceeded (0: not yet).
    pub(crate) heap_at_stop: AtomicUsize,
    wedge_hook: Mutex<Option<WedgeHook>>,
    /// The message of a cancellation by the host.
    cancel_message: Mutex<Option<String>>,
}

impl TerminationState {
    pub(crate) fn new(heap_limit_bytes: usize) -> Self {
        TerminationState {
            reason: AtomicU8::new(0),
            handle: OnceLock::new(),
            heap_grants: AtomicU32::new(0),
            heap_limit_bytes,
            heap_at_stop: AtomicUsize::new(0),
            wedge_hook: Mutex::new(None),
            cancel_message: Mutex::new(None),
        }
    }

    pub(crate) fn cancel_message(&self) -> Option<String> {
        self.cancel_message
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn attach(&self, handle: v8::IsolateHandle) {
        let _ = self.handle.set(handle);
    }

    /// Records `reason` unless another was recorded first, and terminates the isolate's
    /// JavaScript execution. Safe from any thread.
    pub(crate) fn terminate(&self, reason: StopReason) {
        let _ = self
            .reason
            .compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire);
        if let Some(handle) = self.handle.get() {
            handle.terminate_execution();
        }
    }

    pub(crate) fn reason(&self) -> Option<StopReason> {
        StopReason::from_u8(self.reason.load(Ordering::Acquire))
    }

    /// Drops the wedge hook: the run is over, nothing is left to answer.
    pub(crate) fn clear_wedge(&self) {
        self.wedge_hook
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
    }

    /// Runs the wedge hook, if one is set and has not run yet. Returns whether one ran.
    pub(crate) fn wedge(&self, error: RunError) -> bool {
        let hook = self
            .wedge_hook
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match hook {
            Some(hook) => {
                hook(error);
                true
            }
            None => false,
        }
    }
}

/// A cloneable, thread-safe way to stop one sandbox's run from outside (the watchdog).
#[derive(Clone)]
pub struct Terminator(pub(crate) Arc<TerminationState>);

impl Terminator {
    pub fn terminate(&self, reason: StopReason) {
        self.0.terminate(reason);
    }

    /// Ends the run at once on the host's behalf; the run's error is `message`.
    pub fn cancel(&self, message: String) {
        self.0
            .cancel_message
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(message);
        self.0.terminate(StopReason::Cancelled);
    }

    /// Sets what happens if the run's thread has to be given up inside V8 (memory exhausted
    /// while the program ignores termination): the hook answers the run and replaces the worker.
    pub fn on_wedge(&self, hook: WedgeHook) {
        *self.0.wedge_hook.lock().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }
}

impl Terminator {
    /// A terminator attached to no isolate, for testing whoever holds one.
    #[cfg(test)]
    pub fn detached() -> Terminator {
        Terminator(Arc::new(TerminationState::new(0)))
    }

    /// The reason recorded so far.
    pub fn reason(&self) -> Option<StopReason> {
        self.0.reason()
    }
}
