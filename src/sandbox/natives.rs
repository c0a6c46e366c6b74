//! The native functions handed to the bootstrap, and the per-run state they work on. They are
//! never installed on the global object: only the bootstrap's closures can reach them.

use super::termination::{StopReason, TerminationState};
use crate::bridge::size_breach;
use crate::limits::Limits;
use crate::run::RunError;
use crate::run::{ToolCall, ToolSink};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Console levels as the bootstrap numbers them.
const LEVEL_WARN: i32 = 1;
const LEVEL_ERROR: i32 = 2;

/// The state of the run in progress, kept in an isolate slot so callbacks can reach it.
pub(crate) struct RunState {
    pub run_id: u64,
    pub limits: Limits,
    pub sink: Arc<dyn ToolSink>,
    pub termination: Arc<TerminationState>,
    pub next_call_id: u32,
    pub tool_calls: u32,
    pub pending: HashMap<u32, v8::Global<v8::PromiseResolver>>,
    pub logs: Vec<String>,
    pub log_bytes: usize,
    /// The bound that broke, and its message; set together with `StopReason::Breach`.
    pub breach: Option<RunError>,
    /// Armed timers by due time (the sequence number keeps equal due times in arming order).
    pub timers: BTreeMap<(Instant, u64), u32>,
    /// Where each armed timer sits in `timers`, for cancelling.
    pub timer_slots: HashMap<u32, (Instant, u64)>,
    pub timer_seq: u64,
    /// The run's start, the origin of `performance.now()`.
    pub started: Instant,
    /// Whether awaiting the next tool reply polls first (`spin.rs`).
    pub spin: super::spin::ReplySpin,
}

pub(crate) type SharedRunState = Rc<RefCell<RunState>>;

impl RunState {
    pub(crate) fn new(
        run_id: u64,
        limits: Limits,
        sink: Arc<dyn ToolSink>,
        termination: Arc<TerminationState>,
    ) -> Self {
        RunState {
            run_id,
            limits,
            sink,
            termination,
            next_call_id: 0,
            tool_calls: 0,
            pending: HashMap::new(),
            logs: Vec::new(),
            log_bytes: 0,
            breach: None,
            timers: BTreeMap::new(),
            timer_slots: HashMap::new(),
            timer_seq: 0,
            started: Instant::now(),
            spin: super::spin::ReplySpin::default(),
        }
    }

    /// The earliest armed timer's due time.
    pub(crate) fn next_timer(&self) -> Option<Instant> {
        self.timers.keys().next().map(|(due, _)| *due)
    }

    /// Removes and returns the timers due at `now`, in due order.
    pub(crate) fn take_due_timers(&mut self, now: Instant) -> Vec<u32> {
        let mut due = Vec::new();
        while let Some((&(at, seq), &id)) = self.timers.iter().next() {
            if at > now {
                break;
            }
            self.timers.remove(&(at, seq));
            self.timer_slots.remove(&id);
            due.push(id);
        }
        due
    }

    fn cancel_timer(&mut self, id: u32) {
        if let Some(key) = self.timer_slots.remove(&id) {
            self.timers.remove(&key);
        }
    }

    /// Ends the run for breaking `bound` (its option name).
    fn stop_with(&mut self, bound: &str, message: String) {
        if self.breach.is_none() {
            self.breach = Some(RunError::bound(bound, message));
        }
        self.termination.terminate(StopReason::Breach);
    }
}

fn run_state(scope: &mut v8::PinScope) -> Option<SharedRunState> {
    scope.get_slot::<SharedRunState>().cloned()
}

/// Whether the run in progress may go on (nothing has told it to stop: timeout, CPU budget,
/// cancel, a breached bound), for native work that runs long and can give up part way; V8's
/// termination only takes effect once the native call returns.
pub(crate) fn run_may_go_on(scope: &mut v8::PinScope) -> impl Fn() -> bool + use<> {
    let termination = run_state(scope).map(|state| state.borrow().termination.clone());
    move || termination.as_ref().is_none_or(|t| t.reason().is_none())
}

fn throw_error(scope: &mut v8::PinScope, message: &str) {
    if let Some(text) = v8::String::new(scope, message) {
        let error = v8::Exception::error(scope, text);
        scope.throw_exception(error);
    }
}

/// Runs a callback body, turning a Rust panic into a thrown JS error: a panic must never
/// unwind through V8's frames.
fn shielded(scope: &mut v8::PinScope, body: impl FnOnce(&mut v8::PinScope)) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(scope)));
    if outcome.is_err() {
        throw_error(scope, "Internal error in the sandbox bridge");
    }
}

/// `nativeCall(provider, tool, argsJson)` → a promise of the reply's JSON text.
pub(crate) fn call_tool(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    shielded(scope, |scope| {
        let Some(state) = run_state(scope) else {
            return throw_error(scope, "Tool calls are only possible while a program runs");
        };
        let (provider, tool, args_json) = (args.get(0), args.get(1), args.get(2));
        if !provider.is_string() || !tool.is_string() || !args_json.is_string() {
            return throw_error(scope, "Invalid tool call");
        }
        let mut st = state.borrow_mut();
        st.tool_calls += 1;
        if st.tool_calls > st.limits.max_tool_calls {
            let max = st.limits.max_tool_calls;
            return st.stop_with(
                "maxToolCalls",
                format!("Too many tool calls: the run made more than {max} (maxToolCalls)"),
            );
        }
        if st.pending.len() >= st.limits.max_tool_calls_in_flight {
            let max = st.limits.max_tool_calls_in_flight;
            return st.stop_with("maxToolCallsInFlight", format!(
                "Too many tool calls in flight: the run had {max} calls awaiting replies at once (maxToolCallsInFlight)"
            ));
        }
        let args_string = args_json.to_rust_string_lossy(scope);
        if args_string.len() > st.limits.max_args_bytes {
            let msg = size_breach(
                "The arguments of a tool call",
                args_string.len(),
                st.limits.max_args_bytes,
                "maxArgsBytes",
            );
            return st.stop_with("maxArgsBytes", msg);
        }
        let Some(resolver) = v8::PromiseResolver::new(scope) else {
            return;
        };
        let promise = resolver.get_promise(scope);
        let call_id = st.next_call_id;
        st.next_call_id += 1;
        let call = ToolCall {
            call_id,
            provider: provider.to_rust_string_lossy(scope),
            tool: tool.to_rust_string_lossy(scope),
            args_json: args_string,
        };
        if st.sink.send(st.run_id, call) {
            let global = v8::Global::new(scope, resolver);
            st.pending.insert(call_id, global);
        } else if let Some(text) =
            v8::String::new(scope, "The host is no longer accepting tool calls")
        {
            let error = v8::Exception::error(scope, text);
            resolver.reject(scope, error);
        }
        rv.set(promise.into());
    });
}

/// `nativeLog(level, text)`: appends one captured console line.
pub(crate) fn log_line(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    _rv: v8::ReturnValue<v8::Value>,
) {
    shielded(scope, |scope| {
        let Some(state) = run_state(scope) else {
            return;
        };
        let level = args.get(0).int32_value(scope).unwrap_or(0);
        let text = args.get(1);
        let mut st = state.borrow_mut();
        if st.logs.len() >= st.limits.max_log_lines {
            let max = st.limits.max_log_lines;
            return st.stop_with(
                "maxLogLines",
                format!("Too many log lines: the run logged more than {max} (maxLogLines)"),
            );
        }
        let max = st.limits.max_log_bytes;
        let over = |total: usize| size_breach("The console output", total, max, "maxLogBytes");
        // Check the UTF-16 length first so a huge string is refused before it is copied.
        let units = text.to_string(scope).map(|s| s.length()).unwrap_or(0);
        if units > max.saturating_sub(st.log_bytes) {
            let msg = over(st.log_bytes + units);
            return st.stop_with("maxLogBytes", msg);
        }
        let body = text.to_rust_string_lossy(scope);
        let line = match level {
            LEVEL_WARN => format!("[warn] {body}"),
            LEVEL_ERROR => format!("[error] {body}"),
            _ => body,
        };
        if st.log_bytes + line.len() > max {
            let msg = over(st.log_bytes + line.len());
            return st.stop_with("maxLogBytes", msg);
        }
        st.log_bytes += line.len();
        if st.sink.wants_logs() {
            st.sink.log(st.run_id, &line);
        }
        st.logs.push(line);
    });
}

/// `nativeArrayLength(value)`: the length of a genuine Array (never a proxy), or -1.
pub(crate) fn array_length(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let value = args.get(0);
    let length = match v8::Local::<v8::Array>::try_from(value) {
        Ok(array) => array.length() as f64,
        Err(_) => -1.0,
    };
    rv.set(v8::Number::new(scope, length).into());
}

/// `nativeTimerArm(id, delayMs)`: (re)arms timer `id` to fire after `delayMs`.
pub(crate) fn timer_arm(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    _rv: v8::ReturnValue<v8::Value>,
) {
    shielded(scope, |scope| {
        let Some(state) = run_state(scope) else {
            return;
        };
        let id = args.get(0).uint32_value(scope).unwrap_or(0);
        let delay = args.get(1).number_value(scope).unwrap_or(0.0);
        let delay = if delay.is_finite() && delay > 0.0 {
            delay.min(2_147_483_647.0)
        } else {
            0.0
        };
        let mut st = state.borrow_mut();
        st.cancel_timer(id);
        if st.timers.len() >= st.limits.max_timers {
            let max = st.limits.max_timers;
            return st.stop_with(
                "maxTimers",
                format!("Too many timers: the run armed more than {max} at once (maxTimers)"),
            );
        }
        let due = Instant::now() + Duration::from_secs_f64(delay / 1000.0);
        let seq = st.timer_seq;
        st.timer_seq += 1;
        st.timers.insert((due, seq), id);
        st.timer_slots.insert(id, (due, seq));
    });
}

/// `nativeTimerCancel(id)`.
pub(crate) fn timer_cancel(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    _rv: v8::ReturnValue<v8::Value>,
) {
    shielded(scope, |scope| {
        let Some(state) = run_state(scope) else {
            return;
        };
        let id = args.get(0).uint32_value(scope).unwrap_or(0);
        state.borrow_mut().cancel_timer(id);
    });
}

/// `nativeNow()`: milliseconds since the run started, with sub-millisecond precision.
pub(crate) fn now_ms(
    scope: &mut v8::PinScope,
    _args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let elapsed = run_state(scope)
        .map(|s| s.borrow().started.elapsed().as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    rv.set(v8::Number::new(scope, elapsed).into());
}

/// A fresh ArrayBuffer that owns `bytes` (small, native-made data: random bytes, digests).
pub(crate) fn array_buffer_from<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    bytes: Vec<u8>,
) -> v8::Local<'s, v8::ArrayBuffer> {
    let store = v8::ArrayBuffer::new_backing_store_from_vec(bytes).make_shared();
    v8::ArrayBuffer::with_backing_store(scope, &store)
}

/// Largest request of `crypto.getRandomValues`, as in the Web Crypto API.
const MAX_RANDOM_BYTES: u32 = 65_536;

/// V8's entropy source: fills `buf` from the operating system's random source.
pub(crate) fn fill_random(buf: &mut [u8]) -> bool {
    crate::os::random_bytes(buf).is_ok()
}

/// `nativeRandomBytes(n)`: a fresh ArrayBuffer of `n` (at most 65 536) random bytes.
pub(crate) fn random_bytes(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    shielded(scope, |scope| {
        let n = args
            .get(0)
            .uint32_value(scope)
            .unwrap_or(0)
            .min(MAX_RANDOM_BYTES) as usize;
        let mut bytes = vec![0u8; n];
        if crate::os::random_bytes(&mut bytes).is_err() {
            return throw_error(scope, "No source of randomness is available");
        }
        rv.set(array_buffer_from(scope, bytes).into());
    });
}
