//! Outcomes and counters as JS values.

use crate::run::{ErrorKind, Outcome, Report, RunError, Stats};
use napi_derive::napi;
use std::time::Duration;

/// One phase of a run's time.
#[napi(object)]
pub struct NativePhase {
    pub name: String,
    pub duration_ms: f64,
}

/// What a run resolves with on the native side.
#[napi(object)]
pub struct NativeReport {
    pub result_json: Option<String>,
    pub error: Option<String>,
    /// With `error`: what ended the run (`syntax`, `program`, `timeout`, `memory`, `bound`,
    /// `cancelled`, `unsettleable`), and for `bound` the bound's option name.
    pub error_kind: Option<String>,
    pub error_bound: Option<String>,
    pub logs: Vec<String>,
    pub queued_ms: f64,
    pub run_ms: f64,
    pub total_ms: f64,
    pub tool_calls: u32,
    pub heap_used_bytes: f64,
    /// `timing.phases`: [name, milliseconds] in order (queue, isolate, compile, run, toolWait).
    pub phases: Vec<NativePhase>,
    /// CPU time of the run's thread, in milliseconds.
    pub cpu_ms: f64,
    /// The compiled program came from the code cache.
    pub code_cache_hit: bool,
    pub fault_code: Option<String>,
    pub fault_message: Option<String>,
    /// Set when the isolate was retained.
    pub handle_id: Option<f64>,
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
    /// `'process'` isolation: frames the engines sent, and how many the host's event loop read
    /// itself (the rest went through the engines' reader threads).
    pub engine_frames: f64,
    pub engine_frames_on_loop: f64,
    /// `'process'` isolation: set while engines keep failing to start.
    pub crash_loop: Option<String>,
}

/// A run's outcome as JS receives it (a fault becomes `faultCode` / `faultMessage`, which
/// `lib/executor/index.js` turns into a rejection with `code`).
pub fn native_report(outcome: Outcome) -> NativeReport {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    match outcome {
        Ok(r) => NativeReport {
            phases: r
                .phases()
                .into_iter()
                .map(|(name, d)| NativePhase {
                    name: name.to_string(),
                    duration_ms: ms(d),
                })
                .collect(),
            cpu_ms: ms(r.output.metrics.cpu),
            code_cache_hit: r.output.metrics.code_cache_hit,
            result_json: r.output.result_json,
            error_kind: r.output.error.as_ref().map(|e| e.kind.as_str().to_string()),
            error_bound: r.output.error.as_ref().and_then(|e| e.bound.clone()),
            error: r.output.error.map(|e| e.message),
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
            error_kind: None,
            error_bound: None,
            logs: Vec::new(),
            queued_ms: 0.0,
            run_ms: 0.0,
            total_ms: 0.0,
            tool_calls: 0,
            heap_used_bytes: 0.0,
            phases: Vec::new(),
            cpu_ms: 0.0,
            code_cache_hit: false,
            fault_code: Some(fault.code.as_str().to_string()),
            fault_message: Some(fault.message),
            handle_id: None,
        },
    }
}

/// The report of a run the JS layer refused before it reached the runner: `bound` names the
/// bound it broke (`maxCodeBytes`, a package bound); without one, the program's own error (an
/// import the host cannot serve). Built by `native_report` from `Report::not_started`, as a
/// run refused in the runner is, so its keys and zeros are the native report's own.
#[napi]
pub fn not_started_report(error: String, bound: Option<String>) -> NativeReport {
    let error = match bound {
        Some(bound) => RunError::bound(&bound, error),
        None => RunError::new(ErrorKind::Program, error),
    };
    native_report(Ok(Report::not_started(error, Duration::ZERO)))
}

/// The runner's counters as `executor.stats()` shows them.
pub fn native_stats(s: Stats, isolation: &str) -> NativeStats {
    NativeStats {
        workers: s.workers,
        busy: s.busy,
        queued: s.queued,
        completed: s.completed as f64,
        lost: s.lost as f64,
        abandoned: s.abandoned as f64,
        replaced: s.replaced as f64,
        isolates_created: s.isolates_created as f64,
        live_runs: s.live_runs,
        retained: s.retained,
        isolation: isolation.to_string(),
        processes: s.processes,
        engines_started: s.engines_started as f64,
        engines_lost: s.engines_lost as f64,
        engines_retired: s.engines_retired as f64,
        engine_frames: s.engine_frames as f64,
        engine_frames_on_loop: s.engine_frames_on_loop as f64,
        crash_loop: s.crash_loop,
    }
}
