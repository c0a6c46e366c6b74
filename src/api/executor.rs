//! `NativeExecutor`: the class `lib/executor/index.js` drives. It turns JS arguments into one
//! `RunRequest` and hands everything to its `Runner` (the local pool in `'thread'` isolation,
//! the process pool in `'process'`); no method knows which.

use super::event_loop::NodeLoop;
use super::options::{limits_from, native_limits, NativeOptions};
use super::report::{native_report, native_stats, NativeReport, NativeStats};
use super::thrown;
use super::tool_sink::{JsToolSink, LogArgs, ToolCallArgs, ToolCallback};
use crate::bridge::check_size;
use crate::error::{ErrorCode, Fault};
use crate::limits::Limits;
use crate::pool::LocalRunner;
use crate::process::host::{EngineCommand, EventLoop, ProcessPool};
use crate::run::{
    Completion, Outcome, Overrides, ProgramInput, Report, RunError, RunKind, RunRequest, TestHook,
};
use crate::runner::Runner;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A failure of napi itself (a callback that cannot be wrapped, a promise that cannot be
/// made): only malformed arguments cause one.
fn napi_failure(e: Error) -> Error<ErrorCode> {
    thrown(Fault::invalid(e.reason))
}

/// One run, as the JS wrapper hands it over.
#[napi(object)]
pub struct NativeRequest {
    pub code: String,
    /// JSON text of the entry function's argument (`params`).
    pub params_json: Option<String>,
    /// Strip TypeScript before compiling.
    pub typescript: Option<bool>,
    /// The Cloudflare form's text its normalizer could not parse (see `ProgramInput`).
    pub statements: Option<bool>,
    /// Help in the messages of programs that used what the sandbox lacks (the native form).
    pub explain: Option<bool>,
    /// JSON of the run configuration (namespaces, preludes, result encoding), built and
    /// validated by the wrapper.
    pub run_config_json: String,
    /// The run's own bounds by option name (`timeout`, `memoryLimitMb`: the per-run rows of
    /// the bounds table), checked by `Overrides::parse`.
    pub bounds: Option<HashMap<String, f64>>,
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
    pub params_json: Option<String>,
    pub typescript: Option<bool>,
    pub timeout: Option<f64>,
}

/// The program's source within `maxCodeBytes`, its params within `maxArgsBytes` (they are
/// cloned into the isolate as a tool call's arguments are).
fn check_program_size(
    program: &ProgramInput,
    limits: &Limits,
) -> std::result::Result<(), RunError> {
    let code = check_size(
        "The program source",
        program.code.len(),
        limits.max_code_bytes,
        "maxCodeBytes",
    );
    code.map_err(|message| RunError::bound("maxCodeBytes", message))?;
    let params = program.params_json.as_ref().map_or(0, String::len);
    check_size(
        "The params value",
        params,
        limits.max_args_bytes,
        "maxArgsBytes",
    )
    .map_err(|message| RunError::bound("maxArgsBytes", message))
}

#[napi]
pub struct NativeExecutor {
    runner: Box<dyn Runner>,
    /// `'process'` isolation on Node: the event loop that reads the engines' output.
    event_loop: Option<NodeLoop>,
    next_run: AtomicU64,
    test_hooks: bool,
}

fn handle_id_of(value: f64) -> Result<u64, ErrorCode> {
    if value.is_finite() && value >= 1.0 && value.fract() == 0.0 && value <= 2f64.powi(53) {
        Ok(value as u64)
    } else {
        Err(thrown(Fault::invalid(format!(
            "handleId must be a positive integer (got {value})"
        ))))
    }
}

/// The runner an executor's options ask for, with the event loop it reads engine output on.
fn runner_for(
    env: &Env,
    limits: Limits,
    options: Option<&NativeOptions>,
) -> Result<(Box<dyn Runner>, Option<NodeLoop>), ErrorCode> {
    let isolation = options.and_then(|o| o.isolation.as_deref());
    match isolation {
        None | Some("thread") => Ok((Box::new(LocalRunner::new(limits)), None)),
        Some("process") => {
            let command = options.and_then(|o| o.engine_command.clone());
            let mut command = command.unwrap_or_default().into_iter();
            let Some(program) = command.next() else {
                return Err(thrown(Fault::invalid(
                    "isolation 'process' needs engineCommand: [program, ...args]",
                )));
            };
            let command = EngineCommand {
                program,
                args: command.collect(),
            };
            let loop_reads = options.and_then(|o| o.loop_reads).unwrap_or(false);
            let event_loop = loop_reads.then(|| NodeLoop::new(env)).flatten();
            let offered = event_loop
                .clone()
                .map(|l| Arc::new(l) as Arc<dyn EventLoop>);
            let pool = ProcessPool::new(limits, command, offered);
            Ok((Box::new(pool), event_loop))
        }
        Some(other) => Err(thrown(Fault::invalid(format!(
            "isolation must be 'process' or 'thread' (got {other:?})"
        )))),
    }
}

type Resolver = Box<dyn FnOnce(Env) -> Result<NativeReport> + Send>;

#[napi]
impl NativeExecutor {
    #[napi(constructor)]
    pub fn new(env: Env, options: Option<NativeOptions>) -> Result<Self, ErrorCode> {
        let limits = match &options {
            Some(options) => limits_from(options)?,
            None => Limits::default(),
        };
        let (runner, event_loop) = runner_for(&env, limits, options.as_ref())?;
        Ok(NativeExecutor {
            runner,
            event_loop,
            next_run: AtomicU64::new(1),
            test_hooks: TestHook::enabled(),
        })
    }

    /// Queues one run. Resolves with a `NativeReport`; never rejects (faults are data).
    #[napi]
    pub fn execute<'env>(
        &self,
        env: &'env Env,
        request: NativeRequest,
        on_tool_call: Function<'env, ToolCallArgs, ()>,
        on_log: Option<Function<'env, LogArgs, ()>>,
    ) -> Result<Object<'env>, ErrorCode> {
        let overrides = Overrides::parse(
            request
                .bounds
                .iter()
                .flatten()
                .map(|(name, value)| (name.as_str(), *value)),
        )
        .map_err(thrown)?;
        let test_hook = request
            .fault_injection
            .filter(|_| self.test_hooks)
            .and_then(|name| TestHook::parse(&name));
        let kind = RunKind::Fresh {
            program: ProgramInput {
                code: request.code,
                params_json: request.params_json,
                typescript: request.typescript.unwrap_or(false),
                statements: request.statements.unwrap_or(false),
                explain: request.explain.unwrap_or(false),
            },
            config_json: request.run_config_json,
            retain: request.retain.unwrap_or(false),
        };
        self.submit(env, kind, overrides, test_hook, on_tool_call, on_log)
    }

    /// Runs more code in a retained isolate (same global scope, same namespaces).
    #[napi]
    pub fn execute_in_handle<'env>(
        &self,
        env: &'env Env,
        request: NativeHandleRequest,
        on_tool_call: Function<'env, ToolCallArgs, ()>,
        on_log: Option<Function<'env, LogArgs, ()>>,
    ) -> Result<Object<'env>, ErrorCode> {
        let kind = RunKind::Handle {
            handle_id: handle_id_of(request.handle_id)?,
            program: ProgramInput {
                code: request.code,
                params_json: request.params_json,
                typescript: request.typescript.unwrap_or(false),
                // A function body is read as one here too (as in a fresh run's native form).
                statements: true,
                explain: true,
            },
        };
        let timeout = request.timeout.map(|ms| ("timeout", ms));
        let overrides = Overrides::parse(timeout).map_err(thrown)?;
        self.submit(env, kind, overrides, None, on_tool_call, on_log)
    }

    fn submit<'env>(
        &self,
        env: &'env Env,
        kind: RunKind,
        overrides: Overrides,
        test_hook: Option<TestHook>,
        on_tool_call: Function<'env, ToolCallArgs, ()>,
        on_log: Option<Function<'env, LogArgs, ()>>,
    ) -> Result<Object<'env>, ErrorCode> {
        let callback: ToolCallback = on_tool_call
            .build_threadsafe_function::<ToolCallArgs>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()
            .map_err(napi_failure)?;
        // Console lines come through `callback` too (tool_sink.rs LOG_LINE); `on_log` only says
        // whether the host wants them.
        let wants_logs = on_log.is_some();
        let (deferred, mut promise) = env
            .create_deferred::<NativeReport, Resolver>()
            .map_err(napi_failure)?;
        let resolve = move |outcome: Outcome| {
            let report = native_report(outcome);
            deferred.resolve(Box::new(move |_env| Ok(report)));
        };
        // Oversized code or params are the program's failure (a breached bound), not a fault.
        if let Err(breach) = check_program_size(kind.program(), self.runner.limits()) {
            resolve(Ok(Report::not_started(breach, Duration::ZERO)));
            return Ok(promise);
        }
        let run_id = self.next_run.fetch_add(1, Ordering::Relaxed);
        self.runner.submit(RunRequest {
            run_id,
            kind,
            overrides,
            test_hook,
            sink: Arc::new(JsToolSink {
                callback,
                wants_logs,
            }),
            completion: Completion::new(resolve),
            enqueued_at: Instant::now(),
        });
        // The caller's handle for `cancel(runId, message)`.
        promise
            .set_named_property("runId", run_id as f64)
            .map_err(napi_failure)?;
        Ok(promise)
    }

    /// The message a program source of `bytes` bytes gets from `maxCodeBytes`, or `null` when it
    /// fits: the JS layer asks before it copies or parses the source.
    #[napi]
    pub fn code_size_breach(&self, bytes: f64) -> Option<String> {
        check_size(
            "The program source",
            bytes.max(0.0) as usize,
            self.runner.limits().max_code_bytes,
            "maxCodeBytes",
        )
        .err()
    }

    /// Hands a tool reply (JSON text) to the run that waits for it. Returns false when the run
    /// has already ended (a late reply) or the reply broke the size bound.
    #[napi]
    pub fn reply(&self, run_id: i64, call_id: u32, json: String) -> bool {
        run_id >= 0 && self.runner.reply(run_id as u64, call_id, json)
    }

    /// Cancels a queued or running run: it ends at once with `message` as its error. False when
    /// the run is unknown or already over.
    #[napi]
    pub fn cancel(&self, run_id: i64, message: String) -> bool {
        run_id >= 0 && self.runner.cancel(run_id as u64, message)
    }

    /// Disposes of a retained isolate. False when the handle was already closed.
    #[napi]
    pub fn dispose_handle(&self, handle_id: f64) -> Result<bool, ErrorCode> {
        Ok(self.runner.dispose_handle(handle_id_of(handle_id)?))
    }

    /// The effective bounds by option name (`limits::BOUNDS`).
    #[napi(getter)]
    pub fn limits(&self) -> HashMap<String, f64> {
        native_limits(self.runner.limits())
    }

    /// `"process"` or `"thread"`.
    #[napi(getter)]
    pub fn isolation(&self) -> &'static str {
        self.runner.isolation()
    }

    #[napi]
    pub fn stats(&self) -> NativeStats {
        native_stats(self.runner.stats(), self.runner.isolation())
    }

    /// `'process'` isolation: the pids of the engine processes (empty in `'thread'`).
    #[napi]
    pub fn engine_pids(&self) -> Vec<u32> {
        self.runner.pids()
    }

    /// Stops the pool; resolves once every worker (and engine process) has exited.
    #[napi]
    pub fn dispose<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let (deferred, promise) =
            env.create_deferred::<(), Box<dyn FnOnce(Env) -> Result<()> + Send>>()?;
        self.runner
            .dispose(Box::new(move || deferred.resolve(Box::new(|_env| Ok(())))));
        Ok(promise)
    }

    #[napi(getter)]
    pub fn disposed(&self) -> bool {
        self.runner.is_disposed()
    }
}

impl Drop for NativeExecutor {
    /// Finalized on the JS thread: the loop's handles close there (the engines' reader threads
    /// read whatever is left).
    fn drop(&mut self) {
        if let Some(event_loop) = &self.event_loop {
            event_loop.close();
        }
    }
}
