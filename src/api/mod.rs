//! The only napi code. Each file is one face of the addon:
//! - `executor.rs`: `NativeExecutor`, a thin class over a `Runner` (each method one call);
//! - `options.rs`: the executor's options and effective limits across napi;
//! - `report.rs`: outcomes and counters as JS values;
//! - `tool_sink.rs`: tool calls into the host's JavaScript (a threadsafe function);
//! - `event_loop.rs`: Node's event loop reading engine output (`'process'` isolation);
//! - `store.rs`: `NativeStore`, the durable runtime's SQLite store;
//! - `engine.rs`: the entry point of an engine process, and the bench's floor measurement.
//!
//! Machinery faults are resolved as `{ faultCode, faultMessage }` and turned into rejected
//! promises with `code` by `lib/executor/index.js`; errors thrown from here carry `code` natively.

pub mod engine;
pub mod event_loop;
pub mod executor;
pub mod options;
pub mod report;
pub mod store;
pub mod tool_sink;

use crate::error::{ErrorCode, Fault};
use napi::Error;
use napi_derive::napi;

/// A fault thrown into JavaScript: napi-rs sets the thrown error's `code` from its status,
/// here the fault's stable code (`ErrorCode: AsRef<str>`). Functions that throw faults return
/// `napi::Result<T, ErrorCode>`.
pub(crate) fn thrown(fault: Fault) -> Error<ErrorCode> {
    Error::new(fault.code, fault.message)
}

/// Every stable fault code, as `lib/errors.js` lists them (a test pins the two together).
#[napi]
pub fn error_codes() -> Vec<&'static str> {
    ErrorCode::ALL.iter().map(|c| c.as_str()).collect()
}
