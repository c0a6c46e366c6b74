//! The store on a PostgreSQL database, for hosts on several machines that share the durable
//! runtime. The same state machine as on SQLite (`super`), over the `postgres` crate (the
//! synchronous client of rust-postgres, one connection per owner thread; see `owner.rs`).
//!
//! Single winner. Every write runs in one READ COMMITTED transaction, and every write that
//! reads a run before it decides holds the run's row first (`SELECT … FOR UPDATE`, see
//! `sql.rs`): a second decision about the same run waits for the first to commit, then reads
//! what it wrote. So two hosts approving and rejecting the same action see exactly what two
//! processes sharing a SQLite file see: one of them wins, the other finds it decided. Writes
//! that change one row in one statement (renew, claim, complete) are atomic as they are.
//! Decisions about different runs never wait for each other. (SERIALIZABLE was tried first:
//! its predicate locks are per index page, so runs that share nothing aborted each other, up
//! to 9 times for one operation with 16 runs at once.) A deadlock (SQLSTATE 40P01) or a
//! serialization failure (40001) is run again from the start, at most `CONFLICT_ATTEMPTS`
//! times. Reads run in one REPEATABLE READ, READ ONLY transaction (one snapshot).
//!
//! Failures. A database that cannot be reached (refused, timed out, the connection lost, the
//! server shutting down) is `ERR_STORE_UNAVAILABLE`; nothing of the operation was committed,
//! except when the connection broke during COMMIT itself, when it may have been (the run's
//! lease and the in-doubt state cover that case, as they cover a crash). A connection that
//! failed so is dropped; the next operation connects again, and an operation that found an
//! older connection broken before it wrote anything is run once more on a new one.

use super::schema;
use super::sql::{Cell, Param, Row, Tx};
use super::{StoreError, StoreResult};
use crate::error::ErrorCode;
use postgres::config::SslMode;
use postgres::error::SqlState;
use postgres::types::{ToSql, Type};
use postgres::{Client, Config, IsolationLevel, NoTls, Statement};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres_rustls::MakeRustlsConnect;

/// Times a write is run when it keeps losing to concurrent ones (deadlocks) before it fails
/// with `ERR_STORE_UNAVAILABLE`.
const CONFLICT_ATTEMPTS: u32 = 30;

/// The pause before the n-th retry of a write that lost: up to 2^n ms, at most 64 ms, jittered.
fn conflict_pause(attempt: u32) -> Duration {
    let cap_us = 1000u64 << attempt.min(6);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    Duration::from_micros(cap_us / 2 + nanos % (cap_us / 2 + 1))
}

/// Keepalive probes start after this much silence, so a peer that vanished without closing
/// (a host powered off, a dropped route) is noticed within a minute, not after two hours.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);

/// The key of the advisory lock that serializes migrations across hosts.
const MIGRATION_LOCK: i64 = 0x636f_6465_6d6f_6465; // "codemode"

/// A PostgreSQL store as the host configured it. Every setting is checked here, once.
#[derive(Clone, Debug)]
pub struct PgTarget {
    config: Config,
    /// The schema the tables live in (created when missing); `None`: the server's search_path.
    schema: Option<String>,
    /// How many connections (and owner threads) the store may hold at once.
    pub connections: usize,
    statement_timeout: Duration,
    /// TLS, when the URL asks for it (`sslmode=require`) or a `ca` is given: every connection
    /// is encrypted and the server's certificate verified (chain and host name); `None`:
    /// plain TCP, as `sslmode=prefer` (the default) and `disable` are taken here.
    tls: Option<rustls::ClientConfig>,
}

/// The settings of a PostgreSQL store, each with its default and its range.
#[derive(Clone, Debug, Default)]
pub struct PgSettings {
    /// Connections (and owner threads) at most: default 4, 1..=64.
    pub max_connections: Option<i64>,
    /// How long connecting may take: default 5000 ms, 100..=60000.
    pub connect_timeout_ms: Option<i64>,
    /// How long one statement may run, waits for row locks included: default 10000 ms (as
    /// SQLite's busy timeout), 100..=600000.
    pub statement_timeout_ms: Option<i64>,
    /// A schema of its own for the store's tables (letters, digits and `_`, at most 63).
    pub schema: Option<String>,
    /// PEM certificates of the authorities to trust for the server's certificate, beside the
    /// public ones (a managed database's own CA, or a private one); given, TLS is required.
    pub ca: Option<String>,
}

fn ranged(name: &str, value: Option<i64>, default: i64, min: i64, max: i64) -> StoreResult<i64> {
    let value = value.unwrap_or(default);
    if !(min..=max).contains(&value) {
        return Err(StoreError::invalid(format!(
            "codemode store: {name} must be an integer between {min} and {max} (got {value})"
        )));
    }
    Ok(value)
}

fn valid_schema(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 63
}

impl PgTarget {
    /// Whether `target` names a PostgreSQL database rather than a file.
    pub fn is_url(target: &str) -> bool {
        target.starts_with("postgres://") || target.starts_with("postgresql://")
    }

    /// Checks a connection URL and the settings; connects to nothing.
    pub fn parse(url: &str, settings: &PgSettings) -> StoreResult<PgTarget> {
        let mut config = Config::from_str(url).map_err(|e| {
            StoreError::invalid(format!("codemode store: not a PostgreSQL URL: {e}"))
        })?;
        let tls = match (config.get_ssl_mode(), &settings.ca) {
            (SslMode::Disable, Some(_)) => {
                return Err(StoreError::invalid(
                    "codemode store: ca is given but the URL says sslmode=disable".to_string(),
                ))
            }
            (SslMode::Require, ca) | (_, ca @ Some(_)) => Some(tls_config(ca.as_deref())?),
            _ => None,
        };
        if tls.is_some() {
            config.ssl_mode(SslMode::Require);
        }
        let connections = ranged("maxConnections", settings.max_connections, 4, 1, 64)?;
        let connect = ranged(
            "connectTimeoutMs",
            settings.connect_timeout_ms,
            5000,
            100,
            60_000,
        )?;
        let statement = ranged(
            "statementTimeoutMs",
            settings.statement_timeout_ms,
            10_000,
            100,
            600_000,
        )?;
        if let Some(schema) = &settings.schema {
            if !valid_schema(schema) {
                return Err(StoreError::invalid(format!(
                    "codemode store: schema must be letters, digits and \"_\", not starting with a digit, at most 63 (got {schema:?})"
                )));
            }
        }
        config
            .connect_timeout(Duration::from_millis(connect as u64))
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            // Sent data unacknowledged this long means the server is gone.
            .tcp_user_timeout(Duration::from_millis((statement + connect) as u64));
        if config.get_application_name().is_none() {
            config.application_name("codemode-executor");
        }
        Ok(PgTarget {
            config,
            schema: settings.schema.clone(),
            connections: connections as usize,
            statement_timeout: Duration::from_millis(statement as u64),
            tls,
        })
    }
}

/// The TLS client of a store: the public authorities (webpki-roots) and those of `ca`.
fn tls_config(ca: Option<&str>) -> StoreResult<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(pem) = ca {
        let bad = |detail: String| {
            StoreError::invalid(format!(
                "codemode store: ca must be PEM certificates (-----BEGIN CERTIFICATE-----): {detail}"
            ))
        };
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            let cert = cert.map_err(|e| bad(e.to_string()))?;
            roots.add(cert).map_err(|e| bad(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(bad("none found".to_string()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::io(format!("codemode store: TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// Whether the schema is known to be up to date (shared by the connections of one store, so
/// only the first to connect migrates).
pub type Migrated = Arc<Mutex<bool>>;

/// One connection, made when first needed and made again after it broke.
pub struct PgConn {
    target: Arc<PgTarget>,
    migrated: Migrated,
    live: Option<Live>,
}

struct Live {
    client: Client,
    /// What this connection prepared, by the statement's text.
    statements: HashMap<&'static str, Statement>,
}

/// What a failed statement means for the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    /// Lost to a concurrent transaction: run it again.
    Conflict,
    /// The database could not be reached, or the connection broke.
    Unavailable,
    /// A statement ran past `statementTimeoutMs` (a lock held elsewhere, a busy server): the
    /// connection is fine, and running it again would wait as long again.
    TimedOut,
    /// Anything else (an error of the statement itself).
    Other,
}

fn failure_of(e: &postgres::Error) -> Failure {
    let Some(code) = e.code() else {
        // No SQLSTATE: the connection or the socket failed.
        return Failure::Unavailable;
    };
    if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED {
        Failure::Conflict
    } else if code.code().starts_with("08")
        || [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::TOO_MANY_CONNECTIONS,
        ]
        .contains(code)
    {
        Failure::Unavailable
    } else if *code == SqlState::QUERY_CANCELED || *code == SqlState::LOCK_NOT_AVAILABLE {
        Failure::TimedOut
    } else {
        Failure::Other
    }
}

fn store_error(e: &postgres::Error, failure: Failure) -> StoreError {
    // The server's own message names the problem; the driver's Display adds its kind.
    let detail = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            // The driver's text names the step ("error performing TLS handshake"); its causes
            // say what went wrong (an untrusted certificate, a refused connection).
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(inner) = cause {
                let part = inner.to_string();
                if !text.contains(&part) {
                    text.push_str(": ");
                    text.push_str(&part);
                }
                cause = inner.source();
            }
            text
        }
    };
    match failure {
        Failure::Unavailable | Failure::Conflict | Failure::TimedOut => StoreError {
            code: ErrorCode::StoreUnavailable,
            message: format!("codemode store: PostgreSQL is unavailable: {detail}"),
        },
        Failure::Other => StoreError::io(format!("codemode store: PostgreSQL: {detail}")),
    }
}

impl PgConn {
    pub fn new(target: Arc<PgTarget>, migrated: Migrated) -> PgConn {
        PgConn {
            target,
            migrated,
            live: None,
        }
    }

    /// Closes the connection, if any; the next operation makes a new one.
    pub fn disconnect(&mut self) {
        self.live = None;
    }

    /// The connection, made (and the schema migrated, once per store) when there is none.
    fn live(&mut self) -> StoreResult<&mut Live> {
        if self.live.as_ref().is_some_and(|l| l.client.is_closed()) {
            self.live = None;
        }
        if self.live.is_none() {
            let unreachable = |e: postgres::Error| store_error(&e, Failure::Unavailable);
            let connected = match &self.target.tls {
                Some(tls) => self
                    .target
                    .config
                    .connect(MakeRustlsConnect::new(tls.clone())),
                None => self.target.config.connect(NoTls),
            };
            let mut client = connected.map_err(unreachable)?;
            let mut session = format!(
                "SET statement_timeout = {}",
                self.target.statement_timeout.as_millis()
            );
            if let Some(schema) = &self.target.schema {
                session.push_str(&format!("; SET search_path TO \"{schema}\""));
            }
            client
                .batch_execute(&session)
                .map_err(|e| store_error(&e, failure_of(&e)))?;
            let mut migrated = self.migrated.lock().unwrap_or_else(|p| p.into_inner());
            if !*migrated {
                migrate(&mut client, self.target.schema.as_deref())?;
                *migrated = true;
            }
            drop(migrated);
            self.live = Some(Live {
                client,
                statements: HashMap::new(),
            });
        }
        Ok(self.live.as_mut().expect("made above"))
    }

    /// Runs `f` in one READ COMMITTED transaction, again when it loses to a concurrent one.
    pub fn write<T>(&mut self, f: impl FnMut(&mut dyn Tx) -> StoreResult<T>) -> StoreResult<T> {
        self.transaction(IsolationLevel::ReadCommitted, false, f)
    }

    /// Runs `f` in one read-only snapshot.
    pub fn read<T>(&mut self, f: impl FnMut(&mut dyn Tx) -> StoreResult<T>) -> StoreResult<T> {
        self.transaction(IsolationLevel::RepeatableRead, true, f)
    }

    fn transaction<T>(
        &mut self,
        level: IsolationLevel,
        read_only: bool,
        mut f: impl FnMut(&mut dyn Tx) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let mut conflicts = 0;
        let mut reconnected = false;
        loop {
            let fresh = self.live.is_none();
            let outcome = {
                let live = self.live()?;
                attempt(live, level, read_only, &mut f)
            };
            match outcome {
                Ok(value) => return Ok(value),
                Err(Attempt::Failed(failure, error)) => match failure {
                    Failure::Conflict if conflicts + 1 < CONFLICT_ATTEMPTS => {
                        conflicts += 1;
                        std::thread::sleep(conflict_pause(conflicts));
                    }
                    Failure::Conflict | Failure::TimedOut | Failure::Other => return Err(error),
                    // The connection is not to be trusted any more (the server may be ending
                    // it, as on a restart): dropped. One that had served earlier operations
                    // may simply have gone stale: once more on a new one, since nothing was
                    // committed.
                    Failure::Unavailable => {
                        self.live = None;
                        if fresh || reconnected {
                            return Err(error);
                        }
                        reconnected = true;
                    }
                },
                Err(Attempt::Commit(error)) => {
                    self.live = None;
                    return Err(error);
                }
            }
        }
    }
}

enum Attempt {
    /// Failed before COMMIT: nothing was written.
    Failed(Failure, StoreError),
    /// The connection broke during COMMIT: it may or may not have committed.
    Commit(StoreError),
}

fn attempt<T>(
    live: &mut Live,
    level: IsolationLevel,
    read_only: bool,
    f: &mut impl FnMut(&mut dyn Tx) -> StoreResult<T>,
) -> Result<T, Attempt> {
    let Live { client, statements } = live;
    let failed = |e: postgres::Error| {
        let failure = failure_of(&e);
        Attempt::Failed(failure, store_error(&e, failure))
    };
    let transaction = client
        .build_transaction()
        .isolation_level(level)
        .read_only(read_only)
        .start()
        .map_err(failed)?;
    let mut tx = PgTx {
        transaction,
        statements,
        failure: None,
    };
    let out = f(&mut tx);
    let PgTx {
        transaction,
        failure,
        ..
    } = tx;
    let value = match out {
        Ok(value) => value,
        // Dropping the transaction rolls it back.
        Err(e) => return Err(Attempt::Failed(failure.unwrap_or(Failure::Other), e)),
    };
    match transaction.commit() {
        Ok(()) => Ok(value),
        Err(e) => match failure_of(&e) {
            // The server refused the commit: nothing was written.
            Failure::Conflict => Err(Attempt::Failed(
                Failure::Conflict,
                store_error(&e, Failure::Conflict),
            )),
            Failure::Other if e.code().is_some() => Err(Attempt::Failed(
                Failure::Other,
                store_error(&e, Failure::Other),
            )),
            _ => Err(Attempt::Commit(store_error(&e, Failure::Unavailable))),
        },
    }
}

struct PgTx<'c, 't> {
    transaction: postgres::Transaction<'t>,
    statements: &'c mut HashMap<&'static str, Statement>,
    /// How the last statement failed, for the retry decision.
    failure: Option<Failure>,
}

/// A statement of the state machine as PostgreSQL reads it: `?N` placeholders (SQLite's) as
/// `$N`, and a `/*FOR UPDATE …*/` marker as the clause it holds.
fn dialect(sql: &str) -> String {
    let sql = dollar_placeholders(sql);
    let Some(start) = sql.find("/*FOR UPDATE") else {
        return sql;
    };
    let end = sql[start..].find("*/").map_or(sql.len(), |at| start + at);
    format!(
        "{}{}{}",
        &sql[..start],
        &sql[start + 2..end],
        sql.get(end + 2..).unwrap_or("")
    )
}

/// `?N` (the state machine's placeholders, which SQLite reads) as PostgreSQL's `$N`.
fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// A parameter as the type PostgreSQL inferred for it (a NULL, too, must name one).
fn bound(param: &Param<'_>, ty: &Type) -> StoreResult<Box<dyn ToSql + Sync>> {
    let mismatch = || {
        StoreError::io(format!(
            "codemode store: a {param:?} parameter where PostgreSQL expects {ty}"
        ))
    };
    Ok(match (*param, ty) {
        (Param::Null, &Type::INT8) => Box::new(None::<i64>),
        (Param::Null, &Type::INT4) => Box::new(None::<i32>),
        (Param::Null, &Type::BOOL) => Box::new(None::<bool>),
        (Param::Null, _) => Box::new(None::<String>),
        (Param::Int(n), &Type::INT8) => Box::new(n),
        (Param::Int(n), &Type::INT4) => Box::new(i32::try_from(n).map_err(|_| mismatch())?),
        (Param::Bool(b), &Type::BOOL) => Box::new(b),
        (Param::Text(text), _) => {
            if text.contains('\0') {
                return Err(StoreError::invalid(
                    "codemode store: PostgreSQL cannot store text that contains the NUL character (U+0000)"
                        .to_string(),
                ));
            }
            Box::new(text.to_string())
        }
        _ => return Err(mismatch()),
    })
}

fn cell(row: &postgres::Row, i: usize) -> Result<Cell, postgres::Error> {
    let ty = row.columns()[i].type_();
    Ok(match *ty {
        Type::INT8 => row
            .try_get::<_, Option<i64>>(i)?
            .map_or(Cell::Null, Cell::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map_or(Cell::Null, |n| Cell::Int(n.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map_or(Cell::Null, Cell::Bool),
        _ => row
            .try_get::<_, Option<String>>(i)?
            .map_or(Cell::Null, Cell::Text),
    })
}

impl PgTx<'_, '_> {
    fn fail(&mut self, e: postgres::Error) -> StoreError {
        let failure = failure_of(&e);
        self.failure = Some(failure);
        store_error(&e, failure)
    }

    fn prepared(&mut self, sql: &'static str) -> StoreResult<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        match self.transaction.prepare(&dialect(sql)) {
            Ok(statement) => {
                self.statements.insert(sql, statement.clone());
                Ok(statement)
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn bind(
        statement: &Statement,
        params: &[Param<'_>],
    ) -> StoreResult<Vec<Box<dyn ToSql + Sync>>> {
        params
            .iter()
            .zip(statement.params())
            .map(|(param, ty)| bound(param, ty))
            .collect()
    }
}

impl Tx for PgTx<'_, '_> {
    fn execute(&mut self, sql: &'static str, params: &[Param<'_>]) -> StoreResult<usize> {
        let statement = self.prepared(sql)?;
        let values = Self::bind(&statement, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        match self.transaction.execute(&statement, &refs) {
            Ok(n) => Ok(n as usize),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn query(&mut self, sql: &'static str, params: &[Param<'_>]) -> StoreResult<Vec<Row>> {
        let statement = self.prepared(sql)?;
        let values = Self::bind(&statement, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        let rows = match self.transaction.query(&statement, &refs) {
            Ok(rows) => rows,
            Err(e) => return Err(self.fail(e)),
        };
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let cells = (0..row.len()).map(|i| cell(row, i)).collect();
            match cells {
                Ok(cells) => out.push(Row(cells)),
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(out)
    }
}

/// Brings the database's schema up to date, in one transaction under an advisory lock (hosts
/// starting together migrate one at a time; the others find it done).
fn migrate(client: &mut Client, schema: Option<&str>) -> StoreResult<()> {
    let failed = |e: postgres::Error| store_error(&e, failure_of(&e));
    let mut tx = client.transaction().map_err(failed)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(failed)?;
    if let Some(schema) = schema {
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
            .map_err(failed)?;
    }
    tx.batch_execute("CREATE TABLE IF NOT EXISTS cm_schema (version INTEGER NOT NULL)")
        .map_err(failed)?;
    let version: i64 = match tx
        .query_opt("SELECT version FROM cm_schema", &[])
        .map_err(failed)?
    {
        Some(row) => row.try_get::<_, i32>(0).map_err(failed)?.into(),
        None => {
            tx.execute("INSERT INTO cm_schema (version) VALUES (0)", &[])
                .map_err(failed)?;
            0
        }
    };
    schema::check_version(version, schema::POSTGRES.len())?;
    for sql in schema::POSTGRES.iter().skip(version as usize) {
        tx.batch_execute(sql).map_err(failed)?;
    }
    let applied = schema::POSTGRES.len() as i32;
    tx.execute("UPDATE cm_schema SET version = $1", &[&applied])
        .map_err(failed)?;
    tx.commit().map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_become_postgres_dialect() {
        assert_eq!(
            dialect("SELECT a FROM t WHERE a = ?1 AND b IN (?12, ?3) AND c = '?' /*FOR UPDATE*/"),
            "SELECT a FROM t WHERE a = $1 AND b IN ($12, $3) AND c = '?' FOR UPDATE"
        );
        assert_eq!(
            dialect("SELECT e.a FROM t e LEFT JOIN u l ON l.x = e.x /*FOR UPDATE OF e*/"),
            "SELECT e.a FROM t e LEFT JOIN u l ON l.x = e.x FOR UPDATE OF e"
        );
        assert_eq!(dialect("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn settings_are_checked_before_connecting() {
        let url = "postgres://u@localhost/db";
        let target = PgTarget::parse(url, &PgSettings::default()).unwrap();
        assert_eq!(target.connections, 4);
        assert_eq!(target.statement_timeout, Duration::from_secs(10));
        let bad = |settings: PgSettings| PgTarget::parse(url, &settings).unwrap_err();
        let e = bad(PgSettings {
            max_connections: Some(0),
            ..Default::default()
        });
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e
            .message
            .contains("maxConnections must be an integer between 1 and 64 (got 0)"));
        let e = bad(PgSettings {
            schema: Some("x; DROP TABLE y".into()),
            ..Default::default()
        });
        assert!(e.message.contains("schema must be"), "{}", e.message);
        let tls = PgTarget::parse("postgres://u@h/db?sslmode=require", &PgSettings::default());
        assert!(tls.unwrap().tls.is_some(), "sslmode=require: TLS");
        assert!(PgTarget::parse(url, &PgSettings::default())
            .unwrap()
            .tls
            .is_none());
        let e = bad(PgSettings {
            ca: Some("not a certificate".into()),
            ..Default::default()
        });
        assert!(
            e.message.contains("ca must be PEM certificates"),
            "{}",
            e.message
        );
        let e = PgTarget::parse(
            "postgres://u@h/db?sslmode=disable",
            &PgSettings {
                ca: Some("x".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.message.contains("sslmode=disable"), "{}", e.message);
        let e = PgTarget::parse("postgres://u@h:notaport/db", &PgSettings::default()).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(PgTarget::is_url("postgresql://x") && !PgTarget::is_url("/tmp/x.db"));
    }

    #[test]
    fn conflicts_pause_longer_each_time_within_the_cap() {
        for attempt in 1..40 {
            let pause = conflict_pause(attempt);
            let cap = Duration::from_micros(1000u64 << attempt.min(6));
            assert!(pause >= cap / 2 && pause <= cap, "{attempt}: {pause:?}");
        }
    }
}
