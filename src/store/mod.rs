//! The durable runtime's store: executions, their tool-call log and saved snippets, partitioned
//! by runtime name, in one SQLite file (`sqlite.rs`) or one PostgreSQL database
//! (`postgres.rs`). This is the state machine of the Cloudflare runtime facet
//! (docs/cloudflare-compat.md §6.5), written once against `sql::Tx`; values arrive already
//! encoded by the JS side (the storage codec and its size checks need JS semantics), so this
//! module only holds SQL and the transitions. Every operation that decides something runs in
//! one write transaction that first holds the run it decides about (`standing`: SQLite's
//! `BEGIN IMMEDIATE` holds the whole file, PostgreSQL locks the run's row), so two processes
//! sharing the store can never both take the same decision (e.g. apply one approved action
//! twice).
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
//!  any        → rolled_back       mark_rolled_back (after rollback reverted at least one
//!                                 entry; those it could not revert keep `revert_error`)
//!
//!  log entry                      moved by
//!  ─────────                      ────────
//!  (none)     → pending           decide (requires approval: the run pauses)
//!  (none)     → executing         decide (runs now)
//!  pending    → executing         decide (on the pass after an approval: claimed first)
//!  executing  → applied           record_result
//!  executing  → in_doubt          decide on a later pass (the pass that claimed it ended
//!                                 before recording: the effect may or may not have happened)
//!  executing, in_doubt → executing  decide on a later pass, for an idempotent tool, a step or
//!                                 an ephemeral read (run again with the same key)
//!  in_doubt   → pending           resume (approve: retry it)
//!  in_doubt   → applied           record_result (late, or `mark_done` by a person)
//!  pending    → reverted          reject; expire_paused
//!  applied, executing, in_doubt → reverted   mark_reverted (rollback; the last two with their
//!                                 result unknown)
//!  applied, executing, in_doubt (state kept)  mark_revert_failed (rollback could not revert
//!                                 it: `revert_error` says why, until it is reverted)
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
pub mod postgres;
mod schema;
mod sql;
mod sqlite;

use crate::error::ErrorCode;
use postgres::{Migrated, PgConn, PgTarget};
use serde::Serialize;
use sql::{args, Cell, FromCell, Param, Row, Tx};
use sqlite::SqliteConn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

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

/// What a write must survive before it returns (SQLite's `synchronous`, in WAL mode; a
/// PostgreSQL server decides that itself, with `synchronous_commit`).
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
}

/// The connector and method of a run's program awaiting approval before it starts (seq 0 of a
/// gated run's log): `codemode` is a name no connector may take.
pub const PROGRAM_GATE_CONNECTOR: &str = "codemode";
pub const PROGRAM_GATE_METHOD: &str = "program";

/// What a gated run's first log entry holds: the arguments (`{ code }`, storage-codec JSON) and
/// their stable form, as a pass's `decide` for that entry will compare them.
pub struct ProgramGate {
    pub args: String,
    pub args_stable: String,
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

/// What `reject` did (to JS: `"rejected"`, `"not_pending"` or `"leased"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejected {
    Rejected,
    /// The entry is not awaiting a decision (a stale reject after an approval).
    NotPending,
    /// The pass that paused the run still holds it: try again shortly.
    Leased,
}

/// A running execution and who holds it (for recovery).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
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

/// A store failure, with a stable code:
/// - `ERR_STORE` when the store cannot be read or written (the database's own error, a
///   directory that cannot be made, a schema newer than this build);
/// - `ERR_STORE_UNAVAILABLE` when a PostgreSQL server cannot be reached or does not answer in
///   time (nothing of the operation was written, unless the connection broke during the commit
///   itself; try again later);
/// - `ERR_INVALID_ARGUMENT` when the caller named an execution or entry that does not exist,
///   or gave settings or values the store cannot take.
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
    pub fn invalid(message: String) -> StoreError {
        StoreError::missing(message)
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Declares a state enum stored as text, with its conversions to and from a column.
macro_rules! stored_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The text stored in the database and shown to JS.
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

        impl From<$name> for Param<'static> {
            fn from(value: $name) -> Self {
                Param::Text(value.as_str())
            }
        }

        /// As its stored text.
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl FromCell for $name {
            fn from_cell(cell: Cell) -> Option<Self> {
                String::from_cell(cell).and_then(|text| $name::parse(&text))
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    /// Why the last rollback could not revert this entry (`mark_revert_failed`); `None` when no
    /// rollback failed on it, or it was reverted since.
    pub revert_error: Option<String>,
    /// Where its result stands in the order results reached the program; `None` until one is
    /// recorded (and for entries recorded before this column existed).
    pub delivery: Option<Delivery>,
}

/// A recorded result's place in the order the execution's results were recorded, which is the
/// order a pass hands them to the program: later passes hand replayed results back in this
/// order, so the program issues its calls in the same order and they get the same seqs
/// (parallel calls, `Promise.race`, continuations that call again). `at` is when it was recorded
/// (ms since the epoch): the program's clock on every pass once it has received this result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// 0, 1, 2, … per execution, in recording order.
    pub ordinal: i64,
    pub at: i64,
}

/// See `Store::replay_plan`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayPlan {
    /// Places 0..places of the delivery order were taken by earlier passes.
    pub places: i64,
    /// Ms since the epoch.
    pub start: i64,
    pub seed: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    /// 32 random bytes (hex) drawn when the run began: the seed of the program's randomness on
    /// every pass, so `Math.random()` and `crypto.getRandomValues()` repeat on replay yet cannot
    /// be predicted from the run's id. `None` for runs begun before the column existed.
    pub seed: Option<String>,
    pub log: Vec<LogEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub execution_id: String,
    pub seq: i64,
    pub connector: String,
    pub method: String,
    pub args: Option<String>,
    /// Not awaiting approval but a person's word on a call in doubt (retry or mark done).
    pub in_doubt: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
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

/// Where a store keeps its state.
pub enum Target {
    /// A SQLite file (`:memory:` for a private in-memory one).
    File(String, Durability),
    /// A PostgreSQL database.
    Postgres(Arc<PgTarget>),
}

/// The connection of one store.
enum Conn {
    Sqlite(SqliteConn),
    // Boxed: a connection with its prepared statements is several times a SQLite handle.
    Postgres(Box<PgConn>),
}

/// The state machine over one connection. Owned by one thread (`owner.rs`); the lock only
/// makes it `Sync` for tests that share one between threads.
pub struct Store {
    conn: Mutex<Conn>,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Opens (creating if needed) the SQLite store at `path` (`:memory:` for a private
    /// in-memory one).
    pub fn open(path: &str, durability: Durability) -> StoreResult<Store> {
        Ok(Store {
            conn: Mutex::new(Conn::Sqlite(SqliteConn::open(path, durability)?)),
        })
    }

    /// A store on a PostgreSQL database, connected on its first operation (and again after
    /// the connection broke); the first of a store's connections to connect migrates.
    pub fn postgres(target: Arc<PgTarget>, migrated: Migrated) -> Store {
        Store {
            conn: Mutex::new(Conn::Postgres(Box::new(PgConn::new(target, migrated)))),
        }
    }

    /// Lets an idle database connection go (the next operation connects again); a SQLite
    /// file stays open.
    pub fn disconnect(&self) {
        if let Conn::Postgres(conn) = &mut *self.lock() {
            conn.disconnect();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` in one write transaction: decisions of every process sharing the database
    /// take effect one after the other (`f` may run more than once on PostgreSQL: only its
    /// last run's writes are kept).
    fn write<T>(&self, f: impl FnMut(&mut dyn Tx) -> StoreResult<T>) -> StoreResult<T> {
        match &mut *self.lock() {
            Conn::Sqlite(conn) => conn.write(f),
            Conn::Postgres(conn) => conn.write(f),
        }
    }

    /// Runs `f` in one read transaction (one consistent state of the database).
    fn read<T>(&self, f: impl FnMut(&mut dyn Tx) -> StoreResult<T>) -> StoreResult<T> {
        match &mut *self.lock() {
            Conn::Sqlite(conn) => conn.read(f),
            Conn::Postgres(conn) => conn.read(f),
        }
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

/// The columns `execution_row` reads, in its order.
macro_rules! execution_columns {
    () => {
        "id, code, status, result, error, logs, connectors, created_at, updated_at, owner,
         lease_until, idempotency_key, seed"
    };
}
use execution_columns;

/// The columns `entry_row` reads, in its order.
macro_rules! entry_columns {
    () => {
        "seq, connector, method, args, result, requires_approval, ephemeral, state, revert_error,
         delivered, delivered_at"
    };
}
use entry_columns;

fn execution_row(mut r: Row) -> StoreResult<Execution> {
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

fn entry_row(mut r: Row) -> StoreResult<LogEntry> {
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
fn fresh_seed() -> StoreResult<String> {
    let mut bytes = [0u8; 32];
    crate::os::random_bytes(&mut bytes)
        .map_err(|e| StoreError::io(format!("no random source for the run's seed: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn delivery_of(ordinal: Option<i64>, at: Option<i64>) -> Option<Delivery> {
    Some(Delivery {
        ordinal: ordinal?,
        at: at?,
    })
}

fn log_of(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<Vec<LogEntry>> {
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
fn write_entry(
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

fn set_entry_state(
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

fn touch(tx: &mut dyn Tx, runtime: &str, id: &str, now: i64) -> StoreResult<()> {
    tx.execute(
        "UPDATE cm_executions SET updated_at = ?3 WHERE runtime = ?1 AND id = ?2",
        args![runtime, id, now],
    )?;
    Ok(())
}

/// Where a run stands and who holds it.
struct Standing {
    status: Status,
    owner: Option<String>,
    lease_until: Option<i64>,
    updated_at: i64,
}

/// Where the run stands, and the run held until the transaction ends: every write that reads
/// a run (or its log) before it writes calls this first, so decisions about one run take
/// effect one after the other (see `sql.rs` on `FOR UPDATE`).
fn standing(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<Option<Standing>> {
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
struct Recorded {
    entry: LogEntry,
    stable: Option<String>,
}

/// `standing` and the run's log entry at `seq`, in one statement (every decision about a call
/// needs both; on PostgreSQL a statement is a round trip): the run held, its entry if any.
fn standing_at(
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
fn waiting_seqs(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<Vec<i64>> {
    let rows = tx.query(
        "SELECT seq FROM cm_log WHERE runtime = ?1 AND execution_id = ?2 AND state IN (?3, ?4)
         ORDER BY seq",
        args![runtime, id, EntryState::Pending, EntryState::InDoubt],
    )?;
    rows.into_iter().map(|mut r| r.get(0)).collect()
}

/// Ends a run with `status` and `error`, giving up any lease; its pending entries are reverted
/// (entries in doubt stay so: their effect may be in force).
fn end_run(
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
fn delete_run(tx: &mut dyn Tx, runtime: &str, id: &str) -> StoreResult<()> {
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

fn prune(tx: &mut dyn Tx, runtime: &str, keep: i64, except: Option<&str>) -> StoreResult<usize> {
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

#[cfg(test)]
mod tests;
