//! @supolka/codemode-executor: programs written by language models, each run in a fresh V8
//! isolate on a supervised pool of threads, with tool calls answered by the host's JavaScript.
//!
//! Modules (see ARCHITECTURE.md), each depending only on those listed after it:
//! - `api`: the only napi code (the classes and functions JS sees);
//! - `process`: `'process'` isolation: the engine process's side (`engine`, a frame adapter over
//!   a `LocalRunner`) and the host's side (`host`, the `ProcessPool` supervisor);
//! - `pool`: the in-process pool (queue, workers, watchdog, retained isolates) and
//!   `LocalRunner`, the runner both arrangements execute on;
//! - `sandbox`: the only V8 code (isolate, snapshot, bootstrap, natives, modules);
//! - `program`: program text before V8 sees it (TypeScript stripped, modules told apart, help
//!   for what the sandbox lacks);
//! - `store`: the only SQLite code (the durable runtime's state machine);
//! - `protocol`: the executor protocol's frames (docs/protocol.md);
//! - `runner`: the `Runner` trait both pools implement;
//! - `run`: one run's vocabulary (request, output, report, outcome, completion, stats);
//! - `bridge`: tool-call envelopes, size checks, reply routing;
//! - `limits`: every bound, and the `BOUNDS` table that names them;
//! - `error`: the stable fault codes;
//! - `os`: every libc call;
//! - `uv`: every libuv call (Node's event loop), behind safe handles.

pub mod api;
pub mod bridge;
pub mod error;
pub mod limits;
pub mod os;
pub mod pool;
pub mod process;
pub mod program;
pub mod protocol;
pub mod run;
pub mod runner;
pub mod sandbox;
pub mod store;
pub mod uv;
