//! The only code that touches V8: process-wide initialisation, one isolate per run with the
//! bootstrap installed, and the run itself (providers, program, promise pumping, results).

mod allocator;
mod code_cache;
mod compile;
pub mod cost;
mod modules;
mod natives;
mod snapshot;
mod spin;
mod termination;
mod web_natives;
mod web_rsa;

pub use code_cache::CodeCache;
pub use termination::{StopReason, Terminator, WedgeHook};

use crate::bridge::{check_size, InputPump, RunEvent};
use crate::limits::{Limits, MIB};
pub use crate::run::RunOutput;
use crate::run::ToolSink;
use crate::run::{ErrorKind, ProgramInput, RunError, RunMetrics};
use allocator::{new_allocator, ArrayBufferBudget};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use natives::{RunState, SharedRunState};
use std::cell::RefCell;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Once};
use std::time::Instant;
use termination::TerminationState;

pub const TIMED_OUT: &str = "Execution timed out";

/// The error of a run stopped by its CPU-time budget (time spent waiting is never billed).
pub fn cpu_message(budget: std::time::Duration) -> String {
    format!(
        "CPU time exceeded: the program computed for more than {} ms (cpuTimeMs)",
        budget.as_millis()
    )
}
const NEVER_SETTLES: &str =
    "The program is waiting on a promise that can never settle (no tool call is pending)";

/// Initialises V8 once per process. V8 runs only on the pool's threads; this may be called
/// from any of them.
pub fn init_v8() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // V8 seeds each isolate's random number generators (Math.random, hash seeds, address
        // randomisation) three times per isolate; without an entropy source it opens and reads
        // /dev/urandom each time. The process's one open source serves them instead.
        v8::V8::set_entropy_source(natives::fill_random);
        let platform = v8::new_default_platform(0, false).make_shared();
        v8::V8::initialize_platform(platform);
        v8::V8::initialize();
    });
}

/// What one run needs from its caller.
pub struct Program<'a> {
    pub run_id: u64,
    /// The program, its params, and how to read it.
    pub input: &'a ProgramInput,
    /// The pool's compiled programs.
    pub cache: &'a CodeCache,
    /// JSON of the run's configuration for the bootstrap's `prepareRun`: namespaces (providers
    /// with their tools and preludes, connectors) and the result encoding. Names were
    /// validated by the caller.
    pub run_config_json: &'a str,
    pub limits: &'a Limits,
    pub deadline: Instant,
    pub sink: Arc<dyn ToolSink>,
    pub events: &'a Receiver<RunEvent>,
    /// Where the run may read the host's messages itself while it polls for a reply (an engine
    /// process; `None` in 'thread' isolation, where replies come straight to `events`).
    pub pump: Option<&'a dyn InputPump>,
    /// A further run in a retained isolate: its namespaces are already installed, so the run
    /// configuration is not applied again and the program sees the globals earlier runs left.
    pub continuation: bool,
}

#[derive(Clone)]
pub(crate) struct Helpers {
    pub(crate) prepare: v8::Global<v8::Function>,
    pub(crate) encode: v8::Global<v8::Function>,
    pub(crate) describe: v8::Global<v8::Function>,
    pub(crate) fire_timer: v8::Global<v8::Function>,
    pub(crate) import: v8::Global<v8::Function>,
}

/// A fresh isolate with its context bootstrapped, ready for exactly one run.
pub struct Sandbox {
    // Field order is drop order: handles into the isolate go before the isolate itself, and the
    // termination state outlives the isolate whose heap callback points at it.
    helpers: Helpers,
    context: v8::Global<v8::Context>,
    isolate: v8::OwnedIsolate,
    termination: Arc<TerminationState>,
    limits: Limits,
}

/// V8's own heap limit sits this far above the budget (plus an eighth of the budget), so that
/// an allocation that jumps past the budget in one piece (flattening a long string, splitting
/// one into an array, one huge object) reaches V8's limit while it is being made: V8 then calls
/// `near_heap_limit` before it gives up, which ends the run. Growth in small steps is caught
/// sooner, at the budget, after each collection (`after_gc`).
const HEAP_LIMIT_MARGIN: usize = 32 * MIB;

/// V8's heap limit for a budget (the young generation is carved out of it, hence the margin).
fn v8_heap_limit(budget: usize) -> usize {
    budget + budget / 8 + HEAP_LIMIT_MARGIN
}

/// Room granted once when V8 reaches its limit, so that the allocation in progress succeeds
/// (V8 aborts the whole process when one cannot fit) and the terminated run can unwind. V8's
/// largest single objects (a two-byte string of 2^29 characters, a FixedDoubleArray of 2^27
/// elements) are about 1 GiB; this is how far one run can overshoot its budget, for the
/// moment between that allocation and the termination it triggers.
const HEAP_GRANT: usize = 1280 * MIB;

/// Bytes in V8's young large-object space. V8 always lets the first object there be allocated,
/// whatever its size and the heap limit (it is promoted or dropped at the next collection), so
/// one string flattened or array made in one piece can exceed the whole budget without ever
/// reaching V8's limit, and be garbage before any collection sees it alive. More than the
/// budget here means one object larger than the budget existed: `before_gc` and the end of the
/// run check it.
fn young_large_object_bytes(isolate: &mut v8::Isolate) -> usize {
    (0..isolate.number_of_heap_spaces())
        .filter_map(|i| isolate.get_heap_space_statistics(i))
        .find(|space| space.space_name().to_bytes() == b"new_large_object_space")
        .map_or(0, |space| space.space_used_size())
}

/// Ends the run if an object larger than its whole budget was made since the last collection
/// (see `young_large_object_bytes`). Runs before every garbage collection, while such an
/// object is still counted even if it is already garbage.
unsafe extern "C" fn before_gc(
    isolate: v8::UnsafeRawIsolatePtr,
    _: v8::GCType,
    _: v8::GCCallbackFlags,
    data: *mut c_void,
) {
    let mut isolate = isolate;
    // SAFETY: `gc_parts`' contract holds for V8's call: V8 calls GC callbacks with the collecting
    // isolate, on its own thread, and with the `data` this sandbox registered.
    let (state, isolate) = unsafe { gc_parts(&mut isolate, data) };
    if young_large_object_bytes(isolate) > state.heap_limit_bytes {
        state.terminate(StopReason::Memory);
    }
}

/// What a GC callback works with: the run's termination state and the collecting isolate.
/// Reading heap statistics through it does not allocate, which is what GC callbacks may not do.
///
/// # Safety
/// `data` must be the `TerminationState` the sandbox owning `isolate` registered (it outlives
/// the isolate: see `Sandbox`'s field order), and the call must be V8's, on the isolate's thread.
unsafe fn gc_parts(
    isolate: &mut v8::UnsafeRawIsolatePtr,
    data: *mut c_void,
) -> (&TerminationState, &mut v8::Isolate) {
    // SAFETY: guaranteed by the caller (see above).
    unsafe {
        (
            &*(data as *const TerminationState),
            v8::Isolate::ref_from_raw_isolate_ptr_mut(isolate),
        )
    }
}

/// Ends the run when the heap has outgrown its budget. Runs after every garbage collection.
unsafe extern "C" fn after_gc(
    isolate: v8::UnsafeRawIsolatePtr,
    _: v8::GCType,
    _: v8::GCCallbackFlags,
    data: *mut c_void,
) {
    let mut isolate = isolate;
    // SAFETY: as in `before_gc`: V8's call, with the `data` this sandbox registered.
    let (state, isolate) = unsafe { gc_parts(&mut isolate, data) };
    let used = isolate.get_heap_statistics().used_heap_size();
    if used <= state.heap_limit_bytes {
        return;
    }
    let at_stop =
        match state
            .heap_at_stop
            .compare_exchange(0, used, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => used,
            Err(previous) => previous,
        };
    state.terminate(StopReason::Memory);
    // A run that keeps growing by another whole budget after termination was requested is not
    // unwinding: it runs code that ignores termination. Give its thread up now (see `park`).
    if used > at_stop.saturating_add(state.heap_limit_bytes) {
        park(state);
    }
}

/// Answers the run with the memory error through the wedge hook and parks this thread for good
/// (returning would let the program go on allocating, or make V8 abort the process). Does
/// nothing when no run holds the hook.
fn park(state: &TerminationState) {
    if state.wedge(memory_error(state.heap_limit_bytes)) {
        loop {
            std::thread::park();
        }
    }
}

/// V8 reached its heap limit: the run is over its budget. Ends it, grants `HEAP_GRANT` once so
/// the allocation under way completes and the run can unwind, and parks the thread if V8 comes
/// back (the program kept allocating after termination was requested: some optimized code does
/// not check for it; returning without room would make V8 abort the whole process).
unsafe extern "C" fn near_heap_limit(data: *mut c_void, current: usize, _initial: usize) -> usize {
    // SAFETY: `data` is the `TerminationState` owned by the `Sandbox` that owns this isolate;
    // the sandbox drops the isolate before that state.
    let state = unsafe { &*(data as *const TerminationState) };
    state.terminate(StopReason::Memory);
    if state.heap_grants.fetch_add(1, Ordering::AcqRel) == 0 {
        return current + HEAP_GRANT;
    }
    park(state);
    current
}

/// The error of a run ended by its heap budget.
fn memory_error(heap_limit_bytes: usize) -> RunError {
    let message = format!(
        "Memory exhausted: the program exceeded its memory limit of {} MB (memoryLimitMb)",
        heap_limit_bytes / MIB
    );
    RunError::new(ErrorKind::Memory, message)
}

impl Sandbox {
    /// Creates the isolate and context and runs the bootstrap.
    pub fn new(limits: &Limits) -> Result<Sandbox, String> {
        init_v8();
        let termination = Arc::new(TerminationState::new(limits.heap_bytes));
        let budget = Arc::new(ArrayBufferBudget::new(
            limits.array_buffer_bytes,
            termination.clone(),
        ));
        let params = snapshot::create_params()?
            .heap_limits(0, v8_heap_limit(limits.heap_bytes))
            .array_buffer_allocator(new_allocator(budget));
        let mut isolate = v8::Isolate::new(params);
        termination.attach(isolate.thread_safe_handle());
        let state = Arc::as_ptr(&termination) as *mut c_void;
        isolate.add_near_heap_limit_callback(near_heap_limit, state);
        isolate.add_gc_prologue_callback(before_gc, state, v8::GCType::kGCTypeAll);
        isolate.add_gc_epilogue_callback(after_gc, state, v8::GCType::kGCTypeAll);
        isolate.set_microtasks_policy(v8::MicrotasksPolicy::Explicit);
        // A blocking `Atomics.wait` would park the worker with nothing to wake it (as on a
        // browser's main thread, it throws instead).
        isolate.set_allow_atomics_wait(false);
        isolate.set_host_import_module_dynamically_callback(modules::dynamic_import);
        modules::install(&mut isolate);
        let (context, helpers) = snapshot::restore(&mut isolate, limits)?;
        isolate.set_slot(modules::ImportHelper(helpers.import.clone()));
        Ok(Sandbox {
            helpers,
            context,
            isolate,
            termination,
            limits: limits.clone(),
        })
    }

    /// The limits this isolate was built for.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether this isolate may serve another run (`retainHandles`): only if nothing stopped the
    /// last one from outside (a timeout, the memory budget, a broken bound).
    pub fn reusable(&self) -> bool {
        self.termination.reason().is_none()
    }

    /// A handle that stops this sandbox's run from another thread.
    pub fn terminator(&self) -> Terminator {
        Terminator(self.termination.clone())
    }

    /// Runs one program to completion. A sandbox serves exactly one run: the caller drops it
    /// afterwards (recycle, don't repair).
    pub fn run(&mut self, program: Program<'_>) -> RunOutput {
        let state: SharedRunState = Rc::new(RefCell::new(RunState::new(
            program.run_id,
            program.limits.clone(),
            program.sink.clone(),
            self.termination.clone(),
        )));
        self.isolate.set_slot(state.clone());
        let mut metrics = RunMetrics::default();
        let mut outcome = self.execute(&program, &state, &mut metrics);
        self.termination.clear_wedge();
        let mut heap_used_bytes = self.isolate.get_heap_statistics().used_heap_size();
        if young_large_object_bytes(&mut self.isolate) > self.limits.heap_bytes {
            // One object larger than the budget was made (and perhaps dropped) since the last
            // collection.
            outcome = Err(memory_error(self.termination.heap_limit_bytes));
        } else if heap_used_bytes > self.limits.heap_bytes {
            // Over budget at the end (one large object needs no collection to exist): collect
            // fully before judging, so garbage is not counted against the program.
            self.isolate.low_memory_notification();
            heap_used_bytes = self.isolate.get_heap_statistics().used_heap_size();
            if heap_used_bytes > self.limits.heap_bytes {
                outcome = Err(memory_error(self.termination.heap_limit_bytes));
            }
        }
        let heap_used_bytes = heap_used_bytes as u64;
        let mut st = state.borrow_mut();
        // Nothing of the run survives it: pending calls and armed timers go with the isolate.
        st.pending.clear();
        st.timers.clear();
        let (result_json, error) = match outcome {
            Ok(json) => (json, None),
            Err(message) => (None, Some(message)),
        };
        RunOutput {
            result_json,
            error,
            logs: std::mem::take(&mut st.logs),
            tool_calls: st.tool_calls,
            heap_used_bytes,
            metrics,
        }
    }

    /// Why a run that was stopped from outside ended, if it was.
    fn stop_error(&self, state: &SharedRunState) -> Option<RunError> {
        Some(match self.termination.reason()? {
            StopReason::Timeout => RunError::new(ErrorKind::Timeout, TIMED_OUT),
            StopReason::Memory => memory_error(self.termination.heap_limit_bytes),
            StopReason::Breach => {
                state.borrow().breach.clone().unwrap_or_else(|| {
                    RunError::new(ErrorKind::Bound, "A sandbox bound was exceeded")
                })
            }
            StopReason::Cancelled => RunError::new(
                ErrorKind::Cancelled,
                self.termination
                    .cancel_message()
                    .unwrap_or_else(|| "Execution aborted".to_string()),
            ),
            StopReason::CpuTime => {
                RunError::bound("cpuTimeMs", cpu_message(state.borrow().limits.cpu_time))
            }
        })
    }

    fn execute(
        &mut self,
        program: &Program<'_>,
        state: &SharedRunState,
        metrics: &mut RunMetrics,
    ) -> Result<Option<String>, RunError> {
        let stopped = |sandbox: &Sandbox| sandbox.stop_error(state);
        // Take what the scopes need before they borrow the isolate.
        let context_global = self.context.clone();
        let helpers = self.helpers.clone();
        let result = {
            let isolate = &mut self.isolate;
            v8::scope!(let handle_scope, isolate);
            let context = v8::Local::new(handle_scope, &context_global);
            let scope = &mut v8::ContextScope::new(handle_scope, context);
            v8::tc_scope!(let tc, scope);
            run_program(tc, program, state, &helpers, metrics)
        };
        match result {
            Ok(json) => Ok(json),
            Err(Failure::Stopped) => Err(stopped(self).unwrap_or_else(|| {
                RunError::new(ErrorKind::Cancelled, "Execution was terminated")
            })),
            Err(Failure::Error(error)) => Err(stopped(self).unwrap_or_else(|| {
                let explain = program.input.explain;
                if explain && matches!(error.kind, ErrorKind::Syntax | ErrorKind::Program) {
                    // What the program reached for and the sandbox does not have (`require`,
                    // JSX, Node's globals) gets a sentence saying what to write instead; then
                    // where it failed, with that line of the program.
                    let syntax = error.kind == ErrorKind::Syntax;
                    let code = &program.input.code;
                    let mut at = error.at;
                    let mut message = error.message;
                    // A program that ends early: V8 stopped at the wrapper's closing token.
                    if let Some(end) = at
                        .filter(|_| syntax)
                        .and_then(|at| crate::program::past_the_end(code, at.line))
                    {
                        message = crate::program::ENDS_EARLY.to_string();
                        at = Some(crate::run::SourceAt {
                            line: end.0,
                            column: end.1,
                        });
                    }
                    let mut message = crate::program::with_hint(message, code, syntax);
                    if let Some(at) = at {
                        message = crate::program::with_place(&message, code, at.line, at.column);
                    }
                    RunError { message, ..error }
                } else {
                    error
                }
            })),
        }
    }
}

/// How a run failed inside the scopes: with an error, or stopped from outside (the error then
/// comes from the termination reason).
enum Failure {
    Stopped,
    Error(RunError),
}

impl Failure {
    fn program(message: impl Into<String>) -> Failure {
        Failure::Error(RunError::new(ErrorKind::Program, message))
    }
    fn of(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure::Error(RunError::new(kind, message))
    }
    /// The same failure, of another kind (a thrown error that is a compile error).
    fn with_kind(self, kind: ErrorKind) -> Failure {
        match self {
            Failure::Error(mut error) => {
                error.kind = kind;
                Failure::Error(error)
            }
            stopped => stopped,
        }
    }
}

/// The text of the exception caught by `tc`, or `Stopped` if execution was terminated.
fn caught(
    tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    describe: &v8::Global<v8::Function>,
) -> Failure {
    if tc.has_terminated() || tc.is_execution_terminating() {
        return Failure::Stopped;
    }
    let Some(exception) = tc.exception() else {
        return Failure::program("Unknown error");
    };
    describe_value(tc, exception, describe)
}

fn describe_value(
    tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    value: v8::Local<'_, v8::Value>,
    describe: &v8::Global<v8::Function>,
) -> Failure {
    let at = program_place(tc, value);
    let describe = v8::Local::new(tc, describe);
    let undefined = v8::undefined(tc).into();
    match describe.call(tc, undefined, &[value]) {
        Some(text) => Failure::Error(RunError {
            at,
            ..RunError::new(ErrorKind::Program, text.to_rust_string_lossy(tc))
        }),
        None => Failure::Stopped,
    }
}

/// Where in the program `value` (a thrown error) was made, when that is in the program's own
/// text (not in a module it imported, the sandbox's code or a builtin): V8 places an error at
/// the innermost frame of its stack that is script code, in the program's positions as written
/// (`compile_as` gives every form an origin that takes its wrapper off).
fn program_place(
    tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    value: v8::Local<'_, v8::Value>,
) -> Option<crate::run::SourceAt> {
    if !value.is_native_error() {
        return None;
    }
    let message = v8::Exception::create_message(tc, value);
    let name = message.get_script_resource_name(tc)?;
    if name.to_rust_string_lossy(tc) != compile::PROGRAM_NAME {
        return None;
    }
    let line = message.get_line_number(tc)?;
    // An error V8 places on the expression form's `(` (a top-level reference in a program
    // that is one bare expression) is at the program's first column, not before it.
    (line > 0).then(|| crate::run::SourceAt {
        line,
        column: (message.get_start_column() + 1).max(1),
    })
}

fn run_program(
    tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    program: &Program<'_>,
    state: &SharedRunState,
    helpers: &Helpers,
    metrics: &mut RunMetrics,
) -> Result<Option<String>, Failure> {
    let undefined: v8::Local<v8::Value> = v8::undefined(tc).into();
    let describe = &helpers.describe;

    // Namespaces, preludes and the result encoding (once per isolate).
    if !program.continuation {
        let prepare = v8::Local::new(tc, &helpers.prepare);
        let config = v8::String::new(tc, program.run_config_json)
            .ok_or_else(|| Failure::program("The run configuration is too large"))?;
        if prepare.call(tc, undefined, &[config.into()]).is_none() {
            return Err(caught(tc, describe));
        }
    }

    // The program: an expression evaluating to the entry function, or a module exporting it.
    let compile_started = Instant::now();
    let compiled = compile::compile(tc, program, helpers);
    metrics.compile = compile_started.elapsed();
    let (compiled, to_cache) = compiled?;
    metrics.code_cache_hit = to_cache.is_none();
    let params = match &program.input.params_json {
        None => None,
        Some(json) => {
            let text = v8::String::new(tc, json).ok_or_else(|| {
                Failure::Error(RunError::bound("maxArgsBytes", "The params are too large"))
            })?;
            let Some(value) = v8::json::parse(tc, text) else {
                return Err(caught(tc, describe));
            };
            Some(value)
        }
    };
    let function = match &compiled {
        compile::Compiled::Script(script) => {
            let Some(function) = script.run(tc) else {
                return Err(caught(tc, describe));
            };
            let Ok(function) = v8::Local::<v8::Function>::try_from(function) else {
                let kind = function.type_of(tc).to_rust_string_lossy(tc);
                return Err(Failure::program(format!(
                    "The program must evaluate to a function, such as `async () => {{ ... }}` (it evaluated to a {kind})"
                )));
            };
            function
        }
        compile::Compiled::Module(module) => {
            module_entry(tc, *module, program, state, helpers, metrics)?
        }
    };
    // Called with no argument when there are no params (`arguments.length` is 0).
    let returned = function.call(tc, undefined, params.as_slice());
    let Some(returned) = returned else {
        return Err(caught(tc, describe));
    };

    // Settle the returned value: pump microtasks, answer tool calls, watch the deadline.
    let value = match v8::Local::<v8::Promise>::try_from(returned) {
        Err(_) => returned,
        Ok(promise) => settle(tc, promise, program, state, helpers, metrics)?,
    };
    if let Some(to_cache) = to_cache {
        compile::store(tc, program.cache, &compiled, to_cache);
    }

    // Transfer the result as JSON text, bounded.
    let encode = v8::Local::new(tc, &helpers.encode);
    let Some(encoded) = encode.call(tc, undefined, &[value]) else {
        return match caught(tc, describe) {
            Failure::Error(e) => Err(Failure::program(format!(
                "The result could not be transferred: {}",
                e.message
            ))),
            stopped => Err(stopped),
        };
    };
    if encoded.is_undefined() {
        return Ok(None);
    }
    let encoded = encoded.to_string(tc).ok_or(Failure::Stopped)?;
    // UTF-16 length first, so an oversized result is refused before it is copied out.
    check_size(
        "The result",
        encoded.length(),
        program.limits.max_result_bytes,
        "maxResultBytes",
    )
    .map_err(|m| Failure::Error(RunError::bound("maxResultBytes", m)))?;
    let json = encoded.to_rust_string_lossy(tc);
    check_size(
        "The result",
        json.len(),
        program.limits.max_result_bytes,
        "maxResultBytes",
    )
    .map_err(|m| Failure::Error(RunError::bound("maxResultBytes", m)))?;
    Ok(Some(json))
}

/// Runs a module program's body (top-level `await` included) and returns its default export,
/// the entry function.
fn module_entry<'s>(
    tc: &mut v8::PinnedRef<'s, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    module: v8::Local<'s, v8::Module>,
    program: &Program<'_>,
    state: &SharedRunState,
    helpers: &Helpers,
    metrics: &mut RunMetrics,
) -> Result<v8::Local<'s, v8::Function>, Failure> {
    let describe = &helpers.describe;
    if module.instantiate_module(tc, modules::resolve).is_none() {
        return Err(caught(tc, describe));
    }
    let Some(evaluation) = module.evaluate(tc) else {
        return Err(caught(tc, describe));
    };
    if let Ok(promise) = v8::Local::<v8::Promise>::try_from(evaluation) {
        settle(tc, promise, program, state, helpers, metrics)?;
    }
    let namespace = module.get_module_namespace();
    let namespace = v8::Local::<v8::Object>::try_from(namespace)
        .map_err(|_| Failure::program("The module has no namespace"))?;
    let key = v8::String::new(tc, "default").ok_or(Failure::Stopped)?;
    let Some(entry) = namespace.get(tc, key.into()) else {
        return Err(caught(tc, describe));
    };
    if entry.is_undefined() {
        return Err(Failure::program(
            "The module has no default export: write `export default async function main(params) { ... }`",
        ));
    }
    v8::Local::<v8::Function>::try_from(entry).map_err(|_| {
        let kind = entry.type_of(tc).to_rust_string_lossy(tc);
        Failure::program(format!(
            "The module's default export must be a function, such as `export default async function main(params) {{ ... }}` (it is a {kind})"
        ))
    })
}

/// Settles `promise`: pumps microtasks, answers tool calls and fires timers until it is
/// fulfilled (its value) or rejected (the program's error), the deadline passes, or nothing
/// is left that could settle it. Time blocked on the host's replies counts as tool wait.
fn settle<'s>(
    tc: &mut v8::PinnedRef<'s, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    promise: v8::Local<'s, v8::Promise>,
    program: &Program<'_>,
    state: &SharedRunState,
    helpers: &Helpers,
    metrics: &mut RunMetrics,
) -> Result<v8::Local<'s, v8::Value>, Failure> {
    loop {
        tc.perform_microtask_checkpoint();
        if tc.is_execution_terminating() || tc.has_terminated() {
            return Err(Failure::Stopped);
        }
        match promise.state() {
            v8::PromiseState::Fulfilled => return Ok(promise.result(tc)),
            v8::PromiseState::Rejected => {
                let reason = promise.result(tc);
                return Err(describe_value(tc, reason, &helpers.describe));
            }
            v8::PromiseState::Pending => {}
        }
        let now = Instant::now();
        if now >= program.deadline {
            return Err(Failure::of(ErrorKind::Timeout, TIMED_OUT));
        }
        let (no_calls, next_timer) = {
            let st = state.borrow();
            (st.pending.is_empty(), st.next_timer())
        };
        if no_calls && next_timer.is_none() {
            return Err(Failure::of(ErrorKind::Unsettleable, NEVER_SETTLES));
        }
        if next_timer.is_some_and(|due| due <= now) {
            fire_due_timers(tc, state, &helpers.fire_timer, now)?;
            continue;
        }
        let wake_at = next_timer.map_or(program.deadline, |due| due.min(program.deadline));
        let event = if no_calls {
            program.events.recv_deadline(wake_at)
        } else {
            let budget = state.borrow_mut().spin.budget();
            let (event, caught) = spin::await_reply(program.events, program.pump, wake_at, budget);
            state.borrow_mut().spin.record(budget, caught);
            metrics.tool_wait += now.elapsed();
            event
        };
        match event {
            Ok(RunEvent::Reply { call_id, json }) => {
                let resolver = state.borrow_mut().pending.remove(&call_id);
                if let Some(resolver) = resolver {
                    resolve_reply(tc, &resolver, &json)?;
                }
            }
            Ok(RunEvent::End(error)) => return Err(Failure::Error(error)),
            // A timer came due, or the deadline passed: both are handled at the loop's top.
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Failure::of(
                    ErrorKind::Cancelled,
                    "The host closed this run's channel",
                ))
            }
        }
    }
}

/// Runs the callbacks of the timers due at `now`, each followed by its microtasks.
fn fire_due_timers(
    tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    state: &SharedRunState,
    fire_timer: &v8::Global<v8::Function>,
    now: Instant,
) -> Result<(), Failure> {
    let due = state.borrow_mut().take_due_timers(now);
    for id in due {
        // Each timer's handles live in their own scope: a run may fire millions of timers.
        let outer: &mut v8::PinScope = tc;
        v8::scope!(let scope, outer);
        let fire_timer = v8::Local::new(scope, fire_timer);
        let undefined: v8::Local<v8::Value> = v8::undefined(scope).into();
        let id = v8::Integer::new_from_unsigned(scope, id);
        if fire_timer.call(scope, undefined, &[id.into()]).is_none() {
            return Err(Failure::Stopped);
        }
        scope.perform_microtask_checkpoint();
        if scope.is_execution_terminating() {
            return Err(Failure::Stopped);
        }
    }
    Ok(())
}

/// Resolves a tool call's promise with its reply, in a handle scope of its own (a run may
/// receive many replies, and the run's outer scope lives as long as the run).
fn resolve_reply(
    tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>,
    resolver: &v8::Global<v8::PromiseResolver>,
    json: &str,
) -> Result<(), Failure> {
    let outer: &mut v8::PinScope = tc;
    v8::scope!(let scope, outer);
    let resolver = v8::Local::new(scope, resolver);
    let Some(reply) = v8::String::new(scope, json) else {
        return Err(Failure::Error(RunError::bound(
            "maxReplyBytes",
            "A tool reply is too large for the sandbox",
        )));
    };
    resolver.resolve(scope, reply.into());
    Ok(())
}
