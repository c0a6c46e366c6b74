//! What is done with each frame an engine sends (a tool call goes to the run's sink, a result
//! to the run's completion, counters to the engine's record), whichever thread read it: the
//! host's event loop or the engine's reader thread (`output.rs`).

use super::dispatch::{pump, write_all};
use super::{Engine, EngineInput, Host, State, HEALTHY_AFTER};
use crate::os;
use crate::protocol::{
    EngineMessage, HostMessage, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, SHUTDOWN_DRAIN,
};
use crate::run::{Outcome, Report, Stats};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Acts on one frame of engine `id`, on whichever thread read it (see `output.rs`): nothing
/// here blocks or calls into JavaScript synchronously.
pub(super) fn on_message(host: &Arc<Host>, id: u64, message: EngineMessage) {
    match message {
        EngineMessage::Ready {
            version, workers, ..
        } => {
            let mut state = host.lock();
            let usable = (MIN_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&version);
            if let Some(engine) = state.engines.get_mut(&id) {
                if usable {
                    engine.ready = true;
                    engine.capacity = (workers as usize).max(1);
                    engine.last_pong = Instant::now();
                } else if engine.kill_reason.is_none() && !engine.exiting {
                    let reason = format!("the engine process chose protocol version {version}, which this host does not speak");
                    os::kill_child(engine.pid);
                    engine.kill_reason = Some(reason);
                }
            }
            let frames = pump(host, &mut state);
            drop(state);
            write_all(frames);
        }
        EngineMessage::Refuse { reason } => {
            if let Some(engine) = host.lock().engines.get_mut(&id) {
                engine.refuse_reason = Some(reason);
            }
        }
        EngineMessage::ToolCall { run_id, call } => {
            let sink = host.lock().runs.get(&run_id).map(|r| r.sink.clone());
            let Some(sink) = sink else { return };
            let delivered = sink.send(run_id, call);
            if !delivered {
                let stdin = host.lock().engines.get(&id).map(|e| e.stdin.clone());
                if let Some(stdin) = stdin {
                    let reason = "The host can no longer take tool calls".to_string();
                    let bound = None;
                    stdin.send(
                        &HostMessage::Cancel {
                            run_id,
                            reason,
                            bound,
                        }
                        .encode(),
                    );
                }
            }
        }
        EngineMessage::Result {
            run_id,
            outcome,
            stats,
        } => {
            let mut state = host.lock();
            let run = state.runs.remove(&run_id);
            let mut handle = None;
            let retire = update_stats(&mut state, id, stats);
            if let Some(engine) = state.engines.get_mut(&id) {
                if run.as_ref().is_some_and(|r| r.takes_slot) {
                    engine.in_flight = engine.in_flight.saturating_sub(1);
                }
            }
            if let Ok(report) = &outcome {
                if report.handle_id != 0 {
                    handle = Some(report.handle_id);
                }
            }
            if let Some(handle_id) = handle {
                state.handles.insert(handle_id, id);
            }
            let frames = pump(host, &mut state);
            drop(state);
            write_all(frames);
            retire_if(host, retire);
            if let Some(run) = run {
                let outcome = with_host_timing(outcome, run.enqueued_at);
                if outcome.is_ok() {
                    host.counters.completed.fetch_add(1, Ordering::Relaxed);
                }
                run.completion.finish(outcome);
            }
        }
        EngineMessage::Pong { stats, .. } => {
            let mut state = host.lock();
            let retire = update_stats(&mut state, id, stats);
            if let Some(engine) = state.engines.get_mut(&id) {
                engine.last_pong = Instant::now();
                if now_healthy(engine) {
                    state.start_failures = 0;
                    state.crash_loop = None;
                }
            }
            drop(state);
            retire_if(host, retire);
        }
        EngineMessage::HandleClosed { handle_id, .. } => {
            let mut state = host.lock();
            if state.handles.get(&handle_id) == Some(&id) {
                state.handles.remove(&handle_id);
            }
        }
        EngineMessage::Bye => {
            if let Some(engine) = host.lock().engines.get_mut(&id) {
                engine.said_bye = true;
            }
        }
        EngineMessage::Log { run_id, line } => {
            let sink = host.lock().runs.get(&run_id).map(|r| r.sink.clone());
            if let Some(sink) = sink.filter(|sink| sink.wants_logs()) {
                sink.log(run_id, &line);
            }
        }
    }
}

/// Records an engine's counters. When they show a newly abandoned thread, marks the engine
/// retiring and returns its stdin, to be sent `Shutdown` (drain) outside the lock.
fn update_stats(state: &mut State, id: u64, stats: Stats) -> Option<Arc<EngineInput>> {
    let engine = state.engines.get_mut(&id)?;
    let abandoned_more = stats.abandoned > engine.stats.abandoned;
    engine.stats = stats;
    if abandoned_more && !engine.retiring && !engine.exiting {
        engine.retiring = true;
        return Some(engine.stdin.clone());
    }
    None
}

/// Asks a retiring engine to finish its runs and exit; the monitor starts its replacement.
fn retire_if(host: &Host, stdin: Option<Arc<EngineInput>>) {
    if let Some(stdin) = stdin {
        host.counters
            .engines_retired
            .fetch_add(1, Ordering::Relaxed);
        let mode = SHUTDOWN_DRAIN;
        stdin.send(&HostMessage::Shutdown { mode }.encode());
        host.wake.notify_all();
    }
}

fn now_healthy(engine: &Engine) -> bool {
    engine.ready && engine.spawned_at.elapsed() >= HEALTHY_AFTER
}

/// The engine measured the run from the engine's side; the host's caller waited from the
/// moment it submitted: the total is the host's, the run time the engine's (never more than
/// the total), and everything else counts as queued (host queue, pipe, engine queue).
fn with_host_timing(outcome: Outcome, enqueued_at: Instant) -> Outcome {
    outcome.map(|report| {
        let total = enqueued_at.elapsed();
        let run = report.run.min(total);
        Report {
            queued: total - run,
            run,
            total,
            ..report
        }
    })
}
