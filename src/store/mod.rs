//! The durable runtime's store: executions, their tool-call log and saved snippets in one SQLite
//! file, partitioned by runtime name. This is the state machine of the Cloudflare runtime facet
//! (spec §6.5); values arrive already encoded by the JS side (the storage codec and its size
//! checks need JS semantics), so this module only holds SQL and the transitions. Every operation
//! that decides something runs in one `BEGIN IMMEDIATE` transaction, so two processes sharing
//! the file can never both take the same decision (e.g. apply one approved action twice).

mod schema;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long an operation waits for another process's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

pub const STEP_CONNECTOR: &str = "__step";

/// A store failure: SQLite's own error, or a state-machine refusal with the spec's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError(format!("codemode store: {e}"))
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub seq: i64,
    pub connector: String,
    pub method: String,
    /// Storage-codec JSON of the arguments; `None` for none.
    pub args: Option<String>,
    /// Storage-codec JSON of the result; `None` when absent.
    pub result: Option<String>,
    pub requires_approval: bool,
    pub ephemeral: bool,
    pub state: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    pub id: String,
    pub code: String,
    pub status: String,
    pub result: Option<String>,
    pub error: Option<String>,
    /// JSON array of console lines.
    pub logs: Option<String>,
    /// JSON array of connector names.
    pub connectors: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub log: Vec<LogEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub execution_id: String,
    pub seq: i64,
    pub connector: String,
    pub method: String,
    pub args: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    pub name: String,
    pub description: String,
    pub code: String,
    pub saved_at: i64,
    pub input_schema: Option<String>,
    pub connectors: Option<String>,
}

/// What the runtime does with one tool call or step (spec §6.5 `decide`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Return the recorded result (storage-codec JSON, `None` for an absent value).
    Replay(Option<String>),
    /// Run the call now, then `record_result`.
    Execute,
    /// Stop the pass: the run is paused, failed, or no longer running.
    Pause,
}

/// One call as the runtime asks about it.
pub struct Call<'a> {
    pub seq: i64,
    pub connector: &'a str,
    pub method: &'a str,
    /// Storage-codec JSON of the arguments, or why they cannot be recorded (the run's error).
    pub args: Result<Option<String>, String>,
    /// Stable stringification of the arguments (keys sorted), compared with the recorded
    /// call's; `None` when not serializable (no comparison then).
    pub args_stable: Option<String>,
    /// Stable stringification of the arguments as recorded (decoded back from `args`), kept
    /// for the comparisons of later passes.
    pub recorded_stable: Option<String>,
    pub requires_approval: bool,
    pub ephemeral: bool,
}

pub struct Store {
    conn: Mutex<Connection>,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

const TERMINAL: &str = "('completed','error','rejected','rolled_back')";

impl Store {
    /// Opens (creating if needed) the store at `path` (`:memory:` for a private in-memory one).
    pub fn open(path: &str) -> StoreResult<Store> {
        let conn = if path == ":memory:" {
            Connection::open_in_memory()?
        } else {
            if let Some(parent) = std::path::Path::new(path).parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        StoreError(format!(
                            "codemode store: cannot create {}: {e}",
                            parent.display()
                        ))
                    })?;
                }
            }
            Connection::open(path)?
        };
        conn.busy_timeout(BUSY_TIMEOUT)?;
        if path != ":memory:" {
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
        }
        schema::migrate(&conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one write transaction (taken at once, so decisions serialize across
    /// processes).
    fn write<T>(&self, f: impl FnOnce(&rusqlite::Transaction) -> StoreResult<T>) -> StoreResult<T> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Inserts a `running` execution, then prunes terminal executions beyond the newest
    /// `max_executions` (the new one excepted).
    pub fn begin(
        &self,
        runtime: &str,
        id: &str,
        code: &str,
        connectors_json: &str,
        max_executions: i64,
    ) -> StoreResult<()> {
        self.write(|tx| {
            let now = now_ms();
            tx.execute(
                "INSERT INTO cm_executions (runtime, id, code, status, connectors, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?5)",
                params![runtime, id, code, connectors_json, now],
            )?;
            prune(tx, runtime, max_executions, Some(id))?;
            Ok(())
        })
    }

    /// A paused execution becomes running again; anything else is left alone (false).
    pub fn resume(&self, runtime: &str, id: &str) -> StoreResult<bool> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE cm_executions SET status = 'running', updated_at = ?3
                 WHERE runtime = ?1 AND id = ?2 AND status = 'paused'",
                params![runtime, id, now_ms()],
            )?;
            Ok(changed == 1)
        })
    }

    /// The replay decision for one call (spec §6.5), in one transaction.
    pub fn decide(&self, runtime: &str, id: &str, call: &Call<'_>) -> StoreResult<Decision> {
        self.write(|tx| {
            let status: Option<String> = tx
                .query_row(
                    "SELECT status FROM cm_executions WHERE runtime = ?1 AND id = ?2",
                    params![runtime, id],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(status) = status else {
                return Err(StoreError(format!("No execution \"{id}\"")));
            };
            if status != "running" {
                return Ok(Decision::Pause);
            }
            let now = now_ms();
            let existing = entry_at(tx, runtime, id, call.seq)?;
            if let Some(entry) = existing {
                if entry.connector != call.connector || entry.method != call.method {
                    let detail = format!(
                        "expected {}.{}, got {}.{}. Code must be deterministic up to tool calls and steps. Wrap nondeterministic work in codemode.step(name, fn).",
                        entry.connector, entry.method, call.connector, call.method
                    );
                    fail_run(tx, runtime, id, call.seq, &divergence(call.seq, &detail), now)?;
                    return Ok(Decision::Pause);
                }
                let recorded_stable: Option<String> = tx.query_row(
                    "SELECT args_stable FROM cm_log WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                    params![runtime, id, call.seq],
                    |r| r.get(0),
                )?;
                if let (Some(recorded), Some(now_stable)) = (&recorded_stable, &call.args_stable) {
                    if recorded != now_stable {
                        let detail = format!(
                            "{}.{} was called with different arguments than the recorded run. Arguments must be deterministic across replays. Wrap nondeterministic inputs in codemode.step(name, fn).",
                            call.connector, call.method
                        );
                        fail_run(tx, runtime, id, call.seq, &divergence(call.seq, &detail), now)?;
                        return Ok(Decision::Pause);
                    }
                }
                match entry.state.as_str() {
                    "applied" if entry.ephemeral => return Ok(Decision::Execute),
                    "applied" => return Ok(Decision::Replay(entry.result)),
                    "pending" => {
                        // Approved since: claim it before executing, so a concurrent reject
                        // (which only acts on `pending`) finds nothing to do.
                        set_entry_state(tx, runtime, id, call.seq, "executing")?;
                        touch(tx, runtime, id, now)?;
                        return Ok(Decision::Execute);
                    }
                    // A crash window of an earlier pass: run it again, without re-pausing.
                    "executing" => return Ok(Decision::Execute),
                    // `reverted` or `error`: recorded again as a fresh call.
                    _ => {}
                }
            }
            // A fresh call.
            let args = match &call.args {
                Ok(args) => args.clone(),
                Err(message) => {
                    fail_run(tx, runtime, id, call.seq, message, now)?;
                    return Ok(Decision::Pause);
                }
            };
            let state = if call.requires_approval { "pending" } else { "executing" };
            tx.execute(
                "INSERT OR REPLACE INTO cm_log
                   (runtime, execution_id, seq, connector, method, args, args_stable, result,
                    requires_approval, ephemeral, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8, ?9, ?10)",
                params![
                    runtime,
                    id,
                    call.seq,
                    call.connector,
                    call.method,
                    args,
                    call.recorded_stable,
                    call.requires_approval,
                    call.ephemeral,
                    state
                ],
            )?;
            if call.requires_approval {
                tx.execute(
                    "UPDATE cm_executions SET status = 'paused', updated_at = ?3
                     WHERE runtime = ?1 AND id = ?2",
                    params![runtime, id, now],
                )?;
                return Ok(Decision::Pause);
            }
            touch(tx, runtime, id, now)?;
            Ok(Decision::Execute)
        })
    }

    /// Records a call's result (`Err`: why it cannot be recorded, which fails the run).
    pub fn record_result(
        &self,
        runtime: &str,
        id: &str,
        seq: i64,
        result: Result<Option<String>, String>,
    ) -> StoreResult<()> {
        self.write(|tx| {
            let Some(entry) = entry_at(tx, runtime, id, seq)? else {
                return Err(StoreError(format!("No log entry at step {seq}")));
            };
            let now = now_ms();
            let stored = if entry.ephemeral {
                None
            } else {
                match result {
                    Ok(value) => value,
                    Err(message) => {
                        fail_run(tx, runtime, id, seq, &message, now)?;
                        return Ok(());
                    }
                }
            };
            tx.execute(
                "UPDATE cm_log SET result = ?4, state = 'applied'
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                params![runtime, id, seq, stored],
            )?;
            touch(tx, runtime, id, now)?;
            Ok(())
        })
    }

    /// Completes a running execution. False (no change) when it is no longer running: a
    /// concurrent reject or expiry already ended it, and that outcome stands.
    pub fn complete(
        &self,
        runtime: &str,
        id: &str,
        result: Option<&str>,
        logs_json: Option<&str>,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE cm_executions SET status = 'completed', result = ?3, logs = ?4, updated_at = ?5
                 WHERE runtime = ?1 AND id = ?2 AND status = 'running'",
                params![runtime, id, result, logs_json, now_ms()],
            )? == 1)
        })
    }

    /// Fails a running execution. False (no change) when it is no longer running.
    pub fn fail(
        &self,
        runtime: &str,
        id: &str,
        error: &str,
        logs_json: Option<&str>,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "UPDATE cm_executions SET status = 'error', error = ?3, logs = ?4, updated_at = ?5
                 WHERE runtime = ?1 AND id = ?2 AND status = 'running'",
                params![
                    runtime,
                    id,
                    cut_utf16(error, MAX_ERROR_UNITS),
                    logs_json,
                    now_ms()
                ],
            )? == 1)
        })
    }

    /// Pending actions: of one execution (only while it is paused), or of every paused one
    /// (newest execution first, seq ascending within one).
    pub fn list_pending(&self, runtime: &str, id: Option<&str>) -> StoreResult<Vec<Pending>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT l.execution_id, l.seq, l.connector, l.method, l.args
             FROM cm_log l JOIN cm_executions e ON e.runtime = l.runtime AND e.id = l.execution_id
             WHERE l.runtime = ?1 AND l.state = 'pending' AND e.status = 'paused'
               AND (?2 IS NULL OR e.id = ?2)
             ORDER BY e.created_at DESC, e.id DESC, l.seq ASC",
        )?;
        let rows = stmt.query_map(params![runtime, id], |r| {
            Ok(Pending {
                execution_id: r.get(0)?,
                seq: r.get(1)?,
                connector: r.get(2)?,
                method: r.get(3)?,
                args: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Rejects the pending action at `seq`: the entry is reverted and the run rejected. False
    /// (and no change) when the entry is not pending — a stale reject after an approval.
    pub fn reject(&self, runtime: &str, id: &str, seq: i64) -> StoreResult<bool> {
        self.write(|tx| {
            let Some(entry) = entry_at(tx, runtime, id, seq)? else {
                return Ok(false);
            };
            if entry.state != "pending" {
                return Ok(false);
            }
            let now = now_ms();
            set_entry_state(tx, runtime, id, seq, "reverted")?;
            let error = format!(
                "Action {}.{} rejected by user",
                entry.connector, entry.method
            );
            tx.execute(
                "UPDATE cm_executions SET status = 'rejected', error = ?3, updated_at = ?4
                 WHERE runtime = ?1 AND id = ?2",
                params![runtime, id, error, now],
            )?;
            Ok(true)
        })
    }

    /// Expires paused runs (→ rejected) and stale running ones (→ error) not updated for
    /// `max_age_ms`; their pending entries become reverted. Returns the ids changed.
    pub fn expire_paused(&self, runtime: &str, max_age_ms: i64) -> StoreResult<Vec<String>> {
        self.write(|tx| {
            let now = now_ms();
            let cutoff = now - max_age_ms;
            let stale: Vec<(String, String)> = {
                let mut stmt = tx.prepare(
                    "SELECT id, status FROM cm_executions
                     WHERE runtime = ?1 AND status IN ('paused','running') AND updated_at < ?2
                     ORDER BY created_at DESC, id DESC",
                )?;
                let rows =
                    stmt.query_map(params![runtime, cutoff], |r| Ok((r.get(0)?, r.get(1)?)))?;
                rows.collect::<Result<_, _>>()?
            };
            let mut changed = Vec::new();
            for (id, status) in stale {
                let (next, error) = if status == "paused" {
                    ("rejected", "Expired awaiting approval")
                } else {
                    (
                        "error",
                        "Expired while running — the host never completed the pass",
                    )
                };
                let n = tx.execute(
                    "UPDATE cm_executions SET status = ?4, error = ?5, updated_at = ?6
                     WHERE runtime = ?1 AND id = ?2 AND status = ?3",
                    params![runtime, id, status, next, error, now],
                )?;
                if n == 1 {
                    tx.execute(
                        "UPDATE cm_log SET state = 'reverted'
                         WHERE runtime = ?1 AND execution_id = ?2 AND state = 'pending'",
                        params![runtime, id],
                    )?;
                    changed.push(id);
                }
            }
            Ok(changed)
        })
    }

    /// Applied entries other than steps, newest first (what a rollback reverts).
    pub fn actions_to_revert(&self, runtime: &str, id: &str) -> StoreResult<Vec<LogEntry>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {ENTRY_COLUMNS} FROM cm_log
             WHERE runtime = ?1 AND execution_id = ?2 AND state = 'applied' AND connector <> ?3
             ORDER BY seq DESC"
        ))?;
        let rows = stmt.query_map(params![runtime, id, STEP_CONNECTOR], entry_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn mark_reverted(&self, runtime: &str, id: &str, seq: i64) -> StoreResult<()> {
        self.write(|tx| {
            if entry_at(tx, runtime, id, seq)?.is_some() {
                set_entry_state(tx, runtime, id, seq, "reverted")?;
                touch(tx, runtime, id, now_ms())?;
            }
            Ok(())
        })
    }

    pub fn mark_rolled_back(&self, runtime: &str, id: &str) -> StoreResult<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE cm_executions SET status = 'rolled_back', updated_at = ?3
                 WHERE runtime = ?1 AND id = ?2",
                params![runtime, id, now_ms()],
            )?;
            Ok(())
        })
    }

    pub fn get_execution(&self, runtime: &str, id: &str) -> StoreResult<Option<Execution>> {
        let conn = self.lock();
        let execution = conn
            .query_row(
                &format!(
                    "SELECT {EXECUTION_COLUMNS} FROM cm_executions WHERE runtime = ?1 AND id = ?2"
                ),
                params![runtime, id],
                execution_row,
            )
            .optional()?;
        match execution {
            None => Ok(None),
            Some(mut e) => {
                e.log = log_of(&conn, runtime, id)?;
                Ok(Some(e))
            }
        }
    }

    /// Executions newest first, each with its log; `limit` caps the count.
    pub fn list_executions(
        &self,
        runtime: &str,
        limit: Option<i64>,
    ) -> StoreResult<Vec<Execution>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {EXECUTION_COLUMNS} FROM cm_executions WHERE runtime = ?1
             ORDER BY created_at DESC, id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![runtime, limit.unwrap_or(-1)], execution_row)?;
        let mut out: Vec<Execution> = rows.collect::<Result<_, _>>()?;
        for e in &mut out {
            e.log = log_of(&conn, runtime, &e.id)?;
        }
        Ok(out)
    }

    /// Deletes an execution and its log. Returns its status if it existed.
    pub fn delete_execution(&self, runtime: &str, id: &str) -> StoreResult<Option<String>> {
        self.write(|tx| {
            let status: Option<String> = tx
                .query_row(
                    "SELECT status FROM cm_executions WHERE runtime = ?1 AND id = ?2",
                    params![runtime, id],
                    |r| r.get(0),
                )
                .optional()?;
            if status.is_some() {
                tx.execute(
                    "DELETE FROM cm_log WHERE runtime = ?1 AND execution_id = ?2",
                    params![runtime, id],
                )?;
                tx.execute(
                    "DELETE FROM cm_executions WHERE runtime = ?1 AND id = ?2",
                    params![runtime, id],
                )?;
            }
            Ok(status)
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
                "INSERT OR REPLACE INTO cm_snippets
                   (runtime, name, description, code, saved_at, input_schema, connectors)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    runtime,
                    snippet.name,
                    snippet.description,
                    snippet.code,
                    snippet.saved_at,
                    snippet.input_schema,
                    snippet.connectors
                ],
            )?;
            Ok(())
        })
    }

    /// All snippets, by name (binary collation).
    pub fn snippets(&self, runtime: &str) -> StoreResult<Vec<Snippet>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT name, description, code, saved_at, input_schema, connectors
             FROM cm_snippets WHERE runtime = ?1 ORDER BY name COLLATE BINARY",
        )?;
        let rows = stmt.query_map(params![runtime], |r| {
            Ok(Snippet {
                name: r.get(0)?,
                description: r.get(1)?,
                code: r.get(2)?,
                saved_at: r.get(3)?,
                input_schema: r.get(4)?,
                connectors: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn delete_snippet(&self, runtime: &str, name: &str) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx.execute(
                "DELETE FROM cm_snippets WHERE runtime = ?1 AND name = ?2",
                params![runtime, name],
            )? == 1)
        })
    }
}

const EXECUTION_COLUMNS: &str =
    "id, code, status, result, error, logs, connectors, created_at, updated_at";
const ENTRY_COLUMNS: &str =
    "seq, connector, method, args, result, requires_approval, ephemeral, state";

fn execution_row(r: &rusqlite::Row) -> rusqlite::Result<Execution> {
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
        log: Vec::new(),
    })
}

fn entry_row(r: &rusqlite::Row) -> rusqlite::Result<LogEntry> {
    Ok(LogEntry {
        seq: r.get(0)?,
        connector: r.get(1)?,
        method: r.get(2)?,
        args: r.get(3)?,
        result: r.get(4)?,
        requires_approval: r.get(5)?,
        ephemeral: r.get(6)?,
        state: r.get(7)?,
    })
}

fn log_of(conn: &Connection, runtime: &str, id: &str) -> StoreResult<Vec<LogEntry>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ENTRY_COLUMNS} FROM cm_log WHERE runtime = ?1 AND execution_id = ?2 ORDER BY seq"
    ))?;
    let rows = stmt.query_map(params![runtime, id], entry_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn entry_at(conn: &Connection, runtime: &str, id: &str, seq: i64) -> StoreResult<Option<LogEntry>> {
    Ok(conn
        .query_row(
            &format!(
                "SELECT {ENTRY_COLUMNS} FROM cm_log WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3"
            ),
            params![runtime, id, seq],
            entry_row,
        )
        .optional()?)
}

fn set_entry_state(
    conn: &Connection,
    runtime: &str,
    id: &str,
    seq: i64,
    state: &str,
) -> StoreResult<()> {
    conn.execute(
        "UPDATE cm_log SET state = ?4 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
        params![runtime, id, seq, state],
    )?;
    Ok(())
}

fn touch(conn: &Connection, runtime: &str, id: &str, now: i64) -> StoreResult<()> {
    conn.execute(
        "UPDATE cm_executions SET updated_at = ?3 WHERE runtime = ?1 AND id = ?2",
        params![runtime, id, now],
    )?;
    Ok(())
}

fn divergence(seq: i64, detail: &str) -> String {
    format!("Codemode replay divergence at step {seq}: {detail}")
}

/// The longest error text kept (spec §6.6), in UTF-16 code units as JS counts them.
const MAX_ERROR_UNITS: usize = 1_000_000;

fn cut_utf16(text: &str, max_units: usize) -> &str {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max_units {
            return &text[..i];
        }
    }
    text
}

/// `#fail` of the spec: the entry at `seq` (if executing or pending) becomes `error`, and the
/// execution fails with `message`.
fn fail_run(
    conn: &Connection,
    runtime: &str,
    id: &str,
    seq: i64,
    message: &str,
    now: i64,
) -> StoreResult<()> {
    conn.execute(
        "UPDATE cm_log SET state = 'error'
         WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3 AND state IN ('executing','pending')",
        params![runtime, id, seq],
    )?;
    conn.execute(
        "UPDATE cm_executions SET status = 'error', error = ?3, updated_at = ?4
         WHERE runtime = ?1 AND id = ?2",
        params![runtime, id, cut_utf16(message, MAX_ERROR_UNITS), now],
    )?;
    Ok(())
}

fn prune(conn: &Connection, runtime: &str, keep: i64, except: Option<&str>) -> StoreResult<usize> {
    let doomed: Vec<String> = {
        let mut stmt = conn.prepare(&format!(
            "SELECT id FROM cm_executions
             WHERE runtime = ?1 AND status IN {TERMINAL} AND (?3 IS NULL OR id <> ?3)
             ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?2"
        ))?;
        let rows = stmt.query_map(params![runtime, keep.max(0), except], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    for id in &doomed {
        conn.execute(
            "DELETE FROM cm_log WHERE runtime = ?1 AND execution_id = ?2",
            params![runtime, id],
        )?;
        conn.execute(
            "DELETE FROM cm_executions WHERE runtime = ?1 AND id = ?2",
            params![runtime, id],
        )?;
    }
    Ok(doomed.len())
}

#[cfg(test)]
mod tests;
