//! The executor's options and its effective limits across napi, both as plain name → number
//! maps driven by `limits::BOUNDS` (no per-bound field here), plus the table itself for the JS
//! wrapper, which checks only the shape of what users pass.

use super::thrown;
use crate::error::{ErrorCode, Fault};
use crate::limits::{Kind, Limits, Place, Scope, BOUNDS};
use napi_derive::napi;
use std::collections::HashMap;

/// Options of the native executor.
#[napi(object)]
pub struct NativeOptions {
    /// Bounds by option name (`limits::BOUNDS`), each range-checked here.
    pub bounds: HashMap<String, f64>,
    /// `"process"` (an engine process supervised by this one) or `"thread"` (in this process).
    pub isolation: Option<String>,
    /// `'process'` isolation: the engine's command line (program and arguments).
    pub engine_command: Option<Vec<String>>,
    /// `'process'` isolation: read the engines' output on this thread's event loop (Node's
    /// libuv; the JS layer asks for it only on Node).
    pub loop_reads: Option<bool>,
}

/// One row of `limits::BOUNDS`, as JS sees it.
#[napi(object)]
pub struct NativeBound {
    pub name: String,
    /// `"integer"` or `"milliseconds"`.
    pub kind: String,
    pub min: f64,
    pub max: f64,
    /// What an executor made with no options has (`Limits::default()`; `workers` follows the
    /// machine, a derived bound follows the others).
    pub default: f64,
    /// `"top"` (`{ workers }`), `"limits"` (`{ limits: { maxArgsBytes } }`) or `"derived"`.
    pub place: String,
    /// `"executor"`, `"run"` (a run may override it) or `"process"` (`'process'` only).
    pub scope: String,
    pub doc: String,
}

/// The executor's limits: the defaults with the options applied (each range-checked once, by
/// `Limits::set`). Names are applied in table order, so the result does not depend on the
/// order of the JS object.
pub fn limits_from(options: &NativeOptions) -> napi::Result<Limits, ErrorCode> {
    let mut limits = Limits::default();
    for name in options.bounds.keys() {
        if crate::limits::bound(name).is_none() {
            return Err(thrown(Fault::invalid(format!("unknown option {name}"))));
        }
    }
    for bound in BOUNDS {
        if let Some(&value) = options.bounds.get(bound.name) {
            limits
                .set(bound.name, value)
                .map_err(|m| thrown(Fault::invalid(m)))?;
        }
    }
    limits
        .check_together()
        .map_err(|m| thrown(Fault::invalid(m)))?;
    Ok(limits)
}

/// The effective bounds, as `executor.limits` shows them.
pub fn native_limits(limits: &Limits) -> HashMap<String, f64> {
    limits
        .to_map()
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}

/// The table of bounds.
#[napi]
pub fn bound_table() -> Vec<NativeBound> {
    let defaults = Limits::default();
    BOUNDS
        .iter()
        .map(|b| NativeBound {
            name: b.name.to_string(),
            kind: match b.kind {
                Kind::Integer => "integer",
                Kind::Millis => "milliseconds",
            }
            .to_string(),
            min: b.min,
            max: b.max,
            default: (b.get)(&defaults),
            place: match b.place {
                Place::Top => "top",
                Place::Limits => "limits",
                Place::Derived => "derived",
            }
            .to_string(),
            scope: match b.scope {
                Scope::Executor => "executor",
                Scope::PerRun => "run",
                Scope::Process => "process",
            }
            .to_string(),
            doc: b.doc.to_string(),
        })
        .collect()
}
