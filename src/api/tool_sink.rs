//! Tool calls (and live console lines) into the host's JavaScript: a threadsafe function per
//! run, called without blocking from whichever thread the call leaves on (a worker, or an
//! engine's reader).

use crate::run::{ToolCall, ToolSink};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// The arguments of the host's tool-call callback: `(runId, callId, provider, tool, argsJson)`.
pub type ToolCallArgs = FnArgs<(i64, u32, String, String, String)>;

/// Tool calls go to the host's JS callback `(runId, callId, provider, tool, argsJson)`. Weak:
/// the run's pending promise is what keeps Node's event loop alive, so a thread that had to be
/// abandoned (and still holds this callback) never keeps the host process from exiting.
pub type ToolCallback = ThreadsafeFunction<ToolCallArgs, (), ToolCallArgs, Status, false, true>;

/// The arguments of the host's live-log callback: `(runId, line)`.
pub type LogArgs = FnArgs<(i64, String)>;

/// Console lines go to the host's JS callback as they happen, queued without blocking (a slow
/// `onLog` makes the queue grow, bounded by `maxLogLines` / `maxLogBytes` of the run); weak
/// like the tool-call callback.
pub type LogCallback = ThreadsafeFunction<LogArgs, (), LogArgs, Status, false, true>;

pub struct JsToolSink {
    pub callback: ToolCallback,
    /// `onLog`, when the run has one.
    pub log_callback: Option<LogCallback>,
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

    fn wants_logs(&self) -> bool {
        self.log_callback.is_some()
    }

    fn log(&self, run_id: u64, line: &str) {
        if let Some(callback) = &self.log_callback {
            let args = FnArgs::from((run_id as i64, line.to_string()));
            callback.call(args, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}
