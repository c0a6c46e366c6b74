//! Starting an engine process and explaining its death: the spawn with its `Hello`, the
//! thread that keeps the tail of its stderr, and the cause reported to the runs it held (the
//! host's reason for killing it, a refusal, the exit status, V8's fatal line).

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

/// The most telling line of an engine's stderr: V8's fatal-error line if there is one.
fn stderr_summary(tail: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches('#').trim())
        .filter(|l| !l.is_empty())
        .collect();
    // V8's fatal line or a Rust panic first; then the first thrown error a runtime printed
    // (Node prints the source line, a caret, the error, its stack and its own version, so the
    // last line is never the cause); then the last line that is not a version banner.
    let fatal = lines
        .iter()
        .rev()
        .find(|l| l.contains("Fatal") || l.contains("Check failed") || l.contains("panicked"));
    let thrown = || lines.iter().find(|l| is_thrown_error(l));
    let last = || lines.iter().rev().find(|l| !is_version_banner(l));
    let line = fatal.or_else(thrown).or_else(last).or(lines.last())?;
    let mut line = line.to_string();
    if line.len() > 300 {
        let mut cut = 300;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    Some(line)
}

/// `Error: ...`, `TypeError [ERR_X]: ...`, `error: Uncaught ...` (Deno), `SyntaxError: ...`.
fn is_thrown_error(line: &str) -> bool {
    if line.starts_with("error: ") || line.starts_with("Uncaught ") {
        return true;
    }
    let head = line.split(':').next().unwrap_or("");
    let name = head.split(" [").next().unwrap_or("");
    line.contains(':')
        && name.ends_with("Error")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Node's `Node.js v22.1.0` and Bun's `Bun v1.1.0 (Linux x64)`, printed after an error.
fn is_version_banner(line: &str) -> bool {
    line.starts_with("Node.js v") || line.starts_with("Bun v")
}

pub(super) fn death_cause(
    engine: &Engine,
    status: Option<std::process::ExitStatus>,
    tail: &[u8],
) -> String {
    if let Some(reason) = &engine.kill_reason {
        return reason.clone();
    }
    if let Some(reason) = &engine.refuse_reason {
        return format!("the engine process refused the handshake: {reason}");
    }
    let how = match status {
        Some(status) => {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => format!("exited with code {code}"),
                (None, Some(signal)) => {
                    format!("killed by signal {signal} ({})", os::signal_name(signal))
                }
                _ => "ended".to_string(),
            }
        }
        None => "ended".to_string(),
    };
    match stderr_summary(tail) {
        Some(line) => format!("the engine process {how}: {line}"),
        None => format!("the engine process {how}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fatal_line_of_stderr_explains_a_death() {
        let tail = b"\n\n#\n# Fatal error in , line 0\n# Fatal JavaScript out of memory: invalid array length\n#\n#\n#\n#FailureMessage Object: 0x7ffd\n";
        assert_eq!(
            stderr_summary(tail).unwrap(),
            "Fatal JavaScript out of memory: invalid array length"
        );
        assert_eq!(stderr_summary(b"plain\nlast line\n").unwrap(), "last line");
        // Node's report of an uncaught error: the error line, not the version banner after it.
        let node = b"node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module '/app/engine.js'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n    at node:internal/main/run_main_module:28:49 {\n  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.20.2\n";
        assert_eq!(
            stderr_summary(node).unwrap(),
            "Error: Cannot find module '/app/engine.js'"
        );
        let typed = b"/x.js:1\nTypeError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string\nNode.js v24.1.0\n";
        assert_eq!(
            stderr_summary(typed).unwrap(),
            "TypeError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string"
        );
        assert_eq!(
            stderr_summary(b"some output\nNode.js v20.1.0\n").unwrap(),
            "some output"
        );
        assert!(stderr_summary(b"\n#\n").is_none());
    }
}
