//! The store's schema and its migrations, keyed by SQLite's `user_version`. Each migration runs
//! once, in order, in one transaction; a file written by a newer version is refused.

use super::{StoreError, StoreResult};
use rusqlite::Connection;

/// Migrations in order; `user_version` is the number applied.
pub(super) const MIGRATIONS: &[&str] = &[
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
];

pub fn migrate(conn: &Connection) -> StoreResult<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let known = MIGRATIONS.len() as i64;
    if version > known {
        return Err(StoreError::io(format!(
            "codemode store: the file has schema version {version}, newer than this package understands ({known})"
        )));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        // Another process may be migrating the same file: the immediate transaction waits for
        // it, and the version is checked again inside.
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if current > index as i64 {
            conn.execute_batch("COMMIT")?;
            continue;
        }
        let applied = conn
            .execute_batch(sql)
            .and_then(|_| conn.execute_batch(&format!("PRAGMA user_version = {}", index + 1)));
        match applied {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e.into());
            }
        }
    }
    Ok(())
}
