//! What the napi layer asks of wherever runs go. Two implementations: `pool::LocalRunner`, the
//! pool in this process (`'thread'` isolation, and the inside of every engine process), and
//! `process::host::ProcessPool`, engine processes under supervision (`'process'`).

use crate::limits::Limits;
use crate::run::{RunRequest, Stats};

pub trait Runner: Send + Sync {
    /// `"thread"` or `"process"`.
    fn isolation(&self) -> &'static str;

    /// The executor's bounds (defaults with its options applied).
    fn limits(&self) -> &Limits;

    /// Accepts a run. A refusal (queue full, disposed, closed handle) is delivered through the
    /// request's completion, like every other outcome.
    fn submit(&self, request: RunRequest);

    /// Hands a tool reply (JSON text) to the run waiting for it. False when the run has ended
    /// or the reply broke `maxReplyBytes` (the run then ends, naming the bound).
    fn reply(&self, run_id: u64, call_id: u32, json: String) -> bool;

    /// Ends a queued or running run with `message` as its error. False when it is unknown or
    /// already over.
    fn cancel(&self, run_id: u64, message: String) -> bool;

    /// Disposes of a retained isolate. False when the handle was already closed.
    fn dispose_handle(&self, handle_id: u64) -> bool;

    fn stats(&self) -> Stats;

    /// The pids of engine processes (none for a local pool).
    fn pids(&self) -> Vec<u32> {
        Vec::new()
    }

    /// Stops accepting runs; queued runs fail with `ERR_DISPOSED`, runs in progress finish.
    /// `done` is called once every worker (and engine) has exited.
    fn dispose(&self, done: Box<dyn FnOnce() + Send>);

    fn is_disposed(&self) -> bool;
}
