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
//!  running    → paused            decide (a fresh call that requires approval, or a call
//!                                 in doubt that is not idempotent)
//!  paused     → running           resume (approve)
//!  running    → completed         complete
//!  running    → error             fail; decide/record_result on divergence or an
//!                                 unrecordable value (fail_run); expire_paused (orphaned);
//!                                 begin with the key of an orphaned run (interrupted)
//!  paused     → rejected          reject; expire_paused
//!  any        → rolled_back       mark_rolled_back (after rollback reverted the entries)
//!
//!  log entry                      moved by
//!  ─────────                      ────────
//!  (none)     → pending           decide (requires approval: the run pauses)
//!  (none)     → executing         decide (runs now)
//!  pending    → executing         decide (on the pass after an approval: claimed first)
//!  executing  → applied           record_result
//!  executing  → in_doubt          decide on a later pass (the pass that claimed it ended
//!                                 before recording: the effect may or may not have happened)
//!  in_doubt   → pending           resume (approve: retry it)
//!  in_doubt   → applied           record_result (late, or `mark_done` by a person)
//!  pending    → reverted          reject; expire_paused
//!  applied    → reverted          mark_reverted (rollback)
//!  executing, pending → error     fail_run
//!  reverted, error → pending/executing   decide (recorded again as a fresh call)
//! ```
//!
//! `completed`, `error`, `rejected` and `rolled_back` are terminal ([`Status::TERMINAL`]); only
//! terminal executions are pruned.
//!
//! Ownership. A pass holds a [`Lease`] on its run (`owner`, `lease_until`): `begin`, `resume`
//! and `claim` take it, `renew` extends it, and `complete`, `fail` and `release` give it up.
//! Only the owner's `decide`, `complete` and `fail` move a running run; `resume`, `reject` and
//! `expire_paused` leave a run with a live lease alone (the pass that holds it is still ending).
//! A running run whose lease has lapsed (or was cleared because its owner died) is orphaned:
//! `claim` hands it to a recovering pass; `release` of an owner known to be dead orphans its
//! runs at once.

pub mod owner;
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

/// The error of a keyed run found orphaned by a retry of `begin` with its key.
pub const INTERRUPTED: &str =
    "Interrupted: the process running this execution stopped before it finished, and its lease expired";

/// A pass's hold on its run: an owner id unique to one process, and the instant (ms since the
/// epoch) until which it holds the run unless renewed.
#[derive(Clone, Copy, Debug)]
pub struct Lease<'a> {
    pub owner: &'a str,
    pub until_ms: i64,
}

/// What a write must survive before it returns (SQLite's `synchronous`, in WAL mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// A crash of the process (the default): committed transactions survive; a power loss or
    /// an operating-system crash may lose the last ones (never corrupt the file).
    Normal,
    /// A power loss too: every commit waits for the disk (fsync), several times slower.
    Full,
}

impl Durability {
    pub fn parse(text: &str) -> Option<Durability> {
        match text {
            "normal" => Some(Durability::Normal),
            "full" => Some(Durability::Full),
            _ => None,
        }
    }
    fn pragma(self) -> &'static str {
        match self {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        }
    }
}

/// What `begin` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Begun {
    /// A new running execution, held by the caller's lease.
    Started,
    /// An execution with this idempotency key exists already (its id): nothing was started.
    /// If it was running with a lapsed lease, it was first ended with `INTERRUPTED`.
    Existing(String),
}

/// What `resume` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resumed {
    /// Running again, held by the caller's lease.
    Resumed,
    Missing,
    /// Not paused (its status now).
    NotPaused(Status),
    /// The pass that paused it still holds it (it is finishing): try again shortly.
    Leased,
    /// The approval names an action that is not what waits now (the seqs that do).
    Stale(Vec<i64>),
}

/// What `reject` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejected {
    Rejected,
    /// The entry is not awaiting a decision (a stale reject after an approval).
    NotPending,
    /// The pass that paused the run still holds it: try again shortly.
    Leased,
}

/// A running execution and who holds it (for recovery).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningRun {
    pub id: String,
    pub owner: Option<String>,
    pub lease_until: Option<i64>,
    pub idempotency_key: Option<String>,
}

/// Whether a lease that runs until `until` is live at `now`.
fn live(until: Option<i64>, now: i64) -> bool {
    until.is_some_and(|until| until >= now)
}

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
        /// Decided to run by a pass that ended before recording its result: the effect may or
        /// may not have happened. Awaits a person (retry, or mark done) unless idempotent.
        InDoubt = "in_doubt",
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
    /// The pass holding it, and until when (`None`: no pass holds it).
    pub owner: Option<String>,
    pub lease_until: Option<i64>,
    pub idempotency_key: Option<String>,
    pub log: Vec<LogEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub execution_id: String,
    pub seq: i64,
    pub connector: String,
    pub method: String,
    pub args: Option<String>,
    /// Not awaiting approval but a person's word on a call in doubt (retry or mark done).
    pub in_doubt: bool,
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
    /// The tool may run twice with the same idempotency key: a call in doubt is retried
    /// instead of waiting for a person.
    pub idempotent: bool,
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
    pub fn open(path: &str, durability: Durability) -> StoreResult<Store> {
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
            conn.pragma_update(None, "synchronous", durability.pragma())?;
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
        self.write(|tx| {
            let now = now_ms();
            if let Some(key) = key {
                let existing: Option<(String, Status, Option<i64>)> = tx
                    .query_row(
                        "SELECT id, status, lease_until FROM cm_executions
                         WHERE runtime = ?1 AND idempotency_key = ?2",
                        params![runtime, key],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                    )
                    .optional()?;
                if let Some((existing, status, until)) = existing {
                    if status == Status::Running && !live(until, now) {
                        end_run(tx, runtime, &existing, Status::Error, INTERRUPTED, now)?;
                    }
                    return Ok(Begun::Existing(existing));
                }
            }
            tx.execute(
                "INSERT INTO cm_executions
                   (runtime, id, code, status, connectors, created_at, updated_at, owner,
                    lease_until, idempotency_key)
                 VALUES (?1, ?2, ?3, ?6, ?4, ?5, ?5, ?7, ?8, ?9)",
                params![
                    runtime,
                    id,
                    code,
                    connectors_json,
                    now,
                    Status::Running,
                    lease.owner,
                    lease.until_ms,
                    key
                ],
            )?;
            prune(tx, runtime, max_executions, Some(id))?;
            Ok(Begun::Started)
        })
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
                params![runtime, id, EntryState::Pending, EntryState::InDoubt],
            )?;
            tx.execute(
                "UPDATE cm_executions SET status = ?4, updated_at = ?3, owner = ?5, lease_until = ?6
                 WHERE runtime = ?1 AND id = ?2",
                params![runtime, id, now, Status::Running, lease.owner, lease.until_ms],
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
                params![runtime, id, lease.owner, lease.until_ms],
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
                params![runtime, id, owner],
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
                params![
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
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT id, owner, lease_until, idempotency_key FROM cm_executions
             WHERE runtime = ?1 AND status = ?2 ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![runtime, Status::Running], |r| {
            Ok(RunningRun {
                id: r.get(0)?,
                owner: r.get(1)?,
                lease_until: r.get(2)?,
                idempotency_key: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

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
            let Some(entry) = entry_at(tx, runtime, id, seq)? else {
                return Ok(false);
            };
            if entry.state != EntryState::InDoubt {
                return Ok(false);
            }
            tx.execute(
                "UPDATE cm_log SET result = ?4, state = ?5
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3",
                params![runtime, id, seq, result, EntryState::Applied],
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
        self.write(|tx| {
            let Some(Standing {
                status,
                owner: holder,
                ..
            }) = standing(tx, runtime, id)?
            else {
                return Err(StoreError::missing(format!("No execution \"{id}\"")));
            };
            if status != Status::Running || holder.as_deref() != Some(owner) {
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
                    // Claimed by an earlier pass that never recorded it: the effect may or may
                    // not have happened. An idempotent tool (or a read re-executed on every
                    // pass) runs again with the same key; any other waits for a person.
                    EntryState::Executing | EntryState::InDoubt
                        if call.idempotent || entry.ephemeral =>
                    {
                        set_entry_state(tx, runtime, id, call.seq, EntryState::Executing)?;
                        touch(tx, runtime, id, now)?;
                        return Ok(Decision::Execute);
                    }
                    EntryState::Executing | EntryState::InDoubt => {
                        set_entry_state(tx, runtime, id, call.seq, EntryState::InDoubt)?;
                        tx.execute(
                            "UPDATE cm_executions SET status = ?4, updated_at = ?3
                             WHERE runtime = ?1 AND id = ?2",
                            params![runtime, id, now, Status::Paused],
                        )?;
                        return Ok(Decision::Pause);
                    }
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
            if matches!(entry.state, EntryState::Reverted | EntryState::Error) {
                // A late result of a pass that lost the run: it was rolled back or failed
                // meanwhile, and that stands.
                return Ok(());
            }
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
                params![
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
                params![
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

    /// Pending actions: of one execution (only while it is paused), or of every paused one
    /// (newest execution first, seq ascending within one).
    pub fn list_pending(&self, runtime: &str, id: Option<&str>) -> StoreResult<Vec<Pending>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT l.execution_id, l.seq, l.connector, l.method, l.args, l.state
             FROM cm_log l JOIN cm_executions e ON e.runtime = l.runtime AND e.id = l.execution_id
             WHERE l.runtime = ?1 AND l.state IN (?3, ?5) AND e.status = ?4
               AND (?2 IS NULL OR e.id = ?2)
             ORDER BY e.created_at DESC, e.id DESC, l.seq ASC",
        )?;
        let bound = params![
            runtime,
            id,
            EntryState::Pending,
            Status::Paused,
            EntryState::InDoubt
        ];
        let rows = stmt.query_map(bound, |r| {
            Ok(Pending {
                execution_id: r.get(0)?,
                seq: r.get(1)?,
                connector: r.get(2)?,
                method: r.get(3)?,
                args: r.get(4)?,
                in_doubt: r.get::<_, EntryState>(5)? == EntryState::InDoubt,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Rejects the pending action at `seq` (or declines to retry a call in doubt): a pending
    /// entry is reverted (one in doubt stays in doubt: its effect may be in force, for a
    /// rollback to undo) and the run rejected. `NotPending` (and no change) when the entry is
    /// not waiting — a stale reject after an approval; `Leased` while the pass that paused the
    /// run still holds it.
    pub fn reject(&self, runtime: &str, id: &str, seq: i64) -> StoreResult<Rejected> {
        self.write(|tx| {
            let Some(entry) = entry_at(tx, runtime, id, seq)? else {
                return Ok(Rejected::NotPending);
            };
            let now = now_ms();
            let Some(Standing {
                status,
                lease_until: until,
                ..
            }) = standing(tx, runtime, id)?
            else {
                return Ok(Rejected::NotPending);
            };
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
                params![runtime, id, error, now, Status::Rejected],
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
            let cutoff = now - max_age_ms;
            let stale: Vec<(String, Status)> = {
                let mut stmt = tx.prepare(
                    "SELECT id, status FROM cm_executions
                     WHERE runtime = ?1 AND status IN (?3, ?4) AND updated_at < ?2
                       AND (lease_until IS NULL OR lease_until < ?5)
                     ORDER BY created_at DESC, id DESC",
                )?;
                let bound = params![runtime, cutoff, Status::Paused, Status::Running, now];
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
                // Selected above in this same transaction: it is still `status`, and its lease
                // has lapsed.
                end_run(tx, runtime, &id, next, error, now)?;
                changed.push(id);
            }
            Ok(changed)
        })
    }

    /// Entries other than steps whose effect is or may be in force, newest first (what a
    /// rollback reverts): applied ones, and those executing or in doubt (result unknown).
    pub fn actions_to_revert(&self, runtime: &str, id: &str) -> StoreResult<Vec<LogEntry>> {
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!(
            "SELECT {ENTRY_COLUMNS} FROM cm_log
             WHERE runtime = ?1 AND execution_id = ?2 AND state IN (?4, ?5, ?6)
               AND connector <> ?3
             ORDER BY seq DESC"
        ))?;
        let bound = params![
            runtime,
            id,
            STEP_CONNECTOR,
            EntryState::Applied,
            EntryState::Executing,
            EntryState::InDoubt
        ];
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

const EXECUTION_COLUMNS: &str = "id, code, status, result, error, logs, connectors, created_at,
     updated_at, owner, lease_until, idempotency_key";
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
        owner: r.get(9)?,
        lease_until: r.get(10)?,
        idempotency_key: r.get(11)?,
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

/// Where a run stands and who holds it.
struct Standing {
    status: Status,
    owner: Option<String>,
    lease_until: Option<i64>,
}

fn standing(conn: &Connection, runtime: &str, id: &str) -> StoreResult<Option<Standing>> {
    Ok(conn
        .query_row(
            "SELECT status, owner, lease_until FROM cm_executions WHERE runtime = ?1 AND id = ?2",
            params![runtime, id],
            |r| {
                Ok(Standing {
                    status: r.get(0)?,
                    owner: r.get(1)?,
                    lease_until: r.get(2)?,
                })
            },
        )
        .optional()?)
}

/// The seqs of the entries awaiting a decision (approval, or a word on a call in doubt).
fn waiting_seqs(conn: &Connection, runtime: &str, id: &str) -> StoreResult<Vec<i64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq FROM cm_log WHERE runtime = ?1 AND execution_id = ?2 AND state IN (?3, ?4)
         ORDER BY seq",
    )?;
    let bound = params![runtime, id, EntryState::Pending, EntryState::InDoubt];
    let rows = stmt.query_map(bound, |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Ends a run with `status` and `error`, giving up any lease; its pending entries are reverted
/// (entries in doubt stay so: their effect may be in force).
fn end_run(
    conn: &Connection,
    runtime: &str,
    id: &str,
    status: Status,
    error: &str,
    now: i64,
) -> StoreResult<()> {
    conn.execute(
        "UPDATE cm_executions SET status = ?3, error = ?4, updated_at = ?5, owner = NULL,
           lease_until = NULL
         WHERE runtime = ?1 AND id = ?2",
        params![runtime, id, status, error, now],
    )?;
    conn.execute(
        "UPDATE cm_log SET state = ?3 WHERE runtime = ?1 AND execution_id = ?2 AND state = ?4",
        params![runtime, id, EntryState::Reverted, EntryState::Pending],
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
        "UPDATE cm_executions SET status = ?5, error = ?3, updated_at = ?4, owner = NULL,
           lease_until = NULL
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
