//! The pool in this process as a [`Runner`]: the pool plus the reply routing of its runs. The
//! napi layer uses it for `'thread'` isolation, and every engine process serves the executor
//! protocol over one (`process::engine`), so both arrangements run the same code.

use super::{HandleClosedHook, Job, Pool};
use crate::bridge::{InputPump, ReplyRouter, Routed};
use crate::limits::Limits;
use crate::run::{ErrorKind, RunError, RunRequest, Stats};
use crate::runner::Runner;
use std::sync::Arc;

pub struct LocalRunner {
    pool: Pool,
    router: Arc<ReplyRouter>,
}

impl LocalRunner {
    pub fn new(limits: Limits) -> LocalRunner {
        LocalRunner {
            pool: Pool::new(limits),
            router: Arc::new(ReplyRouter::new()),
        }
    }

    /// Sets the hook told when a retained isolate goes away (expiry, disposal, a bound).
    /// Ends a run that broke a bound on the host's side (an oversized reply the host kept): it
    /// ends as that breach when it next waits, as an oversized reply does here. False when no
    /// such run is live.
    pub fn breach(&self, run_id: u64, error: RunError) -> bool {
        self.router.end(run_id, error)
    }

    pub fn on_handle_closed(&self, hook: HandleClosedHook) {
        self.pool.on_handle_closed(hook);
    }

    /// Lets runs awaiting a reply read the host's messages themselves (see [`InputPump`]).
    pub fn set_input_pump(&self, pump: Arc<dyn InputPump>) {
        self.pool.set_input_pump(pump);
    }

    /// The runs in progress now (retained isolates' runs included).
    pub fn runs_in_progress(&self) -> usize {
        self.pool.runs_in_progress()
    }
}

impl Runner for LocalRunner {
    fn isolation(&self) -> &'static str {
        "thread"
    }

    fn limits(&self) -> &Limits {
        self.pool.limits()
    }

    fn submit(&self, mut request: RunRequest) {
        let run_id = request.run_id;
        // The route lives from submission until the run is answered (replies and cancels find
        // the run only while it is queued or running).
        let events = self.router.open(run_id, self.pool.limits().max_reply_bytes);
        let router = self.router.clone();
        request.completion = request.completion.then_after(move || router.close(run_id));
        self.pool.submit(Job { request, events });
    }

    fn reply(&self, run_id: u64, call_id: u32, json: String) -> bool {
        self.router.route(run_id, call_id, json) == Routed::Delivered
    }

    fn cancel(&self, run_id: u64, message: String) -> bool {
        // A waiting run sees the message on its channel; a busy one is terminated.
        let cancelled = RunError::new(ErrorKind::Cancelled, message.clone());
        if !self.router.end(run_id, cancelled) {
            return false;
        }
        self.pool.cancel(run_id, message);
        true
    }

    fn dispose_handle(&self, handle_id: u64) -> bool {
        self.pool.dispose_retained(handle_id)
    }

    fn stats(&self) -> Stats {
        Stats {
            live_runs: self.router.live_runs() as u32,
            ..self.pool.stats()
        }
    }

    fn dispose(&self, done: Box<dyn FnOnce() + Send>) {
        self.pool.dispose(done);
    }

    fn is_disposed(&self) -> bool {
        self.pool.is_disposed()
    }
}
