//! Tool calls into the host's JavaScript: a threadsafe function per run, called without
//! blocking from whichever thread the call leaves on (a worker, or an engine's reader).

use crate::bridge::{ToolCall, ToolSink};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// The arguments of the host's tool-call callback: `(runId, callId, provider, tool, argsJson)`.
pub type ToolCallArgs = FnArgs<(i64, u32, String, String, String)>;

/// Tool calls go to the host's JS callback `(runId, callId, provider, tool, argsJson)`. Weak:
/// the run's pending promise is what keeps Node's event loop alive, so a thread that had to be
/// abandoned (and still holds this callback) never keeps the host process from exiting.
pub type ToolCallback = ThreadsafeFunction<ToolCallArgs, (), ToolCallArgs, Status, false, true>;

pub struct JsToolSink {
    pub callback: ToolCallback,
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
