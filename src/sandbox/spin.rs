//! Taking a tool reply without a wake-up. A thread that sleeps and is woken costs tens of
//! microseconds when its CPU has gone idle meanwhile (more on a loaded machine, and in a VM,
//! where waking an idle CPU exits to the hypervisor): in a program of sequential tool calls
//! that is most of each round trip. So a run awaiting a reply first polls for it for a short
//! budget, and sleeps only if it has not come.
//!
//! Polling costs CPU only when the reply is late; a run whose replies keep missing the budget
//! (a slow tool, a host busy with many runs) stops polling for a growing number of awaits, so
//! a loaded pool does not spend its cores polling, and tries again now and then.

use crate::bridge::{InputPump, RunEvent};
use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// How long one await polls. Measured on 2 cores, 500 sequential awaited calls per run, median
/// per call: 'thread' 67 → 22 µs, 'process' 98 → 38 µs; 100 µs gained nothing more.
pub(crate) const REPLY_SPIN: Duration = Duration::from_micros(50);

/// The most awaits skipped after replies kept missing the budget.
const MAX_SKIP: u32 = 31;

/// One run's polling policy.
#[derive(Debug, Default)]
pub(crate) struct ReplySpin {
    /// Awaits to skip after the next miss (grows on misses, 0 after a hit).
    skip: u32,
    /// Awaits still to be waited for without polling.
    skip_left: u32,
}

impl ReplySpin {
    /// How long the next await polls.
    pub(crate) fn budget(&mut self) -> Duration {
        if self.skip_left > 0 {
            self.skip_left -= 1;
            return Duration::ZERO;
        }
        REPLY_SPIN
    }

    /// What the await that polled for `budget` found: the reply within it (`caught`), or not.
    pub(crate) fn record(&mut self, budget: Duration, caught: bool) {
        if budget.is_zero() {
            return;
        }
        if caught {
            self.skip = 0;
        } else {
            self.skip = (self.skip * 2 + 1).min(MAX_SKIP);
            self.skip_left = self.skip;
        }
    }
}

/// The next event of a run awaiting a tool reply: polled for `budget`, then waited for until
/// `wake_at`. The flag says whether it came while polling. While it polls, the run reads the
/// host's messages itself through `pump` (when there is one), so a reply that arrives then
/// wakes no other thread on its way; after that it waits on the host's messages themselves when
/// the pump lets it lead, so a later reply wakes only this run.
pub(crate) fn await_reply(
    events: &Receiver<RunEvent>,
    pump: Option<&dyn InputPump>,
    wake_at: Instant,
    budget: Duration,
) -> (Result<RunEvent, RecvTimeoutError>, bool) {
    if !budget.is_zero() {
        let poll_until = (Instant::now() + budget).min(wake_at);
        loop {
            if let Some(pump) = pump {
                pump.pump();
            }
            match events.try_recv() {
                Ok(event) => return (Ok(event), true),
                Err(TryRecvError::Disconnected) => {
                    return (Err(RecvTimeoutError::Disconnected), true)
                }
                Err(TryRecvError::Empty) => {}
            }
            if Instant::now() >= poll_until {
                break;
            }
            std::hint::spin_loop();
        }
    }
    match pump.and_then(|pump| pump.lead(&|| !events.is_empty(), Some(wake_at))) {
        Some(true) => {
            if let Ok(event) = events.try_recv() {
                return (Ok(event), false);
            }
        }
        Some(false) => return (Err(RecvTimeoutError::Timeout), false),
        None => {}
    }
    (events.recv_deadline(wake_at), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_back_off_and_a_hit_restores_polling() {
        let mut spin = ReplySpin::default();
        assert_eq!(spin.budget(), REPLY_SPIN);
        spin.record(REPLY_SPIN, false);
        // One miss: the next await does not poll, the one after does.
        assert_eq!(spin.budget(), Duration::ZERO);
        spin.record(Duration::ZERO, false);
        assert_eq!(spin.budget(), REPLY_SPIN);
        spin.record(REPLY_SPIN, false);
        let skipped = (0..10).take_while(|_| spin.budget().is_zero()).count();
        assert_eq!(skipped, 3, "the second miss in a row skips three awaits");
        spin.record(REPLY_SPIN, true);
        assert_eq!(spin.budget(), REPLY_SPIN);
        for _ in 0..10 {
            spin.record(REPLY_SPIN, false);
            while spin.budget().is_zero() {}
        }
        assert_eq!(spin.skip, MAX_SKIP);
    }

    /// Stands in for an engine's input: the reply is there only once the run reads it itself.
    struct InputWithReply {
        tx: crossbeam_channel::Sender<RunEvent>,
        pumped: std::sync::atomic::AtomicUsize,
    }

    impl InputPump for InputWithReply {
        fn pump(&self) {
            if self
                .pumped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                == 3
            {
                let json = "{}".into();
                self.tx.send(RunEvent::Reply { call_id: 1, json }).unwrap();
            }
        }

        fn lead(&self, _ready: &dyn Fn() -> bool, _wake_at: Option<Instant>) -> Option<bool> {
            None
        }
    }

    #[test]
    fn a_polling_run_reads_the_input_itself_and_takes_the_reply_it_finds() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let input = InputWithReply {
            tx,
            pumped: Default::default(),
        };
        let far = Instant::now() + Duration::from_secs(5);
        let (event, caught) = await_reply(&rx, Some(&input), far, REPLY_SPIN);
        assert!(matches!(event, Ok(RunEvent::Reply { call_id: 1, .. })));
        assert!(caught, "found while polling, not after sleeping");
        assert_eq!(input.pumped.load(std::sync::atomic::Ordering::Relaxed), 4);
    }

    #[test]
    fn a_reply_already_there_is_taken_at_once_and_a_late_one_after_sleeping() {
        let (tx, rx) = crossbeam_channel::unbounded();
        tx.send(RunEvent::Reply {
            call_id: 1,
            json: "{}".into(),
        })
        .unwrap();
        let far = Instant::now() + Duration::from_secs(5);
        let (event, caught) = await_reply(&rx, None, far, REPLY_SPIN);
        assert!(event.is_ok() && caught);
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.send(RunEvent::Reply {
                call_id: 2,
                json: "{}".into(),
            })
        });
        let (event, caught) = await_reply(&rx, None, far, REPLY_SPIN);
        assert!(event.is_ok() && !caught);
        late.join().unwrap().unwrap();
    }
}
