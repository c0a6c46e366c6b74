//! The monitor thread, one per process pool: starts engines up to `processes` (with a backoff
//! that grows while starts fail, and a crash-loop bound), pings them, samples their resident
//! memory, kills the ones that are silent, too big, stopped reading, or sit on a run past its
//! deadline, and finishes disposal once every engine is gone.

use super::death::start_failed;
use super::dispatch::{pump, write_all};
use super::spawn::spawn_engine;
use super::{Host, START_TIMEOUT};
use crate::os;
use crate::protocol::{HostMessage, SHUTDOWN_DRAIN};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The monitor: keeps the engines started, pings them, watches their memory and the deadlines
/// of their runs, and finishes disposal.
pub(super) fn monitor(host: &Arc<Host>) {
    let limits = &host.limits;
    let mut state = host.lock();
    loop {
        let now = Instant::now();
        if state.disposed && state.engines.is_empty() && state.starting == 0 {
            let callbacks = std::mem::take(&mut state.on_disposed);
            drop(state);
            for done in callbacks {
                done();
            }
            return;
        }
        // Start engines up to the configured number, respecting the backoff.
        let wanted = limits.processes;
        let due = state.restart_at.is_none_or(|at| at <= now);
        let serving = state.engines.values().filter(|e| !e.retiring).count();
        if !state.disposed && serving + state.starting < wanted && due {
            if state.crash_loop.is_some() && state.queue.is_empty() && state.restart_at.is_none() {
                // Crash loop: wait for a run to ask for another try.
            } else {
                state.starting += 1;
                state.restart_at = None;
                drop(state);
                let started = spawn_engine(host);
                state = host.lock();
                state.starting -= 1;
                match started {
                    Ok((id, engine)) => {
                        let late_shutdown = state.disposed.then(|| engine.stdin.clone());
                        state.engines.insert(id, engine);
                        host.counters
                            .engines_started
                            .fetch_add(1, Ordering::Relaxed);
                        if let Some(stdin) = late_shutdown {
                            // Disposed while this engine was starting: it drains at once.
                            drop(state);
                            let mode = SHUTDOWN_DRAIN;
                            stdin.send(&HostMessage::Shutdown { mode }.encode());
                            state = host.lock();
                        }
                    }
                    Err(reason) => start_failed(host, &mut state, reason),
                }
                continue;
            }
        }
        let mut kills: Vec<(u32, String)> = Vec::new();
        let mut pings = Vec::new();
        for engine in state.engines.values_mut() {
            if engine.exiting || engine.kill_reason.is_some() {
                continue;
            }
            let reason = if !engine.ready {
                (now.duration_since(engine.spawned_at) > START_TIMEOUT).then(|| {
                    format!(
                        "the engine process did not become ready within {} s",
                        START_TIMEOUT.as_secs()
                    )
                })
            } else if engine.stdin.overflowed() {
                Some(format!(
                    "the engine process stopped reading its input (over {} MB waited for it) and was killed",
                    limits.engine_backlog_cap() >> 20
                ))
            } else if now.duration_since(engine.last_pong) > limits.heartbeat_timeout {
                Some(format!(
                    "the engine process stopped answering heartbeats for {} ms and was killed",
                    limits.heartbeat_timeout.as_millis()
                ))
            } else {
                os::rss_bytes(engine.pid)
                    .filter(|&rss| rss > limits.process_memory_cap())
                    .map(|rss| {
                        format!(
                            "the engine process used {} MB of memory, over its cap of {} MB (processMemoryLimitMb), and was killed",
                            rss >> 20,
                            limits.process_memory_cap() >> 20
                        )
                    })
            };
            if let Some(reason) = reason {
                kills.push((engine.pid, reason.clone()));
                engine.kill_reason = Some(reason);
            } else if engine.ready
                && now.duration_since(engine.last_ping) >= limits.heartbeat_interval
            {
                engine.ping_seq += 1;
                engine.last_ping = now;
                pings.push((
                    engine.stdin.clone(),
                    HostMessage::Ping {
                        seq: engine.ping_seq,
                    }
                    .encode(),
                ));
            }
        }
        // A run its engine has not answered well past its own deadline: the engine is wedged.
        let overdue: Vec<(u64, u64)> = state
            .runs
            .iter()
            .filter(|(_, r)| r.give_up_at <= now)
            .map(|(&run_id, r)| (run_id, r.engine))
            .collect();
        for (run_id, engine_id) in overdue {
            if let Some(engine) = state.engines.get_mut(&engine_id) {
                if !engine.exiting && engine.kill_reason.is_none() {
                    let reason = format!(
                        "the engine process did not answer run {run_id} by its deadline and was killed"
                    );
                    kills.push((engine.pid, reason.clone()));
                    engine.kill_reason = Some(reason);
                }
            }
        }
        // Killed under the lock: the reader marks `exiting` under it before reaping, so the pid
        // cannot have been reused.
        for (pid, _) in &kills {
            os::kill_child(*pid);
        }
        let wait = limits.heartbeat_interval.min(Duration::from_millis(250));
        let wait = match state.restart_at {
            Some(at) if at > now => wait.min(at - now),
            _ => wait,
        };
        // Runs waiting for an engine whose workers are all held by long runs (see `pump`).
        let admitted = match state.overflow_check_at {
            Some(at) if at <= now => pump(host, &mut state),
            _ => Vec::new(),
        };
        let wait = match state.overflow_check_at {
            Some(at) => wait.min(at.saturating_duration_since(now)),
            None => wait,
        };
        drop(state);
        write_all(admitted);
        for (stdin, frame) in pings {
            stdin.send(&frame);
        }
        state = host.lock();
        let (next, _) = host
            .wake
            .wait_timeout(state, wait)
            .unwrap_or_else(|p| p.into_inner());
        state = next;
    }
}
