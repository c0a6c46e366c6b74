//! The engine's input: the host's frames, read by whichever thread gets there first.
//!
//! The input is read by whichever thread gets there first ([`HostFrames`]): the reader thread,
//! asleep in `poll` until bytes arrive, or a run awaiting its tool reply (`bridge::InputPump`).
//! Such a run first polls for the reply, reading the input as it does, and then, if no other
//! run does so already, sleeps in `poll` on the input itself (it "leads"): its reply then wakes
//! the run directly, instead of waking the reader thread, which then wakes the run. The reader
//! thread stays in `poll` beside the leader as a safety net, and reads only what the leader has
//! not taken shortly after (then it wakes the leader, whose event it may have routed). Frames
//! are acted on in the order they came, under the input's lock, by whoever read them.
//!
//! While only one run is in progress and it has led, the reader thread stands aside instead of
//! waiting on the input beside it: that run reads the input itself whenever it awaits, and every
//! host frame would wake both, a second wake-up paid by the host's write and by the reader.
//! Measured with 500-call runs: a third less time per call with two workers, under load half,
//! and a quarter to a half less CPU on both sides (with one worker on a quiet VM it was slower:
//! the reader's wake-ups had kept the host's idle vCPU awake). It comes back to the input when a
//! frame starts another run or that run ends (both wake it), and looks every `STANDBY_CHECK`
//! meanwhile, so a frame that arrives while the run computes waits that long at most.
//!
//! Invariants (each kept in one place below):
//! - Frames are read and acted on only under the input's lock, so in the order they came and
//!   by one thread at a time; a thread acting on them has `IS_READER` set and never blocks on
//!   the host draining the engine's output (`output.rs` queues for it instead).
//! - At most one thread leads: `leader` is taken by compare-exchange in `lead` and given back
//!   when its wait ends; only the leader sleeps in `poll` on the input besides the reader.
//! - No wake-up is lost, by two pairs of SeqCst fences: a thread that acted on frames fences,
//!   then looks at `leader` and wakes it (`read`), while the leader fences after its own read
//!   and before it checks `ready()` (`wait_as_leader`): either the leader sees the event that
//!   was routed, or the router sees the leader. Likewise `stand_by` sets `reader_standby`,
//!   fences, and checks its condition again, while `wake_reader` fences and then reads the flag.
//! - The reader thread stands aside only while exactly one run is in progress and has led
//!   (`may_stand_by`), and at most `STANDBY_CHECK` at a time.
//! - Once a stop is decided (`stopped`), nobody reads again; the stop is sent once.
//!
//! The rest of the engine reaches this through `HostFrames` (the reader thread's loop in
//! `mod.rs`) and `Pump`, the `bridge::InputPump` a run awaiting its reply is given: `pump`
//! (read if free), `lead` (wait on the input until ready) and `run_ended` (wake the reader).

use super::output::IS_READER;
use super::{Engine, Stop};
use crate::bridge::InputPump;
use crate::protocol::{FrameBuffer, HostMessage};
use crossbeam_channel::Sender;
use std::fs::File;
use std::io::ErrorKind;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError, Weak};
use std::time::{Duration, Instant};

/// How long the reader thread sleeps in `poll` before it looks again whether the engine has
/// stopped (a stop decided by a run that read the input).
pub(super) const READER_POLL_MS: i32 = 500;

/// How long the reader thread stands aside at most before it reads what was left unread: the
/// longest a frame waits while the only run in progress computes instead of awaiting.
pub(super) const STANDBY_CHECK: Duration = Duration::from_millis(2);

/// How long the reader thread, woken by bytes while a run leads, gives that run to read them
/// (see [`HostFrames::read_as_reader`]) before it reads them itself.
pub(super) const LEADER_GRACE: Duration = Duration::from_micros(20);

/// The host's frames, read by whichever thread gets there first (see the module comment).
pub(super) struct HostFrames {
    pub(super) input: Mutex<Input>,
    /// The input's descriptor, for waiting on it (the file itself is behind the lock).
    pub(super) fd: std::os::fd::RawFd,
    /// A run leads: it waits for its reply on the input itself (`lead`).
    pub(super) leader: AtomicBool,
    /// Wakes the leading run after another thread acted on frames.
    pub(super) leader_wake: Option<crate::os::EventFd>,
    /// Brings the reader thread back to the input while it stands aside (`stand_by`).
    pub(super) reader_wake: Option<crate::os::EventFd>,
    /// The reader thread stands aside.
    pub(super) reader_standby: AtomicBool,
    pub(super) max_frame: usize,
    /// Where the stop goes, once, whichever thread decides it.
    pub(super) stop: Sender<Stop>,
    pub(super) stopped: AtomicBool,
    pub(super) engine: Engine,
}

pub(super) struct Input {
    pub(super) file: File,
    pub(super) buffer: FrameBuffer,
}

impl HostFrames {
    /// The input, unless another thread holds it.
    pub(super) fn try_input(&self) -> Option<MutexGuard<'_, Input>> {
        match self.input.try_lock() {
            Ok(input) => Some(input),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Whether the reader thread may stand aside: exactly one run is in progress. It reads the
    /// input itself whenever it awaits (it polls, then leads); with more runs in progress none
    /// of them leads, and with none an idle worker may not be leading yet. The reader starts
    /// standing aside only once that run leads (a run that never awaits long enough to lead,
    /// as most short ones, is not worth waking the reader for at its end).
    pub(super) fn may_stand_by(&self, already: bool) -> bool {
        self.engine.runner.runs_in_progress() == 1
            && (already || self.leader.load(Ordering::SeqCst))
    }

    /// The reader thread stands aside while [`Self::may_stand_by`] holds, for `STANDBY_CHECK` at
    /// most, and returns whether it did (false: it should wait on the input). A frame that
    /// starts another run, or the end of the run, wakes it (`wake_reader`); woken, it waits on
    /// the input next time round, whatever the state.
    pub(super) fn stand_by(&self, already: bool) -> bool {
        let Some(wake) = self
            .reader_wake
            .as_ref()
            .filter(|_| self.may_stand_by(already))
        else {
            return false;
        };
        self.reader_standby.store(true, Ordering::SeqCst);
        // Pairs with the fence in `wake_reader`: either the waker sees the flag, or this thread
        // sees the state that changed before it woke.
        fence(Ordering::SeqCst);
        let woken = !self.may_stand_by(true) || wake.wait(STANDBY_CHECK);
        self.reader_standby.store(false, Ordering::SeqCst);
        wake.clear();
        !woken
    }

    /// Brings the reader thread back to the input if it stands aside.
    pub(super) fn wake_reader(&self) {
        fence(Ordering::SeqCst);
        if self.reader_standby.load(Ordering::SeqCst) {
            if let Some(wake) = self.reader_wake.as_ref() {
                wake.notify();
            }
        }
    }

    /// A polling run reads what the host has sent, unless another thread is reading.
    pub(super) fn read_if_free(&self) {
        if let Some(mut input) = self.try_input() {
            self.read(&mut input, false);
        }
    }

    /// The reader thread, woken by bytes on the input, reads them. When a run leads (it waits
    /// for its reply on the input itself, see [`HostFrames::lead`]), the same bytes woke that
    /// run: the reader leaves them to it and only makes sure, briefly, that they were read
    /// (a leader that is slow to run, lowered or short of a core, is then read for).
    pub(super) fn read_as_reader(&self) {
        if self.leader.load(Ordering::SeqCst) {
            let looked_until = Instant::now() + LEADER_GRACE;
            while crate::os::is_readable(self.fd) && Instant::now() < looked_until {
                std::thread::yield_now();
            }
            if !crate::os::is_readable(self.fd) {
                return;
            }
        }
        let mut input = self.input.lock().unwrap_or_else(|p| p.into_inner());
        self.read(&mut input, false);
    }

    /// Reads what the host has sent and acts on each whole frame, in order, until the input has
    /// nothing more for now. A thread other than the leader that acted on frames wakes the
    /// leader: one of them may have been its reply.
    pub(super) fn read(&self, input: &mut Input, by_leader: bool) {
        if self.stopped.load(Ordering::Acquire) {
            return;
        }
        let was_reader = IS_READER.with(|r| r.replace(true));
        let (acted, stop) = self.act_on_input(input);
        IS_READER.with(|r| r.set(was_reader));
        if let Some(stop) = stop {
            self.stopped.store(true, Ordering::Release);
            let _ = self.stop.send(stop);
        }
        if acted && !by_leader {
            // Pairs with the fence in `lead`: the leader either sees the event this thread
            // routed, or this thread sees the leader and wakes it.
            fence(Ordering::SeqCst);
            if let Some(wake) = self.leader_wake.as_ref() {
                if self.leader.load(Ordering::SeqCst) {
                    wake.notify();
                }
            }
        }
    }

    /// A thread waits until `ready()` by reading the input itself: it sleeps in `poll` on the
    /// input and acts on every frame that comes (for any run) until `ready()` holds after one of
    /// them, or `wake_at` passes. A run awaiting its reply waits this way, so the reply wakes
    /// it directly, not the reader thread first and the run after; so does an idle worker
    /// when no run is in progress, so that the next `Execute` wakes the worker that runs it.
    /// One thread leads at a time; `None` when another does, or the engine has stopped (the
    /// caller then waits as usual).
    pub(super) fn lead(&self, ready: &dyn Fn() -> bool, wake_at: Option<Instant>) -> Option<bool> {
        let wake = self.leader_wake.as_ref()?;
        if self
            .leader
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let outcome = self.wait_as_leader(ready, wake_at, wake);
        self.leader.store(false, Ordering::SeqCst);
        outcome
    }

    pub(super) fn wait_as_leader(
        &self,
        ready: &dyn Fn() -> bool,
        wake_at: Option<Instant>,
        wake: &crate::os::EventFd,
    ) -> Option<bool> {
        loop {
            // When another thread holds the input, it routes what it reads and then wakes this
            // one (`read`).
            if let Some(mut input) = self
                .try_input()
                .filter(|_| self.engine.leader_reads.load(Ordering::Relaxed))
            {
                self.read(&mut input, true);
            }
            fence(Ordering::SeqCst);
            if ready() {
                return Some(true);
            }
            if self.stopped.load(Ordering::Acquire) {
                return None;
            }
            let now = Instant::now();
            if wake_at.is_some_and(|at| now >= at) {
                return Some(false);
            }
            let timeout = wake_at.map(|at| at - now);
            if crate::os::wait_readable_or(self.fd, wake, timeout) {
                wake.clear();
            }
        }
    }

    /// Acts on every whole frame in the input, reading more until there is nothing for now.
    /// Returns whether any frame was acted on, and the stop one of them decided.
    pub(super) fn act_on_input(&self, input: &mut Input) -> (bool, Option<Stop>) {
        let Input { file, buffer } = input;
        let mut acted = false;
        loop {
            match buffer.next_frame(self.max_frame) {
                Ok(Some(body)) => {
                    let Ok(message) = HostMessage::decode(&body) else {
                        return (acted, Some(Stop::ProtocolError));
                    };
                    drop(body);
                    acted = true;
                    let starts_run = matches!(
                        message,
                        HostMessage::Execute { .. } | HostMessage::HandleExecute { .. }
                    );
                    let stop = self.engine.handle(message);
                    if starts_run {
                        // Another run may be in progress beside the leading one: then nobody
                        // leads, and the reader must read for both.
                        self.wake_reader();
                    }
                    if let Some(stop) = stop {
                        return (acted, Some(stop));
                    }
                    continue;
                }
                Ok(None) => {}
                Err(_) => return (acted, Some(Stop::ProtocolError)),
            }
            let stop = match buffer.fill(file) {
                // The host closed its end: between frames that is the end of the session, in
                // the middle of one a cut frame.
                Ok(0) if buffer.holds_partial_frame() => Stop::ProtocolError,
                Ok(0) => Stop::Done,
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return (acted, None),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => Stop::ProtocolError,
            };
            return (acted, Some(stop));
        }
    }
}

/// A polling run's way into [`HostFrames`]. Weak: the pool that holds it is itself held by the
/// frames' engine.
pub(super) struct Pump(pub(super) Weak<HostFrames>);

impl InputPump for Pump {
    fn pump(&self) {
        if let Some(frames) = self.0.upgrade() {
            frames.read_if_free();
        }
    }

    fn lead(&self, ready: &dyn Fn() -> bool, wake_at: Option<Instant>) -> Option<bool> {
        self.0.upgrade()?.lead(ready, wake_at)
    }

    fn run_ended(&self) {
        if let Some(frames) = self.0.upgrade() {
            frames.wake_reader();
        }
    }
}
