//! @supolka/codemode-executor: programs written by language models, each run in a fresh V8
//! isolate on a supervised pool of threads, with tool calls answered by the host's JavaScript.
//!
//! Layers (see ARCHITECTURE.md): `api` (napi only) → `pool` (queue, workers, watchdog) →
//! `sandbox` (V8 only) ↔ `bridge` (call envelopes, reply routing). `limits` holds every bound,
//! `error` the stable fault codes.

pub mod api;
pub mod bridge;
pub mod error;
pub mod limits;
pub mod os;
pub mod pool;
pub mod process;
pub mod protocol;
pub mod run;
pub mod runner;
pub mod sandbox;
pub mod store;
