//! The bridge between a running program and the host: call envelopes, size bounds, and the
//! routing of replies back to the worker that is waiting for them.
//!
//! Nothing here knows about V8 or napi. A tool call leaves the sandbox as a `run::ToolCall`
//! through a `run::ToolSink` (both part of a run's vocabulary, so `run` needs nothing from
//! here); its reply comes back as a string through [`ReplyRouter::route`], which finds the run
//! by id and hands the reply to that run's channel.

use crate::run::RunError;
use crossbeam_channel::{Receiver, Sender};
use std::collections::HashMap;
use std::sync::Mutex;

/// Lets a run that awaits a tool reply read the host's messages itself while it polls for the
/// reply (`sandbox/spin.rs`). In an engine process the reply arrives on the engine's input: read
/// by the engine's reader thread, it would cost that thread's wake-up before the run's own;
/// read by the polling run, it costs none.
pub trait InputPump: Send + Sync {
    /// Reads whatever the host has already sent and acts on it, without blocking; returns at
    /// once when another thread is reading.
    fn pump(&self);

    /// Waits until `ready()` holds by reading the host's messages itself, blocked on the input
    /// until `wake_at` (if any), so that a message wakes only this thread: `ready` is checked
    /// after each message acted on. `Some(true)` when `ready()` held, `Some(false)` when
    /// `wake_at` passed, `None` when another thread already waits this way (or the input is
    /// closed): the caller then waits as usual.
    fn lead(&self, ready: &dyn Fn() -> bool, wake_at: Option<std::time::Instant>) -> Option<bool>;

    /// The calling run has ended: it will neither read nor lead again, so whoever stood aside
    /// for it must read the input again.
    fn run_ended(&self) {}
}

/// What a waiting run can receive from the host side.
#[derive(Debug, PartialEq, Eq)]
pub enum RunEvent {
    /// The reply to a tool call: JSON text `{"result": ...}` or `{"error": "..."}`.
    Reply { call_id: u32, json: String },
    /// The run ends now with this error: the host broke a bound on its behalf (an oversized
    /// reply), or cancelled it.
    End(RunError),
}

/// The message for a breached size bound. `bound` is the option name users can look up.
pub fn size_breach(what: &str, actual: usize, max: usize, bound: &str) -> String {
    format!("{what} is too large ({actual} bytes > {max} byte limit, {bound})")
}

/// Checks a size against its bound.
pub fn check_size(what: &str, actual: usize, max: usize, bound: &str) -> Result<(), String> {
    if actual > max {
        Err(size_breach(what, actual, max, bound))
    } else {
        Ok(())
    }
}

struct Route {
    events: Sender<RunEvent>,
    max_reply_bytes: usize,
}

/// Maps live run ids to the channel their worker waits on.
#[derive(Default)]
pub struct ReplyRouter {
    routes: Mutex<HashMap<u64, Route>>,
}

/// The outcome of routing one reply.
#[derive(Debug, PartialEq, Eq)]
pub enum Routed {
    Delivered,
    /// The reply broke the size bound; the run was told to end.
    Oversized,
    /// No such run (it already ended): a late reply, dropped.
    NoRun,
}

impl ReplyRouter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens the channel of a run. Replies for `run_id` go to the returned receiver until
    /// [`ReplyRouter::close`] is called.
    pub fn open(&self, run_id: u64, max_reply_bytes: usize) -> Receiver<RunEvent> {
        let (tx, rx) = crossbeam_channel::unbounded();
        self.lock().insert(
            run_id,
            Route {
                events: tx,
                max_reply_bytes,
            },
        );
        rx
    }

    pub fn close(&self, run_id: u64) {
        self.lock().remove(&run_id);
    }

    /// Hands a reply to its run, enforcing the reply size bound.
    pub fn route(&self, run_id: u64, call_id: u32, json: String) -> Routed {
        let routes = self.lock();
        let Some(route) = routes.get(&run_id) else {
            return Routed::NoRun;
        };
        let event = match check_size(
            "A tool reply",
            json.len(),
            route.max_reply_bytes,
            "maxReplyBytes",
        ) {
            Ok(()) => RunEvent::Reply { call_id, json },
            Err(msg) => RunEvent::End(RunError::bound("maxReplyBytes", msg)),
        };
        let oversized = matches!(event, RunEvent::End(_));
        if route.events.send(event).is_err() {
            return Routed::NoRun;
        }
        if oversized {
            Routed::Oversized
        } else {
            Routed::Delivered
        }
    }

    /// Tells a run to end now with `error` (a cancellation by the host, or a bound it broke on
    /// the run's behalf). Takes effect when the run next waits (on a tool call, a timer or a
    /// promise); a run that never yields ends at its deadline. Returns false when no such run is
    /// live.
    pub fn end(&self, run_id: u64, error: RunError) -> bool {
        let routes = self.lock();
        routes
            .get(&run_id)
            .is_some_and(|route| route.events.send(RunEvent::End(error)).is_ok())
    }

    pub fn live_runs(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Route>> {
        // A poisoned map is still consistent (each operation is a single insert/remove/get).
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_reach_their_own_run_only() {
        let router = ReplyRouter::new();
        let a = router.open(1, 100);
        let b = router.open(2, 100);
        assert_eq!(
            router.route(2, 7, "{\"result\":2}".into()),
            Routed::Delivered
        );
        assert_eq!(
            router.route(1, 3, "{\"result\":1}".into()),
            Routed::Delivered
        );
        assert_eq!(
            a.try_recv().unwrap(),
            RunEvent::Reply {
                call_id: 3,
                json: "{\"result\":1}".into()
            }
        );
        assert_eq!(
            b.try_recv().unwrap(),
            RunEvent::Reply {
                call_id: 7,
                json: "{\"result\":2}".into()
            }
        );
        assert!(a.try_recv().is_err());
    }

    #[test]
    fn late_replies_are_dropped() {
        let router = ReplyRouter::new();
        let _rx = router.open(1, 100);
        router.close(1);
        assert_eq!(router.route(1, 0, "{}".into()), Routed::NoRun);
        assert_eq!(router.live_runs(), 0);
    }

    #[test]
    fn oversized_replies_end_the_run_with_the_bound_named() {
        let router = ReplyRouter::new();
        let rx = router.open(9, 10);
        assert_eq!(router.route(9, 0, "x".repeat(11)), Routed::Oversized);
        match rx.try_recv().unwrap() {
            RunEvent::End(error) => {
                assert_eq!(error.bound.as_deref(), Some("maxReplyBytes"));
                assert!(error.message.contains("11 bytes > 10"), "{error:?}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn size_check_allows_the_exact_bound() {
        assert!(check_size("x", 10, 10, "b").is_ok());
        assert!(check_size("x", 11, 10, "b").is_err());
    }
}
