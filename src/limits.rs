//! Every bound the executor enforces, in one place.
//!
//! A breach of any of these ends the run that caused it with an `error` that names the bound;
//! the pool, the transport and every other run keep going.

use std::time::Duration;

/// The bounds of one executor. Per-run overrides (`timeout`, `memoryLimitMb`) replace the
/// matching fields for that run only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget of one run, measured on the host from the moment the program starts
    /// (time spent awaiting tool calls counts). Default 60 s, as in Cloudflare's executor.
    pub timeout: Duration,
    /// Grace after the deadline before a program that never yields is terminated from outside
    /// by the watchdog. An awaiting program is ended at the deadline itself.
    pub termination_grace: Duration,
    /// How long a terminated run may keep its thread before the worker is abandoned and replaced
    /// (some V8 builtins do not check for termination while they loop).
    pub abandon_after: Duration,
    /// V8 heap budget of one isolate, in bytes. A run whose heap exceeds it after a garbage
    /// collection is ended with a memory error. V8's own hard limit sits `HEAP_HEADROOM` above
    /// it (see `sandbox`), because V8 aborts the whole process when one allocation cannot fit:
    /// a single object (up to about 1 GiB, V8's largest) may briefly take the heap past the
    /// budget before the run is ended.
    pub heap_bytes: usize,
    /// Bytes of ArrayBuffer / TypedArray backing stores one isolate may hold at once. They live
    /// outside V8's heap, so they are counted by our own allocator.
    pub array_buffer_bytes: usize,
    /// Largest `length` a generic Array.prototype method accepts on its receiver. Some builtins
    /// neither stop on termination nor bound their allocation on huge array-likes; beyond this
    /// length the guarded methods throw a RangeError instead. Derived from the heap budget.
    pub max_array_like_length: u64,
    /// Bytes of the JSON text of one tool call's argument array.
    pub max_args_bytes: usize,
    /// Bytes of one reply from `dispatch`.
    pub max_reply_bytes: usize,
    /// Bytes of the JSON text of the program's result.
    pub max_result_bytes: usize,
    /// Lines captured from `console` in one run.
    pub max_log_lines: usize,
    /// Bytes of all captured log lines of one run together.
    pub max_log_bytes: usize,
    /// Characters of the error text a failed run reports (a longer message is cut, and says so).
    pub max_error_chars: usize,
    /// Tool calls one run may make.
    pub max_tool_calls: u32,
    /// Timers (`setTimeout` / `setInterval`) armed at once in one run.
    pub max_timers: usize,
    /// Bytes of program source.
    pub max_code_bytes: usize,
    /// Runs waiting for a worker; one more is rejected at once with `ERR_QUEUE_FULL`.
    pub max_queue: usize,
    /// Worker threads, each running one isolate at a time.
    pub workers: usize,
}

pub const MIB: usize = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        let heap_mb = 128;
        Limits {
            timeout: Duration::from_millis(60_000),
            termination_grace: Duration::from_millis(50),
            abandon_after: Duration::from_millis(2_000),
            heap_bytes: heap_mb * MIB,
            array_buffer_bytes: heap_mb * MIB,
            max_array_like_length: array_like_cap(heap_mb * MIB),
            max_args_bytes: 8 * MIB,
            max_reply_bytes: 32 * MIB,
            max_result_bytes: 32 * MIB,
            max_log_lines: 10_000,
            max_log_bytes: 4 * MIB,
            max_error_chars: 65_536,
            max_tool_calls: 10_000,
            max_timers: 10_000,
            max_code_bytes: 4 * MIB,
            max_queue: 10_000,
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
        }
    }
}

/// The array-like length cap for a heap budget: one 8-byte slot per element fills half the
/// heap, so a copy made by a builtin still fits. A dense array cannot be longer than heap/8,
/// so only sparse arrays and array-likes that merely claim a length are refused in practice.
pub fn array_like_cap(heap_bytes: usize) -> u64 {
    ((heap_bytes / 16) as u64).max(1 << 16)
}

impl Limits {
    /// Sets the heap budget and the bounds derived from it (ArrayBuffer bytes, array-like cap).
    pub fn set_memory_mb(&mut self, mb: usize) {
        self.heap_bytes = mb * MIB;
        self.array_buffer_bytes = mb * MIB;
        self.max_array_like_length = array_like_cap(self.heap_bytes);
    }

    /// Whether an isolate built for `self` can serve a run with `other` limits (the isolate-level
    /// bounds are fixed when it is created).
    pub fn same_isolate_shape(&self, other: &Limits) -> bool {
        self.heap_bytes == other.heap_bytes
            && self.array_buffer_bytes == other.array_buffer_bytes
            && self.max_array_like_length == other.max_array_like_length
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_contract() {
        let l = Limits::default();
        assert_eq!(l.timeout, Duration::from_secs(60));
        assert_eq!(l.heap_bytes, 128 * MIB);
        assert!(l.max_queue >= 1_000);
        assert!(l.workers >= 1);
    }

    #[test]
    fn memory_setting_moves_the_derived_bounds() {
        let mut l = Limits::default();
        l.set_memory_mb(64);
        assert_eq!(l.heap_bytes, 64 * MIB);
        assert_eq!(l.array_buffer_bytes, 64 * MIB);
        assert_eq!(l.max_array_like_length, (64 * MIB / 16) as u64);
        assert!(!l.same_isolate_shape(&Limits::default()));
        l.timeout = Duration::from_millis(5);
        let mut m = Limits::default();
        m.set_memory_mb(64);
        assert!(l.same_isolate_shape(&m));
    }

    #[test]
    fn array_like_cap_has_a_floor() {
        assert_eq!(array_like_cap(1024), 1 << 16);
    }
}
