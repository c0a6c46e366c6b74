//! The only napi code: the native executor class, option parsing, and the conversion of
//! outcomes into JS values. Machinery faults are resolved as `{ faultCode, faultMessage }` and
//! turned into rejected promises with `code` by `lib/executor.js`; option errors are thrown with
//! an `ERR_INVALID_ARGUMENT: ` prefix that the same file turns into `code`.

mod store;

use crate::bridge::{check_size, ReplyRouter, Routed, ToolCall, ToolSink};
use crate::error::Fault;
use crate::limits::{Limits, MIB};
use crate::pool::{Completion, FaultInjection, HandleJob, Job, Outcome, Pool, Report};
use crate::process::host::{EngineCommand, ProcessPool, RunKind, Submission};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Environment variable that enables the fault-injection hook used by the supervision tests.
const FAULT_INJECTION_ENV: &str = "CODEMODE_EXECUTOR_FAULT_INJECTION";

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
    pub max_retained: Option<u32>,
    pub retained_idle_ms: Option<f64>,
    /// `"process"` (an engine process supervised by this one) or `"thread"` (in this process).
    pub isolation: Option<String>,
    /// `'process'` isolation: the engine's command line (program and arguments).
    pub engine_command: Option<Vec<String>>,
    pub processes: Option<u32>,
    pub process_memory_limit_mb: Option<u32>,
    pub heartbeat_interval_ms: Option<f64>,
    pub heartbeat_timeout_ms: Option<f64>,
    pub worker_nice: Option<u32>,
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
    /// Keep the isolate after the run and answer with a handle id.
    pub retain: Option<bool>,
}

/// A further run in a retained isolate.
#[napi(object)]
pub struct NativeHandleRequest {
    pub handle_id: f64,
    pub code: String,
    pub timeout: Option<f64>,
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
    /// Set when the isolate was retained.
    pub handle_id: Option<f64>,
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
    pub max_retained: u32,
    pub retained_idle_ms: f64,
    pub isolation: String,
    pub processes: u32,
    pub process_memory_limit_mb: f64,
    pub heartbeat_interval_ms: f64,
    pub heartbeat_timeout_ms: f64,
    pub worker_nice: u32,
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
    pub retained: u32,
    pub isolation: String,
    /// `'process'` isolation: engine processes ready now, started in all, and lost.
    pub processes: u32,
    pub engines_started: f64,
    pub engines_lost: f64,
    /// `'process'` isolation: engines retired (drained and replaced) after giving up a thread.
    pub engines_retired: f64,
    /// `'process'` isolation: set while engines keep failing to start.
    pub crash_loop: Option<String>,
}

fn invalid(message: impl Into<String>) -> Error {
    let fault = Fault::invalid(message);
    Error::from_reason(format!("{}: {}", fault.code.as_str(), fault.message))
}

fn limits_from(options: &NativeOptions) -> Result<Limits> {
    let mut limits = Limits::default();
    let int = |v: Option<u32>| v.map(f64::from);
    let fields: [(&str, Option<f64>); 18] = [
        ("workers", int(options.workers)),
        ("maxQueue", int(options.max_queue)),
        ("timeout", options.timeout),
        ("memoryLimitMb", int(options.memory_limit_mb)),
        ("maxArgsBytes", int(options.max_args_bytes)),
        ("maxReplyBytes", int(options.max_reply_bytes)),
        ("maxResultBytes", int(options.max_result_bytes)),
        ("maxLogLines", int(options.max_log_lines)),
        ("maxLogBytes", int(options.max_log_bytes)),
        ("maxToolCalls", int(options.max_tool_calls)),
        ("maxCodeBytes", int(options.max_code_bytes)),
        ("maxRetained", int(options.max_retained)),
        ("retainedIdleMs", options.retained_idle_ms),
        ("processes", int(options.processes)),
        ("processMemoryLimitMb", int(options.process_memory_limit_mb)),
        ("heartbeatIntervalMs", options.heartbeat_interval_ms),
        ("heartbeatTimeoutMs", options.heartbeat_timeout_ms),
        ("workerNice", int(options.worker_nice)),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            limits.set(name, value).map_err(invalid)?;
        }
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
            handle_id: (r.handle_id != 0).then_some(r.handle_id as f64),
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
            handle_id: None,
        },
    }
}

type Resolver = Box<dyn FnOnce(Env) -> Result<NativeReport> + Send>;

/// Where runs go: the pool in this process, or engine processes under supervision.
enum Backend {
    Thread {
        pool: Pool,
        router: Arc<ReplyRouter>,
    },
    Process(ProcessPool),
}

/// What `execute` and `execute_in_handle` hand to the backend.
enum Work {
    Fresh {
        code: String,
        run_config_json: String,
        timeout: Option<f64>,
        memory_mb: Option<u32>,
        fault: Option<FaultInjection>,
        fault_name: Option<String>,
        retain: bool,
    },
    Handle {
        handle_id: u64,
        code: String,
        timeout: Option<f64>,
    },
}

#[napi]
pub struct NativeExecutor {
    backend: Backend,
    next_run: AtomicU64,
    fault_injection_enabled: bool,
}

fn handle_id_of(value: f64) -> Result<u64> {
    if value.is_finite() && value >= 1.0 && value.fract() == 0.0 && value <= 2f64.powi(53) {
        Ok(value as u64)
    } else {
        Err(invalid(format!(
            "handleId must be a positive integer (got {value})"
        )))
    }
}

#[napi]
impl NativeExecutor {
    #[napi(constructor)]
    pub fn new(options: Option<NativeOptions>) -> Result<Self> {
        let (limits, isolation, command) = match &options {
            Some(options) => (
                limits_from(options)?,
                options.isolation.clone(),
                options.engine_command.clone(),
            ),
            None => (Limits::default(), None, None),
        };
        let backend = match isolation.as_deref() {
            None | Some("thread") => Backend::Thread {
                pool: Pool::new(limits),
                router: Arc::new(ReplyRouter::new()),
            },
            Some("process") => {
                let mut command = command.unwrap_or_default().into_iter();
                let Some(program) = command.next() else {
                    return Err(invalid(
                        "isolation 'process' needs engineCommand: [program, ...args]",
                    ));
                };
                Backend::Process(ProcessPool::new(
                    limits,
                    EngineCommand {
                        program,
                        args: command.collect(),
                    },
                ))
            }
            Some(other) => {
                return Err(invalid(format!(
                    "isolation must be 'process' or 'thread' (got {other:?})"
                )))
            }
        };
        Ok(NativeExecutor {
            backend,
            next_run: AtomicU64::new(1),
            fault_injection_enabled: std::env::var_os(FAULT_INJECTION_ENV)
                .is_some_and(|v| v == "1"),
        })
    }

    fn base_limits(&self) -> &Limits {
        match &self.backend {
            Backend::Thread { pool, .. } => pool.limits(),
            Backend::Process(pool) => pool.limits(),
        }
    }

    /// Queues one run. Resolves with a `NativeReport`; never rejects (faults are data).
    #[napi]
    pub fn execute<'env>(
        &self,
        env: &'env Env,
        request: NativeRequest,
        on_tool_call: Function<'env, ToolCallArgs, ()>,
    ) -> Result<Object<'env>> {
        let fault = match request.fault_injection.as_deref() {
            Some("panic") if self.fault_injection_enabled => Some(FaultInjection::Panic),
            _ => None,
        };
        let fault_name = request
            .fault_injection
            .filter(|_| self.fault_injection_enabled);
        let work = Work::Fresh {
            code: request.code,
            run_config_json: request.run_config_json,
            timeout: request.timeout,
            memory_mb: request.memory_limit_mb,
            fault,
            fault_name,
            retain: request.retain.unwrap_or(false),
        };
        self.submit(env, work, on_tool_call)
    }

    /// Runs more code in a retained isolate (same global scope, same namespaces).
    #[napi]
    pub fn execute_in_handle<'env>(
        &self,
        env: &'env Env,
        request: NativeHandleRequest,
        on_tool_call: Function<'env, ToolCallArgs, ()>,
    ) -> Result<Object<'env>> {
        let work = Work::Handle {
            handle_id: handle_id_of(request.handle_id)?,
            code: request.code,
            timeout: request.timeout,
        };
        self.submit(env, work, on_tool_call)
    }

    fn submit<'env>(
        &self,
        env: &'env Env,
        work: Work,
        on_tool_call: Function<'env, ToolCallArgs, ()>,
    ) -> Result<Object<'env>> {
        let mut limits = self.base_limits().clone();
        let (code_len, run_timeout, run_memory) = match &work {
            Work::Fresh {
                code,
                timeout,
                memory_mb,
                ..
            } => (code.len(), *timeout, *memory_mb),
            Work::Handle { code, timeout, .. } => (code.len(), *timeout, None),
        };
        // Checked before anything starts: a bad value is an argument error, not a fault.
        if let Some(ms) = run_timeout {
            limits.set("timeout", ms).map_err(invalid)?;
        }
        if let Some(mb) = run_memory {
            limits
                .set("memoryLimitMb", f64::from(mb))
                .map_err(invalid)?;
        }
        let callback: ToolCallback = on_tool_call
            .build_threadsafe_function::<ToolCallArgs>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        let (deferred, mut promise) = env.create_deferred::<NativeReport, Resolver>()?;
        // Oversized code is the program's failure (a breached bound), not a fault.
        if let Err(message) = check_size(
            "The program source",
            code_len,
            limits.max_code_bytes,
            "maxCodeBytes",
        ) {
            let report = report(Ok(Report::not_started(message, Duration::ZERO)));
            deferred.resolve(Box::new(move |_env| Ok(report)));
            return Ok(promise);
        }
        let run_id = self.next_run.fetch_add(1, Ordering::Relaxed);
        let sink: Arc<dyn ToolSink> = Arc::new(JsToolSink { callback });
        let resolve = move |outcome: Outcome| {
            let report = report(outcome);
            deferred.resolve(Box::new(move |_env| Ok(report)));
        };
        match &self.backend {
            Backend::Thread { pool, router } => {
                let events = router.open(run_id, limits.max_reply_bytes);
                let router = router.clone();
                let completion = Completion::new(move |outcome| {
                    router.close(run_id);
                    resolve(outcome);
                });
                match work {
                    Work::Fresh {
                        code,
                        run_config_json,
                        fault,
                        retain,
                        ..
                    } => {
                        let job = Job {
                            run_id,
                            code,
                            run_config_json,
                            limits,
                            sink,
                            events,
                            enqueued_at: Instant::now(),
                            completion,
                            fault,
                            retain,
                        };
                        if let Err((fault, job)) = pool.submit(job) {
                            job.completion.finish(Err(fault));
                        }
                    }
                    Work::Handle {
                        handle_id, code, ..
                    } => pool.execute_retained(
                        handle_id,
                        HandleJob {
                            run_id,
                            code,
                            timeout: run_timeout.map(|_| limits.timeout),
                            sink,
                            events,
                            enqueued_at: Instant::now(),
                            completion,
                        },
                    ),
                }
            }
            Backend::Process(pool) => {
                let kind = match work {
                    Work::Fresh {
                        code,
                        run_config_json,
                        timeout,
                        memory_mb,
                        fault_name,
                        retain,
                        ..
                    } => RunKind::Fresh {
                        code,
                        run_config_json,
                        timeout_ms: timeout.unwrap_or(0.0),
                        memory_mb: memory_mb.unwrap_or(0),
                        retain,
                        fault_injection: fault_name,
                    },
                    Work::Handle {
                        handle_id,
                        code,
                        timeout,
                    } => RunKind::Handle {
                        handle_id,
                        code,
                        timeout_ms: timeout.unwrap_or(0.0),
                    },
                };
                let submission = Submission {
                    run_id,
                    kind,
                    timeout: limits.timeout,
                    max_reply_bytes: limits.max_reply_bytes,
                    sink,
                    completion: Completion::new(resolve),
                    enqueued_at: Instant::now(),
                };
                if let Err((fault, submission)) = pool.submit(submission) {
                    submission.completion.finish(Err(fault));
                }
            }
        }
        // The caller's handle for `cancel(runId, message)`.
        promise.set_named_property("runId", run_id as f64)?;
        Ok(promise)
    }

    /// Hands a tool reply (JSON text) to the run that waits for it. Returns false when the run
    /// has already ended (a late reply) or the reply broke the size bound.
    #[napi]
    pub fn reply(&self, run_id: i64, call_id: u32, json: String) -> bool {
        if run_id < 0 {
            return false;
        }
        match &self.backend {
            Backend::Thread { router, .. } => {
                router.route(run_id as u64, call_id, json) == Routed::Delivered
            }
            Backend::Process(pool) => pool.reply(run_id as u64, call_id, json),
        }
    }

    /// Cancels a queued or running run: it ends at once with `message` as its error. False when
    /// the run is unknown or already over.
    #[napi]
    pub fn cancel(&self, run_id: i64, message: String) -> bool {
        if run_id < 0 {
            return false;
        }
        let run_id = run_id as u64;
        match &self.backend {
            Backend::Thread { pool, router } => {
                // The route exists from submission until the run is answered: only then is
                // the run queued or running.
                if !router.end(run_id, message.clone()) {
                    return false;
                }
                pool.cancel(run_id, message);
                true
            }
            Backend::Process(pool) => pool.cancel(run_id, message),
        }
    }

    /// Disposes of a retained isolate. False when the handle was already closed.
    #[napi]
    pub fn dispose_handle(&self, handle_id: f64) -> Result<bool> {
        let handle_id = handle_id_of(handle_id)?;
        Ok(match &self.backend {
            Backend::Thread { pool, .. } => pool.dispose_retained(handle_id),
            Backend::Process(pool) => pool.dispose_handle(handle_id),
        })
    }

    #[napi(getter)]
    pub fn limits(&self) -> NativeLimits {
        let l = self.base_limits();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        NativeLimits {
            workers: l.workers as u32,
            max_queue: l.max_queue as u32,
            timeout: ms(l.timeout),
            memory_limit_mb: (l.heap_bytes / MIB) as u32,
            max_args_bytes: l.max_args_bytes as f64,
            max_reply_bytes: l.max_reply_bytes as f64,
            max_result_bytes: l.max_result_bytes as f64,
            max_log_lines: l.max_log_lines as f64,
            max_log_bytes: l.max_log_bytes as f64,
            max_tool_calls: l.max_tool_calls,
            max_code_bytes: l.max_code_bytes as f64,
            max_array_like_length: l.max_array_like_length as f64,
            max_retained: l.max_retained as u32,
            retained_idle_ms: ms(l.retained_idle),
            isolation: self.isolation().to_string(),
            processes: l.processes as u32,
            process_memory_limit_mb: (l.process_memory_cap() / MIB) as f64,
            heartbeat_interval_ms: ms(l.heartbeat_interval),
            heartbeat_timeout_ms: ms(l.heartbeat_timeout),
            worker_nice: l.worker_nice as u32,
        }
    }

    fn isolation(&self) -> &'static str {
        match &self.backend {
            Backend::Thread { .. } => "thread",
            Backend::Process(_) => "process",
        }
    }

    #[napi]
    pub fn stats(&self) -> NativeStats {
        match &self.backend {
            Backend::Thread { pool, router } => {
                let s = pool.stats();
                NativeStats {
                    workers: s.workers as u32,
                    busy: s.busy as u32,
                    queued: s.queued as u32,
                    completed: s.completed as f64,
                    lost: s.lost as f64,
                    abandoned: s.abandoned as f64,
                    replaced: s.replaced as f64,
                    isolates_created: s.isolates_created as f64,
                    live_runs: router.live_runs() as u32,
                    retained: pool.retained() as u32,
                    isolation: "thread".into(),
                    processes: 0,
                    engines_started: 0.0,
                    engines_lost: 0.0,
                    engines_retired: 0.0,
                    crash_loop: None,
                }
            }
            Backend::Process(pool) => {
                let s = pool.stats();
                NativeStats {
                    workers: s.engine.workers,
                    busy: s.in_flight as u32,
                    queued: s.queued as u32 + s.engine.queued,
                    completed: s.completed as f64,
                    lost: (s.lost + s.engine.lost) as f64,
                    abandoned: s.engine.abandoned as f64,
                    replaced: (s.engine.replaced + s.engines_lost) as f64,
                    isolates_created: s.engine.isolates_created as f64,
                    live_runs: s.in_flight as u32,
                    retained: s.retained as u32,
                    isolation: "process".into(),
                    processes: s.processes as u32,
                    engines_started: s.engines_started as f64,
                    engines_lost: s.engines_lost as f64,
                    engines_retired: s.engines_retired as f64,
                    crash_loop: s.crash_loop,
                }
            }
        }
    }

    /// `'process'` isolation: the pids of the engine processes (empty in `'thread'`).
    #[napi]
    pub fn engine_pids(&self) -> Vec<u32> {
        match &self.backend {
            Backend::Thread { .. } => Vec::new(),
            Backend::Process(pool) => pool.pids(),
        }
    }

    /// Stops the pool; resolves once every worker (and engine process) has exited.
    #[napi]
    pub fn dispose<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let (deferred, promise) =
            env.create_deferred::<(), Box<dyn FnOnce(Env) -> Result<()> + Send>>()?;
        let done = move || deferred.resolve(Box::new(|_env| Ok(())));
        match &self.backend {
            Backend::Thread { pool, .. } => pool.dispose(done),
            Backend::Process(pool) => pool.dispose(done),
        }
        Ok(promise)
    }

    #[napi(getter)]
    pub fn disposed(&self) -> bool {
        match &self.backend {
            Backend::Thread { pool, .. } => pool.is_disposed(),
            Backend::Process(pool) => pool.is_disposed(),
        }
    }
}

/// The floor under every execution on this machine (`bench/`): median CPU of each phase of a
/// fresh isolate's life.
#[napi(object)]
pub struct NativeFloors {
    pub isolate_create_ms: f64,
    pub isolate_restore_ms: f64,
    pub isolate_drop_ms: f64,
}

/// Measures [`NativeFloors`] on a thread of its own (never V8 on the caller's thread). Blocks
/// for roughly `samples` × 1.5 ms.
#[napi]
pub fn measure_floors(samples: u32) -> Result<NativeFloors> {
    if !(1..=10_000).contains(&samples) {
        return Err(invalid(format!(
            "samples must be between 1 and 10000 (got {samples})"
        )));
    }
    let samples = samples as usize;
    let isolate = std::thread::spawn(move || {
        crate::sandbox::cost::isolate_phases(&Limits::default(), samples)
    })
    .join()
    .map_err(|_| invalid("the isolate measurement panicked"))?
    .map_err(invalid)?;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok(NativeFloors {
        isolate_create_ms: ms(isolate.create),
        isolate_restore_ms: ms(isolate.restore),
        isolate_drop_ms: ms(isolate.drop),
    })
}

/// The entry point of an engine process (`lib/engine.js`): serves the executor protocol on
/// stdin/stdout until the host closes it or asks for a shutdown, then ends the process.
/// Blocks the calling (main) thread and never returns.
#[napi]
pub fn serve_engine() -> i32 {
    crate::process::stdio::make_blocking();
    let fault_injection = std::env::var_os(FAULT_INJECTION_ENV).is_some_and(|v| v == "1");
    let code = crate::process::engine::serve(
        std::io::stdin(),
        crate::process::stdio::raw_stdout(),
        fault_injection,
    );
    crate::process::stdio::exit_now(code)
}
