//! `'process'` isolation: the pool runs in an engine process the host supervises, and the two
//! talk the executor protocol (`crate::protocol`, `docs/protocol.md`).
//!
//! - `engine`: the child side (serve one host over stdin/stdout).
//! - `host`: the parent side (spawn, hand out runs, forward tool calls, supervise, replace).

pub mod engine;
mod engine_input;
pub mod host;
