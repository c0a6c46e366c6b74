//! What the operations share: reading rows (`execution_row`, `entry_row` and the column lists
//! they read), the log's writes, holding a run (`standing`), ending and failing a run, pruning.

use super::*;

/// The columns `execution_row` reads, in its order.
macro_rules! execution_columns {
    () => {
        "id, code, status, result, error, logs, connectors, created_at, updated_at, owner,
         lease_until, idempotency_key, seed"
    };
}
pub(super) use execution_columns;

/// The columns `entry_row` reads, in its order.
macro_rules! entry_columns {
    () => {
        "seq, connector, method, args, result, requires_approval, ephemeral, state, revert_error,
         delivered, delivered_at"
    };
}
pub(super) use entry_columns;

pub(super) fn execution_row(mut r: Row) -> StoreResult<Execution> {
    Ok(Execution {
        id: r.get(0)?,
        code: r.get(1)?,
        status: r.get(2)?,
        result: r.get(3)?,
        error: r.get(4)?,
        logs: r.get(5)?,
        connectors: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
        owner: r.get(9)?,
        lease_until: r.get(10)?,
        idempotency_key: r.get(11)?,
        seed: r.get(12)?,
        log: Vec::new(),
    })
}

pub(super) fn entry_row(mut r: Row) -> StoreResult<LogEntry> {
    Ok(LogEntry {
        seq: r.get(0)?,
        connector: r.get(1)?,
        method: r.get(2)?,
        args: r.get(3)?,
        result: r.get(4)?,
        requires_approval: r.get(5)?,
        ephemeral: r.get(6)?,
        state: r.get(7)?,
        revert_error: r.get(8)?,
        delivery: delivery_of(r.get(9)?, r.get(10)?),
    })
}

/// A run's random seed: 32 bytes from the operating system, as hex.
pub(super) fn fresh_seed() -> StoreResult<String> {
    let mut bytes = [0u8; 32];
    crate::os::random_bytes(&mut bytes)
        .map_err(|e| StoreError::io(format!("no random source for the run's seed: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

pub(super) fn delivery_of(ordinal: Option<i64>, at: Option<i64>) -> Option<Delivery> {
    Some(Delivery {
        ordinal: ordinal?,
        at: at?,
    })
}

pub(super) fn log_of(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<Vec<LogEntry>> {
    let rows = tx.query(
        concat!(
            "SELECT ",
            entry_columns!(),
            " FROM cm_log WHERE runtime = ?1 AND execution_id = ?2 ORDER BY seq"
        ),
        args![runtime, id],
    )?;
    rows.into_iter().map(entry_row).collect()
}

/// Writes a fresh call's log entry at its seq (replacing one a revert or an error left there),
/// with `args` as the log keeps them and its stable form for later passes' comparisons.
pub(super) fn write_entry(
    tx: &mut dyn Tx,
    runtime: &str,
    id: &str,
    call: &Call<'_>,
    args: Option<&str>,
    state: EntryState,
) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO cm_log
           (runtime, execution_id, seq, connector, method, args, args_stable, result,
            requires_approval, ephemeral, state)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8, ?9, ?10)
         ON CONFLICT (runtime, execution_id, seq) DO UPDATE SET
           connector = excluded.connector, method = excluded.method,
           args = excluded.args, args_stable = excluded.args_stable, result = NULL,
           requires_approval = excluded.requires_approval,
           ephemeral = excluded.ephemeral, state = excluded.state, revert_error = NULL,
           delivered = NULL, delivered_at = NULL",
        args![
            runtime,
            id,
            call.seq,
            call.connector,
            call.method,
            args,
            &call.recorded_stable,
            call.requires_approval,
            call.ephemeral,
            state
        ],
    )?;
    Ok(())
}

pub(super) fn set_entry_state(
    tx: &mut dyn Tx,
    runtime: &str,
    id: &str,
    seq: i64,
    state: EntryState,
) -> StoreResult<()> {
    tx.execute(
        "UPDATE cm_log SET state = ?4 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
        args![runtime, id, seq, state],
    )?;
    Ok(())
}

pub(super) fn touch(tx: &mut dyn Tx, runtime: &str, id: &str, now: i64) -> StoreResult<()> {
    tx.execute(
        "UPDATE cm_executions SET updated_at = ?3 WHERE runtime = ?1 AND id = ?2",
        args![runtime, id, now],
    )?;
    Ok(())
}

/// Where a run stands and who holds it.
pub(super) struct Standing {
    pub(super) status: Status,
    pub(super) owner: Option<String>,
    pub(super) lease_until: Option<i64>,
    pub(super) updated_at: i64,
}

/// Where the run stands, and the run held until the transaction ends: every write that reads
/// a run (or its log) before it writes calls this first, so decisions about one run take
/// effect one after the other (see `sql.rs` on `FOR UPDATE`).
pub(super) fn standing(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<Option<Standing>> {
    let row = tx.query_opt(
        "SELECT status, owner, lease_until, updated_at FROM cm_executions
         WHERE runtime = ?1 AND id = ?2 /*FOR UPDATE*/",
        args![runtime, id],
    )?;
    row.map(|mut r| {
        Ok(Standing {
            status: r.get(0)?,
            owner: r.get(1)?,
            lease_until: r.get(2)?,
            updated_at: r.get(3)?,
        })
    })
    .transpose()
}

/// A log entry as recorded, with the stable form of its recorded arguments (what replays are
/// compared with).
pub(super) struct Recorded {
    pub(super) entry: LogEntry,
    pub(super) stable: Option<String>,
}

/// `standing` and the run's log entry at `seq`, in one statement (every decision about a call
/// needs both; on PostgreSQL a statement is a round trip): the run held, its entry if any.
pub(super) fn standing_at(
    tx: &mut dyn Tx,
    runtime: &str,
    id: &str,
    seq: i64,
) -> StoreResult<Option<(Standing, Option<Recorded>)>> {
    let row = tx.query_opt(
        "SELECT e.status, e.owner, e.lease_until, e.updated_at,
                l.seq, l.connector, l.method, l.args, l.result, l.requires_approval, l.ephemeral,
                l.state, l.revert_error, l.delivered, l.delivered_at, l.args_stable
         FROM cm_executions e
         LEFT JOIN cm_log l ON l.runtime = e.runtime AND l.execution_id = e.id AND l.seq = ?3
         WHERE e.runtime = ?1 AND e.id = ?2 /*FOR UPDATE OF e*/",
        args![runtime, id, seq],
    )?;
    let Some(mut row) = row else {
        return Ok(None);
    };
    let standing = Standing {
        status: row.get(0)?,
        owner: row.get(1)?,
        lease_until: row.get(2)?,
        updated_at: row.get(3)?,
    };
    // The entry's columns, from `l.seq` on; all NULL when there is no entry at `seq`.
    let mut entry = Row(row.0.split_off(4));
    if entry.0.first() == Some(&Cell::Null) {
        return Ok(Some((standing, None)));
    }
    let stable: Option<String> = entry.get(11)?;
    Ok(Some((
        standing,
        Some(Recorded {
            entry: entry_row(entry)?,
            stable,
        }),
    )))
}

/// The seqs of the entries awaiting a decision (approval, or a word on a call in doubt).
pub(super) fn waiting_seqs(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<Vec<i64>> {
    let rows = tx.query(
        "SELECT seq FROM cm_log WHERE runtime = ?1 AND execution_id = ?2 AND state IN (?3, ?4)
         ORDER BY seq",
        args![runtime, id, EntryState::Pending, EntryState::InDoubt],
    )?;
    rows.into_iter().map(|mut r| r.get(0)).collect()
}

/// Ends a run with `status` and `error`, giving up any lease; its pending entries are reverted
/// (entries in doubt stay so: their effect may be in force).
pub(super) fn end_run(
    tx: &mut dyn Tx,
    runtime: &str,
    id: &str,
    status: Status,
    error: &str,
    now: i64,
) -> StoreResult<()> {
    tx.execute(
        "UPDATE cm_executions SET status = ?3, error = ?4, updated_at = ?5, owner = NULL,
           lease_until = NULL
         WHERE runtime = ?1 AND id = ?2",
        args![runtime, id, status, error, now],
    )?;
    tx.execute(
        "UPDATE cm_log SET state = ?3 WHERE runtime = ?1 AND execution_id = ?2 AND state = ?4",
        args![runtime, id, EntryState::Reverted, EntryState::Pending],
    )?;
    Ok(())
}

pub(super) fn divergence(seq: i64, detail: &str) -> String {
    format!("Codemode replay divergence at step {seq}: {detail}")
}

pub(super) fn cut_utf16(text: &str, max_units: usize) -> &str {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max_units {
            return &text[..i];
        }
    }
    text
}

/// `#fail` of docs/cloudflare-compat.md: the entry at `seq` (if executing or pending) becomes `error`, and the
/// execution fails with `message`.
pub(super) fn fail_run(
    tx: &mut dyn Tx,
    runtime: &str,
    id: &str,
    seq: i64,
    message: &str,
    now: i64,
) -> StoreResult<()> {
    tx.execute(
        "UPDATE cm_log SET state = ?4
         WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3 AND state IN (?5, ?6)",
        args![
            runtime,
            id,
            seq,
            EntryState::Error,
            EntryState::Executing,
            EntryState::Pending
        ],
    )?;
    tx.execute(
        "UPDATE cm_executions SET status = ?5, error = ?3, updated_at = ?4, owner = NULL,
           lease_until = NULL
         WHERE runtime = ?1 AND id = ?2",
        args![
            runtime,
            id,
            cut_utf16(message, MAX_DURABLE_UNITS),
            now,
            Status::Error
        ],
    )?;
    Ok(())
}

/// Deletes one execution and its log.
pub(super) fn delete_run(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<()> {
    tx.execute(
        "DELETE FROM cm_log WHERE runtime = ?1 AND execution_id = ?2",
        args![runtime, id],
    )?;
    tx.execute(
        "DELETE FROM cm_executions WHERE runtime = ?1 AND id = ?2",
        args![runtime, id],
    )?;
    Ok(())
}

pub(super) fn prune(
    tx: &mut dyn Tx,
    runtime: &str,
    keep: i64,
    except: Option<&str>,
) -> StoreResult<usize> {
    let [a, b, c, d] = Status::TERMINAL;
    // Both dialects read `LIMIT <largest bigint>` as "no limit" (SQLite's `-1` is not
    // PostgreSQL's).
    let doomed = tx.query(
        "SELECT id FROM cm_executions
         WHERE runtime = ?1 AND status IN (?4, ?5, ?6, ?7) AND (CAST(?3 AS TEXT) IS NULL OR id <> ?3)
         ORDER BY created_at DESC, id DESC LIMIT 9223372036854775807 OFFSET ?2",
        args![runtime, keep.max(0), except, a, b, c, d],
    )?;
    let mut deleted = 0;
    for mut row in doomed {
        let id: String = row.get(0)?;
        // Held, then looked at again: only a run that is still ended goes.
        if standing(tx, runtime, &id)?.is_some_and(|run| Status::TERMINAL.contains(&run.status)) {
            delete_run(tx, runtime, &id)?;
            deleted += 1;
        }
    }
    Ok(deleted)
}
