//! The durable runtime's store, for `lib/runtime/index.js`: one `NativeStore` per SQLite file or
//! PostgreSQL database, every method taking the runtime name (the partition). Asynchronous:
//! each call is one short transaction run on one of the store's own threads (`store::owner`),
//! and returns a promise, so a file or row contended by another process (waiting up to the busy
//! or statement timeout) never blocks the event loop. Store errors reject with their stable code
//! (`ERR_STORE`; `ERR_STORE_UNAVAILABLE` for a database that cannot be reached;
//! `ERR_INVALID_ARGUMENT` for an execution or entry that does not exist, settings out of range,
//! or a value the database cannot hold); values cross as storage-codec JSON text.

use crate::error::{ErrorCode, Fault};
use crate::store::owner::StoreOwner;
use crate::store::postgres::{PgSettings, PgTarget};
use crate::store::{
    Begun, Call, Decision, Delivery, Durability, Execution, Lease, LogEntry, Pending, ProgramGate,
    Rejected, Resumed, Snippet, Store, StoreError, Target, MAX_DURABLE_UNITS, STEP_CONNECTOR,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::sync::Arc;

/// A store failure thrown into JS with its stable code.
fn thrown(e: StoreError) -> Error<ErrorCode> {
    super::thrown(Fault::new(e.code, e.message))
}

#[napi(object)]
pub struct NativeLogEntry {
    pub seq: i64,
    pub connector: String,
    pub method: String,
    pub args: Option<String>,
    pub result: Option<String>,
    pub requires_approval: bool,
    pub ephemeral: bool,
    pub state: String,
    /// Why the last rollback could not revert it (its effect is or may be in force).
    pub revert_error: Option<String>,
    /// Its result's place in the delivery order, and when it was recorded (see
    /// `store::Delivery`); absent until recorded.
    pub delivery: Option<NativeDelivery>,
}

/// See `store::Delivery`.
#[napi(object)]
pub struct NativeDelivery {
    pub ordinal: i64,
    /// Ms since the epoch.
    pub at: f64,
}

impl From<Delivery> for NativeDelivery {
    fn from(d: Delivery) -> Self {
        NativeDelivery {
            ordinal: d.ordinal,
            at: d.at as f64,
        }
    }
}

impl From<LogEntry> for NativeLogEntry {
    fn from(e: LogEntry) -> Self {
        NativeLogEntry {
            seq: e.seq,
            connector: e.connector,
            method: e.method,
            args: e.args,
            result: e.result,
            requires_approval: e.requires_approval,
            ephemeral: e.ephemeral,
            state: e.state.as_str().to_string(),
            revert_error: e.revert_error,
            delivery: e.delivery.map(Into::into),
        }
    }
}

#[napi(object)]
pub struct NativeExecution {
    pub id: String,
    pub code: String,
    pub status: String,
    pub result: Option<String>,
    pub error: Option<String>,
    pub logs: Option<String>,
    pub connectors: Option<String>,
    pub created_at: f64,
    pub updated_at: f64,
    pub owner: Option<String>,
    pub lease_until: Option<f64>,
    pub idempotency_key: Option<String>,
    /// The run's random seed (hex), `None` for runs begun before seeds existed.
    pub seed: Option<String>,
    pub log: Vec<NativeLogEntry>,
}

impl From<Execution> for NativeExecution {
    fn from(e: Execution) -> Self {
        NativeExecution {
            id: e.id,
            code: e.code,
            status: e.status.as_str().to_string(),
            result: e.result,
            error: e.error,
            logs: e.logs,
            connectors: e.connectors,
            created_at: e.created_at as f64,
            updated_at: e.updated_at as f64,
            owner: e.owner,
            lease_until: e.lease_until.map(|t| t as f64),
            idempotency_key: e.idempotency_key,
            seed: e.seed,
            log: e.log.into_iter().map(Into::into).collect(),
        }
    }
}

#[napi(object)]
pub struct NativePending {
    pub execution_id: String,
    pub seq: i64,
    pub connector: String,
    pub method: String,
    pub args: Option<String>,
    pub in_doubt: bool,
}

impl From<Pending> for NativePending {
    fn from(p: Pending) -> Self {
        NativePending {
            execution_id: p.execution_id,
            seq: p.seq,
            connector: p.connector,
            method: p.method,
            args: p.args,
            in_doubt: p.in_doubt,
        }
    }
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

/// What `resume` did: `kind` is `"resumed"`, `"missing"`, `"not_paused"` (with `status`),
/// `"leased"` or `"stale"` (with `waiting`, the seqs awaiting a decision now).
#[napi(object)]
pub struct NativeResumed {
    pub kind: String,
    pub status: Option<String>,
    pub waiting: Option<Vec<i64>>,
}

/// A running execution and its holder.
#[napi(object)]
pub struct NativeRunningRun {
    pub id: String,
    pub owner: Option<String>,
    pub lease_until: Option<f64>,
    pub idempotency_key: Option<String>,
}

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

#[napi(object)]
pub struct NativeDecision {
    /// `"replay"`, `"execute"` or `"pause"`.
    pub kind: String,
    /// With `"replay"`: the recorded result (storage-codec JSON; absent for `undefined`).
    pub result: Option<String>,
    /// With `"replay"`, or `"execute"` of a read re-executed on every pass: the recorded
    /// result's place in the delivery order.
    pub delivery: Option<NativeDelivery>,
}

/// See `store::ReplayPlan`.
#[napi(object)]
pub struct NativeReplayPlan {
    pub places: i64,
    /// Ms since the epoch.
    pub start: f64,
    pub seed: Option<String>,
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

    /// Runs `op` on the store's thread; the promise settles with its value or its error.
    fn later<'env, T, F>(&self, env: &'env Env, op: F) -> Result<Object<'env>, ErrorCode>
    where
        T: ToNapiValue + Send + 'static,
        F: FnOnce(&Store) -> std::result::Result<T, StoreError> + Send + 'static,
    {
        let (deferred, promise) = env
            .create_deferred::<T, Settle<T>>()
            .map_err(|e| thrown(StoreError::io(e.reason)))?;
        self.owner.run(Box::new(move |store| {
            let result = store.map_or_else(|| Err(store_gone()), op);
            deferred.resolve(Box::new(move |env| settle(env, result)));
        }));
        Ok(promise)
    }

    /// The id of the execution that already has `key` (nothing was started), or null when
    /// a new one was started with `id`.
    #[allow(clippy::too_many_arguments)]
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn begin<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        code: String,
        connectors_json: String,
        max_executions: i64,
        lease: NativeLease,
        key: Option<String>,
        gate: Option<NativeProgramGate>,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
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
        })
    }

    #[napi(ts_return_type = "Promise<NativeResumed>")]
    pub fn resume<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        lease: NativeLease,
        seq: Option<i64>,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            let resumed = store.resume(&runtime, &id, &lease.lease(), seq)?;
            let kind = |kind: &str| NativeResumed {
                kind: kind.to_string(),
                status: None,
                waiting: None,
            };
            Ok(match resumed {
                Resumed::Resumed => kind("resumed"),
                Resumed::Missing => kind("missing"),
                Resumed::Leased => kind("leased"),
                Resumed::NotPaused(status) => NativeResumed {
                    status: Some(status.as_str().to_string()),
                    ..kind("not_paused")
                },
                Resumed::Stale(waiting) => NativeResumed {
                    waiting: Some(waiting),
                    ..kind("stale")
                },
            })
        })
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn renew<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        lease: NativeLease,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| store.renew(&runtime, &id, &lease.lease()))
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn release<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        owner: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| store.release(&runtime, &id, &owner))
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn claim<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        lease: NativeLease,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| store.claim(&runtime, &id, &lease.lease()))
    }

    #[napi(ts_return_type = "Promise<NativeRunningRun[]>")]
    pub fn running<'env>(
        &self,
        env: &'env Env,
        runtime: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store
                .running(&runtime)?
                .into_iter()
                .map(|r| NativeRunningRun {
                    id: r.id,
                    owner: r.owner,
                    lease_until: r.lease_until.map(|t| t as f64),
                    idempotency_key: r.idempotency_key,
                })
                .collect::<Vec<_>>())
        })
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn mark_done<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        seq: i64,
        result: Option<String>,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            store.mark_done(&runtime, &id, seq, result.as_deref())
        })
    }

    #[napi(ts_return_type = "Promise<NativeDecision>")]
    pub fn decide<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        owner: String,
        call: NativeCall,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
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
                Decision::Replay(result) => NativeDecision {
                    kind: "replay".into(),
                    result,
                    delivery: delivery.map(Into::into),
                },
                Decision::Execute => NativeDecision {
                    kind: "execute".into(),
                    result: None,
                    delivery: delivery.map(Into::into),
                },
                Decision::Pause => NativeDecision {
                    kind: "pause".into(),
                    result: None,
                    delivery: None,
                },
            })
        })
    }

    /// `error` set: the result cannot be recorded, and the run fails with that message.
    /// Resolves to the result's place in the delivery order, or null when nothing was recorded
    /// (the run failed, or the entry was rolled back or ended meanwhile).
    #[napi(ts_return_type = "Promise<NativeDelivery | null>")]
    pub fn record_result<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        seq: i64,
        result: Option<String>,
        error: Option<String>,
    ) -> Result<Object<'env>, ErrorCode> {
        let result = match error {
            Some(message) => Err(message),
            None => Ok(result),
        };
        self.later(env, move |store| {
            Ok(store
                .record_result(&runtime, &id, seq, result)?
                .map(NativeDelivery::from))
        })
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn complete<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        owner: String,
        result: Option<String>,
        logs_json: Option<String>,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            store.complete(
                &runtime,
                &id,
                &owner,
                result.as_deref(),
                logs_json.as_deref(),
            )
        })
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn fail<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        owner: String,
        error: String,
        logs_json: Option<String>,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            store.fail(&runtime, &id, &owner, &error, logs_json.as_deref())
        })
    }

    #[napi(ts_return_type = "Promise<NativePending[]>")]
    pub fn list_pending<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: Option<String>,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store
                .list_pending(&runtime, id.as_deref())?
                .into_iter()
                .map(NativePending::from)
                .collect::<Vec<_>>())
        })
    }

    /// `"rejected"`, `"not_pending"` or `"leased"`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn reject<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        seq: i64,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            let rejected = store.reject(&runtime, &id, seq)?;
            Ok(match rejected {
                Rejected::Rejected => "rejected",
                Rejected::NotPending => "not_pending",
                Rejected::Leased => "leased",
            }
            .to_string())
        })
    }

    #[napi(ts_return_type = "Promise<string[]>")]
    pub fn expire_paused<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        max_age_ms: i64,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| store.expire_paused(&runtime, max_age_ms))
    }

    #[napi(ts_return_type = "Promise<NativeLogEntry[]>")]
    pub fn actions_to_revert<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store
                .actions_to_revert(&runtime, &id)?
                .into_iter()
                .map(NativeLogEntry::from)
                .collect::<Vec<_>>())
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn mark_reverted<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        seq: i64,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| store.mark_reverted(&runtime, &id, seq))
    }

    /// Records why a rollback could not revert the entry at `seq` (it keeps its state); false
    /// when no entry there is applied, executing or in doubt.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn mark_revert_failed<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
        seq: i64,
        error: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            store.mark_revert_failed(&runtime, &id, seq, &error)
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn mark_rolled_back<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| store.mark_rolled_back(&runtime, &id))
    }

    #[napi(ts_return_type = "Promise<NativeExecution | null>")]
    pub fn get_execution<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store
                .get_execution(&runtime, &id)?
                .map(NativeExecution::from))
        })
    }

    /// See `store::Store::replay_plan`; null when there is no such run.
    #[napi(ts_return_type = "Promise<NativeReplayPlan | null>")]
    pub fn replay_plan<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store.replay_plan(&runtime, &id)?.map(|p| NativeReplayPlan {
                places: p.places,
                start: p.start as f64,
                seed: p.seed,
            }))
        })
    }

    #[napi(ts_return_type = "Promise<NativeExecution[]>")]
    pub fn list_executions<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        limit: Option<i64>,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store
                .list_executions(&runtime, limit)?
                .into_iter()
                .map(NativeExecution::from)
                .collect::<Vec<_>>())
        })
    }

    /// The deleted execution's status, if it existed.
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn delete_execution<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        id: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            store
                .delete_execution(&runtime, &id)
                .map(|status| status.map(|s| s.as_str().to_string()))
        })
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub fn prune_executions<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        keep: i64,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store.prune_executions(&runtime, keep)? as u32)
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn save_snippet<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        snippet: NativeSnippet,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            store.save_snippet(
                &runtime,
                &Snippet {
                    name: snippet.name,
                    description: snippet.description,
                    code: snippet.code,
                    saved_at: snippet.saved_at as i64,
                    input_schema: snippet.input_schema,
                    connectors: snippet.connectors,
                },
            )
        })
    }

    #[napi(ts_return_type = "Promise<NativeSnippet[]>")]
    pub fn snippets<'env>(
        &self,
        env: &'env Env,
        runtime: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| {
            Ok(store
                .snippets(&runtime)?
                .into_iter()
                .map(|s| NativeSnippet {
                    name: s.name,
                    description: s.description,
                    code: s.code,
                    saved_at: s.saved_at as f64,
                    input_schema: s.input_schema,
                    connectors: s.connectors,
                })
                .collect::<Vec<_>>())
        })
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn delete_snippet<'env>(
        &self,
        env: &'env Env,
        runtime: String,
        name: String,
    ) -> Result<Object<'env>, ErrorCode> {
        self.later(env, move |store| store.delete_snippet(&runtime, &name))
    }
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
