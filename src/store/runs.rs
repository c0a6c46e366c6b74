//! Runs and their leases: starting a run, resuming it after a decision, holding, giving up and
//! reclaiming it, and ending it (see the state machine in `mod.rs`).

use super::rows::*;
use super::*;

impl Store {
    /// Inserts a `running` execution held by `lease`, then prunes terminal executions beyond
    /// the newest `max_executions` (the new one excepted). With an idempotency `key` that an
    /// execution already has, starts nothing and names that one (ending it with `INTERRUPTED`
    /// first if it was running with a lapsed lease).
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        &self,
        runtime: &str,
        id: &str,
        code: &str,
        connectors_json: &str,
        max_executions: i64,
        lease: &Lease<'_>,
        key: Option<&str>,
    ) -> StoreResult<Begun> {
        self.begin_gated(
            runtime,
            id,
            code,
            connectors_json,
            max_executions,
            lease,
            key,
            None,
        )
    }

    /// `begin`, and with `gate` the run starts paused before its first statement: its log's
    /// first entry (seq 0, `codemode.program`) is the program itself awaiting approval, written
    /// in the same transaction, so no crash can leave the run able to start unapproved. Passes
    /// then decide seq 0 like any call: approved, it runs; rejected, nothing of it ran.
    #[allow(clippy::too_many_arguments)]
    pub fn begin_gated(
        &self,
        runtime: &str,
        id: &str,
        code: &str,
        connectors_json: &str,
        max_executions: i64,
        lease: &Lease<'_>,
        key: Option<&str>,
        gate: Option<&ProgramGate>,
    ) -> StoreResult<Begun> {
        let seed = fresh_seed()?;
        let begun = self.write(|tx| {
            let now = now_ms();
            // Inserted unless the key (or, never in practice, the id) is taken: a concurrent
            // begin with the same key waits here for the other to commit, then inserts nothing.
            let inserted = tx.execute(
                "INSERT INTO cm_executions
                   (runtime, id, code, status, connectors, created_at, updated_at, owner,
                    lease_until, idempotency_key, seed)
                 VALUES (?1, ?2, ?3, ?6, ?4, ?5, ?5, ?7, ?8, ?9, ?10)
                 ON CONFLICT DO NOTHING",
                args![
                    runtime,
                    id,
                    code,
                    connectors_json,
                    now,
                    Status::Running,
                    lease.owner,
                    lease.until_ms,
                    key,
                    seed.as_str()
                ],
            )?;
            if inserted == 1 {
                if let Some(gate) = gate {
                    let program = Call {
                        seq: 0,
                        connector: PROGRAM_GATE_CONNECTOR,
                        method: PROGRAM_GATE_METHOD,
                        args: Ok(Some(gate.args.clone())),
                        args_stable: Some(gate.args_stable.clone()),
                        recorded_stable: Some(gate.args_stable.clone()),
                        requires_approval: true,
                        ephemeral: false,
                        idempotent: false,
                    };
                    write_entry(
                        tx,
                        runtime,
                        id,
                        &program,
                        Some(&gate.args),
                        EntryState::Pending,
                    )?;
                    tx.execute(
                        "UPDATE cm_executions SET status = ?3, owner = NULL, lease_until = NULL
                         WHERE runtime = ?1 AND id = ?2",
                        args![runtime, id, Status::Paused],
                    )?;
                }
                return Ok(Begun::Started);
            }
            let Some(key) = key else {
                return Err(StoreError::io(format!(
                    "codemode store: an execution \"{id}\" exists already"
                )));
            };
            let mut row = tx
                .query_opt(
                    "SELECT id FROM cm_executions WHERE runtime = ?1 AND idempotency_key = ?2",
                    args![runtime, key],
                )?
                .ok_or_else(|| {
                    StoreError::io(format!(
                        "codemode store: an execution \"{id}\" exists already"
                    ))
                })?;
            let existing: String = row.get(0)?;
            if let Some(run) = standing(tx, runtime, &existing)? {
                if run.status == Status::Running && !live(run.lease_until, now) {
                    end_run(tx, runtime, &existing, Status::Error, INTERRUPTED, now)?;
                }
            }
            Ok(Begun::Existing(existing))
        })?;
        // Housekeeping in a transaction of its own: it reads many runs, and starting one need
        // not wait for that (a crash between the two leaves the pruning to the next begin).
        if begun == Begun::Started {
            self.write(|tx| prune(tx, runtime, max_executions, Some(id)))?;
        }
        Ok(begun)
    }

    /// A paused execution becomes running again, held by `lease`, with its calls in doubt
    /// approved for a retry. With `seq`, only if that is the one action waiting.
    pub fn resume(
        &self,
        runtime: &str,
        id: &str,
        lease: &Lease<'_>,
        seq: Option<i64>,
    ) -> StoreResult<Resumed> {
        self.write(|tx| {
            let now = now_ms();
            let Some(Standing {
                status,
                lease_until: until,
                ..
            }) = standing(tx, runtime, id)?
            else {
                return Ok(Resumed::Missing);
            };
            if status != Status::Paused {
                return Ok(Resumed::NotPaused(status));
            }
            if live(until, now) {
                return Ok(Resumed::Leased);
            }
            let waiting = waiting_seqs(tx, runtime, id)?;
            if let Some(seq) = seq {
                if waiting != [seq] {
                    return Ok(Resumed::Stale(waiting));
                }
            }
            tx.execute(
                "UPDATE cm_log SET state = ?3
                 WHERE runtime = ?1 AND execution_id = ?2 AND state = ?4",
                args![runtime, id, EntryState::Pending, EntryState::InDoubt],
            )?;
            tx.execute(
                "UPDATE cm_executions SET status = ?4, updated_at = ?3, owner = ?5, lease_until = ?6
                 WHERE runtime = ?1 AND id = ?2",
                args![runtime, id, now, Status::Running, lease.owner, lease.until_ms],
            )?;
            Ok(Resumed::Resumed)
        })
    }

    /// Extends the caller's lease on a run it holds (running or paused); false when it no
    /// longer holds it.
    pub fn renew(&self, runtime: &str, id: &str, lease: &Lease<'_>) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE cm_executions SET lease_until = ?4
                 WHERE runtime = ?1 AND id = ?2 AND owner = ?3",
                args![runtime, id, lease.owner, lease.until_ms],
            )? == 1)
        })
    }

    /// Gives up `owner`'s hold on a run: the caller's own (the pass ended with the run paused,
    /// or was interrupted by a fault of the machinery: the run stays where it was, orphaned,
    /// for a retry), or that of an owner known to be dead (its process is gone), so the run is
    /// orphaned now rather than when the lease lapses. False when `owner` did not hold it.
    pub fn release(&self, runtime: &str, id: &str, owner: &str) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE cm_executions SET owner = NULL, lease_until = NULL
                 WHERE runtime = ?1 AND id = ?2 AND owner = ?3",
                args![runtime, id, owner],
            )? == 1)
        })
    }

    /// Takes an orphaned run (running, no live lease) for a recovering pass; false when it is
    /// not orphaned (any more).
    pub fn claim(&self, runtime: &str, id: &str, lease: &Lease<'_>) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE cm_executions SET owner = ?3, lease_until = ?4, updated_at = ?5
                 WHERE runtime = ?1 AND id = ?2 AND status = ?6
                   AND (lease_until IS NULL OR lease_until < ?5)",
                args![
                    runtime,
                    id,
                    lease.owner,
                    lease.until_ms,
                    now_ms(),
                    Status::Running
                ],
            )? == 1)
        })
    }

    /// Running executions and their holders, oldest first (what recovery looks at).
    pub fn running(&self, runtime: &str) -> StoreResult<Vec<RunningRun>> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT id, owner, lease_until, idempotency_key FROM cm_executions
                 WHERE runtime = ?1 AND status = ?2 ORDER BY created_at, id",
                args![runtime, Status::Running],
            )?;
            rows.into_iter()
                .map(|mut r| {
                    Ok(RunningRun {
                        id: r.get(0)?,
                        owner: r.get(1)?,
                        lease_until: r.get(2)?,
                        idempotency_key: r.get(3)?,
                    })
                })
                .collect()
        })
    }

    /// Completes a running execution the caller holds, giving up the lease. False (no change)
    /// when it is no longer running or no longer the caller's: a concurrent reject or expiry
    /// already ended it, and that outcome stands.
    pub fn complete(
        &self,
        runtime: &str,
        id: &str,
        owner: &str,
        result: Option<&str>,
        logs_json: Option<&str>,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE cm_executions SET status = ?6, result = ?3, logs = ?4, updated_at = ?5,
                   owner = NULL, lease_until = NULL
                 WHERE runtime = ?1 AND id = ?2 AND status = ?7 AND owner = ?8",
                args![
                    runtime,
                    id,
                    result,
                    logs_json,
                    now_ms(),
                    Status::Completed,
                    Status::Running,
                    owner
                ],
            )? == 1)
        })
    }

    /// Fails a running execution the caller holds, giving up the lease. False (no change)
    /// when it is no longer running or no longer the caller's.
    pub fn fail(
        &self,
        runtime: &str,
        id: &str,
        owner: &str,
        error: &str,
        logs_json: Option<&str>,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE cm_executions SET status = ?6, error = ?3, logs = ?4, updated_at = ?5,
                   owner = NULL, lease_until = NULL
                 WHERE runtime = ?1 AND id = ?2 AND status = ?7 AND owner = ?8",
                args![
                    runtime,
                    id,
                    cut_utf16(error, MAX_DURABLE_UNITS),
                    logs_json,
                    now_ms(),
                    Status::Error,
                    Status::Running,
                    owner
                ],
            )? == 1)
        })
    }
}
