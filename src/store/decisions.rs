//! Decisions on a run's calls: what a pass does with each call (`decide`), recording its result,
//! and a person's word on what waits (approve through `resume`, `reject`, `mark_done`, expiry).

use super::rows::*;
use super::*;

impl Store {
    /// A person's word on a call in doubt: it did take effect, with `result` (storage-codec
    /// JSON). The run stays paused (approve continues it). False when the entry is not in doubt.
    pub fn mark_done(
        &self,
        runtime: &str,
        id: &str,
        seq: i64,
        result: Option<&str>,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            let Some((_, Some(Recorded { entry, .. }))) = standing_at(tx, runtime, id, seq)? else {
                return Ok(false);
            };
            if entry.state != EntryState::InDoubt {
                return Ok(false);
            }
            tx.execute(
                "UPDATE cm_log SET result = ?4, state = ?5
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                args![runtime, id, seq, result, EntryState::Applied],
            )?;
            touch(tx, runtime, id, now_ms())?;
            Ok(true)
        })
    }

    /// The replay decision for one call (docs/cloudflare-compat.md §6.5), in one transaction.
    /// Only the run's owner gets anything but `Pause`.
    pub fn decide(
        &self,
        runtime: &str,
        id: &str,
        owner: &str,
        call: &Call<'_>,
    ) -> StoreResult<Decision> {
        Ok(self.decide_delivered(runtime, id, owner, call)?.0)
    }

    /// `decide`, with the recorded result's place in the delivery order when the call has one
    /// (a replay, or a read re-executed on every pass): the pass hands it to the program in
    /// that place.
    pub fn decide_delivered(
        &self,
        runtime: &str,
        id: &str,
        owner: &str,
        call: &Call<'_>,
    ) -> StoreResult<(Decision, Option<Delivery>)> {
        self.write(|tx| {
            let Some((
                Standing {
                    status,
                    owner: holder,
                    ..
                },
                recorded,
            )) = standing_at(tx, runtime, id, call.seq)?
            else {
                return Err(StoreError::missing(format!("No execution \"{id}\"")));
            };
            if status != Status::Running || holder.as_deref() != Some(owner) {
                return Ok((Decision::Pause, None));
            }
            let now = now_ms();
            if let Some(Recorded {
                entry,
                stable: recorded_stable,
            }) = recorded
            {
                if entry.connector != call.connector || entry.method != call.method {
                    let detail = format!(
                        "expected {}.{}, got {}.{}. Code must be deterministic up to tool calls and steps. Wrap nondeterministic work in codemode.step(name, fn).",
                        entry.connector, entry.method, call.connector, call.method
                    );
                    fail_run(tx, runtime, id, call.seq, &divergence(call.seq, &detail), now)?;
                    return Ok((Decision::Pause, None));
                }
                if let (Some(recorded), Some(now_stable)) = (&recorded_stable, &call.args_stable) {
                    if recorded != now_stable {
                        let detail = format!(
                            "{}.{} was called with different arguments than the recorded run. Arguments must be deterministic across replays. Wrap nondeterministic inputs in codemode.step(name, fn).",
                            call.connector, call.method
                        );
                        fail_run(tx, runtime, id, call.seq, &divergence(call.seq, &detail), now)?;
                        return Ok((Decision::Pause, None));
                    }
                }
                match entry.state {
                    EntryState::Applied if entry.ephemeral => {
                        return Ok((Decision::Execute, entry.delivery))
                    }
                    EntryState::Applied => {
                        return Ok((Decision::Replay(entry.result), entry.delivery))
                    }
                    EntryState::Pending => {
                        // Approved since: claim it before executing, so a concurrent reject
                        // (which only acts on `pending`) finds nothing to do.
                        set_entry_state(tx, runtime, id, call.seq, EntryState::Executing)?;
                        touch(tx, runtime, id, now)?;
                        return Ok((Decision::Execute, None));
                    }
                    // Claimed by an earlier pass that never recorded it: the effect may or may
                    // not have happened. An idempotent tool (or a read re-executed on every
                    // pass) runs again with the same key; any other waits for a person.
                    EntryState::Executing | EntryState::InDoubt
                        if call.idempotent || entry.ephemeral =>
                    {
                        set_entry_state(tx, runtime, id, call.seq, EntryState::Executing)?;
                        touch(tx, runtime, id, now)?;
                        return Ok((Decision::Execute, None));
                    }
                    EntryState::Executing | EntryState::InDoubt => {
                        set_entry_state(tx, runtime, id, call.seq, EntryState::InDoubt)?;
                        tx.execute(
                            "UPDATE cm_executions SET status = ?4, updated_at = ?3
                             WHERE runtime = ?1 AND id = ?2",
                            args![runtime, id, now, Status::Paused],
                        )?;
                        return Ok((Decision::Pause, None));
                    }
                    // Recorded again as a fresh call.
                    EntryState::Reverted | EntryState::Error => {}
                }
            }
            // A fresh call.
            let args = match &call.args {
                Ok(args) => args.as_deref(),
                Err(message) => {
                    fail_run(tx, runtime, id, call.seq, message, now)?;
                    return Ok((Decision::Pause, None));
                }
            };
            let state = if call.requires_approval {
                EntryState::Pending
            } else {
                EntryState::Executing
            };
            write_entry(tx, runtime, id, call, args, state)?;
            if call.requires_approval {
                tx.execute(
                    "UPDATE cm_executions SET status = ?4, updated_at = ?3
                     WHERE runtime = ?1 AND id = ?2",
                    args![runtime, id, now, Status::Paused],
                )?;
                return Ok((Decision::Pause, None));
            }
            touch(tx, runtime, id, now)?;
            Ok((Decision::Execute, None))
        })
    }

    /// Records a call's result (`Err`: why it cannot be recorded, which fails the run).
    pub fn record_result(
        &self,
        runtime: &str,
        id: &str,
        seq: i64,
        result: Result<Option<String>, String>,
    ) -> StoreResult<Option<Delivery>> {
        self.write(|tx| {
            let Some((_, Some(Recorded { entry, .. }))) = standing_at(tx, runtime, id, seq)? else {
                return Err(StoreError::missing(format!("No log entry at step {seq}")));
            };
            let now = now_ms();
            if matches!(entry.state, EntryState::Reverted | EntryState::Error) {
                // A late result of a pass that lost the run: it was rolled back or failed
                // meanwhile, and that stands.
                return Ok(None);
            }
            let stored = if entry.ephemeral {
                None
            } else {
                match &result {
                    Ok(value) => value.as_deref(),
                    Err(message) => {
                        fail_run(tx, runtime, id, seq, message, now)?;
                        return Ok(None);
                    }
                }
            };
            // The next place in the delivery order, unless it has one (a read re-executed on
            // every pass keeps its first). `standing_at` holds the run's row, so two results
            // of one run never take the same place.
            let delivery = match entry.delivery {
                Some(delivery) => delivery,
                None => {
                    let mut row = tx
                        .query_opt(
                            "SELECT COALESCE(MAX(delivered) + 1, 0) FROM cm_log
                             WHERE runtime = ?1 AND execution_id = ?2",
                            args![runtime, id],
                        )?
                        .ok_or_else(|| {
                            StoreError::io("the delivery order could not be read".into())
                        })?;
                    Delivery {
                        ordinal: row.get(0)?,
                        at: now,
                    }
                }
            };
            tx.execute(
                "UPDATE cm_log SET result = ?4, state = ?5, delivered = ?6, delivered_at = ?7
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                args![
                    runtime,
                    id,
                    seq,
                    stored,
                    EntryState::Applied,
                    delivery.ordinal,
                    delivery.at
                ],
            )?;
            touch(tx, runtime, id, now)?;
            Ok(Some(delivery))
        })
    }

    /// Pending actions: of one execution (only while it is paused), or of every paused one
    /// (newest execution first, seq ascending within one).
    pub fn list_pending(&self, runtime: &str, id: Option<&str>) -> StoreResult<Vec<Pending>> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT l.execution_id, l.seq, l.connector, l.method, l.args, l.state
                 FROM cm_log l JOIN cm_executions e ON e.runtime = l.runtime AND e.id = l.execution_id
                 WHERE l.runtime = ?1 AND l.state IN (?3, ?5) AND e.status = ?4
                   AND (CAST(?2 AS TEXT) IS NULL OR e.id = ?2)
                 ORDER BY e.created_at DESC, e.id DESC, l.seq ASC",
                args![
                    runtime,
                    id,
                    EntryState::Pending,
                    Status::Paused,
                    EntryState::InDoubt
                ],
            )?;
            rows.into_iter()
                .map(|mut r| {
                    Ok(Pending {
                        execution_id: r.get(0)?,
                        seq: r.get(1)?,
                        connector: r.get(2)?,
                        method: r.get(3)?,
                        args: r.get(4)?,
                        in_doubt: r.get::<EntryState>(5)? == EntryState::InDoubt,
                    })
                })
                .collect()
        })
    }

    /// Rejects the pending action at `seq` (or declines to retry a call in doubt): a pending
    /// entry is reverted (one in doubt stays in doubt: its effect may be in force, for a
    /// rollback to undo) and the run rejected. `NotPending` (and no change) when the entry is
    /// not waiting — a stale reject after an approval; `Leased` while the pass that paused the
    /// run still holds it.
    pub fn reject(&self, runtime: &str, id: &str, seq: i64) -> StoreResult<Rejected> {
        self.write(|tx| {
            let Some((
                Standing {
                    status,
                    lease_until: until,
                    ..
                },
                Some(Recorded { entry, .. }),
            )) = standing_at(tx, runtime, id, seq)?
            else {
                return Ok(Rejected::NotPending);
            };
            let now = now_ms();
            let waiting = matches!(entry.state, EntryState::Pending | EntryState::InDoubt);
            if !waiting || status != Status::Paused {
                return Ok(Rejected::NotPending);
            }
            if live(until, now) {
                return Ok(Rejected::Leased);
            }
            if entry.state == EntryState::InDoubt {
                let error = format!(
                    "Action {}.{} (in doubt) declined by user",
                    entry.connector, entry.method
                );
                end_run(tx, runtime, id, Status::Rejected, &error, now)?;
                return Ok(Rejected::Rejected);
            }
            set_entry_state(tx, runtime, id, seq, EntryState::Reverted)?;
            let error = format!(
                "Action {}.{} rejected by user",
                entry.connector, entry.method
            );
            tx.execute(
                "UPDATE cm_executions SET status = ?5, error = ?3, updated_at = ?4
                 WHERE runtime = ?1 AND id = ?2",
                args![runtime, id, &error, now, Status::Rejected],
            )?;
            Ok(Rejected::Rejected)
        })
    }

    /// Expires paused runs (→ rejected) and orphaned running ones (→ error) not updated for
    /// `max_age_ms`; their pending entries become reverted. A run whose lease is live (a pass
    /// holds it, in this process or another) is never expired. Returns the ids changed.
    pub fn expire_paused(&self, runtime: &str, max_age_ms: i64) -> StoreResult<Vec<String>> {
        self.write(|tx| {
            let now = now_ms();
            let cutoff = now.saturating_sub(max_age_ms);
            let stale = tx.query(
                "SELECT id, status FROM cm_executions
                 WHERE runtime = ?1 AND status IN (?3, ?4) AND updated_at < ?2
                   AND (lease_until IS NULL OR lease_until < ?5)
                 ORDER BY created_at DESC, id DESC",
                args![runtime, cutoff, Status::Paused, Status::Running, now],
            )?;
            let mut changed = Vec::new();
            for mut row in stale {
                let id: String = row.get(0)?;
                // Selected above without holding it: looked at again once held (on SQLite the
                // transaction holds the file, and nothing changed since).
                let Some(run) = standing(tx, runtime, &id)? else {
                    continue;
                };
                if run.updated_at >= cutoff || live(run.lease_until, now) {
                    continue;
                }
                let (next, error) = match run.status {
                    Status::Paused => (Status::Rejected, "Expired awaiting approval"),
                    Status::Running => (
                        Status::Error,
                        "Expired while running — the host never completed the pass",
                    ),
                    _ => continue,
                };
                end_run(tx, runtime, &id, next, error, now)?;
                changed.push(id);
            }
            Ok(changed)
        })
    }
}
