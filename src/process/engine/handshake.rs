//! The handshake: `Hello` read, a version picked, `Ready` (or `Refuse`) answered.

use super::output::Outbox;
use super::Stop;
use crate::limits::Limits;
use crate::protocol::{
    read_frame, EngineMessage, HostMessage, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
use std::io::Read;

/// The handshake frame is small; anything bigger before `Hello` is a protocol error.
pub(super) const MAX_HELLO_BYTES: usize = 1 << 20;

/// Reads `Hello`, picks the version, and answers `Ready` (or `Refuse`).
pub(super) fn handshake(input: &mut impl Read, out: &Outbox) -> Result<Limits, Stop> {
    let body = match read_frame(input, MAX_HELLO_BYTES) {
        Ok(Some(body)) => body,
        Ok(None) => return Err(Stop::Done),
        Err(_) => return Err(Stop::ProtocolError),
    };
    let refuse = |reason: String| {
        out.frame(EngineMessage::Refuse { reason }.encode());
        Stop::Refused
    };
    let (min_version, max_version, config_json) = match HostMessage::decode(&body) {
        Ok(HostMessage::Hello {
            min_version,
            max_version,
            config_json,
        }) => (min_version, max_version, config_json),
        Ok(_) => return Err(refuse("the first message must be Hello".into())),
        Err(_) => return Err(Stop::ProtocolError),
    };
    let version = max_version.min(PROTOCOL_VERSION);
    if version < min_version || version < MIN_PROTOCOL_VERSION {
        return Err(refuse(format!(
            "no common protocol version: host speaks {min_version}..={max_version}, engine speaks {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION}"
        )));
    }
    let mut limits = Limits::from_options_json(&config_json).map_err(refuse)?;
    // The host hands this engine more runs than it has workers only once every run it holds
    // here has been held for `overflow_after` (see `dispatch::pump`): such a run gets an extra
    // worker at once, without a second wait.
    limits.overflow_after = std::time::Duration::ZERO;
    out.frame(
        EngineMessage::Ready {
            version,
            pid: std::process::id(),
            workers: limits.workers as u32,
            engine: format!("codemode-executor {}", env!("CARGO_PKG_VERSION")),
        }
        .encode(),
    );
    Ok(limits)
}
