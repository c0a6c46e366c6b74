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
    /// CPU time one run may use, measured on its own thread's CPU clock (time spent awaiting
    /// tool calls is not billed). Ends a spinning program long before its wall-clock timeout,
    /// so a few runaways cannot hold the workers for everyone. Default 10 s.
    pub cpu_time: Duration,
    /// Grace after the deadline before a program that never yields is terminated from outside
    /// by the watchdog. An awaiting program is ended at the deadline itself.
    pub termination_grace: Duration,
    /// How long a terminated run may keep its thread before the worker is abandoned and replaced
    /// (some V8 builtins do not check for termination while they loop).
    pub abandon_after: Duration,
    /// V8 heap budget of one isolate, in bytes. A run whose heap exceeds it after a garbage
    /// collection, that makes one object larger than it, or that takes the heap to V8's own
    /// limit (set just above it, see `sandbox::v8_heap_limit`) is ended with a memory error.
    /// V8 aborts the whole process when one allocation cannot fit, so the object being made
    /// when the budget breaks is still made (up to about 1 GiB, V8's largest) before the run
    /// ends.
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
    /// Tool calls of one run awaiting their replies at once. A program that starts thousands of
    /// calls together (`Promise.all` over a huge list) is ended here, so the host never holds
    /// more than this many of its calls and replies; ordinary fan-out stays far below it.
    pub max_tool_calls_in_flight: usize,
    /// Timers (`setTimeout` / `setInterval`) armed at once in one run.
    pub max_timers: usize,
    /// Bytes of program source.
    pub max_code_bytes: usize,
    /// Runs waiting for a worker; one more is rejected at once with `ERR_QUEUE_FULL`.
    pub max_queue: usize,
    /// Worker threads, each running one isolate at a time (per engine process in `'process'`
    /// isolation).
    pub workers: usize,
    /// Extra worker threads the pool may start while every worker is held by a long run
    /// (`overflow_after` or more) and runs are waiting: a queued run is then not stuck behind
    /// runaways or slow tools. The long runs drop to the lowest priority, and an extra worker
    /// leaves once idle. Each can hold a run's memory, so this bounds what admission may cost.
    pub overflow_workers: usize,
    /// The most standby threads: threads beyond `workers`, started on demand, that each hold a
    /// warm isolate and wait for a worker's place, so the next run need not wait while the
    /// worker that answered builds its next isolate (`pool/standby.rs` says when one starts and
    /// leaves). They never add concurrency (at most `workers` runs at once, plus admission's
    /// extras). Their isolates are empty, about 2 MiB each, inside the engine baseline of
    /// `process_memory_cap`.
    pub standby_isolates: usize,
    /// How long every worker must have been held by its run before an extra worker is started
    /// for a queued run. An engine process uses zero: its host has waited already.
    pub overflow_after: Duration,
    /// Isolates kept after their run by `retainHandles` at once (per pool: per executor in
    /// `'thread'`, per engine process in `'process'`). One more is refused: the run still
    /// completes, without a handle.
    pub max_retained: usize,
    /// A retained isolate that receives no call for this long is disposed.
    pub retained_idle: Duration,
    /// Bytes of compiled programs kept between runs (per pool: per executor in `'thread'`, per
    /// engine process in `'process'`), least recently used dropped first; 0 keeps none.
    pub code_cache_bytes: usize,
    /// `'process'` isolation: engine processes the executor supervises.
    pub processes: usize,
    /// `'process'` isolation: resident memory one engine process may use before it is killed
    /// and replaced (its runs end with `ERR_WORKER_LOST`). Catches growth that escapes V8's
    /// heap accounting.
    pub process_memory_bytes: usize,
    /// `'process'` isolation: how often the host pings each engine process (its memory is
    /// sampled at least this often, and at most 250 ms apart).
    pub heartbeat_interval: Duration,
    /// `'process'` isolation: an engine process that has not answered a ping for this long is
    /// killed and replaced.
    pub heartbeat_timeout: Duration,
    /// `'process'` isolation: engine processes that fail to start this many times in a row put
    /// the executor in a crash loop: queued runs are rejected with `ERR_WORKER_LOST` and the
    /// next start is tried only when a new run arrives, after the longest backoff.
    pub max_start_failures: u32,
    /// `'process'` isolation: the wait before restarting a lost engine process grows from this,
    /// doubling per consecutive loss, up to `restart_backoff_max`.
    pub restart_backoff_min: Duration,
    pub restart_backoff_max: Duration,
    /// Nice value of the worker threads (0 = the process's own priority, up to 19). A run that
    /// has used 100 ms of CPU (`admission::LONG_RUN_CPU`) drops below the host anyway (to nice
    /// 10), so a CPU-bound program never starves the host's event loop; short runs keep the
    /// host's priority, which on a loaded machine is what keeps their wake-ups short.
    pub worker_nice: i32,
    /// Bytes of the ES module bundled for one allowed npm package (`packages`): a package whose
    /// bundle is larger is refused, naming the package and the bound. Checked on the host, which
    /// bundles; the bundle then travels with every run that imports the package.
    pub max_package_bytes: usize,
    /// Wall-clock time the host's bundler (esbuild, in its own process) may take to bundle one
    /// package before the import is refused.
    pub package_build_timeout: Duration,
    /// Bytes of package bundles the executor keeps between runs (keyed by package, version and
    /// entry), least recently used dropped first; 0 bundles on every run.
    pub package_cache_bytes: usize,
}

pub const MIB: usize = 1024 * 1024;

/// How deeply a program's text may nest (`program::check_nesting`: open brackets, plus the
/// operators, `<` and `else` chained inside each) before a run reads it as TypeScript. swc's
/// stripper recurses once per level and cannot stop itself before the stack runs out, so a
/// deeper text is refused as a syntax error. Model-written programs measure under 50; the
/// bound leaves room for long generated expressions.
pub const MAX_PROGRAM_NESTING: usize = 4_000;

/// How deeply a TypeScript program that needs code generated (an `enum`, a `namespace`,
/// parameter properties) may nest: swc's transform takes memory and time that grow with the
/// square of the depth (4 000 nested arrow functions: 240 MB and 0.75 s; 1 000: 23 MB).
pub const MAX_TRANSFORM_NESTING: usize = 1_000;

/// Stack of the thread that strips types from a program measuring past
/// `INLINE_PROGRAM_NESTING`: room for `MAX_PROGRAM_NESTING` levels of swc's most
/// stack-hungry construct, several times over. Only the pages a program reaches are used.
pub const PROGRAM_STRIP_STACK_BYTES: usize = 256 * MIB;

/// Programs measuring up to this are stripped on the worker's own stack (4 MiB, which holds
/// several times this many levels of any construct).
pub const INLINE_PROGRAM_NESTING: usize = 200;

/// The most work one PBKDF2 derivation (`crypto.subtle.deriveBits`/`deriveKey`) may ask for:
/// iterations times the output's blocks of the hash. ring's PBKDF2 cannot be stopped once it
/// runs, so this bounds how long a single call holds the isolate's thread past the run's
/// deadline: about 0.25 s with SHA-256 and 1 s with SHA-512 on one core. It admits the
/// iteration counts password-storage guidance asks for (600 000 with SHA-256).
pub const MAX_PBKDF2_WORK: u64 = 1_000_000;

/// The longest timeout an executor or a run accepts: one day, in milliseconds.
pub const MAX_TIMEOUT_MS: f64 = 24.0 * 3600.0 * 1000.0;

impl Default for Limits {
    fn default() -> Self {
        let heap_mb = 128;
        Limits {
            timeout: Duration::from_millis(60_000),
            cpu_time: Duration::from_millis(10_000),
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
            max_tool_calls_in_flight: 500,
            max_timers: 10_000,
            max_code_bytes: 4 * MIB,
            max_queue: 10_000,
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            overflow_workers: 8,
            standby_isolates: 4,
            overflow_after: Duration::from_millis(250),
            max_retained: 64,
            retained_idle: Duration::from_secs(60),
            code_cache_bytes: 32 * MIB,
            processes: 1,
            process_memory_bytes: 0, // derived: see `process_memory_cap`
            heartbeat_interval: Duration::from_millis(1_000),
            heartbeat_timeout: Duration::from_millis(10_000),
            max_start_failures: 5,
            restart_backoff_min: Duration::from_millis(20),
            restart_backoff_max: Duration::from_millis(5_000),
            worker_nice: 0,
            max_package_bytes: 8 * MIB,
            package_build_timeout: Duration::from_millis(30_000),
            package_cache_bytes: 64 * MIB,
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

    /// The resident-memory cap of one engine process: the explicit setting, or room for every
    /// worker's heap, its ArrayBuffers and V8's headroom for one oversized object, the code
    /// cache, plus the engine's own baseline.
    pub fn process_memory_cap(&self) -> usize {
        if self.process_memory_bytes > 0 {
            return self.process_memory_bytes;
        }
        let per_worker = self.heap_bytes + self.array_buffer_bytes;
        let threads = self.workers + self.overflow_workers + self.max_retained.min(self.workers);
        threads * per_worker + self.code_cache_bytes + 1536 * MIB
    }

    /// `'process'` isolation: the most bytes that may wait for an engine process to read them
    /// (frames the pipe could not take yet). An engine that leaves more than this unread has
    /// stopped reading and is killed at once; a live one reads in microseconds. Derived: eight
    /// of the largest frames the host sends (program code or a tool reply), at least 1 MiB.
    pub fn engine_backlog_cap(&self) -> usize {
        (self.max_code_bytes.max(self.max_reply_bytes) * 8).max(MIB)
    }

    /// The checks that involve more than one bound, after every bound is set: a heartbeat
    /// timeout no longer than the interval would kill every engine between two pings.
    pub fn check_together(&self) -> Result<(), String> {
        if self.heartbeat_timeout <= self.heartbeat_interval {
            return Err(format!(
                "heartbeatTimeoutMs must be longer than heartbeatIntervalMs (got {} and {}): an engine would be killed between two pings",
                ms(self.heartbeat_timeout),
                ms(self.heartbeat_interval)
            ));
        }
        Ok(())
    }

    /// Sets one bound by its option name (the names of the JS options), checking its range
    /// against its row in [`BOUNDS`]. Used for the executor's options, the per-run overrides
    /// and the configuration an engine process receives.
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), String> {
        let bound = bound(name).ok_or_else(|| format!("unknown option {name}"))?;
        let Some(set) = bound.set else {
            return Err(format!("{name} is derived and cannot be set"));
        };
        bound.check(value)?;
        set(self, value);
        Ok(())
    }

    /// Every bound by option name, as `executor.limits` shows it (derived caps included).
    pub fn to_map(&self) -> Vec<(&'static str, f64)> {
        BOUNDS.iter().map(|b| (b.name, (b.get)(self))).collect()
    }

    /// The settable bounds as a JSON object of option names (what an engine process is
    /// configured with; `set` reads each entry back).
    pub fn to_options_json(&self) -> String {
        let mut map = serde_json::Map::new();
        for b in BOUNDS.iter().filter(|b| b.set.is_some()) {
            map.insert(b.name.to_string(), serde_json::json!((b.get)(self)));
        }
        serde_json::Value::Object(map).to_string()
    }

    /// Reads a JSON object of option names into limits (the inverse of `to_options_json`).
    pub fn from_options_json(json: &str) -> Result<Limits, String> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| format!("configuration is not JSON: {e}"))?;
        let object = value
            .as_object()
            .ok_or_else(|| "configuration must be a JSON object".to_string())?;
        let mut limits = Limits::default();
        for (name, value) in object {
            let number = value
                .as_f64()
                .ok_or_else(|| format!("{name} must be a number"))?;
            limits.set(name, number)?;
        }
        limits.check_together()?;
        Ok(limits)
    }

    /// Whether an isolate built for `self` can serve a run with `other` limits (the isolate-level
    /// bounds are fixed when it is created).
    pub fn same_isolate_shape(&self, other: &Limits) -> bool {
        self.heap_bytes == other.heap_bytes
            && self.array_buffer_bytes == other.array_buffer_bytes
            && self.max_array_like_length == other.max_array_like_length
    }
}

/// How a bound is written in the options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (a count, bytes, MiB, a nice value).
    Integer,
    /// Milliseconds, fractions allowed.
    Millis,
}

/// Where a bound is given to `new IsolateExecutor(options)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A top-level option (`{ workers }`).
    Top,
    /// A message bound, inside `options.limits` (`{ limits: { maxArgsBytes } }`).
    Limits,
    /// Shown in `executor.limits` only: derived from other bounds, never set.
    Derived,
}

/// When a bound applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The executor's, for every run.
    Executor,
    /// The executor's default, which one run may override (`execute({ timeout })`).
    PerRun,
    /// `'process'` isolation only (engine processes and their supervision).
    Process,
}

/// One settable (or shown) bound: the one declaration from which setting, reading, range
/// checks, the options across napi, the engine's configuration and `executor.limits` follow.
pub struct Bound {
    /// The option name, as JS writes it.
    pub name: &'static str,
    pub kind: Kind,
    pub min: f64,
    pub max: f64,
    pub place: Place,
    pub scope: Scope,
    pub get: fn(&Limits) -> f64,
    /// `None` for a derived bound.
    pub set: Option<fn(&mut Limits, f64)>,
    pub doc: &'static str,
}

impl Bound {
    /// How the option is named in messages (`limits.maxArgsBytes` for message bounds).
    pub fn label(&self) -> String {
        match self.place {
            Place::Limits => format!("limits.{}", self.name),
            Place::Top | Place::Derived => self.name.to_string(),
        }
    }

    /// Checks a value against the row's range; the error names the option and the range.
    pub fn check(&self, value: f64) -> Result<(), String> {
        let in_range = value.is_finite() && value >= self.min && value <= self.max;
        match self.kind {
            Kind::Integer if in_range && value.fract() == 0.0 => Ok(()),
            Kind::Millis if in_range => Ok(()),
            Kind::Integer => Err(format!(
                "{} must be an integer between {} and {} (got {value})",
                self.label(),
                self.min,
                self.max
            )),
            Kind::Millis => Err(format!(
                "{} must be a number of milliseconds between {} and {} (got {value})",
                self.label(),
                self.min,
                self.max
            )),
        }
    }
}

/// The row of `name`, if it is a bound.
pub fn bound(name: &str) -> Option<&'static Bound> {
    BOUNDS.iter().find(|b| b.name == name)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn from_ms(v: f64) -> Duration {
    Duration::from_secs_f64(v / 1000.0)
}

const U32_MAX: f64 = u32::MAX as f64;

/// Every bound a user can set or read, one row each (README's bounds table follows it).
pub const BOUNDS: &[Bound] = &[
    Bound {
        name: "workers",
        kind: Kind::Integer,
        min: 1.0,
        max: 256.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| l.workers as f64,
        set: Some(|l, v| l.workers = v as usize),
        doc: "worker threads, each running one isolate at a time (per engine process)",
    },
    Bound {
        name: "overflowWorkers",
        kind: Kind::Integer,
        min: 0.0,
        max: 256.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| l.overflow_workers as f64,
        set: Some(|l, v| l.overflow_workers = v as usize),
        doc: "extra workers started for waiting runs while every worker is held by a long run (per engine process)",
    },
    Bound {
        name: "standbyIsolates",
        kind: Kind::Integer,
        min: 0.0,
        max: 64.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| l.standby_isolates as f64,
        set: Some(|l, v| l.standby_isolates = v as usize),
        doc: "most threads started on demand to hold a warm isolate for the next run while a worker builds its own (per engine process; no added concurrency)",
    },
    Bound {
        name: "maxQueue",
        kind: Kind::Integer,
        min: 1.0,
        max: 10_000_000.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| l.max_queue as f64,
        set: Some(|l, v| l.max_queue = v as usize),
        doc: "runs waiting for a worker; one more is refused with ERR_QUEUE_FULL",
    },
    Bound {
        name: "timeout",
        kind: Kind::Millis,
        min: 1.0,
        max: MAX_TIMEOUT_MS,
        place: Place::Top,
        scope: Scope::PerRun,
        get: |l| ms(l.timeout),
        set: Some(|l, v| l.timeout = from_ms(v)),
        doc: "wall-clock budget of one run, tool calls included",
    },
    Bound {
        name: "cpuTimeMs",
        kind: Kind::Millis,
        min: 1.0,
        max: MAX_TIMEOUT_MS,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| ms(l.cpu_time),
        set: Some(|l, v| l.cpu_time = from_ms(v)),
        doc: "CPU time of one run on its own thread (waiting on tools is not billed)",
    },
    Bound {
        name: "memoryLimitMb",
        kind: Kind::Integer,
        min: 16.0,
        max: 16_384.0,
        place: Place::Top,
        scope: Scope::PerRun,
        get: |l| (l.heap_bytes / MIB) as f64,
        set: Some(|l, v| l.set_memory_mb(v as usize)),
        doc: "V8 heap budget of one isolate (and its ArrayBuffer budget), in MiB",
    },
    Bound {
        name: "maxArgsBytes",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_args_bytes as f64,
        set: Some(|l, v| l.max_args_bytes = v as usize),
        doc: "bytes of the JSON text of one tool call's arguments",
    },
    Bound {
        name: "maxReplyBytes",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_reply_bytes as f64,
        set: Some(|l, v| l.max_reply_bytes = v as usize),
        doc: "bytes of one reply from dispatch",
    },
    Bound {
        name: "maxResultBytes",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_result_bytes as f64,
        set: Some(|l, v| l.max_result_bytes = v as usize),
        doc: "bytes of the JSON text of the program's result",
    },
    Bound {
        name: "maxLogLines",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_log_lines as f64,
        set: Some(|l, v| l.max_log_lines = v as usize),
        doc: "console lines captured in one run",
    },
    Bound {
        name: "maxLogBytes",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_log_bytes as f64,
        set: Some(|l, v| l.max_log_bytes = v as usize),
        doc: "bytes of all captured console lines of one run",
    },
    Bound {
        name: "maxToolCalls",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_tool_calls as f64,
        set: Some(|l, v| l.max_tool_calls = v as u32),
        doc: "tool calls one run may make",
    },
    Bound {
        name: "maxToolCallsInFlight",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_tool_calls_in_flight as f64,
        set: Some(|l, v| l.max_tool_calls_in_flight = v as usize),
        doc: "tool calls of one run awaiting replies at once",
    },
    Bound {
        name: "maxCodeBytes",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_code_bytes as f64,
        set: Some(|l, v| l.max_code_bytes = v as usize),
        doc: "bytes of program source",
    },
    Bound {
        name: "maxArrayLikeLength",
        kind: Kind::Integer,
        min: 0.0,
        max: f64::MAX,
        place: Place::Derived,
        scope: Scope::PerRun,
        get: |l| l.max_array_like_length as f64,
        set: None,
        doc: "longest receiver a guarded Array.prototype method accepts (memory / 16)",
    },
    Bound {
        name: "maxRetained",
        kind: Kind::Integer,
        min: 0.0,
        max: 100_000.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| l.max_retained as f64,
        set: Some(|l, v| l.max_retained = v as usize),
        doc: "isolates kept by retainHandles at once",
    },
    Bound {
        name: "codeCacheMb",
        kind: Kind::Integer,
        min: 0.0,
        max: 4096.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| (l.code_cache_bytes / MIB) as f64,
        set: Some(|l, v| l.code_cache_bytes = v as usize * MIB),
        doc: "MiB of compiled programs kept between runs (0: none)",
    },
    Bound {
        name: "retainedIdleMs",
        kind: Kind::Millis,
        min: 1.0,
        max: MAX_TIMEOUT_MS,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| ms(l.retained_idle),
        set: Some(|l, v| l.retained_idle = from_ms(v)),
        doc: "a retained isolate unused for this long is disposed",
    },
    Bound {
        name: "processes",
        kind: Kind::Integer,
        min: 1.0,
        max: 64.0,
        place: Place::Top,
        scope: Scope::Process,
        get: |l| l.processes as f64,
        set: Some(|l, v| l.processes = v as usize),
        doc: "engine processes the executor supervises",
    },
    Bound {
        name: "processMemoryLimitMb",
        kind: Kind::Integer,
        min: 64.0,
        max: 1_048_576.0,
        place: Place::Top,
        scope: Scope::Process,
        get: |l| (l.process_memory_cap() / MIB) as f64,
        set: Some(|l, v| l.process_memory_bytes = v as usize * MIB),
        doc: "resident memory of one engine process before it is killed and replaced (MiB)",
    },
    Bound {
        name: "heartbeatIntervalMs",
        kind: Kind::Millis,
        min: 10.0,
        max: 60_000.0,
        place: Place::Top,
        scope: Scope::Process,
        get: |l| ms(l.heartbeat_interval),
        set: Some(|l, v| l.heartbeat_interval = from_ms(v)),
        doc: "how often the host pings each engine process and samples its memory",
    },
    Bound {
        name: "heartbeatTimeoutMs",
        kind: Kind::Millis,
        min: 50.0,
        max: 600_000.0,
        place: Place::Top,
        scope: Scope::Process,
        get: |l| ms(l.heartbeat_timeout),
        set: Some(|l, v| l.heartbeat_timeout = from_ms(v)),
        doc: "an engine process silent this long is killed and replaced",
    },
    Bound {
        name: "workerNice",
        kind: Kind::Integer,
        min: 0.0,
        max: 19.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| l.worker_nice as f64,
        set: Some(|l, v| l.worker_nice = v as i32),
        doc: "nice value of the worker threads (0: the process's own priority); a run past 100 ms of CPU drops to 10",
    },
    Bound {
        name: "maxPackageBytes",
        kind: Kind::Integer,
        min: 1.0,
        max: U32_MAX,
        place: Place::Limits,
        scope: Scope::Executor,
        get: |l| l.max_package_bytes as f64,
        set: Some(|l, v| l.max_package_bytes = v as usize),
        doc: "bytes of the bundle of one allowed npm package",
    },
    Bound {
        name: "packageBuildTimeoutMs",
        kind: Kind::Millis,
        min: 1.0,
        max: 600_000.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| ms(l.package_build_timeout),
        set: Some(|l, v| l.package_build_timeout = from_ms(v)),
        doc: "time the host may take to bundle one allowed npm package",
    },
    Bound {
        name: "packageCacheMb",
        kind: Kind::Integer,
        min: 0.0,
        max: 4096.0,
        place: Place::Top,
        scope: Scope::Executor,
        get: |l| (l.package_cache_bytes / MIB) as f64,
        set: Some(|l, v| l.package_cache_bytes = v as usize * MIB),
        doc: "MiB of package bundles kept between runs (0: none)",
    },
];

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
    fn options_roundtrip_through_json() {
        let mut l = Limits::default();
        l.set("workers", 3.0).unwrap();
        l.set("timeout", 1234.5).unwrap();
        l.set("memoryLimitMb", 64.0).unwrap();
        l.set("maxRetained", 0.0).unwrap();
        l.set("processMemoryLimitMb", 512.0).unwrap();
        let back = Limits::from_options_json(&l.to_options_json()).unwrap();
        assert_eq!(back, l);
        assert!(l
            .set("workers", 0.0)
            .unwrap_err()
            .contains("between 1 and 256"));
        assert!(l.set("workers", 1.5).is_err());
        assert!(l.set("nope", 1.0).unwrap_err().contains("unknown option"));
        assert!(l.set("maxArrayLikeLength", 1.0).is_err());
        assert_eq!(
            l.set("maxArgsBytes", 0.0).unwrap_err(),
            "limits.maxArgsBytes must be an integer between 1 and 4294967295 (got 0)"
        );
        assert!(Limits::from_options_json("[]").is_err());
    }

    #[test]
    fn every_row_reads_back_what_it_sets_at_both_ends_of_its_range() {
        for b in BOUNDS {
            let Some(set) = b.set else {
                assert_eq!(b.place, Place::Derived, "{} has no setter", b.name);
                continue;
            };
            for value in [b.min, b.max.min(1e9)] {
                let value = if b.kind == Kind::Integer {
                    value.floor()
                } else {
                    value
                };
                let mut l = Limits::default();
                b.check(value).unwrap();
                set(&mut l, value);
                let back = (b.get)(&l);
                assert!(
                    (back - value).abs() < 1e-6,
                    "{}: set {value}, read {back}",
                    b.name
                );
            }
            assert!(b.check(b.min - 1.0).is_err(), "{} below its range", b.name);
            assert!(b.check(f64::NAN).is_err(), "{} NaN", b.name);
        }
        let names: std::collections::HashSet<_> = BOUNDS.iter().map(|b| b.name).collect();
        assert_eq!(names.len(), BOUNDS.len(), "a bound is declared twice");
    }

    #[test]
    fn process_memory_cap_covers_every_worker() {
        let mut l = Limits {
            workers: 2,
            overflow_workers: 1,
            max_retained: 0,
            ..Limits::default()
        };
        // Every thread's heap and buffers, the code cache, and the engine's baseline.
        assert_eq!(
            l.process_memory_cap(),
            3 * 256 * MIB + 32 * MIB + 1536 * MIB
        );
        l.process_memory_bytes = 100 * MIB;
        assert_eq!(l.process_memory_cap(), 100 * MIB);
    }

    #[test]
    fn engine_backlog_cap_follows_the_largest_frame() {
        let mut l = Limits::default();
        assert_eq!(l.engine_backlog_cap(), 8 * 32 * MIB);
        l.max_reply_bytes = 64 * 1024;
        l.max_code_bytes = 16 * 1024;
        assert_eq!(l.engine_backlog_cap(), MIB);
        l.max_code_bytes = 4 * MIB;
        assert_eq!(l.engine_backlog_cap(), 32 * MIB);
    }

    #[test]
    fn a_heartbeat_timeout_must_outlast_the_interval() {
        let mut limits = Limits::default();
        assert!(limits.check_together().is_ok());
        limits.set("heartbeatIntervalMs", 2000.0).unwrap();
        limits.set("heartbeatTimeoutMs", 1000.0).unwrap();
        let e = limits.check_together().unwrap_err();
        assert!(
            e.starts_with(
                "heartbeatTimeoutMs must be longer than heartbeatIntervalMs (got 1000 and 2000)"
            ),
            "{e}"
        );
        let json = limits.to_options_json();
        assert!(Limits::from_options_json(&json).is_err());
    }

    #[test]
    fn array_like_cap_has_a_floor() {
        assert_eq!(array_like_cap(1024), 1 << 16);
    }
}
