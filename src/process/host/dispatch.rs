//! Scheduling: which engine takes which run, and the frame that hands it over. Called under the
//! state lock; the frames are written after it is released (`write_all`).

use super::{Engine, EngineInput, Host, InFlight, State, DEADLINE_MARGIN};
use crate::error::Fault;
use crate::protocol::{HostMessage, FLAG_LIVE_LOGS, FLAG_RETAIN};
use crate::run::{Overrides, RunKind, RunRequest};
use std::sync::Arc;
use std::time::Instant;

pub(super) fn fail_all(requests: Vec<RunRequest>, fault: Fault) {
    for request in requests {
        request.completion.finish(Err(fault.clone()));
    }
}

/// Records a run as held by engine `engine_id` and returns the frame that hands it over, with
/// that engine's input to write it to. The program text moves into the frame (no copy).
pub(super) fn register(
    host: &Host,
    state: &mut State,
    engine_id: u64,
    request: RunRequest,
) -> (Arc<EngineInput>, Vec<u8>) {
    let limits = &host.limits;
    let RunRequest {
        run_id,
        kind,
        overrides,
        test_hook,
        sink,
        completion,
        enqueued_at,
    } = request;
    let timeout = overrides.apply(limits).timeout;
    let give_up_at = Instant::now()
        + timeout
        + limits.termination_grace
        + limits.abandon_after
        + DEADLINE_MARGIN;
    // Runs in a retained isolate do not take a worker slot: the isolate has its own thread.
    let takes_slot = matches!(kind, RunKind::Fresh { .. });
    let live_logs = if sink.wants_logs() { FLAG_LIVE_LOGS } else { 0 };
    let frame = match kind {
        RunKind::Fresh {
            program,
            config_json,
            retain,
        } => HostMessage::Execute {
            run_id,
            bounds: wire_bounds(&overrides),
            flags: live_logs | if retain { FLAG_RETAIN } else { 0 },
            fault_injection: test_hook.map(|hook| hook.as_str().to_string()),
            program,
            run_config_json: config_json,
        },
        RunKind::Handle { handle_id, program } => HostMessage::HandleExecute {
            handle_id,
            run_id,
            bounds: wire_bounds(&overrides),
            flags: live_logs,
            program,
        },
    }
    .encode();
    let engine = state
        .engines
        .get_mut(&engine_id)
        .expect("register on a live engine");
    if takes_slot {
        engine.in_flight += 1;
    }
    let stdin = engine.stdin.clone();
    state.runs.insert(
        run_id,
        InFlight {
            engine: engine_id,
            sink,
            completion,
            enqueued_at,
            give_up_at,
            sent_at: Instant::now(),
            takes_slot,
        },
    );
    (stdin, frame)
}

/// Moves queued runs to engines with a free worker. An engine whose workers have all held their
/// runs for `overflow_after` also takes runs beyond its workers (up to `overflowWorkers` more,
/// each served by an extra worker there), as the thread pool does (`pool/admission.rs`); when
/// only the runs' age stands in the way, `state.overflow_check_at` says when to look again.
/// Returns the frames to write (outside the state lock).
pub(super) fn pump(host: &Host, state: &mut State) -> Vec<(Arc<EngineInput>, Vec<u8>)> {
    let mut out = Vec::new();
    state.overflow_check_at = None;
    // Engines found with every worker held long enough: they take runs up to their extra
    // workers now (the runs handed over in this pass do not make them young again).
    let mut overflowing: Vec<u64> = Vec::new();
    while !state.queue.is_empty() {
        let now = Instant::now();
        let serving = |e: &Engine| e.ready && !e.exiting && !e.retiring && e.kill_reason.is_none();
        let free = state
            .engines
            .iter()
            .filter(|(_, e)| serving(e) && e.in_flight < e.capacity)
            .min_by_key(|(_, e)| e.in_flight)
            .map(|(&id, _)| id);
        let engine_id = match free {
            Some(id) => id,
            None => {
                let extra = host.limits.overflow_workers;
                let candidates: Vec<u64> = state
                    .engines
                    .iter()
                    .filter(|(_, e)| serving(e) && e.in_flight < e.capacity + extra)
                    .map(|(&id, _)| id)
                    .collect();
                let mut ready_now = None;
                for id in candidates {
                    if overflowing.contains(&id) {
                        ready_now = Some(id);
                        break;
                    }
                    match old_enough_at(host, state, id) {
                        Some(at) if at > now => {
                            let check = state.overflow_check_at.map_or(at, |c| c.min(at));
                            state.overflow_check_at = Some(check);
                        }
                        _ => {
                            overflowing.push(id);
                            ready_now = Some(id);
                            break;
                        }
                    }
                }
                match ready_now {
                    Some(id) => id,
                    None => break,
                }
            }
        };
        let request = state.queue.pop_front().expect("queue is not empty");
        out.push(register(host, state, engine_id, request));
    }
    if state.overflow_check_at.is_some() {
        host.wake.notify_all(); // the monitor sets its next wake by it
    }
    out
}

/// When every worker-taking run engine `engine_id` holds will have been held for
/// `overflow_after` (`None`: it holds none).
fn old_enough_at(host: &Host, state: &State, engine_id: u64) -> Option<Instant> {
    state
        .runs
        .values()
        .filter(|r| r.engine == engine_id && r.takes_slot)
        .map(|r| r.sent_at + host.limits.overflow_after)
        .max()
}

pub(super) fn write_all(frames: Vec<(Arc<EngineInput>, Vec<u8>)>) {
    for (stdin, frame) in frames {
        stdin.send(&frame);
    }
}

/// The run's own bounds as the engine reads them (`Overrides::parse` on its side).
fn wire_bounds(overrides: &Overrides) -> Vec<(String, f64)> {
    overrides
        .values()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}
