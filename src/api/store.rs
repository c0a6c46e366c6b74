//! The durable runtime's store, for `lib/runtime/index.js`: one `NativeStore` per SQLite file or
//! PostgreSQL database, every method taking the runtime name (the partition). Asynchronous:
//! each call is one short transaction run on one of the store's own threads (`store::owner`),
//! and returns a promise, so a file or row contended by another process (waiting up to the busy
//! or statement timeout) never blocks the event loop. Store errors reject with their stable code
//! (`ERR_STORE`; `ERR_STORE_UNAVAILABLE` for a database that cannot be reached;
//! `ERR_INVALID_ARGUMENT` for an execution or entry that does not exist, settings out of range,
//! or a value the database cannot hold); values cross as storage-codec JSON text, and rows
//! (`store::Execution`, `LogEntry`, …) as the objects their `Serialize` derives describe.

use crate::error::{ErrorCode, Fault};
use crate::store::owner::StoreOwner;
use crate::store::postgres::{PgSettings, PgTarget};
use crate::store::{
    Begun, Call, Decision, Durability, Lease, ProgramGate, Resumed, Snippet, Store, StoreError,
    Target, MAX_DURABLE_UNITS, STEP_CONNECTOR,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// A store failure thrown into JS with its stable code.
fn thrown(e: StoreError) -> Error<ErrorCode> {
    super::thrown(Fault::new(e.code, e.message))
}

/// A pass's lease as JS passes it: its owner id and until when (ms since the epoch).
#[napi(object)]
pub struct NativeLease {
    pub owner: String,
    pub until: f64,
}

impl NativeLease {
    fn lease(&self) -> Lease<'_> {
        Lease {
            owner: &self.owner,
            until_ms: self.until as i64,
        }
    }
}

/// A snippet to save (see `store::Snippet`, the row `snippets` resolves to).
#[napi(object)]
pub struct NativeSnippet {
    pub name: String,
    pub description: String,
    pub code: String,
    pub saved_at: f64,
    pub input_schema: Option<String>,
    pub connectors: Option<String>,
}

/// A run that starts paused on its program (see `store::ProgramGate`).
#[napi(object)]
pub struct NativeProgramGate {
    pub args: String,
    pub args_stable: String,
}

/// One call to decide on (see `store::Call`).
#[napi(object)]
pub struct NativeCall {
    pub seq: i64,
    pub connector: String,
    pub method: String,
    pub args: Option<String>,
    /// Set when the arguments cannot be recorded: the run fails with this message.
    pub args_error: Option<String>,
    pub args_stable: Option<String>,
    pub recorded_stable: Option<String>,
    pub requires_approval: bool,
    pub ephemeral: bool,
    pub idempotent: bool,
}

#[napi]
pub struct NativeStore {
    owner: StoreOwner,
}

/// Settles a store operation's promise on the JS thread: its value, or a JS error with the
/// failure's stable `code`.
type Settle<T> = Box<dyn FnOnce(Env) -> Result<T> + Send>;

fn settle<T>(env: Env, result: std::result::Result<T, StoreError>) -> Result<T> {
    result.map_err(|e| {
        let error = env.create_error(Error::new(Status::GenericFailure, e.message));
        match error.and_then(|mut error| {
            error.set_named_property("code", e.code.as_str())?;
            Ok(error.to_unknown())
        }) {
            Ok(error) => Error::from(error),
            Err(failure) => failure,
        }
    })
}

/// The failure of an operation asked of a store whose thread has ended.
fn store_gone() -> StoreError {
    StoreError::io("codemode store: its thread has ended".to_string())
}

/// How a store is opened: `durability` for a SQLite file; the rest for a PostgreSQL database
/// (`store::postgres::PgSettings` declares each one's default and range).
#[napi(object)]
#[derive(Default)]
pub struct NativeStoreOptions {
    /// `"normal"` (the default) or `"full"`.
    pub durability: Option<String>,
    pub max_connections: Option<f64>,
    pub connect_timeout_ms: Option<f64>,
    pub statement_timeout_ms: Option<f64>,
    pub schema: Option<String>,
    pub ca: Option<String>,
}

/// A numeric setting as the integer it must be (JS numbers may be 2.5, NaN or 1e300).
fn whole(name: &str, value: Option<f64>) -> std::result::Result<Option<i64>, StoreError> {
    match value {
        Some(v) if v.fract() != 0.0 || !v.is_finite() || v.abs() > 9.0e15 => {
            Err(StoreError::invalid(format!(
                "codemode store: {name} must be an integer (got {v})"
            )))
        }
        other => Ok(other.map(|v| v as i64)),
    }
}

/// Where the store lives: a `postgres://` or `postgresql://` URL names a PostgreSQL database,
/// anything else a SQLite file. Settings that do not apply to it are refused, not ignored.
fn target_of(
    location: &str,
    options: NativeStoreOptions,
) -> std::result::Result<Target, StoreError> {
    if PgTarget::is_url(location) {
        if options.durability.is_some() {
            return Err(StoreError::invalid(
                "durability applies to a SQLite file; a PostgreSQL server's durability is its own (synchronous_commit)".to_string(),
            ));
        }
        let settings = PgSettings {
            max_connections: whole("maxConnections", options.max_connections)?,
            connect_timeout_ms: whole("connectTimeoutMs", options.connect_timeout_ms)?,
            statement_timeout_ms: whole("statementTimeoutMs", options.statement_timeout_ms)?,
            schema: options.schema,
            ca: options.ca,
        };
        return Ok(Target::Postgres(Arc::new(PgTarget::parse(
            location, &settings,
        )?)));
    }
    let postgres_only = [
        ("maxConnections", options.max_connections.is_some()),
        ("connectTimeoutMs", options.connect_timeout_ms.is_some()),
        ("statementTimeoutMs", options.statement_timeout_ms.is_some()),
        ("schema", options.schema.is_some()),
        ("ca", options.ca.is_some()),
    ];
    if let Some((name, _)) = postgres_only.iter().find(|(_, set)| *set) {
        return Err(StoreError::invalid(format!(
            "{name} applies to a PostgreSQL store (a postgres:// URL), not to a SQLite file"
        )));
    }
    let durability = match options.durability.as_deref() {
        None => Durability::Normal,
        Some(text) => Durability::parse(text).ok_or_else(|| {
            StoreError::invalid(format!(
                "durability must be \"normal\" or \"full\" (got {text:?})"
            ))
        })?,
    };
    Ok(Target::File(location.to_string(), durability))
}

#[napi]
impl NativeStore {
    /// `location`: a SQLite file (`:memory:` for a private one), opened on the store's own
    /// thread (this waits for that); or a `postgres://` URL, connected on first use (this
    /// connects to nothing). Every later operation returns a promise.
    #[napi(constructor)]
    pub fn new(location: String, options: Option<NativeStoreOptions>) -> Result<Self, ErrorCode> {
        let target = target_of(&location, options.unwrap_or_default()).map_err(thrown)?;
        Ok(NativeStore {
            owner: StoreOwner::open(target).map_err(thrown)?,
        })
    }
}

impl NativeStore {
    /// Runs `op` on the store's thread; the promise settles with its value, serialized there
    /// (a row of `store` crosses with its fields in camelCase, `None` as null), or its error.
    fn later<'env, T, F>(&self, env: &'env Env, op: F) -> Result<Object<'env>, ErrorCode>
    where
        T: Serialize,
        F: FnOnce(&Store) -> std::result::Result<T, StoreError> + Send + 'static,
    {
        let (deferred, promise) = env
            .create_deferred::<Value, Settle<Value>>()
            .map_err(|e| thrown(StoreError::io(e.reason)))?;
        self.owner.run(Box::new(move |store| {
            let result = store
                .map_or_else(|| Err(store_gone()), op)
                .and_then(|value| {
                    serde_json::to_value(value).map_err(|e| StoreError::io(e.to_string()))
                });
            deferred.resolve(Box::new(move |env| settle(env, result)));
        }));
        Ok(promise)
    }
}

/// The store's methods, one row each: its parameters after the runtime name, the TypeScript of
/// its promise, and the operation it runs on the store's thread (`|store, runtime| …`, whose
/// value is serialized into the promise's). The napi methods are generated from these rows, so
/// an operation is written here once and a new column of a row needs nothing here. (Their
/// comments are `//`: napi-rs would copy a doc comment passed through a macro into
/// binding.d.ts as a raw-string token.)
macro_rules! store_methods {
    ($(
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ts:tt
            |$store:ident, $runtime:ident| $op:expr;
    )*) => {
        #[napi]
        impl NativeStore {
            $(
                #[allow(clippy::too_many_arguments)]
                #[napi(ts_return_type = $ts)]
                pub fn $name<'env>(
                    &self,
                    env: &'env Env,
                    $runtime: String,
                    $($arg: $ty),*
                ) -> Result<Object<'env>, ErrorCode> {
                    self.later(env, move |$store: &Store| $op)
                }
            )*
        }
    };
}

store_methods! {
    // The id of the execution that already has `key` (nothing was started), or null when
    // a new one was started with `id`.
    fn begin(
        id: String,
        code: String,
        connectors_json: String,
        max_executions: i64,
        lease: NativeLease,
        key: Option<String>,
        gate: Option<NativeProgramGate>,
    ) -> "Promise<string | null>"
        |store, runtime| {
            let gate = gate.map(|gate| ProgramGate {
                args: gate.args,
                args_stable: gate.args_stable,
            });
            let begun = store.begin_gated(
                &runtime,
                &id,
                &code,
                &connectors_json,
                max_executions,
                &lease.lease(),
                key.as_deref(),
                gate.as_ref(),
            )?;
            Ok(match begun {
                Begun::Started => None,
                Begun::Existing(existing) => Some(existing),
            })
        };

    // `{ kind }`: `"resumed"`, `"missing"`, `"not_paused"` (with `status`), `"leased"` or
    // `"stale"` (with `waiting`, the seqs awaiting a decision now).
    fn resume(id: String, lease: NativeLease, seq: Option<i64>)
        -> "Promise<{ kind: string, status?: string, waiting?: number[] }>"
        |store, runtime| Ok(match store.resume(&runtime, &id, &lease.lease(), seq)? {
            Resumed::Resumed => json!({ "kind": "resumed" }),
            Resumed::Missing => json!({ "kind": "missing" }),
            Resumed::Leased => json!({ "kind": "leased" }),
            Resumed::NotPaused(status) => json!({ "kind": "not_paused", "status": status }),
            Resumed::Stale(waiting) => json!({ "kind": "stale", "waiting": waiting }),
        });

    fn renew(id: String, lease: NativeLease) -> "Promise<boolean>"
        |store, runtime| store.renew(&runtime, &id, &lease.lease());

    fn release(id: String, owner: String) -> "Promise<boolean>"
        |store, runtime| store.release(&runtime, &id, &owner);

    fn claim(id: String, lease: NativeLease) -> "Promise<boolean>"
        |store, runtime| store.claim(&runtime, &id, &lease.lease());

    // `store::RunningRun` rows.
    fn running() -> "Promise<object[]>"
        |store, runtime| store.running(&runtime);

    fn mark_done(id: String, seq: i64, result: Option<String>) -> "Promise<boolean>"
        |store, runtime| store.mark_done(&runtime, &id, seq, result.as_deref());

    // `{ kind: "replay" | "execute" | "pause", result?, delivery? }`: with `"replay"`, the
    // recorded result (storage-codec JSON; absent for `undefined`); with `"replay"`, or
    // `"execute"` of a read re-executed on every pass, the recorded result's place in the
    // delivery order (`store::Delivery`).
    fn decide(id: String, owner: String, call: NativeCall)
        -> "Promise<{ kind: string, result?: string, delivery?: { ordinal: number, at: number } }>"
        |store, runtime| {
            let args = match call.args_error {
                Some(message) => Err(message),
                None => Ok(call.args),
            };
            let (decision, delivery) = store.decide_delivered(
                &runtime,
                &id,
                &owner,
                &Call {
                    seq: call.seq,
                    connector: &call.connector,
                    method: &call.method,
                    args,
                    args_stable: call.args_stable,
                    recorded_stable: call.recorded_stable,
                    requires_approval: call.requires_approval,
                    ephemeral: call.ephemeral,
                    idempotent: call.idempotent,
                },
            )?;
            Ok(match decision {
                Decision::Replay(result) => {
                    json!({ "kind": "replay", "result": result, "delivery": delivery })
                }
                Decision::Execute => json!({ "kind": "execute", "delivery": delivery }),
                Decision::Pause => json!({ "kind": "pause" }),
            })
        };

    // `error` set: the result cannot be recorded, and the run fails with that message.
    // Resolves to the result's place in the delivery order, or null when nothing was recorded
    // (the run failed, or the entry was rolled back or ended meanwhile).
    fn record_result(id: String, seq: i64, result: Option<String>, error: Option<String>)
        -> "Promise<{ ordinal: number, at: number } | null>"
        |store, runtime| {
            let result = match error {
                Some(message) => Err(message),
                None => Ok(result),
            };
            store.record_result(&runtime, &id, seq, result)
        };

    fn complete(id: String, owner: String, result: Option<String>, logs_json: Option<String>)
        -> "Promise<boolean>"
        |store, runtime| store.complete(
            &runtime,
            &id,
            &owner,
            result.as_deref(),
            logs_json.as_deref(),
        );

    fn fail(id: String, owner: String, error: String, logs_json: Option<String>)
        -> "Promise<boolean>"
        |store, runtime| store.fail(&runtime, &id, &owner, &error, logs_json.as_deref());

    // `store::Pending` rows.
    fn list_pending(id: Option<String>) -> "Promise<object[]>"
        |store, runtime| store.list_pending(&runtime, id.as_deref());

    // `"rejected"`, `"not_pending"` or `"leased"`.
    fn reject(id: String, seq: i64) -> "Promise<string>"
        |store, runtime| store.reject(&runtime, &id, seq);

    fn expire_paused(max_age_ms: i64) -> "Promise<string[]>"
        |store, runtime| store.expire_paused(&runtime, max_age_ms);

    // `store::LogEntry` rows.
    fn actions_to_revert(id: String) -> "Promise<object[]>"
        |store, runtime| store.actions_to_revert(&runtime, &id);

    fn mark_reverted(id: String, seq: i64) -> "Promise<void>"
        |store, runtime| store.mark_reverted(&runtime, &id, seq);

    // Records why a rollback could not revert the entry at `seq` (it keeps its state); false
    // when no entry there is applied, executing or in doubt.
    fn mark_revert_failed(id: String, seq: i64, error: String) -> "Promise<boolean>"
        |store, runtime| store.mark_revert_failed(&runtime, &id, seq, &error);

    fn mark_rolled_back(id: String) -> "Promise<void>"
        |store, runtime| store.mark_rolled_back(&runtime, &id);

    // A `store::Execution` row, or null.
    fn get_execution(id: String) -> "Promise<object | null>"
        |store, runtime| store.get_execution(&runtime, &id);

    // See `store::Store::replay_plan`; null when there is no such run.
    fn replay_plan(id: String) -> "Promise<{ places: number, start: number, seed: string | null } | null>"
        |store, runtime| store.replay_plan(&runtime, &id);

    // `store::Execution` rows.
    fn list_executions(limit: Option<i64>) -> "Promise<object[]>"
        |store, runtime| store.list_executions(&runtime, limit);

    // The deleted execution's status, if it existed.
    fn delete_execution(id: String) -> "Promise<string | null>"
        |store, runtime| store.delete_execution(&runtime, &id);

    fn prune_executions(keep: i64) -> "Promise<number>"
        |store, runtime| store.prune_executions(&runtime, keep);

    fn save_snippet(snippet: NativeSnippet) -> "Promise<void>"
        |store, runtime| store.save_snippet(
            &runtime,
            &Snippet {
                name: snippet.name,
                description: snippet.description,
                code: snippet.code,
                saved_at: snippet.saved_at as i64,
                input_schema: snippet.input_schema,
                connectors: snippet.connectors,
            },
        );

    // `store::Snippet` rows.
    fn snippets() -> "Promise<object[]>"
        |store, runtime| store.snippets(&runtime);

    fn delete_snippet(name: String) -> "Promise<boolean>"
        |store, runtime| store.delete_snippet(&runtime, &name);
}

/// The constants of the durable log that `lib/runtime/` shares with the store.
#[napi(object)]
pub struct NativeDurableConstants {
    /// The connector name of `codemode.step` entries.
    pub step_connector: String,
    /// The longest value (and error text) the log keeps, in UTF-16 code units.
    pub max_value_units: u32,
}

#[napi]
pub fn durable_constants() -> NativeDurableConstants {
    NativeDurableConstants {
        step_connector: STEP_CONNECTOR.to_string(),
        max_value_units: MAX_DURABLE_UNITS as u32,
    }
}
