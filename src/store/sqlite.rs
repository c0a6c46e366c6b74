//! The store on one SQLite file (rusqlite, SQLite compiled in): WAL mode, a busy timeout, and
//! every write in one `BEGIN IMMEDIATE` transaction, so two processes sharing the file take
//! their decisions one after the other.

use super::schema;
use super::sql::{Cell, Param, Row, Tx};
use super::{Durability, StoreError, StoreResult};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql, TransactionBehavior};
use std::time::Duration;

/// How long an operation waits for another process's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::io(format!("codemode store: {e}"))
    }
}

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Param::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Param::Int(n) => ToSqlOutput::from(n),
            Param::Text(text) => ToSqlOutput::from(text),
            Param::Bool(b) => ToSqlOutput::from(b),
        })
    }
}

fn cell(value: ValueRef<'_>) -> StoreResult<Cell> {
    Ok(match value {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(n) => Cell::Int(n),
        ValueRef::Text(bytes) => Cell::Text(
            std::str::from_utf8(bytes)
                .map_err(|e| {
                    StoreError::io(format!("codemode store: text that is not UTF-8: {e}"))
                })?
                .to_string(),
        ),
        ValueRef::Real(_) | ValueRef::Blob(_) => {
            return Err(StoreError::io(
                "codemode store: a column holds a real or a blob, which this store never writes"
                    .to_string(),
            ))
        }
    })
}

/// One SQLite connection.
pub struct SqliteConn {
    conn: Connection,
}

impl SqliteConn {
    /// Opens (creating if needed) the file at `path` (`:memory:` for a private in-memory one)
    /// and brings its schema up to date.
    pub fn open(path: &str, durability: Durability) -> StoreResult<SqliteConn> {
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
            let synchronous = match durability {
                Durability::Normal => "NORMAL",
                Durability::Full => "FULL",
            };
            conn.pragma_update(None, "synchronous", synchronous)?;
        }
        migrate(&conn)?;
        Ok(SqliteConn { conn })
    }

    /// Runs `f` in one write transaction, taken at once, so decisions serialize across
    /// processes.
    pub fn write<T>(&mut self, f: impl FnOnce(&mut dyn Tx) -> StoreResult<T>) -> StoreResult<T> {
        self.transaction(TransactionBehavior::Immediate, f)
    }

    /// Runs `f` in one read transaction: its queries see one state of the file.
    pub fn read<T>(&mut self, f: impl FnOnce(&mut dyn Tx) -> StoreResult<T>) -> StoreResult<T> {
        self.transaction(TransactionBehavior::Deferred, f)
    }

    fn transaction<T>(
        &mut self,
        behavior: TransactionBehavior,
        f: impl FnOnce(&mut dyn Tx) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let tx = self.conn.transaction_with_behavior(behavior)?;
        let out = f(&mut SqliteTx(&tx))?;
        tx.commit()?;
        Ok(out)
    }
}

struct SqliteTx<'c>(&'c Connection);

impl Tx for SqliteTx<'_> {
    fn execute(&mut self, sql: &'static str, params: &[Param<'_>]) -> StoreResult<usize> {
        let mut stmt = self.0.prepare_cached(sql)?;
        Ok(stmt.execute(rusqlite::params_from_iter(params))?)
    }

    fn query(&mut self, sql: &'static str, params: &[Param<'_>]) -> StoreResult<Vec<Row>> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let width = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let cells = (0..width)
                .map(|i| cell(row.get_ref(i)?))
                .collect::<StoreResult<Vec<Cell>>>()?;
            out.push(Row(cells));
        }
        Ok(out)
    }
}

/// Brings the file's schema up to date, keyed by SQLite's `user_version`. Each migration runs
/// once, in order, in one transaction; a file written by a newer version is refused.
fn migrate(conn: &Connection) -> StoreResult<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    schema::check_version(version, schema::SQLITE.len())?;
    for (index, sql) in schema::SQLITE.iter().enumerate().skip(version as usize) {
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
