//! One thread that stops runs from outside. A run that never yields is terminated a grace period
//! after its deadline, or as soon as its thread has used its CPU-time budget; a run that still
//! holds its thread long after that (a builtin that ignores termination) is abandoned: its job
//! is answered and its worker replaced. The same thread fires the pool's few one-shot timers
//! (`after`: the admission check of `admission.rs`) and each run's long-run action (the
//! demotion of `admission.rs`).

use crate::os::ThreadCpuClock;
use crate::run::{ErrorKind, RunError};
use crate::sandbox::{cpu_message, StopReason, Terminator, TIMED_OUT};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Answers an abandoned run with the given error and replaces its worker. Shared with the
/// sandbox's wedge hook; whichever fires first takes it.
pub type AbandonAction = Arc<Mutex<Option<Box<dyn FnOnce(RunError) + Send>>>>;

pub fn abandon_action(action: impl FnOnce(RunError) + Send + 'static) -> AbandonAction {
    Arc::new(Mutex::new(Some(Box::new(action))))
}

/// Runs the action if nobody has yet.
pub fn fire(action: &AbandonAction, error: RunError) {
    let taken = action.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(action) = taken {
        action(error);
    }
}

/// A run's CPU-time budget: its thread's clock, the clock's reading when the run started, the
/// budget, and how long a run stopped by it may keep its thread before it is abandoned.
pub struct CpuBudget {
    pub clock: ThreadCpuClock,
    pub started: Duration,
    pub budget: Duration,
    pub abandon_after: Duration,
}

impl CpuBudget {
    /// A budget for a run about to start on the calling thread.
    pub fn for_this_thread(budget: Duration, abandon_after: Duration) -> Option<CpuBudget> {
        let clock = ThreadCpuClock::current()?;
        Some(CpuBudget {
            clock,
            started: clock.elapsed()?,
            budget,
            abandon_after,
        })
    }

    /// CPU time used by the run so far (`None` once the clock can no longer be read).
    fn used(&self) -> Option<Duration> {
        Some(self.clock.elapsed()?.saturating_sub(self.started))
    }

    /// CPU time left; zero once it is used up (or the clock can no longer be read).
    fn left(&self) -> Duration {
        match self.clock.elapsed() {
            Some(now) => self.budget.saturating_sub(now.saturating_sub(self.started)),
            None => Duration::ZERO,
        }
    }
}

/// What to do once a run's thread has used `cpu` of CPU time in the run (`admission::long_run`;
/// on wall time when the run has no CPU clock), on the watchdog's thread; dropped unfired when
/// the run ends first. A run awaiting tools or timers uses almost none, so it never fires.
pub struct LongRun {
    cpu: Duration,
    /// When to look next: the CPU cannot have been used up before.
    check_at: Instant,
    action: Box<dyn FnOnce() + Send>,
}

impl LongRun {
    pub fn after_cpu(cpu: Duration, action: Box<dyn FnOnce() + Send>) -> LongRun {
        LongRun {
            cpu,
            check_at: Instant::now() + cpu,
            action,
        }
    }

    /// The CPU the run must still use before this fires, looked at `now` (`None`: fire now).
    /// Before `check_at` it cannot be used up; without a clock it fires on wall time.
    fn still_to_use(&self, now: Instant, cpu: Option<&CpuBudget>) -> Option<Duration> {
        if now < self.check_at {
            return Some(self.check_at - now);
        }
        let used = match cpu {
            Some(cpu) => cpu.used()?,
            None => return None,
        };
        self.cpu.checked_sub(used).filter(|left| !left.is_zero())
    }
}

/// Lowers `next` to `at` if `at` is earlier (or `next` is unset).
fn earliest(next: &mut Option<Instant>, at: Instant) {
    *next = Some(next.map_or(at, |n| n.min(at)));
}

struct Entry {
    terminate_at: Instant,
    abandon_at: Instant,
    terminator: Terminator,
    /// Set once the watchdog has terminated the run: why (the message of an abandoned run).
    terminated: Option<StopReason>,
    on_abandon: AbandonAction,
    cpu: Option<CpuBudget>,
    long_run: Option<LongRun>,
}

/// An action to run once at a given instant, on the watchdog's thread.
type Timer = (Instant, Box<dyn FnOnce() + Send>);

#[derive(Default)]
struct State {
    entries: HashMap<u64, Entry>,
    timers: Vec<Timer>,
    next_id: u64,
    shutdown: bool,
    /// Until when the watchdog's thread sleeps: a new entry or timer due later needs no wake-up
    /// (most runs end long before their deadline, so arming one costs no thread wake-up).
    sleep: Sleep,
    /// How many times the thread has woken.
    #[cfg(test)]
    wakes: u64,
}

/// What the watchdog's thread is doing, as last recorded under the state's lock.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
enum Sleep {
    /// Looking at the entries (or about to): it sees whatever is added before it sleeps.
    #[default]
    Awake,
    Until(Instant),
    Forever,
}

impl State {
    /// Whether something due at `due` needs the thread woken to be seen in time.
    fn must_wake_for(&self, due: Instant) -> bool {
        match self.sleep {
            Sleep::Awake => false,
            Sleep::Until(at) => due < at,
            Sleep::Forever => true,
        }
    }
}

struct Inner {
    state: Mutex<State>,
    wake: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub struct Watchdog {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// Keeps a run under watch until dropped.
pub struct Armed {
    id: u64,
    inner: Arc<Inner>,
}

impl Drop for Armed {
    fn drop(&mut self) {
        self.inner.lock().entries.remove(&self.id);
    }
}

impl Watchdog {
    pub fn start() -> Watchdog {
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let thread_inner = inner.clone();
        let thread = std::thread::Builder::new()
            .name("codemode-watchdog".into())
            .spawn(move || watch(&thread_inner))
            .expect("spawn the watchdog thread");
        Watchdog {
            inner,
            thread: Mutex::new(Some(thread)),
        }
    }

    /// Watches a run: terminate at `terminate_at`, abandon at `abandon_at` if still running;
    /// `long_run` fires once if the run, still watched and not stopped, has used its CPU.
    pub fn arm(
        &self,
        terminate_at: Instant,
        abandon_at: Instant,
        terminator: Terminator,
        on_abandon: AbandonAction,
        cpu: Option<CpuBudget>,
        long_run: Option<LongRun>,
    ) -> Armed {
        let mut due = terminate_at;
        if let Some(cpu) = &cpu {
            // Read from the run's clock just before arming: what is left is the budget (less
            // microseconds), and reading the clock again would be a syscall on every run.
            due = due.min(Instant::now() + cpu.budget);
        }
        if let Some(long_run) = &long_run {
            due = due.min(long_run.check_at);
        }
        let mut state = self.inner.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.entries.insert(
            id,
            Entry {
                terminate_at,
                abandon_at,
                terminator,
                terminated: None,
                on_abandon,
                cpu,
                long_run,
            },
        );
        let wake = state.must_wake_for(due);
        drop(state);
        if wake {
            self.inner.wake.notify_one();
        }
        Armed {
            id,
            inner: self.inner.clone(),
        }
    }

    /// Runs `action` once at `at` (on the watchdog's thread: it must be short and must not
    /// arm or stop runs itself under a lock the watchdog waits for). Dropped at shutdown.
    pub fn after(&self, at: Instant, action: Box<dyn FnOnce() + Send>) {
        let mut state = self.inner.lock();
        state.timers.push((at, action));
        let wake = state.must_wake_for(at);
        drop(state);
        if wake {
            self.inner.wake.notify_one();
        }
    }

    #[cfg(test)]
    fn wakes(&self) -> u64 {
        self.inner.lock().wakes
    }

    pub fn shutdown(&self) {
        self.inner.lock().shutdown = true;
        self.inner.wake.notify_one();
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

fn watch(inner: &Inner) {
    let mut state = inner.lock();
    loop {
        if state.shutdown {
            return;
        }
        let now = Instant::now();
        let mut abandoned = Vec::new();
        let mut long_runs = Vec::new();
        let mut next: Option<Instant> = None;
        state.entries.retain(|_, entry| {
            if let Some(long_run) = entry.long_run.take() {
                match long_run.still_to_use(now, entry.cpu.as_ref()) {
                    Some(left) => {
                        let check_at = now + left;
                        earliest(&mut next, check_at);
                        entry.long_run = Some(LongRun {
                            check_at,
                            ..long_run
                        });
                    }
                    None if entry.terminated.is_none() => long_runs.push(long_run.action),
                    None => {}
                }
            }
            if entry.terminated.is_none() && now >= entry.terminate_at {
                entry.terminator.terminate(StopReason::Timeout);
                entry.terminated = Some(StopReason::Timeout);
            }
            // A thread uses at most one second of CPU per second, so the budget cannot run out
            // before `now + left`: that is when to look again (no periodic polling).
            let mut cpu_due = None;
            if let (None, Some(cpu)) = (entry.terminated, &entry.cpu) {
                let left = cpu.left();
                if left.is_zero() {
                    entry.terminator.terminate(StopReason::CpuTime);
                    entry.terminated = Some(StopReason::CpuTime);
                    entry.abandon_at = entry.abandon_at.min(now + cpu.abandon_after);
                } else {
                    cpu_due = Some(now + left);
                }
            }
            if entry.terminated.is_some() && now >= entry.abandon_at {
                let message = match (&entry.terminated, &entry.cpu) {
                    (Some(StopReason::CpuTime), Some(cpu)) => {
                        RunError::bound("cpuTimeMs", cpu_message(cpu.budget))
                    }
                    _ => RunError::new(ErrorKind::Timeout, TIMED_OUT),
                };
                abandoned.push((entry.on_abandon.clone(), message));
                return false;
            }
            let due = if entry.terminated.is_some() {
                entry.abandon_at
            } else {
                cpu_due.map_or(entry.terminate_at, |at| at.min(entry.terminate_at))
            };
            earliest(&mut next, due);
            true
        });
        let (due, waiting): (Vec<Timer>, Vec<Timer>) = std::mem::take(&mut state.timers)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        state.timers = waiting;
        for (at, _) in &state.timers {
            earliest(&mut next, *at);
        }
        if !abandoned.is_empty() || !due.is_empty() || !long_runs.is_empty() {
            drop(state);
            for action in long_runs {
                action();
            }
            for (action, message) in abandoned {
                fire(&action, message);
            }
            for (_, action) in due {
                action();
            }
            state = inner.lock();
            continue;
        }
        state.sleep = next.map_or(Sleep::Forever, Sleep::Until);
        state = match next {
            Some(at) => inner
                .wake
                .wait_timeout(state, at.saturating_duration_since(now))
                .map(|(s, _)| s)
                .unwrap_or_else(|p| p.into_inner().0),
            None => inner.wake.wait(state).unwrap_or_else(|p| p.into_inner()),
        };
        state.sleep = Sleep::Awake;
        #[cfg(test)]
        {
            state.wakes += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn terminates_then_abandons_a_run_that_does_not_finish() {
        let dog = Watchdog::start();
        let t = Terminator::detached();
        let abandoned = Arc::new(AtomicBool::new(false));
        let flag = abandoned.clone();
        let now = Instant::now();
        let _armed = dog.arm(
            now + Duration::from_millis(20),
            now + Duration::from_millis(60),
            t.clone(),
            abandon_action(move |_| flag.store(true, Ordering::SeqCst)),
            None,
            None,
        );
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(t.reason(), Some(StopReason::Timeout));
        assert!(!abandoned.load(Ordering::SeqCst));
        std::thread::sleep(Duration::from_millis(80));
        assert!(abandoned.load(Ordering::SeqCst));
        dog.shutdown();
    }

    #[test]
    fn a_spinning_thread_is_stopped_by_its_cpu_budget_and_a_sleeping_one_is_not() {
        let dog = Watchdog::start();
        let far = Instant::now() + Duration::from_secs(60);
        let budget = Duration::from_millis(30);
        let spin = Terminator::detached();
        let spinning = {
            let (dog_spin, t) = (&dog, spin.clone());
            std::thread::scope(|scope| {
                let handle = scope.spawn(move || {
                    let cpu = CpuBudget::for_this_thread(budget, Duration::from_secs(5));
                    let _armed =
                        dog_spin.arm(far, far, t.clone(), abandon_action(|_| {}), cpu, None);
                    let started = Instant::now();
                    while t.reason().is_none() && started.elapsed() < Duration::from_secs(5) {
                        std::hint::spin_loop();
                    }
                    started.elapsed()
                });
                handle.join().unwrap()
            })
        };
        assert_eq!(spin.reason(), Some(StopReason::CpuTime));
        assert!(
            spinning < Duration::from_secs(2),
            "stopped after {spinning:?}"
        );
        // Sleeping three budgets long costs no CPU: not stopped.
        let idle = Terminator::detached();
        std::thread::scope(|scope| {
            let (dog_idle, t) = (&dog, idle.clone());
            scope.spawn(move || {
                let cpu = CpuBudget::for_this_thread(budget, Duration::from_secs(5));
                let _armed = dog_idle.arm(far, far, t, abandon_action(|_| {}), cpu, None);
                std::thread::sleep(budget * 3);
            });
        });
        assert_eq!(idle.reason(), None);
        dog.shutdown();
    }

    #[test]
    fn a_timer_fires_once_at_its_instant() {
        let dog = Watchdog::start();
        let fired = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let count = fired.clone();
        let at = Instant::now() + Duration::from_millis(30);
        dog.after(
            at,
            Box::new(move || {
                assert!(Instant::now() >= at);
                count.fetch_add(1, Ordering::SeqCst);
            }),
        );
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(fired.load(Ordering::SeqCst), 0);
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        dog.shutdown();
    }

    #[test]
    fn a_disarmed_run_is_left_alone() {
        let dog = Watchdog::start();
        let t = Terminator::detached();
        let now = Instant::now();
        let armed = dog.arm(
            now + Duration::from_millis(30),
            now + Duration::from_millis(40),
            t.clone(),
            abandon_action(|_| panic!("abandoned")),
            None,
            None,
        );
        drop(armed);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(t.reason(), None);
        dog.shutdown();
    }

    #[test]
    fn arming_a_run_due_after_the_next_wake_up_does_not_wake_the_thread_and_an_earlier_one_does() {
        let dog = Watchdog::start();
        let never = || abandon_action(|_| {});
        let far = Instant::now() + Duration::from_secs(60);
        let first = Terminator::detached();
        let _first = dog.arm(far, far, first, never(), None, None);
        std::thread::sleep(Duration::from_millis(30));
        let settled = dog.wakes();
        let later = far + Duration::from_secs(1);
        let armed: Vec<_> = (0..50)
            .map(|_| dog.arm(later, later, Terminator::detached(), never(), None, None))
            .collect();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(
            dog.wakes(),
            settled,
            "runs due later than the next wake-up woke the watchdog"
        );
        drop(armed);
        let soon = Terminator::detached();
        let at = Instant::now() + Duration::from_millis(20);
        let _soon = dog.arm(at, far, soon.clone(), never(), None, None);
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(soon.reason(), Some(StopReason::Timeout));
        dog.shutdown();
    }

    #[test]
    fn the_long_run_action_fires_once_for_a_run_still_watched_and_never_after_it_ended() {
        let dog = Watchdog::start();
        let far = Instant::now() + Duration::from_secs(60);
        let t = Terminator::detached();
        let counter = || Arc::new(std::sync::atomic::AtomicUsize::new(0));
        // Arms a run whose long-run action counts in `fired`, with or without a CPU clock.
        let arm = |fired: &Arc<std::sync::atomic::AtomicUsize>, cpu: Option<CpuBudget>| {
            let fired = fired.clone();
            let action = Box::new(move || {
                fired.fetch_add(1, Ordering::SeqCst);
            });
            let long_run = Some(LongRun::after_cpu(Duration::from_millis(20), action));
            dog.arm(far, far, t.clone(), abandon_action(|_| {}), cpu, long_run)
        };
        let (held, ended, idle, spinning) = (counter(), counter(), counter(), counter());
        let _still_running = arm(&held, None);
        drop(arm(&ended, None));
        // On this thread's CPU clock: sleeping uses none, so the action waits; spinning fires it.
        let cpu = || CpuBudget::for_this_thread(Duration::from_secs(60), far - Instant::now());
        let idle_run = arm(&idle, cpu());
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(held.load(Ordering::SeqCst), 1);
        assert_eq!(ended.load(Ordering::SeqCst), 0);
        assert_eq!(
            idle.load(Ordering::SeqCst),
            0,
            "a run that used no CPU is not long"
        );
        drop(idle_run);
        let _spinning = arm(&spinning, cpu());
        let spin_until = Instant::now() + Duration::from_millis(80);
        while Instant::now() < spin_until {
            std::hint::spin_loop();
        }
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(
            spinning.load(Ordering::SeqCst),
            1,
            "a run that used its CPU is long"
        );
        assert_eq!(t.reason(), None, "a long run is not stopped for being long");
        dog.shutdown();
    }
}
