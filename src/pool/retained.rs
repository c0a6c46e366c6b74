//! A thread that holds a retained isolate (`retainHandles`): further runs in the same global
//! scope until the handle is disposed, idles past `retained_idle`, or a run ends by a bound.

use super::supervise::{keepable, run_ended, supervised_run};
use super::{panic_text, Job, Shared};
use crate::error::Fault;
use crate::sandbox::Sandbox;
use crossbeam_channel::Receiver;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the holder of a retained isolate is told.
pub(super) enum HandleCommand {
    Execute(Job),
    Dispose,
}

pub(super) fn hold_retained(
    shared: &Arc<Shared>,
    id: usize,
    handle_id: u64,
    mut sandbox: Sandbox,
    commands: Receiver<HandleCommand>,
) {
    let reason = loop {
        let job = match commands.recv_timeout(shared.limits.retained_idle) {
            Ok(HandleCommand::Execute(job)) => job,
            Ok(HandleCommand::Dispose) => break "disposed",
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => break "expired (idle)",
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                break "the executor was disposed"
            }
        };
        // The isolate's own limits, with this run's (a handle's run sets only its timeout: the
        // isolate's memory was fixed when it was made).
        let limits = job.request.overrides.apply(sandbox.limits());
        let claimed = Arc::new(AtomicBool::new(false));
        shared.counters.busy.fetch_add(1, Ordering::Relaxed);
        let forget = {
            let shared = shared.clone();
            move || {
                shared.retained().remove(&handle_id);
                shared.workers().remove(&id);
                shared.handle_closed(handle_id, "its run could not be stopped");
            }
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            supervised_run(
                shared,
                &mut sandbox,
                &job,
                &limits,
                Duration::ZERO,
                &claimed,
                forget,
                // Its thread holds the isolate, so it cannot leave to shed a lowered priority.
                None,
            )
        }));
        if claimed.swap(true, Ordering::AcqRel) {
            return; // abandoned: the action above has forgotten this handle and thread
        }
        shared.counters.busy.fetch_sub(1, Ordering::Relaxed);
        let completion = &job.request.completion;
        match outcome {
            Ok(mut report) => {
                let usable = keepable(&sandbox, &report);
                if usable {
                    report.handle_id = handle_id;
                }
                if completion.finish(Ok(report)) {
                    shared.counters.completed.fetch_add(1, Ordering::Relaxed);
                }
                run_ended(shared);
                if !usable {
                    break "its last run was ended by a bound";
                }
            }
            Err(panic) => {
                shared.counters.lost.fetch_add(1, Ordering::Relaxed);
                let detail = panic_text(&panic);
                completion.finish(Err(Fault::worker_lost(&format!(
                    "worker panicked: {detail}"
                ))));
                break "its worker panicked";
            }
        }
    };
    let was_live = shared.retained().remove(&handle_id).is_some();
    shared.workers().remove(&id);
    drop(sandbox);
    if was_live {
        shared.handle_closed(handle_id, reason);
    }
    // Calls that raced with the closing are answered, not left hanging.
    while let Ok(command) = commands.try_recv() {
        if let HandleCommand::Execute(job) = command {
            job.request
                .completion
                .finish(Err(Fault::handle_closed(handle_id)));
        }
    }
}
