//! The vocabulary of one run, shared by every layer it passes: what is asked ([`RunRequest`]),
//! what came out ([`RunOutput`], [`Report`], [`Outcome`]), how the answer is delivered exactly
//! once ([`Completion`]), and the counters a runner keeps ([`Stats`]). Nothing here knows about
//! V8, napi or processes: the napi layer builds a request, a [`crate::runner::Runner`] (the
//! local pool or the process pool) carries it, and the same types come back.

use crate::error::Fault;
use crate::limits::{bound, Limits, Scope};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One tool call made by a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// Unique within its run; the reply carries it back.
    pub call_id: u32,
    pub provider: String,
    pub tool: String,
    /// JSON text of the argument array.
    pub args_json: String,
}

/// Where a worker sends its run's tool calls. Implemented by the API layer (a threadsafe call
/// into the host's JavaScript). Returns false when the host can no longer take calls.
pub trait ToolSink: Send + Sync {
    fn send(&self, run_id: u64, call: ToolCall) -> bool;

    /// Whether the host takes each console line as it happens (`onLog`).
    fn wants_logs(&self) -> bool {
        false
    }

    /// One console line of the run, as it happens (called only when `wants_logs`). Must never
    /// block: the program's thread calls it.
    fn log(&self, _run_id: u64, _line: &str) {}
}

/// The program of one run, as the caller gave it, and how to read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramInput {
    /// The source: an expression evaluating to the entry function, or an ES module whose
    /// default export is it (what chat models wrap around it already taken off).
    pub code: String,
    /// JSON text of the value the entry function is called with (`params`); `None` calls it
    /// with no argument.
    pub params_json: Option<String>,
    /// Strip TypeScript before compiling (the executor's `typescript` option).
    pub typescript: bool,
    /// The Cloudflare form's reading of a text its normalizer could not parse: when it is
    /// neither a function expression nor a module, it is the body of an async function.
    pub statements: bool,
    /// Add a sentence of help to the message of a program that used what the sandbox lacks
    /// (`require`, JSX, Node's built-ins): the native form. The Cloudflare form keeps
    /// Cloudflare's texts.
    pub explain: bool,
}

impl ProgramInput {
    /// A JavaScript program called with no argument.
    pub fn js(code: impl Into<String>) -> ProgramInput {
        ProgramInput {
            code: code.into(),
            ..ProgramInput::default()
        }
    }
}

/// What a run executes.
pub enum RunKind {
    /// A program in a fresh isolate.
    Fresh {
        program: ProgramInput,
        /// JSON of the run's configuration for the sandbox bootstrap (namespaces, preludes,
        /// result encoding, modules); opaque to every Rust layer in between.
        config_json: String,
        /// Keep the isolate after the run (if still usable) and answer with a handle id.
        retain: bool,
    },
    /// A further program in a retained isolate (same global scope, same namespaces).
    Handle {
        handle_id: u64,
        program: ProgramInput,
    },
}

impl RunKind {
    pub fn program(&self) -> &ProgramInput {
        match self {
            RunKind::Fresh { program, .. } | RunKind::Handle { program, .. } => program,
        }
    }
}

/// The per-run bounds a caller set, by option name: the `Scope::PerRun` rows of the bounds
/// table (`limits::BOUNDS`), each value already checked against its row. Empty keeps the
/// executor's. A new per-run bound is one row of that table plus its enforcement: the napi
/// layer, the engine's wire form and `apply` all go by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    values: Vec<(&'static str, f64)>,
}

impl Overrides {
    /// Checks per-run values given by option name with the same rules as the executor's own
    /// options. The one place a per-run override is validated: the napi layer calls it for
    /// what JS passed, the engine for what arrived on the wire. A name that is not a settable
    /// per-run bound is refused, as is a value outside its row's range.
    pub fn parse<'a>(given: impl IntoIterator<Item = (&'a str, f64)>) -> Result<Overrides, Fault> {
        // Checked against the bounds' rows directly: this runs for every run, and building a
        // `Limits` (its default asks the OS for the CPU count) would cost more than the check.
        let mut values = Vec::new();
        for (name, value) in given {
            let row = bound(name)
                .filter(|row| row.scope == Scope::PerRun && row.set.is_some())
                .ok_or_else(|| Fault::invalid(format!("{name} is not a per-run bound")))?;
            row.check(value).map_err(Fault::invalid)?;
            values.retain(|(set, _)| *set != row.name);
            values.push((row.name, value));
        }
        Ok(Overrides { values })
    }

    /// The executor's limits with these overrides applied.
    pub fn apply(&self, base: &Limits) -> Limits {
        let mut limits = base.clone();
        for (name, value) in &self.values {
            limits
                .set(name, *value)
                .expect("a per-run value is checked against its row when parsed");
        }
        limits
    }

    /// The values by name, for the wire (docs/protocol.md); `parse` reads them back.
    pub fn values(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.values.iter().copied()
    }
}

/// Deliberate faults, for the supervision tests only: honoured only when the environment
/// variable `CODEMODE_EXECUTOR_FAULT_INJECTION=1` is set where the run is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestHook {
    /// The worker thread panics while holding the run.
    Panic,
    /// The engine process aborts, as V8 does on a fatal error (`'process'` only).
    Abort,
    /// The engine process stops reading its input but stays alive (`'process'` only).
    Hang,
    /// The engine process grows its memory outside V8's accounting (`'process'` only).
    Leak,
    /// From this run on, a run that waits on the engine's input for its reply does not read it,
    /// as when that run's thread gets no core: the engine's reader thread reads every frame and
    /// must wake the waiting run for its own (`'process'` only).
    IdleLeader,
}

/// The environment variable that enables [`TestHook`]s.
pub const TEST_HOOK_ENV: &str = "CODEMODE_EXECUTOR_FAULT_INJECTION";

impl TestHook {
    const ALL: [TestHook; 5] = [
        TestHook::Panic,
        TestHook::Abort,
        TestHook::Hang,
        TestHook::Leak,
        TestHook::IdleLeader,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TestHook::Panic => "panic",
            TestHook::Abort => "abort",
            TestHook::Hang => "hang",
            TestHook::Leak => "leak",
            TestHook::IdleLeader => "idle-leader",
        }
    }

    /// The hook named `name`; unknown names are no hook.
    pub fn parse(name: &str) -> Option<TestHook> {
        TestHook::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// Whether this process honours test hooks (read once per caller).
    pub fn enabled() -> bool {
        std::env::var_os(TEST_HOOK_ENV).is_some_and(|v| v == "1")
    }
}

/// One run handed to a runner: everything it needs, and where its answer goes.
pub struct RunRequest {
    pub run_id: u64,
    pub kind: RunKind,
    pub overrides: Overrides,
    pub test_hook: Option<TestHook>,
    /// Where the program's tool calls go.
    pub sink: Arc<dyn ToolSink>,
    pub completion: Completion,
    pub enqueued_at: Instant,
}

/// What ended a failed run, as data (`errorKind` in the native form's results), so a host can
/// tell a timeout from a program error without reading the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The program does not compile (or closes the expression it is compiled in).
    Syntax,
    /// The program threw or rejected (or did not evaluate to a function).
    Program,
    /// Its wall-clock `timeout` passed.
    Timeout,
    /// Its heap (or ArrayBuffer) budget, `memoryLimitMb`.
    Memory,
    /// Another bound (its name in [`RunError::bound`], `errorBound` in JS): a message size, a
    /// count, `cpuTimeMs`.
    Bound,
    /// The host cancelled it (an AbortSignal, or the host closing the run).
    Cancelled,
    /// It awaits something nothing can settle.
    Unsettleable,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Syntax,
        ErrorKind::Program,
        ErrorKind::Timeout,
        ErrorKind::Memory,
        ErrorKind::Bound,
        ErrorKind::Cancelled,
        ErrorKind::Unsettleable,
    ];

    /// The name JS sees.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::Program => "program",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Memory => "memory",
            ErrorKind::Bound => "bound",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Unsettleable => "unsettleable",
        }
    }

    /// The byte the protocol carries (its index in `ALL`).
    pub fn wire(self) -> u8 {
        ErrorKind::ALL.iter().position(|k| *k == self).unwrap_or(1) as u8
    }

    pub fn from_wire(byte: u8) -> Option<ErrorKind> {
        ErrorKind::ALL.get(byte as usize).copied()
    }
}

/// How a run failed: what kind of failure, the bound it broke (for [`ErrorKind::Bound`]), and
/// the message the program's author reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    pub kind: ErrorKind,
    pub bound: Option<String>,
    pub message: String,
    /// Where in the program as written the failure is (a syntax error, or what the program
    /// threw), while the sandbox still holds it: the sandbox writes it into `message` (with
    /// the line itself) before the error leaves the worker, so it never crosses a protocol.
    pub at: Option<SourceAt>,
}

/// A place in a program as its author wrote it: 1-based line and column (in UTF-16 units, as
/// V8 counts them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceAt {
    pub line: usize,
    pub column: usize,
}

impl RunError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> RunError {
        RunError {
            kind,
            bound: None,
            message: message.into(),
            at: None,
        }
    }

    /// Whether a bound (or the host) ended the run, rather than the program's own failure: its
    /// isolate is then not to be kept for another run, whatever state it was left in.
    pub fn ended_by_bound(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Timeout | ErrorKind::Memory | ErrorKind::Bound | ErrorKind::Cancelled
        )
    }

    /// A breach of the bound named `bound` (its option name, as `limits` writes it).
    pub fn bound(bound: &str, message: impl Into<String>) -> RunError {
        RunError {
            kind: ErrorKind::Bound,
            bound: Some(bound.to_string()),
            message: message.into(),
            at: None,
        }
    }
}

/// What one run produced.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunOutput {
    /// JSON text of the result; `None` for `undefined` (or when the run failed).
    pub result_json: Option<String>,
    pub error: Option<RunError>,
    pub logs: Vec<String>,
    pub tool_calls: u32,
    pub heap_used_bytes: u64,
    pub metrics: RunMetrics,
}

/// Where a run's time went, measured on the thread that ran it (`timing.phases` and the CPU
/// time in `stats`). The queue and the rest of the run follow from the report's times.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunMetrics {
    /// Getting the isolate: nothing when the worker's warm one served, its creation otherwise.
    pub isolate: Duration,
    /// Preparing the program: TypeScript stripped, compiled (or read from the code cache).
    pub compile: Duration,
    /// Waiting on the host's answers to tool calls (nothing else to do meanwhile).
    pub tool_wait: Duration,
    /// CPU time of the run's thread.
    pub cpu: Duration,
    /// The compiled program came from the code cache.
    pub code_cache_hit: bool,
}

impl Report {
    /// The phases of this run in order (queue, isolate, compile, run, toolWait); they add up to
    /// `total`, "run" being whatever of the run's time the others do not account for.
    pub fn phases(&self) -> [(&'static str, Duration); 5] {
        let m = &self.output.metrics;
        let queue = self
            .total
            .saturating_sub(self.run)
            .saturating_sub(m.isolate);
        let run = self
            .run
            .saturating_sub(m.compile)
            .saturating_sub(m.tool_wait);
        [
            ("queue", queue),
            ("isolate", m.isolate),
            ("compile", m.compile),
            ("run", run),
            ("toolWait", m.tool_wait),
        ]
    }
}

/// What a finished run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub output: RunOutput,
    pub queued: Duration,
    pub run: Duration,
    pub total: Duration,
    /// Non-zero when the run's isolate was retained: the id further runs and disposal take.
    pub handle_id: u64,
}

impl Report {
    /// The same report with the run's metrics set (as the wire carries them).
    pub fn with_metrics(mut self, metrics: RunMetrics) -> Report {
        self.output.metrics = metrics;
        self
    }

    /// A run that ended with `error` before it could start (cancelled while queued, or
    /// refused by a bound), having waited `waited`.
    pub fn not_started(error: RunError, waited: Duration) -> Report {
        Report {
            output: RunOutput {
                error: Some(error),
                ..RunOutput::default()
            },
            queued: waited,
            run: Duration::ZERO,
            total: waited,
            handle_id: 0,
        }
    }
}

/// How a run ended: a report (the program's own failure, if any, is in its `error`), or a fault
/// of the machinery with a stable code.
pub type Outcome = Result<Report, Fault>;

type Callback = Box<dyn FnOnce(Outcome) + Send>;

/// Delivers a run's outcome exactly once, whoever gets there first (its worker, the watchdog
/// abandoning it, a cancel, the supervisor losing its engine).
#[derive(Clone)]
pub struct Completion(Arc<Mutex<Option<Callback>>>);

impl Completion {
    pub fn new(callback: impl FnOnce(Outcome) + Send + 'static) -> Self {
        Completion(Arc::new(Mutex::new(Some(Box::new(callback)))))
    }

    /// A completion that runs `before` and then delivers to `self`.
    pub fn then_after(self, before: impl FnOnce() + Send + 'static) -> Completion {
        Completion::new(move |outcome| {
            before();
            self.finish(outcome);
        })
    }

    /// Returns false if the outcome was already delivered.
    pub fn finish(&self, outcome: Outcome) -> bool {
        let callback = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        match callback {
            Some(callback) => {
                callback(outcome);
                true
            }
            None => false,
        }
    }
}

/// The counters of a runner, read by `stats()`. A local pool fills the pool fields; the process
/// pool adds its engines' counters together and fills the process fields. The engine's
/// counters cross the executor protocol in this shape (the pool fields only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Worker threads serving runs (retained isolates' threads not counted).
    pub workers: u32,
    /// Runs a worker holds now.
    pub busy: u32,
    /// Runs waiting for a worker.
    pub queued: u32,
    /// Retained isolates alive now.
    pub retained: u32,
    pub completed: u64,
    /// Runs lost to a worker's panic (or, in `'process'`, to an engine's death).
    pub lost: u64,
    /// Runs answered by the watchdog because their thread could not be stopped.
    pub abandoned: u64,
    /// Worker threads replaced (in `'process'`, engine processes replaced too).
    pub replaced: u64,
    pub isolates_created: u64,
    /// Runs accepted and not yet answered.
    pub live_runs: u32,
    /// `'process'` isolation: engine processes ready now, started in all, lost, and retired
    /// (drained and replaced after giving up a thread).
    pub processes: u32,
    pub engines_started: u64,
    pub engines_lost: u64,
    pub engines_retired: u64,
    /// `'process'` isolation: frames the engines sent, and how many of them the host's event
    /// loop read itself (the rest went through the engines' reader threads).
    pub engine_frames: u64,
    pub engine_frames_on_loop: u64,
    /// `'process'` isolation: set while engines keep failing to start.
    pub crash_loop: Option<String>,
}

impl Stats {
    /// Adds the monotonic counters of `other` (those that survive an engine's replacement).
    pub fn add_totals(&mut self, other: &Stats) {
        self.completed += other.completed;
        self.lost += other.lost;
        self.abandoned += other.abandoned;
        self.replaced += other.replaced;
        self.isolates_created += other.isolates_created;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_checked_once_with_the_executor_rules() {
        let o = Overrides::parse([("timeout", 1500.0), ("memoryLimitMb", 64.0)]).unwrap();
        let limits = o.apply(&Limits::default());
        assert_eq!(limits.timeout, Duration::from_millis(1500));
        assert_eq!(limits.heap_bytes, 64 * crate::limits::MIB);
        let bad = Overrides::parse([("timeout", 0.0)]).unwrap_err();
        assert_eq!(bad.code, crate::error::ErrorCode::InvalidArgument);
        assert!(bad.message.contains("timeout"));
        assert!(Overrides::parse([("memoryLimitMb", 8.0)]).is_err());
        assert_eq!(Overrides::parse([]).unwrap(), Overrides::default());
        assert_eq!(
            Overrides::default().apply(&Limits::default()).timeout,
            Limits::default().timeout
        );
    }

    #[test]
    fn only_per_run_bounds_are_taken_by_name() {
        // An executor-wide bound, a derived one and an unknown name are refused by name.
        for name in ["workers", "maxArrayLikeLength", "nope"] {
            let e = Overrides::parse([(name, 1.0)]).unwrap_err();
            assert_eq!(e.code, crate::error::ErrorCode::InvalidArgument);
            assert!(e.message.contains(name), "{}", e.message);
        }
        // Every settable per-run row of the table is taken: a new row needs nothing here.
        for row in crate::limits::BOUNDS
            .iter()
            .filter(|b| b.scope == Scope::PerRun && b.set.is_some())
        {
            let o = Overrides::parse([(row.name, row.min.max(1.0))]).unwrap();
            assert_eq!((row.get)(&o.apply(&Limits::default())), row.min.max(1.0));
        }
        // The last value given for a name wins.
        let o = Overrides::parse([("timeout", 10.0), ("timeout", 20.0)]).unwrap();
        assert_eq!(o.values().collect::<Vec<_>>(), vec![("timeout", 20.0)]);
    }

    #[test]
    fn overrides_roundtrip_through_the_wire_form() {
        let o = Overrides::parse([("timeout", 250.0), ("memoryLimitMb", 32.0)]).unwrap();
        let back = Overrides::parse(o.values()).unwrap();
        assert_eq!(back, o);
    }

    #[test]
    fn test_hooks_are_named_on_the_wire() {
        for hook in TestHook::ALL {
            assert_eq!(TestHook::parse(hook.as_str()), Some(hook));
        }
        assert_eq!(TestHook::parse("nope"), None);
    }

    #[test]
    fn completion_delivers_once_after_its_prologue() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let inner = Completion::new(move |o: Outcome| s.lock().unwrap().push(o.is_ok()));
        let s = seen.clone();
        let outer = inner.then_after(move || s.lock().unwrap().push(false));
        let cancelled = RunError::new(ErrorKind::Cancelled, "x");
        assert!(outer.finish(Ok(Report::not_started(cancelled, Duration::ZERO))));
        assert!(!outer.finish(Err(Fault::disposed())));
        assert_eq!(*seen.lock().unwrap(), vec![false, true]);
    }
}
