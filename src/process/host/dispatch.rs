//! Scheduling: which engine takes which run, and the frame that hands it over. Called under the
//! state lock; the frames are written after it is released (`write_all`).

use super::{EngineInput, Host, InFlight, State, DEADLINE_MARGIN};
use crate::error::Fault;
use crate::protocol::{HostMessage, FLAG_RETAIN};
use crate::run::{RunKind, RunRequest};
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
    let timeout = overrides.timeout.unwrap_or(limits.timeout);
    let give_up_at = Instant::now()
        + timeout
        + limits.termination_grace
        + limits.abandon_after
        + DEADLINE_MARGIN;
    // Runs in a retained isolate do not take a worker slot: the isolate has its own thread.
    let takes_slot = matches!(kind, RunKind::Fresh { .. });
    let frame = match kind {
        RunKind::Fresh {
            code,
            config_json,
            retain,
        } => HostMessage::Execute {
            run_id,
            timeout_ms: overrides.timeout_ms(),
            memory_mb: overrides.memory_mb_wire(),
            flags: if retain { FLAG_RETAIN } else { 0 },
            fault_injection: test_hook.map(|hook| hook.as_str().to_string()),
            code,
            run_config_json: config_json,
        },
        RunKind::Handle { handle_id, code } => HostMessage::HandleExecute {
            handle_id,
            run_id,
            timeout_ms: overrides.timeout_ms(),
            code,
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
            takes_slot,
        },
    );
    (stdin, frame)
}

/// Moves queued runs to engines with a free worker. Returns the frames to write (outside the
/// state lock).
pub(super) fn pump(host: &Host, state: &mut State) -> Vec<(Arc<EngineInput>, Vec<u8>)> {
    let mut out = Vec::new();
    while !state.queue.is_empty() {
        let free = state
            .engines
            .iter()
            .filter(|(_, e)| {
                e.ready
                    && !e.exiting
                    && !e.retiring
                    && e.kill_reason.is_none()
                    && e.in_flight < e.capacity
            })
            .min_by_key(|(_, e)| e.in_flight)
            .map(|(&id, _)| id);
        let Some(engine_id) = free else { break };
        let request = state.queue.pop_front().expect("queue is not empty");
        out.push(register(host, state, engine_id, request));
    }
    out
}

pub(super) fn write_all(frames: Vec<(Arc<EngineInput>, Vec<u8>)>) {
    for (stdin, frame) in frames {
        stdin.send(&frame);
    }
}
