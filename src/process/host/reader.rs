//! The reader thread of one engine: it reads the engine's output (what the host's event loop
//! leaves it, `output.rs`) until the output closes, then reaps the engine and fails the runs it
//! held with `ERR_WORKER_LOST` (`death.rs` says why it died).

use super::death::{death_cause, start_failed};
use super::dispatch::{pump, write_all};
use super::output::{Ended, EngineOutput};
use super::{Host, InFlight};
use crate::error::Fault;
use crate::os;
use std::process::Child;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) fn read_engine(host: &Arc<Host>, id: u64, output: &EngineOutput, child: Child) {
    let Ended(protocol_error) = output.read_until_end(host);
    engine_gone(host, id, child, protocol_error);
}

/// The engine's output closed: reap it, fail the runs it held, and schedule a replacement.
fn engine_gone(host: &Arc<Host>, id: u64, mut child: Child, protocol_error: Option<String>) {
    {
        let mut state = host.lock();
        if let Some(engine) = state.engines.get_mut(&id) {
            engine.exiting = true;
            if let (Some(reason), false) = (&protocol_error, engine.kill_reason.is_some()) {
                // A confused engine is killed rather than trusted.
                os::kill_child(engine.pid);
                engine.kill_reason = Some(reason.clone());
            }
        }
    }
    let status = child.wait();
    let mut state = host.lock();
    let Some(engine) = state.engines.remove(&id) else {
        return;
    };
    state.gone.add_totals(&engine.stats);
    let lost: Vec<u64> = state
        .runs
        .iter()
        .filter(|(_, r)| r.engine == id)
        .map(|(&run_id, _)| run_id)
        .collect();
    let runs: Vec<InFlight> = lost
        .iter()
        .filter_map(|run_id| state.runs.remove(run_id))
        .collect();
    state.handles.retain(|_, engine_id| *engine_id != id);
    let clean = engine.said_bye && runs.is_empty();
    let tail = engine
        .stderr_tail
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let cause = death_cause(&engine, status.ok(), &tail);
    if !clean {
        if !engine.ready {
            // A start failure, which `start_failed` counts as an engine lost.
            start_failed(host, &mut state, cause.clone());
        } else {
            host.counters.engines_lost.fetch_add(1, Ordering::Relaxed);
            if !state.disposed {
                // A run took the engine down (or it was killed): restart at once; the cause is
                // the run, not the engine.
                state.restart_at = Some(Instant::now() + host.limits.restart_backoff_min);
            }
        }
    }
    let frames = pump(host, &mut state);
    drop(state);
    host.wake.notify_all();
    write_all(frames);
    host.counters
        .lost
        .fetch_add(runs.len() as u64, Ordering::Relaxed);
    let detail = match runs.len() {
        1 => format!("this execution's engine process died: {cause}"),
        n => format!("the engine process died while it held {n} executions: {cause}"),
    };
    for run in runs {
        run.completion.finish(Err(Fault::worker_lost(&detail)));
    }
}
