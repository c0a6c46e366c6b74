//! Administration: reading runs and their logs, rolling back, deleting and pruning runs, and
//! saved snippets.

use super::rows::*;
use super::*;

impl Store {
    /// Entries other than steps whose effect is or may be in force, newest first (what a
    /// rollback reverts): applied ones, and those executing or in doubt (result unknown).
    pub fn actions_to_revert(&self, runtime: &str, id: &str) -> StoreResult<Vec<LogEntry>> {
        self.read(|tx| {
            let rows = tx.query(
                concat!(
                    "SELECT ",
                    entry_columns!(),
                    " FROM cm_log
                     WHERE runtime = ?1 AND execution_id = ?2 AND state IN (?4, ?5, ?6)
                       AND connector <> ?3
                     ORDER BY seq DESC"
                ),
                args![
                    runtime,
                    id,
                    STEP_CONNECTOR,
                    EntryState::Applied,
                    EntryState::Executing,
                    EntryState::InDoubt
                ],
            )?;
            rows.into_iter().map(entry_row).collect()
        })
    }

    /// The entry at `seq` was reverted (no-op if missing); a failure an earlier rollback
    /// recorded on it is cleared.
    pub fn mark_reverted(&self, runtime: &str, id: &str, seq: i64) -> StoreResult<()> {
        self.write(|tx| {
            if let Some((_, Some(_))) = standing_at(tx, runtime, id, seq)? {
                set_entry_state(tx, runtime, id, seq, EntryState::Reverted)?;
                tx.execute(
                    "UPDATE cm_log SET revert_error = NULL
                     WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                    args![runtime, id, seq],
                )?;
                touch(tx, runtime, id, now_ms())?;
            }
            Ok(())
        })
    }

    /// A rollback could not revert the entry at `seq`, whose effect is or may be in force
    /// (applied, executing or in doubt): records why, for the execution's record to show what
    /// the rollback left in force. The entry keeps its state. False when there is no such
    /// entry in one of those states.
    pub fn mark_revert_failed(
        &self,
        runtime: &str,
        id: &str,
        seq: i64,
        error: &str,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            let Some((_, Some(Recorded { entry, .. }))) = standing_at(tx, runtime, id, seq)? else {
                return Ok(false);
            };
            if !matches!(
                entry.state,
                EntryState::Applied | EntryState::Executing | EntryState::InDoubt
            ) {
                return Ok(false);
            }
            tx.execute(
                "UPDATE cm_log SET revert_error = ?4
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                args![runtime, id, seq, cut_utf16(error, MAX_DURABLE_UNITS)],
            )?;
            touch(tx, runtime, id, now_ms())?;
            Ok(true)
        })
    }

    pub fn mark_rolled_back(&self, runtime: &str, id: &str) -> StoreResult<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE cm_executions SET status = ?4, updated_at = ?3
                 WHERE runtime = ?1 AND id = ?2",
                args![runtime, id, now_ms(), Status::RolledBack],
            )?;
            Ok(())
        })
    }

    pub fn get_execution(&self, runtime: &str, id: &str) -> StoreResult<Option<Execution>> {
        self.read(|tx| {
            let row = tx.query_opt(
                concat!(
                    "SELECT ",
                    execution_columns!(),
                    " FROM cm_executions WHERE runtime = ?1 AND id = ?2"
                ),
                args![runtime, id],
            )?;
            match row {
                None => Ok(None),
                Some(row) => {
                    let mut e = execution_row(row)?;
                    e.log = log_of(tx, runtime, id)?;
                    Ok(Some(e))
                }
            }
        })
    }

    /// What a pass needs to hand results to the program as earlier passes did (issue 36), in one
    /// query: the places earlier passes recorded, the clock at the program's start (when the run
    /// began, or when its program was approved), and the run's seed. `None`: no such run.
    pub fn replay_plan(&self, runtime: &str, id: &str) -> StoreResult<Option<ReplayPlan>> {
        self.read(|tx| {
            let row = tx.query_opt(
                "SELECT e.created_at, e.seed,
                        (SELECT COALESCE(MAX(l.delivered) + 1, 0) FROM cm_log l
                          WHERE l.runtime = e.runtime AND l.execution_id = e.id),
                        (SELECT g.delivered_at FROM cm_log g
                          WHERE g.runtime = e.runtime AND g.execution_id = e.id AND g.seq = 0
                            AND g.connector = ?3 AND g.method = ?4)
                 FROM cm_executions e WHERE e.runtime = ?1 AND e.id = ?2",
                args![runtime, id, PROGRAM_GATE_CONNECTOR, PROGRAM_GATE_METHOD],
            )?;
            let Some(mut row) = row else {
                return Ok(None);
            };
            let created_at: i64 = row.get(0)?;
            let approved_at: Option<i64> = row.get(3)?;
            Ok(Some(ReplayPlan {
                seed: row.get(1)?,
                places: row.get(2)?,
                start: approved_at.map_or(created_at, |at| at.max(created_at)),
            }))
        })
    }

    /// Executions newest first, each with its log; `limit` caps the count (none, or a
    /// negative one: all).
    pub fn list_executions(
        &self,
        runtime: &str,
        limit: Option<i64>,
    ) -> StoreResult<Vec<Execution>> {
        let limit = limit.filter(|n| *n >= 0).unwrap_or(i64::MAX);
        self.read(|tx| {
            let rows = tx.query(
                concat!(
                    "SELECT ",
                    execution_columns!(),
                    " FROM cm_executions WHERE runtime = ?1
                     ORDER BY created_at DESC, id DESC LIMIT ?2"
                ),
                args![runtime, limit],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let mut e = execution_row(row)?;
                e.log = log_of(tx, runtime, &e.id)?;
                out.push(e);
            }
            Ok(out)
        })
    }

    /// Deletes an execution and its log. Returns its status if it existed.
    pub fn delete_execution(&self, runtime: &str, id: &str) -> StoreResult<Option<Status>> {
        self.write(|tx| {
            let Some(Standing { status, .. }) = standing(tx, runtime, id)? else {
                return Ok(None);
            };
            delete_run(tx, runtime, id)?;
            Ok(Some(status))
        })
    }

    /// Deletes terminal executions beyond the newest `keep`; returns how many.
    pub fn prune_executions(&self, runtime: &str, keep: i64) -> StoreResult<usize> {
        self.write(|tx| prune(tx, runtime, keep, None))
    }

    /// Saves (or replaces) a snippet.
    pub fn save_snippet(&self, runtime: &str, snippet: &Snippet) -> StoreResult<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO cm_snippets
                   (runtime, name, description, code, saved_at, input_schema, connectors)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (runtime, name) DO UPDATE SET
                   description = excluded.description, code = excluded.code,
                   saved_at = excluded.saved_at, input_schema = excluded.input_schema,
                   connectors = excluded.connectors",
                args![
                    runtime,
                    &snippet.name,
                    &snippet.description,
                    &snippet.code,
                    snippet.saved_at,
                    &snippet.input_schema,
                    &snippet.connectors
                ],
            )?;
            Ok(())
        })
    }

    /// All snippets, by name, byte by byte (each schema collates the column so).
    pub fn snippets(&self, runtime: &str) -> StoreResult<Vec<Snippet>> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT name, description, code, saved_at, input_schema, connectors
                 FROM cm_snippets WHERE runtime = ?1 ORDER BY name",
                args![runtime],
            )?;
            rows.into_iter()
                .map(|mut r| {
                    Ok(Snippet {
                        name: r.get(0)?,
                        description: r.get(1)?,
                        code: r.get(2)?,
                        saved_at: r.get(3)?,
                        input_schema: r.get(4)?,
                        connectors: r.get(5)?,
                    })
                })
                .collect()
        })
    }

    pub fn delete_snippet(&self, runtime: &str, name: &str) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "DELETE FROM cm_snippets WHERE runtime = ?1 AND name = ?2",
                args![runtime, name],
            )? == 1)
        })
    }
}
