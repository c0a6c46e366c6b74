//! The store's schema and its migrations, one list per database: the tables are the same, their
//! column types are each database's own (SQLite's INTEGER 0/1 is PostgreSQL's BOOLEAN; snippet
//! names sort byte by byte in both: SQLite's default collation, PostgreSQL's "C"). Each list is
//! append-only: a database records how many of its list it applied (`sqlite.rs`: the file's
//! `user_version`; `postgres.rs`: the `cm_schema` row), and one written by a newer version is
//! refused.

use super::{StoreError, StoreResult};

/// SQLite's migrations in order; `user_version` is the number applied.
pub(super) const SQLITE: &[&str] = &[
    // 1: executions, their call log and snippets, each partitioned by runtime name. `args_stable`
    // keeps the recorded arguments' stable form for replay divergence checks.
    "CREATE TABLE cm_executions (
        runtime TEXT NOT NULL,
        id TEXT NOT NULL,
        code TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        logs TEXT,
        connectors TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (runtime, id)
     );
     CREATE INDEX cm_executions_status ON cm_executions (runtime, status, created_at);
     CREATE TABLE cm_log (
        runtime TEXT NOT NULL,
        execution_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        connector TEXT NOT NULL,
        method TEXT NOT NULL,
        args TEXT,
        args_stable TEXT,
        result TEXT,
        requires_approval INTEGER NOT NULL DEFAULT 0,
        ephemeral INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        PRIMARY KEY (runtime, execution_id, seq)
     );
     CREATE TABLE cm_snippets (
        runtime TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        code TEXT NOT NULL,
        saved_at INTEGER NOT NULL,
        input_schema TEXT,
        connectors TEXT,
        PRIMARY KEY (runtime, name)
     );",
    // 2: ownership of a pass (a lease: who holds the run, and until when, in ms since the
    // epoch; NULL when no pass holds it) and idempotency keys of whole runs.
    "ALTER TABLE cm_executions ADD COLUMN owner TEXT;
     ALTER TABLE cm_executions ADD COLUMN lease_until INTEGER;
     ALTER TABLE cm_executions ADD COLUMN idempotency_key TEXT;
     CREATE UNIQUE INDEX cm_executions_key ON cm_executions (runtime, idempotency_key)
        WHERE idempotency_key IS NOT NULL;",
    // 3: why a rollback could not revert an entry whose effect is or may still be in force (its
    // revert threw, or a call in doubt could not be reverted); NULL otherwise.
    "ALTER TABLE cm_log ADD COLUMN revert_error TEXT;",
    // 4: replay (issue 36): each recorded result's place in the order results reached the
    // program, and when it was recorded; each run's random seed.
    "ALTER TABLE cm_log ADD COLUMN delivered INTEGER;
     ALTER TABLE cm_log ADD COLUMN delivered_at INTEGER;
     ALTER TABLE cm_executions ADD COLUMN seed TEXT;",
];

/// PostgreSQL's migrations in order; `cm_schema.version` is the number applied. The first is
/// the whole schema as SQLite's reached it at its version 2.
pub(super) const POSTGRES: &[&str] = &[
    "CREATE TABLE cm_executions (
        runtime TEXT NOT NULL,
        id TEXT NOT NULL,
        code TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        logs TEXT,
        connectors TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        owner TEXT,
        lease_until BIGINT,
        idempotency_key TEXT,
        PRIMARY KEY (runtime, id)
     );
     CREATE INDEX cm_executions_status ON cm_executions (runtime, status, created_at);
     CREATE UNIQUE INDEX cm_executions_key ON cm_executions (runtime, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
     CREATE TABLE cm_log (
        runtime TEXT NOT NULL,
        execution_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        connector TEXT NOT NULL,
        method TEXT NOT NULL,
        args TEXT,
        args_stable TEXT,
        result TEXT,
        requires_approval BOOLEAN NOT NULL DEFAULT FALSE,
        ephemeral BOOLEAN NOT NULL DEFAULT FALSE,
        state TEXT NOT NULL,
        PRIMARY KEY (runtime, execution_id, seq)
     );
     CREATE TABLE cm_snippets (
        runtime TEXT NOT NULL,
        name TEXT COLLATE \"C\" NOT NULL,
        description TEXT NOT NULL,
        code TEXT NOT NULL,
        saved_at BIGINT NOT NULL,
        input_schema TEXT,
        connectors TEXT,
        PRIMARY KEY (runtime, name)
     );",
    // 2: as SQLite's 3 (`revert_error`).
    "ALTER TABLE cm_log ADD COLUMN revert_error TEXT;",
    // 3: as SQLite's 4 (delivery order, seeds).
    "ALTER TABLE cm_log ADD COLUMN delivered BIGINT;
     ALTER TABLE cm_log ADD COLUMN delivered_at BIGINT;
     ALTER TABLE cm_executions ADD COLUMN seed TEXT;",
];

/// Refuses a database whose schema is newer than this build's `known` migrations.
pub(super) fn check_version(version: i64, known: usize) -> StoreResult<()> {
    if version > known as i64 {
        return Err(StoreError::io(format!(
            "codemode store: the database has schema version {version}, newer than this package understands ({known})"
        )));
    }
    Ok(())
}
