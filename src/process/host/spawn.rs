//! Starting an engine process: the spawn with its `Hello`, its reader thread, and the thread
//! that keeps the tail of its stderr (`death.rs` reads it when the engine dies).

use super::output::EngineOutput;
use super::reader::read_engine;
use super::{Engine, EngineInput, Host, STDERR_TAIL_BYTES};
use crate::os;
use crate::protocol::{HostMessage, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
use crate::run::Stats;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Spawns an engine and sends `Hello`; its reader thread (with the host's event loop, where it
/// has one) takes it from there.
pub(super) fn spawn_engine(host: &Arc<Host>) -> Result<(u64, Engine), String> {
    let mut command = Command::new(&host.command.program);
    command
        .args(&host.command.args)
        // The engine is a plain Node process running our entry point: options meant for the
        // host (inspector ports, preloads) must not leak into it.
        .env_remove("NODE_OPTIONS")
        // Under Electron, `process.execPath` is the Electron binary: run it as plain Node.
        .env("ELECTRON_RUN_AS_NODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", host.command.program))?;
    let pid = child.id();
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let stdin = EngineInput::new(stdin, host.limits.engine_backlog_cap());
    let hello = HostMessage::Hello {
        min_version: MIN_PROTOCOL_VERSION,
        max_version: PROTOCOL_VERSION,
        config_json: host.config_json.clone(),
    }
    .encode();
    stdin.send(&hello);
    let id = {
        let mut state = host.lock();
        state.next_engine += 1;
        state.next_engine
    };
    let stderr_tail = Arc::new(Mutex::new(Vec::new()));
    let tail = stderr_tail.clone();
    let _ = std::thread::Builder::new()
        .name("codemode-engine-stderr".into())
        .spawn(move || keep_tail(stderr, &tail));
    let output = EngineOutput::new(host, id, stdout).map_err(|e| {
        os::kill_child(pid);
        format!("cannot watch the engine's output: {e}")
    })?;
    let reader_host = host.clone();
    let reader_output = output.clone();
    std::thread::Builder::new()
        .name("codemode-engine-reader".into())
        .spawn(move || read_engine(&reader_host, id, &reader_output, child))
        .map_err(|e| format!("cannot start a reader thread: {e}"))?;
    output.offer_to(host.event_loop.as_ref());
    let now = Instant::now();
    Ok((
        id,
        Engine {
            pid,
            stdin,
            ready: false,
            exiting: false,
            said_bye: false,
            retiring: false,
            capacity: 0,
            in_flight: 0,
            spawned_at: now,
            last_pong: now,
            last_ping: now,
            ping_seq: 0,
            kill_reason: None,
            refuse_reason: None,
            stats: Stats::default(),
            stderr_tail,
        },
    ))
}

fn keep_tail(mut stderr: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            return;
        }
        let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > STDERR_TAIL_BYTES {
            let cut = tail.len() - STDERR_TAIL_BYTES;
            tail.drain(..cut);
        }
    }
}
