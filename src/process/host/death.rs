//! Why an engine ended, and what that costs: the cause reported to the runs it held (the
//! host's reason for killing it, a refusal, the exit status, V8's fatal line on its stderr),
//! and the backoff and crash-loop bound of engines that fail to start.

use super::dispatch::fail_all;
use super::{Engine, Host, State};
use crate::error::Fault;
use crate::limits::Limits;
use crate::os;
use crate::run::RunRequest;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub(super) fn start_failed(host: &Host, state: &mut State, reason: String) {
    state.start_failures += 1;
    host.counters.engines_lost.fetch_add(1, Ordering::Relaxed);
    if state.start_failures >= host.limits.max_start_failures {
        let message = format!(
            "the engine process failed to start {} times in a row (last: {reason})",
            state.start_failures
        );
        state.crash_loop = Some(message.clone());
        state.restart_at = None;
        let queued: Vec<RunRequest> = state.queue.drain(..).collect();
        fail_all(queued, Fault::worker_lost(&message));
    } else {
        state.restart_at = Some(Instant::now() + backoff(&host.limits, state.start_failures));
    }
}

fn backoff(limits: &Limits, failures: u32) -> Duration {
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    (limits.restart_backoff_min * factor).min(limits.restart_backoff_max)
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
    fn backoff_doubles_and_is_capped() {
        let limits = Limits::default();
        assert_eq!(backoff(&limits, 1), limits.restart_backoff_min);
        assert_eq!(backoff(&limits, 2), limits.restart_backoff_min * 2);
        assert_eq!(backoff(&limits, 40), limits.restart_backoff_max);
    }

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
