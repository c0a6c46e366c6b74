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

/// The arguments of the host's live-log callback: `(runId, line)`. Only whether the host gave
/// one is read: its lines travel through the tool-call callback (see `LOG_LINE`).
pub type LogArgs = FnArgs<(i64, String)>;

/// The call id that marks a console line on the tool-call callback:
/// `(runId, LOG_LINE, "", "", line)`. Lines and calls share one queue, so the host receives them
/// in the order the program made them (two queues would each keep their own order, not the
/// order between them). A run's own call ids never reach it (`maxToolCalls` is far below).
pub const LOG_LINE: u32 = u32::MAX;

pub struct JsToolSink {
    pub callback: ToolCallback,
    /// Whether the run has a live-log callback (`onLog`, or an `onEvent` watching it).
    pub wants_logs: bool,
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
        self.wants_logs
    }

    /// Queued without blocking, like a tool call (a slow `onLog` makes the queue grow, bounded
    /// by `maxLogLines` / `maxLogBytes` of the run).
    fn log(&self, run_id: u64, line: &str) {
        if self.wants_logs {
            let args = FnArgs::from((
                run_id as i64,
                LOG_LINE,
                String::new(),
                String::new(),
                line.to_string(),
            ));
            self.callback
                .call(args, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}
