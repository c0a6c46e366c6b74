//! The durable runtime's store: executions, their tool-call log and saved snippets in one SQLite
//! file, partitioned by runtime name. This is the state machine of the Cloudflare runtime facet
//! (docs/cloudflare-compat.md §6.5); values arrive already encoded by the JS side (the storage codec and its size
//! checks need JS semantics), so this module only holds SQL and the transitions. Every operation
//! that decides something runs in one `BEGIN IMMEDIATE` transaction, so two processes sharing
//! the file can never both take the same decision (e.g. apply one approved action twice).
//!
//! The state machine. An execution ([`Status`]) and each entry of its log ([`EntryState`]):
//!
//! ```text
//!  execution                      moved by
//!  ─────────                      ────────
//!  (none)     → running           begin
//!  running    → paused            decide (a fresh call that requires approval)
//!  paused     → running           resume (approve)
//!  running    → completed         complete
//!  running    → error             fail; decide/record_result on divergence or an
//!                                 unrecordable value (fail_run); expire_paused (stale)
//!  paused     → rejected          reject; expire_paused
//!  any        → rolled_back       mark_rolled_back (after rollback reverted the entries)
//!
//!  log entry                      moved by
//!  ─────────                      ────────
//!  (none)     → pending           decide (requires approval: the run pauses)
//!  (none)     → executing         decide (runs now)
//!  pending    → executing         decide (on the pass after an approval: claimed first)
//!  executing  → applied           record_result
//!  pending    → reverted          reject; expire_paused
//!  applied    → reverted          mark_reverted (rollback)
//!  executing, pending → error     fail_run
//!  reverted, error → pending/executing   decide (recorded again as a fresh call)
//! ```
//!
//! `completed`, `error`, `rejected` and `rolled_back` are terminal ([`Status::TERMINAL`]); only
//! terminal executions are pruned.

mod schema;

use crate::error::ErrorCode;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, OptionalExtension, ToSql, TransactionBehavior};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long an operation waits for another process's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The connector name under which `codemode.step(name, fn)` results are logged (never reverted
/// by a rollback). The JS side reads it from here (`durableConstants()`).
pub const STEP_CONNECTOR: &str = "__step";

/// A store failure, with a stable code: `ERR_STORE` when the file cannot be read or written
/// (SQLite's own error, a directory that cannot be made, a schema newer than this build), or
/// `ERR_INVALID_ARGUMENT` when the caller named an execution or entry that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    pub code: ErrorCode,
    pub message: String,
}

impl StoreError {
    pub fn io(message: String) -> StoreError {
        StoreError {
            code: ErrorCode::Store,
            message,
        }
    }
    pub fn missing(message: String) -> StoreError {
        StoreError {
            code: ErrorCode::InvalidArgument,
            message,
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::io(format!("codemode store: {e}"))
    }
}

/// Declares a state enum stored as text, with its SQL conversions.
macro_rules! stored_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The text stored in the file and shown to JS.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
            pub fn parse(text: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let text = value.as_str()?;
                $name::parse(text).ok_or_else(|| FromSqlError::Other(
                    format!("unknown {} {text:?}", stringify!($name)).into(),
                ))
            }
        }
    };
}

stored_enum! {
    /// Where an execution stands (see the state machine above).
    Status {
        Running = "running",
        Paused = "paused",
        Completed = "completed",
        Error = "error",
        Rejected = "rejected",
        RolledBack = "rolled_back",
    }
}

impl Status {
    /// The statuses no transition leaves (except `rolled_back` after a rollback).
    pub const TERMINAL: [Status; 4] = [
        Status::Completed,
        Status::Error,
        Status::Rejected,
        Status::RolledBack,
    ];
}

stored_enum! {
    /// Where one logged call stands (see the state machine above).
    EntryState {
        /// Awaiting approval.
        Pending = "pending",
        /// Decided to run; its result is not recorded yet.
        Executing = "executing",
        Applied = "applied",
        Reverted = "reverted",
        Error = "error",
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
    pub state: EntryState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    pub id: String,
    pub code: String,
    pub status: Status,
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

/// What the runtime does with one tool call or step (docs/cloudflare-compat.md §6.5 `decide`).
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

impl Store {
    /// Opens (creating if needed) the store at `path` (`:memory:` for a private in-memory one).
    pub fn open(path: &str) -> StoreResult<Store> {
        let conn = if path == ":memory:" {
            Connection::open_in_memory()?
        } else {
            if let Some(parent) = std::path::Path::new(path).parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        StoreError::io(format!(
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
                 VALUES (?1, ?2, ?3, ?6, ?4, ?5, ?5)",
                params![runtime, id, code, connectors_json, now, Status::Running],
            )?;
            prune(tx, runtime, max_executions, Some(id))?;
            Ok(())
        })
    }

    /// A paused execution becomes running again; anything else is left alone (false).
    pub fn resume(&self, runtime: &str, id: &str) -> StoreResult<bool> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE cm_executions SET status = ?4, updated_at = ?3
                 WHERE runtime = ?1 AND id = ?2 AND status = ?5",
                params![runtime, id, now_ms(), Status::Running, Status::Paused],
            )?;
            Ok(changed == 1)
        })
    }

    /// The replay decision for one call (docs/cloudflare-compat.md §6.5), in one transaction.
    pub fn decide(&self, runtime: &str, id: &str, call: &Call<'_>) -> StoreResult<Decision> {
        self.write(|tx| {
            let status: Option<Status> = tx
                .query_row(
                    "SELECT status FROM cm_executions WHERE runtime = ?1 AND id = ?2",
                    params![runtime, id],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(status) = status else {
                return Err(StoreError::missing(format!("No execution \"{id}\"")));
            };
            if status != Status::Running {
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
                match entry.state {
                    EntryState::Applied if entry.ephemeral => return Ok(Decision::Execute),
                    EntryState::Applied => return Ok(Decision::Replay(entry.result)),
                    EntryState::Pending => {
                        // Approved since: claim it before executing, so a concurrent reject
                        // (which only acts on `pending`) finds nothing to do.
                        set_entry_state(tx, runtime, id, call.seq, EntryState::Executing)?;
                        touch(tx, runtime, id, now)?;
                        return Ok(Decision::Execute);
                    }
                    // A crash window of an earlier pass: run it again, without re-pausing.
                    EntryState::Executing => return Ok(Decision::Execute),
                    // Recorded again as a fresh call.
                    EntryState::Reverted | EntryState::Error => {}
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
            let state = if call.requires_approval {
                EntryState::Pending
            } else {
                EntryState::Executing
            };
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
                    "UPDATE cm_executions SET status = ?4, updated_at = ?3
                     WHERE runtime = ?1 AND id = ?2",
                    params![runtime, id, now, Status::Paused],
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
                return Err(StoreError::missing(format!("No log entry at step {seq}")));
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
                "UPDATE cm_log SET result = ?4, state = ?5
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                params![runtime, id, seq, stored, EntryState::Applied],
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
                "UPDATE cm_executions SET status = ?6, result = ?3, logs = ?4, updated_at = ?5
                 WHERE runtime = ?1 AND id = ?2 AND status = ?7",
                params![
                    runtime,
                    id,
                    result,
                    logs_json,
                    now_ms(),
                    Status::Completed,
                    Status::Running
                ],
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
                "UPDATE cm_executions SET status = ?6, error = ?3, logs = ?4, updated_at = ?5
                 WHERE runtime = ?1 AND id = ?2 AND status = ?7",
                params![
                    runtime,
                    id,
                    cut_utf16(error, MAX_DURABLE_UNITS),
                    logs_json,
                    now_ms(),
                    Status::Error,
                    Status::Running
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
             WHERE l.runtime = ?1 AND l.state = ?3 AND e.status = ?4
               AND (?2 IS NULL OR e.id = ?2)
             ORDER BY e.created_at DESC, e.id DESC, l.seq ASC",
        )?;
        let bound = params![runtime, id, EntryState::Pending, Status::Paused];
        let rows = stmt.query_map(bound, |r| {
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
            if entry.state != EntryState::Pending {
                return Ok(false);
            }
            let now = now_ms();
            set_entry_state(tx, runtime, id, seq, EntryState::Reverted)?;
            let error = format!(
                "Action {}.{} rejected by user",
                entry.connector, entry.method
            );
            tx.execute(
                "UPDATE cm_executions SET status = ?5, error = ?3, updated_at = ?4
                 WHERE runtime = ?1 AND id = ?2",
                params![runtime, id, error, now, Status::Rejected],
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
            let stale: Vec<(String, Status)> = {
                let mut stmt = tx.prepare(
                    "SELECT id, status FROM cm_executions
                     WHERE runtime = ?1 AND status IN (?3, ?4) AND updated_at < ?2
                     ORDER BY created_at DESC, id DESC",
                )?;
                let bound = params![runtime, cutoff, Status::Paused, Status::Running];
                let rows = stmt.query_map(bound, |r| Ok((r.get(0)?, r.get(1)?)))?;
                rows.collect::<Result<_, _>>()?
            };
            let mut changed = Vec::new();
            for (id, status) in stale {
                let (next, error) = if status == Status::Paused {
                    (Status::Rejected, "Expired awaiting approval")
                } else {
                    (
                        Status::Error,
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
                        "UPDATE cm_log SET state = ?3
                         WHERE runtime = ?1 AND execution_id = ?2 AND state = ?4",
                        params![runtime, id, EntryState::Reverted, EntryState::Pending],
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
             WHERE runtime = ?1 AND execution_id = ?2 AND state = ?4 AND connector <> ?3
             ORDER BY seq DESC"
        ))?;
        let bound = params![runtime, id, STEP_CONNECTOR, EntryState::Applied];
        let rows = stmt.query_map(bound, entry_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn mark_reverted(&self, runtime: &str, id: &str, seq: i64) -> StoreResult<()> {
        self.write(|tx| {
            if entry_at(tx, runtime, id, seq)?.is_some() {
                set_entry_state(tx, runtime, id, seq, EntryState::Reverted)?;
                touch(tx, runtime, id, now_ms())?;
            }
            Ok(())
        })
    }

    pub fn mark_rolled_back(&self, runtime: &str, id: &str) -> StoreResult<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE cm_executions SET status = ?4, updated_at = ?3
                 WHERE runtime = ?1 AND id = ?2",
                params![runtime, id, now_ms(), Status::RolledBack],
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
    pub fn delete_execution(&self, runtime: &str, id: &str) -> StoreResult<Option<Status>> {
        self.write(|tx| {
            let status: Option<Status> = tx
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
    state: EntryState,
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

/// The longest value the durable log keeps, and the longest error text (docs/cloudflare-compat.md
/// §6.6), in UTF-16 code units as JS counts them. The JS side reads it from here
/// (`durableConstants()`), so the limit is declared once.
pub const MAX_DURABLE_UNITS: usize = 1_000_000;

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

/// `#fail` of docs/cloudflare-compat.md: the entry at `seq` (if executing or pending) becomes `error`, and the
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
        "UPDATE cm_log SET state = ?4
         WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3 AND state IN (?5, ?6)",
        params![
            runtime,
            id,
            seq,
            EntryState::Error,
            EntryState::Executing,
            EntryState::Pending
        ],
    )?;
    conn.execute(
        "UPDATE cm_executions SET status = ?5, error = ?3, updated_at = ?4
         WHERE runtime = ?1 AND id = ?2",
        params![
            runtime,
            id,
            cut_utf16(message, MAX_DURABLE_UNITS),
            now,
            Status::Error
        ],
    )?;
    Ok(())
}

fn prune(conn: &Connection, runtime: &str, keep: i64, except: Option<&str>) -> StoreResult<usize> {
    let doomed: Vec<String> = {
        let mut stmt = conn.prepare(
            "SELECT id FROM cm_executions
             WHERE runtime = ?1 AND status IN (?4, ?5, ?6, ?7) AND (?3 IS NULL OR id <> ?3)
             ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?2",
        )?;
        let [a, b, c, d] = Status::TERMINAL;
        let bound = params![runtime, keep.max(0), except, a, b, c, d];
        let rows = stmt.query_map(bound, |r| r.get(0))?;
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
