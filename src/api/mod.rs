//! The only napi code: the native executor class, option parsing, and the conversion of
//! outcomes into JS values. Machinery faults are resolved as `{ faultCode, faultMessage }` and
//! turned into rejected promises with `code` by `lib/executor.js`; option errors are thrown with
//! an `ERR_INVALID_ARGUMENT: ` prefix that the same file turns into `code`.

use crate::bridge::{check_size, ReplyRouter, Routed, ToolCall, ToolSink};
use crate::error::Fault;
use crate::limits::{Limits, MIB};
use crate::pool::{Completion, FaultInjection, Job, Outcome, Pool, Report};
use crate::sandbox::RunOutput;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Environment variable that enables the fault-injection hook used by the supervision tests.
const FAULT_INJECTION_ENV: &str = "CODEMODE_EXECUTOR_FAULT_INJECTION";

const MIN_MEMORY_MB: u32 = 16;
const MAX_MEMORY_MB: u32 = 16 * 1024;
const MAX_WORKERS: u32 = 256;
const MAX_TIMEOUT_MS: f64 = 24.0 * 3600.0 * 1000.0;

/// Options of the native executor (the JS wrapper validates them first, with the same rules).
#[napi(object)]
pub struct NativeOptions {
    pub workers: Option<u32>,
    pub max_queue: Option<u32>,
    pub timeout: Option<f64>,
    pub memory_limit_mb: Option<u32>,
    pub max_args_bytes: Option<u32>,
    pub max_reply_bytes: Option<u32>,
    pub max_result_bytes: Option<u32>,
    pub max_log_lines: Option<u32>,
    pub max_log_bytes: Option<u32>,
    pub max_tool_calls: Option<u32>,
    pub max_code_bytes: Option<u32>,
}

/// One run, as the JS wrapper hands it over.
#[napi(object)]
pub struct NativeRequest {
    pub code: String,
    /// JSON of the run configuration (namespaces, preludes, result encoding), built and
    /// validated by the wrapper.
    pub run_config_json: String,
    pub timeout: Option<f64>,
    pub memory_limit_mb: Option<u32>,
    /// Test hook, honoured only when the fault-injection variable is set.
    pub fault_injection: Option<String>,
}

/// What a run resolves with on the native side.
#[napi(object)]
pub struct NativeReport {
    pub result_json: Option<String>,
    pub error: Option<String>,
    pub logs: Vec<String>,
    pub queued_ms: f64,
    pub run_ms: f64,
    pub total_ms: f64,
    pub tool_calls: u32,
    pub heap_used_bytes: f64,
    pub fault_code: Option<String>,
    pub fault_message: Option<String>,
}

/// The effective bounds of an executor (defaults with the options applied).
#[napi(object)]
pub struct NativeLimits {
    pub workers: u32,
    pub max_queue: u32,
    pub timeout: f64,
    pub memory_limit_mb: u32,
    pub max_args_bytes: f64,
    pub max_reply_bytes: f64,
    pub max_result_bytes: f64,
    pub max_log_lines: f64,
    pub max_log_bytes: f64,
    pub max_tool_calls: u32,
    pub max_code_bytes: f64,
    pub max_array_like_length: f64,
}

#[napi(object)]
pub struct NativeStats {
    pub workers: u32,
    pub busy: u32,
    pub queued: u32,
    pub completed: f64,
    pub lost: f64,
    pub abandoned: f64,
    pub replaced: f64,
    pub isolates_created: f64,
    pub live_runs: u32,
}

fn invalid(message: impl Into<String>) -> Error {
    let fault = Fault::invalid(message);
    Error::from_reason(format!("{}: {}", fault.code.as_str(), fault.message))
}

fn positive(name: &str, value: Option<u32>, max: u32) -> Result<Option<usize>> {
    match value {
        None => Ok(None),
        Some(v) if v >= 1 && v <= max => Ok(Some(v as usize)),
        Some(v) => Err(invalid(format!(
            "{name} must be an integer between 1 and {max} (got {v})"
        ))),
    }
}

fn memory_mb(value: Option<u32>) -> Result<Option<usize>> {
    match value {
        None => Ok(None),
        Some(v) if (MIN_MEMORY_MB..=MAX_MEMORY_MB).contains(&v) => Ok(Some(v as usize)),
        Some(v) => Err(invalid(format!(
            "memoryLimitMb must be an integer between {MIN_MEMORY_MB} and {MAX_MEMORY_MB} (got {v})"
        ))),
    }
}

fn timeout(value: Option<f64>) -> Result<Option<Duration>> {
    match value {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms > 0.0 && ms <= MAX_TIMEOUT_MS => {
            Ok(Some(Duration::from_secs_f64(ms / 1000.0)))
        }
        Some(ms) => Err(invalid(format!(
            "timeout must be a number of milliseconds between 1 and {MAX_TIMEOUT_MS} (got {ms})"
        ))),
    }
}

fn limits_from(options: &NativeOptions) -> Result<Limits> {
    let mut limits = Limits::default();
    let max = u32::MAX;
    if let Some(n) = positive("workers", options.workers, MAX_WORKERS)? {
        limits.workers = n;
    }
    if let Some(n) = positive("maxQueue", options.max_queue, 10_000_000)? {
        limits.max_queue = n;
    }
    if let Some(d) = timeout(options.timeout)? {
        limits.timeout = d;
    }
    if let Some(mb) = memory_mb(options.memory_limit_mb)? {
        limits.set_memory_mb(mb);
    }
    let fields: [(&str, Option<u32>, &mut usize); 6] = [
        (
            "maxArgsBytes",
            options.max_args_bytes,
            &mut limits.max_args_bytes,
        ),
        (
            "maxReplyBytes",
            options.max_reply_bytes,
            &mut limits.max_reply_bytes,
        ),
        (
            "maxResultBytes",
            options.max_result_bytes,
            &mut limits.max_result_bytes,
        ),
        (
            "maxLogLines",
            options.max_log_lines,
            &mut limits.max_log_lines,
        ),
        (
            "maxLogBytes",
            options.max_log_bytes,
            &mut limits.max_log_bytes,
        ),
        (
            "maxCodeBytes",
            options.max_code_bytes,
            &mut limits.max_code_bytes,
        ),
    ];
    for (name, value, slot) in fields {
        if let Some(n) = positive(name, value, max)? {
            *slot = n;
        }
    }
    if let Some(n) = positive("maxToolCalls", options.max_tool_calls, max)? {
        limits.max_tool_calls = n as u32;
    }
    Ok(limits)
}

/// The arguments of the host's tool-call callback: `(runId, callId, provider, tool, argsJson)`.
type ToolCallArgs = FnArgs<(i64, u32, String, String, String)>;

/// Tool calls go to the host's JS callback `(runId, callId, provider, tool, argsJson)`. Weak:
/// the run's pending promise is what keeps Node's event loop alive, so a thread that had to be
/// abandoned (and still holds this callback) never keeps the host process from exiting.
type ToolCallback = ThreadsafeFunction<ToolCallArgs, (), ToolCallArgs, Status, false, true>;

struct JsToolSink {
    callback: ToolCallback,
}

impl ToolSink for JsToolSink {
    fn send(&self, run_id: u64, call: ToolCall) -> bool {
        let args = FnArgs::from((
            run_id as i64,
            call.call_id,
            call.provider,
            call.tool,
            call.args_json,
        ));
        self.callback
            .call(args, ThreadsafeFunctionCallMode::NonBlocking)
            == Status::Ok
    }
}

fn report(outcome: Outcome) -> NativeReport {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    match outcome {
        Ok(r) => NativeReport {
            result_json: r.output.result_json,
            error: r.output.error,
            logs: r.output.logs,
            queued_ms: ms(r.queued),
            run_ms: ms(r.run),
            total_ms: ms(r.total),
            tool_calls: r.output.tool_calls,
            heap_used_bytes: r.output.heap_used_bytes as f64,
            fault_code: None,
            fault_message: None,
        },
        Err(fault) => NativeReport {
            result_json: None,
            error: None,
            logs: Vec::new(),
            queued_ms: 0.0,
            run_ms: 0.0,
            total_ms: 0.0,
            tool_calls: 0,
            heap_used_bytes: 0.0,
            fault_code: Some(fault.code.as_str().to_string()),
            fault_message: Some(fault.message),
        },
    }
}

type Resolver = Box<dyn FnOnce(Env) -> Result<NativeReport> + Send>;

#[napi]
pub struct NativeExecutor {
    pool: Pool,
    router: Arc<ReplyRouter>,
    next_run: AtomicU64,
    fault_injection_enabled: bool,
}

#[napi]
impl NativeExecutor {
    #[napi(constructor)]
    pub fn new(options: Option<NativeOptions>) -> Result<Self> {
        let limits = match options {
            Some(options) => limits_from(&options)?,
            None => Limits::default(),
        };
        Ok(NativeExecutor {
            pool: Pool::new(limits),
            router: Arc::new(ReplyRouter::new()),
            next_run: AtomicU64::new(1),
            fault_injection_enabled: std::env::var_os(FAULT_INJECTION_ENV)
                .is_some_and(|v| v == "1"),
        })
    }

    /// Queues one run. Resolves with a `NativeReport`; never rejects (faults are data).
    #[napi]
    pub fn execute<'env>(
        &self,
        env: &'env Env,
        request: NativeRequest,
        on_tool_call: Function<'env, ToolCallArgs, ()>,
    ) -> Result<Object<'env>> {
        let mut limits = self.pool.limits().clone();
        if let Some(d) = timeout(request.timeout)? {
            limits.timeout = d;
        }
        if let Some(mb) = memory_mb(request.memory_limit_mb)? {
            limits.set_memory_mb(mb);
        }
        let fault = match request.fault_injection.as_deref() {
            Some("panic") if self.fault_injection_enabled => Some(FaultInjection::Panic),
            _ => None,
        };
        let callback: ToolCallback = on_tool_call
            .build_threadsafe_function::<ToolCallArgs>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        let (deferred, promise) = env.create_deferred::<NativeReport, Resolver>()?;
        // Oversized code is the program's failure (a breached bound), not a fault.
        if let Err(message) = check_size(
            "The program source",
            request.code.len(),
            limits.max_code_bytes,
            "maxCodeBytes",
        ) {
            let output = RunOutput {
                error: Some(message),
                ..RunOutput::default()
            };
            let outcome = Ok(Report {
                output,
                queued: Duration::ZERO,
                run: Duration::ZERO,
                total: Duration::ZERO,
            });
            let report = report(outcome);
            deferred.resolve(Box::new(move |_env| Ok(report)));
            return Ok(promise);
        }
        let run_id = self.next_run.fetch_add(1, Ordering::Relaxed);
        let events = self.router.open(run_id, limits.max_reply_bytes);
        let router = self.router.clone();
        let completion = Completion::new(move |outcome| {
            router.close(run_id);
            let report = report(outcome);
            deferred.resolve(Box::new(move |_env| Ok(report)));
        });
        let job = Job {
            run_id,
            code: request.code,
            run_config_json: request.run_config_json,
            limits,
            sink: Arc::new(JsToolSink { callback }),
            events,
            enqueued_at: Instant::now(),
            completion,
            fault,
        };
        if let Err((fault, job)) = self.pool.submit(job) {
            job.completion.finish(Err(fault));
        }
        Ok(promise)
    }

    /// Hands a tool reply (JSON text) to the run that waits for it. Returns false when the run
    /// has already ended (a late reply) or the reply broke the size bound.
    #[napi]
    pub fn reply(&self, run_id: i64, call_id: u32, json: String) -> bool {
        if run_id < 0 {
            return false;
        }
        self.router.route(run_id as u64, call_id, json) == Routed::Delivered
    }

    #[napi(getter)]
    pub fn limits(&self) -> NativeLimits {
        let l = self.pool.limits();
        NativeLimits {
            workers: l.workers as u32,
            max_queue: l.max_queue as u32,
            timeout: l.timeout.as_secs_f64() * 1000.0,
            memory_limit_mb: (l.heap_bytes / MIB) as u32,
            max_args_bytes: l.max_args_bytes as f64,
            max_reply_bytes: l.max_reply_bytes as f64,
            max_result_bytes: l.max_result_bytes as f64,
            max_log_lines: l.max_log_lines as f64,
            max_log_bytes: l.max_log_bytes as f64,
            max_tool_calls: l.max_tool_calls,
            max_code_bytes: l.max_code_bytes as f64,
            max_array_like_length: l.max_array_like_length as f64,
        }
    }

    #[napi]
    pub fn stats(&self) -> NativeStats {
        let s = self.pool.stats();
        NativeStats {
            workers: s.workers as u32,
            busy: s.busy as u32,
            queued: s.queued as u32,
            completed: s.completed as f64,
            lost: s.lost as f64,
            abandoned: s.abandoned as f64,
            replaced: s.replaced as f64,
            isolates_created: s.isolates_created as f64,
            live_runs: self.router.live_runs() as u32,
        }
    }

    /// Stops the pool; resolves once every worker has exited.
    #[napi]
    pub fn dispose<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let (deferred, promise) =
            env.create_deferred::<(), Box<dyn FnOnce(Env) -> Result<()> + Send>>()?;
        self.pool
            .dispose(move || deferred.resolve(Box::new(|_env| Ok(()))));
        Ok(promise)
    }

    #[napi(getter)]
    pub fn disposed(&self) -> bool {
        self.pool.is_disposed()
    }
}
