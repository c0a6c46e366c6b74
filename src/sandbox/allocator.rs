//! A budgeted ArrayBuffer allocator. Backing stores of ArrayBuffers and TypedArrays live outside
//! V8's heap, so the heap limit does not see them; this allocator counts them per isolate and
//! refuses (and ends the run) once the budget is spent.

use super::termination::{StopReason, TerminationState};
use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Backing stores are aligned like malloc's.
const ALIGN: usize = 16;

pub(crate) struct ArrayBufferBudget {
    used: AtomicUsize,
    max: usize,
    termination: Arc<TerminationState>,
}

impl ArrayBufferBudget {
    pub(crate) fn new(max: usize, termination: Arc<TerminationState>) -> Self {
        ArrayBufferBudget {
            used: AtomicUsize::new(0),
            max,
            termination,
        }
    }

    /// Takes `len` bytes from the budget, or refuses without changing it.
    fn reserve(&self, len: usize) -> bool {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let Some(next) = used.checked_add(len).filter(|n| *n <= self.max) else {
                return false;
            };
            match self
                .used
                .compare_exchange_weak(used, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(actual) => used = actual,
            }
        }
    }

    fn release(&self, len: usize) {
        self.used.fetch_sub(len, Ordering::AcqRel);
    }

    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

fn layout(len: usize) -> Option<Layout> {
    // Zero-length buffers still get a real, unique allocation of one byte.
    Layout::from_size_align(len.max(1), ALIGN).ok()
}

fn allocate_with(budget: &ArrayBufferBudget, len: usize, zeroed: bool) -> *mut c_void {
    let Some(layout) = layout(len) else {
        return std::ptr::null_mut();
    };
    if !budget.reserve(len) {
        budget.termination.terminate(StopReason::Memory);
        return std::ptr::null_mut();
    }
    // SAFETY: `layout` has a non-zero size (see `layout`) and a valid power-of-two alignment.
    let ptr = unsafe {
        if zeroed {
            alloc_zeroed(layout)
        } else {
            alloc(layout)
        }
    };
    if ptr.is_null() {
        budget.release(len);
    }
    ptr as *mut c_void
}

unsafe extern "C" fn allocate(budget: &ArrayBufferBudget, len: usize) -> *mut c_void {
    allocate_with(budget, len, true)
}

unsafe extern "C" fn allocate_uninitialized(budget: &ArrayBufferBudget, len: usize) -> *mut c_void {
    allocate_with(budget, len, false)
}

unsafe extern "C" fn free(budget: &ArrayBufferBudget, data: *mut c_void, len: usize) {
    if data.is_null() {
        return;
    }
    if let Some(layout) = layout(len) {
        // SAFETY: V8 frees only pointers this allocator returned, with the length it asked for,
        // so `layout` is the layout `data` was allocated with.
        unsafe { dealloc(data as *mut u8, layout) };
        budget.release(len);
    }
}

unsafe extern "C" fn drop_budget(budget: *const ArrayBufferBudget) {
    // SAFETY: `budget` is the pointer produced by `Arc::into_raw` in `new_allocator`; V8 calls
    // this exactly once, when the allocator itself is destroyed.
    drop(unsafe { Arc::from_raw(budget) });
}

static VTABLE: v8::RustAllocatorVtable<ArrayBufferBudget> = v8::RustAllocatorVtable {
    allocate,
    allocate_uninitialized,
    free,
    drop: drop_budget,
};

/// An allocator that draws from `budget`. The allocator holds its own reference to the budget.
pub(crate) fn new_allocator(budget: Arc<ArrayBufferBudget>) -> v8::UniqueRef<v8::Allocator> {
    let raw = Arc::into_raw(budget);
    // SAFETY: `raw` is a valid `ArrayBufferBudget` kept alive by the reference passed in, which
    // `drop_budget` releases; VTABLE's functions all expect exactly that type.
    unsafe { v8::new_rust_allocator(raw, &VTABLE) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_past_its_maximum_and_recovers_on_release() {
        let budget = ArrayBufferBudget::new(100, Arc::new(TerminationState::new(1)));
        assert!(budget.reserve(60));
        assert!(!budget.reserve(41));
        assert!(budget.reserve(40));
        assert_eq!(budget.used(), 100);
        budget.release(60);
        assert!(budget.reserve(50));
        assert!(!budget.reserve(usize::MAX));
    }

    #[test]
    fn refused_allocations_ask_for_the_run_to_stop() {
        let termination = Arc::new(TerminationState::new(1));
        let budget = ArrayBufferBudget::new(8, termination.clone());
        assert!(allocate_with(&budget, 16, true).is_null());
        assert_eq!(termination.reason(), Some(StopReason::Memory));
        let p = allocate_with(&budget, 8, true);
        assert!(!p.is_null());
        // SAFETY: `p` came from this allocator with length 8.
        unsafe { free(&budget, p, 8) };
        assert_eq!(budget.used(), 0);
    }
}
