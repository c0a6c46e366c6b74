//! One run under supervision, for a fresh worker's job and a retained isolate's alike: the
//! watchdog armed (deadline, CPU budget, long-run demotion), the abandon action that answers a
//! run whose thread cannot be stopped, and the engine's input as the run may read it.

use super::watchdog::{abandon_action, fire, CpuBudget, LongRun};
use super::{lock, Job, Shared};
use crate::bridge::InputPump;
use crate::limits::Limits;
use crate::run::{Report, RunError, RunKind, RunOutput};
use crate::sandbox::{Program, Sandbox};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The engine's input as a run of this pool may read it: a run awaiting its reply waits on the
/// input itself (leads) only while it is the only run in progress. With others in progress the
/// leader is woken by their frames too, one wake-up more per frame than the reader's alone,
/// which costs a busy pool more CPU than the wake-up it saves on the leader's own replies
/// (500 ten-call runs submitted at once on 2 workers, 8 interleaved pairs: 0.94x the time of
/// the same burst with every run free to lead).
struct RunPump<'a> {
    inner: &'a dyn InputPump,
    /// The runs in progress in the pool (`Counters::busy`).
    running_runs: &'a AtomicUsize,
}

impl InputPump for RunPump<'_> {
    fn pump(&self) {
        self.inner.pump();
    }

    fn lead(&self, ready: &dyn Fn() -> bool, wake_at: Option<Instant>) -> Option<bool> {
        let alone = || self.running_runs.load(Ordering::Acquire) <= 1;
        if !alone() {
            return None;
        }
        self.inner.lead(&|| ready() || !alone(), wake_at)
    }
}

/// After a run's answer, off its latency path: tells the engine's input (a reader that stood
/// aside while it was the only run reads again) and arms the idle trim (`trim.rs`).
pub(super) fn run_ended(shared: &Arc<Shared>) {
    if let Some(pump) = shared.input_pump.get() {
        pump.run_ended();
    }
    super::trim::run_ended(shared);
}

/// Whether the isolate that produced `report` may serve another run (`retainHandles`): not if a
/// bound ended the run, whether the sandbox stopped it from outside (a spinning loop) or the run
/// ended at the bound itself (a deadline reached awaiting a tool, an oversized reply).
pub(super) fn keepable(sandbox: &Sandbox, report: &Report) -> bool {
    sandbox.reusable()
        && !report
            .output
            .error
            .as_ref()
            .is_some_and(RunError::ended_by_bound)
}

/// Runs a program under the watchdog and returns its report (not yet delivered). If the run
/// cannot be stopped, the abandon action answers it and calls `on_abandon` (which must make up
/// for this thread, which is then lost); `claimed` tells the caller that happened.
/// `continuation`: a further run in a retained isolate (its namespaces are installed already).
/// `isolate`: how long getting the sandbox took (none when a warm one served). `long_run`: what
/// the watchdog does if the run is still going at its instant (`admission::long_run`).
#[allow(clippy::too_many_arguments)]
pub(super) fn supervised_run(
    shared: &Arc<Shared>,
    sandbox: &mut Sandbox,
    job: &Job,
    limits: &Limits,
    isolate: Duration,
    claimed: &Arc<AtomicBool>,
    on_abandon: impl FnOnce() + Send + 'static,
    long_run: Option<LongRun>,
) -> Report {
    let request = &job.request;
    let started = Instant::now();
    let deadline = started + limits.timeout;
    let terminate_at = deadline + limits.termination_grace;
    // Answers the run and gives up this thread when the run cannot be stopped: fired by the
    // watchdog long after the deadline, or by the sandbox when it must park its thread.
    let abandon = {
        let shared = shared.clone();
        let completion = request.completion.clone();
        let claimed = claimed.clone();
        let queued = started.duration_since(request.enqueued_at);
        let enqueued_at = request.enqueued_at;
        let run_id = request.run_id;
        abandon_action(move |error: RunError| {
            if claimed.swap(true, Ordering::AcqRel) {
                return; // the run returned first
            }
            lock(&shared.running).remove(&run_id);
            shared.counters.busy.fetch_sub(1, Ordering::Relaxed);
            shared.counters.abandoned.fetch_add(1, Ordering::Relaxed);
            // Forget this thread before answering: whoever learns of the answer may dispose of
            // the pool at once, and disposal must not find (and wait for) a thread that never
            // ends.
            on_abandon();
            let output = RunOutput {
                error: Some(error),
                ..RunOutput::default()
            };
            completion.finish(Ok(Report {
                output,
                queued,
                run: started.elapsed(),
                total: enqueued_at.elapsed(),
                handle_id: 0,
            }));
        })
    };
    let terminator = sandbox.terminator();
    lock(&shared.running).insert(request.run_id, terminator.clone());
    // A cancel that arrived after the job left the queue but before it was registered above.
    if let Some(message) = lock(&shared.cancelled).remove(&request.run_id) {
        terminator.cancel(message);
    }
    let wedge_action = abandon.clone();
    terminator.on_wedge(Box::new(move |error| fire(&wedge_action, error)));
    let armed = shared.watchdog.arm(
        terminate_at,
        terminate_at + limits.abandon_after,
        terminator,
        abandon,
        CpuBudget::for_this_thread(limits.cpu_time, limits.abandon_after),
        long_run,
    );
    let (run_config_json, continuation) = match &request.kind {
        RunKind::Fresh { config_json, .. } => (config_json.as_str(), false),
        RunKind::Handle { .. } => ("", true),
    };
    let pump = shared.input_pump.get().map(|inner| RunPump {
        inner: &**inner,
        running_runs: &shared.counters.busy,
    });
    let cpu_before = crate::os::thread_cpu_time();
    let mut output = sandbox.run(Program {
        run_id: request.run_id,
        input: request.kind.program(),
        cache: &shared.code_cache,
        run_config_json,
        limits,
        deadline,
        sink: request.sink.clone(),
        events: &job.events,
        pump: pump.as_ref().map(|pump| pump as &dyn InputPump),
        continuation,
    });
    output.metrics.cpu = crate::os::thread_cpu_time().saturating_sub(cpu_before);
    output.metrics.isolate = isolate;
    drop(armed);
    lock(&shared.running).remove(&request.run_id);
    lock(&shared.cancelled).remove(&request.run_id);
    Report {
        output,
        queued: started.duration_since(request.enqueued_at),
        run: started.elapsed(),
        total: request.enqueued_at.elapsed(),
        handle_id: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// An input where a leader sees `ready` checked once per scripted step, as after each
    /// frame it acts on.
    struct ScriptedInput {
        /// What happens before each check: the number of runs in progress then.
        steps: Vec<usize>,
        running: Arc<AtomicUsize>,
        led: Mutex<Vec<bool>>,
    }

    impl InputPump for ScriptedInput {
        fn pump(&self) {}

        fn lead(&self, ready: &dyn Fn() -> bool, _wake_at: Option<Instant>) -> Option<bool> {
            for &running in &self.steps {
                self.running.store(running, Ordering::Release);
                if ready() {
                    self.led.lock().unwrap().push(true);
                    return Some(true);
                }
            }
            self.led.lock().unwrap().push(false);
            Some(false)
        }
    }

    #[test]
    fn a_run_leads_only_while_it_is_the_only_run_in_progress() {
        let running = Arc::new(AtomicUsize::new(1));
        let input = ScriptedInput {
            steps: vec![1, 1, 2],
            running: running.clone(),
            led: Mutex::new(Vec::new()),
        };
        let pump = RunPump {
            inner: &input,
            running_runs: &running,
        };
        // Alone: it leads, and stops at the first check after a second run started.
        assert_eq!(pump.lead(&|| false, None), Some(true));
        // Another run in progress: it does not lead at all.
        running.store(2, Ordering::Release);
        assert_eq!(pump.lead(&|| false, None), None);
        assert_eq!(*input.led.lock().unwrap(), vec![true]);
        // Alone again, its own event ends the wait.
        running.store(1, Ordering::Release);
        assert_eq!(pump.lead(&|| true, None), Some(true));
    }
}
