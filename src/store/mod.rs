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
}

/// The longest value the durable log keeps, and the longest error text (docs/cloudflare-compat.md
/// §6.6), in UTF-16 code units as JS counts them. The JS side reads it from here
/// (`durableConstants()`), so the limit is declared once.
pub const MAX_DURABLE_UNITS: usize = 1_000_000;

mod admin;
mod decisions;
mod rows;
mod runs;

#[cfg(test)]
mod tests;
