//! Entry points that are not the executor: the engine process's main loop, and the bench's
//! measurement of what a fresh isolate costs.

use super::thrown;
use crate::error::{ErrorCode, Fault};
use crate::limits::Limits;
use napi_derive::napi;
use std::time::Duration;

/// The floor under every execution on this machine (`bench/`): median CPU of each phase of a
/// fresh isolate's life.
#[napi(object)]
pub struct NativeFloors {
    pub isolate_create_ms: f64,
    pub isolate_restore_ms: f64,
    pub isolate_drop_ms: f64,
}

/// Measures [`NativeFloors`] on a thread of its own (never V8 on the caller's thread). Blocks
/// for roughly `samples` × 1.5 ms.
#[napi]
pub fn measure_floors(samples: u32) -> napi::Result<NativeFloors, ErrorCode> {
    if !(1..=10_000).contains(&samples) {
        return Err(thrown(Fault::invalid(format!(
            "samples must be between 1 and 10000 (got {samples})"
        ))));
    }
    let samples = samples as usize;
    let isolate = std::thread::spawn(move || {
        crate::sandbox::cost::isolate_phases(&Limits::default(), samples)
    })
    .join()
    .map_err(|_| thrown(Fault::invalid("the isolate measurement panicked")))?
    .map_err(|m| thrown(Fault::invalid(m)))?;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Ok(NativeFloors {
        isolate_create_ms: ms(isolate.create),
        isolate_restore_ms: ms(isolate.restore),
        isolate_drop_ms: ms(isolate.drop),
    })
}

/// The entry point of an engine process (`lib/executor/engine.js`): serves the executor protocol on
/// stdin/stdout until the host closes it or asks for a shutdown, then ends the process.
/// Blocks the calling (main) thread and never returns.
#[napi]
pub fn serve_engine() -> i32 {
    crate::process::engine::serve_stdio()
}

/// The absolute path of this addon's `.node` file (engine processes load it to serve).
#[napi]
pub fn addon_path() -> Option<String> {
    crate::os::own_library_path().map(|p| p.to_string_lossy().into_owned())
}
