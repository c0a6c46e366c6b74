//! The executor protocol: how a host drives an engine process over a byte stream (a pipe).
//! `docs/protocol.md` is the normative description; this module is its implementation, shared
//! by both sides. Nothing here knows about V8, napi or processes.
//!
//! A frame is a `u32` little-endian length (of the bytes that follow), a one-byte message
//! type, and the message's fields (see `wire`).

pub mod wire;

use crate::error::{ErrorCode, Fault};
use crate::run::ToolCall;
use crate::run::{
    ErrorKind, Outcome, ProgramInput, Report, RunError, RunMetrics, RunOutput, Stats,
};
use std::io::{self, Read, Write};
use std::time::Duration;
use wire::{DecodeError, Decoded, Reader, Writer};

/// The protocol versions this build speaks. A host offers a range in `Hello`; the engine picks
/// the highest version both speak or refuses. Version 2 added the error's kind and bound to
/// `Result`; version 3 the program's reading and params to `Execute` and `HandleExecute`, live
/// log lines (`Log`), and the run's metrics to `Result`; version 4 the per-run bounds by name
/// (`bounds`) where `Execute` had `timeout_ms` and `memory_mb` and `HandleExecute`
/// `timeout_ms`. Older versions are no longer spoken: host and engine are always the same build.
pub const PROTOCOL_VERSION: u16 = 4;
pub const MIN_PROTOCOL_VERSION: u16 = 4;

/// Frames larger than this are refused before any allocation, whatever the limits say.
pub const HARD_MAX_FRAME_BYTES: usize = 1 << 30;

/// `Execute` flag: keep the isolate after the run and answer with a handle id.
pub const FLAG_RETAIN: u8 = 1;
/// `Execute` / `HandleExecute` flag: send each console line as a `Log` frame as it happens.
pub const FLAG_LIVE_LOGS: u8 = 2;

/// Program flags (the byte before the params): how the program's text is read.
pub const PROGRAM_TYPESCRIPT: u8 = 1;
pub const PROGRAM_STATEMENTS: u8 = 2;
pub const PROGRAM_EXPLAIN: u8 = 4;

fn write_program(w: &mut Writer, program: &ProgramInput) {
    let mut flags = 0;
    if program.typescript {
        flags |= PROGRAM_TYPESCRIPT;
    }
    if program.statements {
        flags |= PROGRAM_STATEMENTS;
    }
    if program.explain {
        flags |= PROGRAM_EXPLAIN;
    }
    w.u8(flags)
        .opt_str(program.params_json.as_deref())
        .str(&program.code);
}

fn read_program(r: &mut Reader) -> Decoded<ProgramInput> {
    let flags = r.u8()?;
    Ok(ProgramInput {
        params_json: r.opt_str()?,
        code: r.str()?,
        typescript: flags & PROGRAM_TYPESCRIPT != 0,
        statements: flags & PROGRAM_STATEMENTS != 0,
        explain: flags & PROGRAM_EXPLAIN != 0,
    })
}

/// A run's bounds by name: a count, then each name and value (at most 255: the table has far
/// fewer per-run rows, and a host sends each name once).
fn write_bounds(w: &mut Writer, bounds: &[(String, f64)]) {
    w.u8(bounds.len().min(usize::from(u8::MAX)) as u8);
    for (name, value) in bounds.iter().take(usize::from(u8::MAX)) {
        w.str(name).f64(*value);
    }
}

fn read_bounds(r: &mut Reader) -> Decoded<Vec<(String, f64)>> {
    let count = r.u8()?;
    (0..count).map(|_| Ok((r.str()?, r.f64()?))).collect()
}

fn bounds_hint(bounds: &[(String, f64)]) -> usize {
    bounds.iter().map(|(name, _)| 12 + name.len()).sum()
}

fn program_hint(program: &ProgramInput) -> usize {
    8 + program.code.len() + program.params_json.as_ref().map_or(0, String::len)
}

/// `Shutdown` modes.
pub const SHUTDOWN_DRAIN: u8 = 0;
pub const SHUTDOWN_NOW: u8 = 1;

/// Message types, host to engine.
pub mod host_type {
    pub const HELLO: u8 = 0x01;
    pub const EXECUTE: u8 = 0x02;
    pub const REPLY: u8 = 0x03;
    pub const CANCEL: u8 = 0x04;
    pub const PING: u8 = 0x05;
    pub const SHUTDOWN: u8 = 0x06;
    pub const HANDLE_EXECUTE: u8 = 0x07;
    pub const HANDLE_DISPOSE: u8 = 0x08;
}

/// Message types, engine to host.
pub mod engine_type {
    pub const READY: u8 = 0x41;
    pub const REFUSE: u8 = 0x42;
    pub const TOOL_CALL: u8 = 0x43;
    pub const RESULT: u8 = 0x44;
    pub const PONG: u8 = 0x45;
    pub const HANDLE_CLOSED: u8 = 0x46;
    pub const BYE: u8 = 0x47;
    pub const LOG: u8 = 0x48;
}

// The engine's counters travel as `run::Stats` (its pool fields; see `write_stats`), and a
// run's end as `run::Outcome`: a `Report` (in milliseconds on the wire) or a `Fault` (its
// stable code string and message). An unknown code reads as `ERR_WORKER_LOST`.

/// Messages from the host to the engine.
#[derive(Clone, Debug, PartialEq)]
pub enum HostMessage {
    Hello {
        min_version: u16,
        max_version: u16,
        /// JSON object of executor options (the same names as the JS options).
        config_json: String,
    },
    Execute {
        run_id: u64,
        /// The run's own bounds by option name (`run::Overrides`); none keeps the executor's.
        bounds: Vec<(String, f64)>,
        flags: u8,
        fault_injection: Option<String>,
        program: ProgramInput,
        run_config_json: String,
    },
    Reply {
        run_id: u64,
        call_id: u32,
        json: String,
    },
    /// Ends a live run now. With `bound`, the host broke that bound on the run's behalf (an
    /// oversized reply it did not send) and the run ends as that breach; without, it was
    /// cancelled.
    Cancel {
        run_id: u64,
        reason: String,
        bound: Option<String>,
    },
    Ping {
        seq: u64,
    },
    Shutdown {
        mode: u8,
    },
    HandleExecute {
        handle_id: u64,
        run_id: u64,
        bounds: Vec<(String, f64)>,
        flags: u8,
        program: ProgramInput,
    },
    HandleDispose {
        handle_id: u64,
    },
}

/// Messages from the engine to the host.
// A message lives only between decoding a frame and acting on it, one at a time: the size of
// the largest variant (`Result`, with its report) costs nothing worth a box per run.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum EngineMessage {
    Ready {
        version: u16,
        pid: u32,
        workers: u32,
        engine: String,
    },
    Refuse {
        reason: String,
    },
    ToolCall {
        run_id: u64,
        call: ToolCall,
    },
    Result {
        run_id: u64,
        outcome: Outcome,
        stats: Stats,
    },
    Pong {
        seq: u64,
        stats: Stats,
    },
    HandleClosed {
        handle_id: u64,
        reason: String,
    },
    Bye,
    /// One console line of a run that asked for live logs (`FLAG_LIVE_LOGS`), as it happens;
    /// the same line is in the run's `logs`.
    Log {
        run_id: u64,
        line: String,
    },
}

/// A duration read from the wire's milliseconds (a negative or non-finite value reads as 0).
fn duration_ms(ms: f64) -> Duration {
    if ms.is_finite() && ms > 0.0 {
        Duration::from_secs_f64(ms / 1000.0)
    } else {
        Duration::ZERO
    }
}

fn frame(kind: u8, body_hint: usize, fill: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut w = Writer::with_capacity(5 + body_hint);
    w.u32(0).u8(kind);
    fill(&mut w);
    let len = (w.bytes.len() - 4) as u32;
    w.bytes[..4].copy_from_slice(&len.to_le_bytes());
    w.bytes
}

/// A run's metrics on the wire: four durations in milliseconds and the code cache's answer.
fn write_metrics(w: &mut Writer, m: &RunMetrics) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    w.f64(ms(m.isolate))
        .f64(ms(m.compile))
        .f64(ms(m.tool_wait))
        .f64(ms(m.cpu))
        .u8(u8::from(m.code_cache_hit));
}

fn read_metrics(r: &mut Reader) -> Decoded<RunMetrics> {
    Ok(RunMetrics {
        isolate: duration_ms(r.f64()?),
        compile: duration_ms(r.f64()?),
        tool_wait: duration_ms(r.f64()?),
        cpu: duration_ms(r.f64()?),
        code_cache_hit: r.u8()? != 0,
    })
}

fn write_stats(w: &mut Writer, s: &Stats) {
    w.u32(s.workers)
        .u32(s.busy)
        .u32(s.queued)
        .u32(s.retained)
        .u64(s.completed)
        .u64(s.lost)
        .u64(s.abandoned)
        .u64(s.replaced)
        .u64(s.isolates_created);
}

fn read_stats(r: &mut Reader) -> Decoded<Stats> {
    Ok(Stats {
        workers: r.u32()?,
        busy: r.u32()?,
        queued: r.u32()?,
        retained: r.u32()?,
        completed: r.u64()?,
        lost: r.u64()?,
        abandoned: r.u64()?,
        replaced: r.u64()?,
        isolates_created: r.u64()?,
        ..Stats::default()
    })
}

impl HostMessage {
    /// The whole frame, length prefix included.
    pub fn encode(&self) -> Vec<u8> {
        use host_type::*;
        match self {
            HostMessage::Hello {
                min_version,
                max_version,
                config_json,
            } => frame(HELLO, 8 + config_json.len(), |w| {
                w.u16(*min_version).u16(*max_version).str(config_json);
            }),
            HostMessage::Execute {
                run_id,
                bounds,
                flags,
                fault_injection,
                program,
                run_config_json,
            } => frame(
                EXECUTE,
                40 + bounds_hint(bounds) + program_hint(program) + run_config_json.len(),
                |w| {
                    w.u64(*run_id);
                    write_bounds(w, bounds);
                    w.u8(*flags).opt_str(fault_injection.as_deref());
                    write_program(w, program);
                    w.str(run_config_json);
                },
            ),
            HostMessage::Reply {
                run_id,
                call_id,
                json,
            } => frame(REPLY, 16 + json.len(), |w| {
                w.u64(*run_id).u32(*call_id).str(json);
            }),
            HostMessage::Cancel {
                run_id,
                reason,
                bound,
            } => frame(CANCEL, 32 + reason.len(), |w| {
                w.u64(*run_id).str(reason).opt_str(bound.as_deref());
            }),
            HostMessage::Ping { seq } => frame(PING, 8, |w| {
                w.u64(*seq);
            }),
            HostMessage::Shutdown { mode } => frame(SHUTDOWN, 1, |w| {
                w.u8(*mode);
            }),
            HostMessage::HandleExecute {
                handle_id,
                run_id,
                bounds,
                flags,
                program,
            } => frame(
                HANDLE_EXECUTE,
                24 + bounds_hint(bounds) + program_hint(program),
                |w| {
                    w.u64(*handle_id).u64(*run_id);
                    write_bounds(w, bounds);
                    w.u8(*flags);
                    write_program(w, program);
                },
            ),
            HostMessage::HandleDispose { handle_id } => frame(HANDLE_DISPOSE, 8, |w| {
                w.u64(*handle_id);
            }),
        }
    }

    /// Decodes one frame body (type byte and fields, without the length prefix).
    pub fn decode(body: &[u8]) -> Decoded<HostMessage> {
        use host_type::*;
        let mut r = Reader::new(body);
        let message = match r.u8()? {
            HELLO => HostMessage::Hello {
                min_version: r.u16()?,
                max_version: r.u16()?,
                config_json: r.str()?,
            },
            EXECUTE => HostMessage::Execute {
                run_id: r.u64()?,
                bounds: read_bounds(&mut r)?,
                flags: r.u8()?,
                fault_injection: r.opt_str()?,
                program: read_program(&mut r)?,
                run_config_json: r.str()?,
            },
            REPLY => HostMessage::Reply {
                run_id: r.u64()?,
                call_id: r.u32()?,
                json: r.str()?,
            },
            CANCEL => HostMessage::Cancel {
                run_id: r.u64()?,
                reason: r.str()?,
                bound: r.opt_str()?,
            },
            PING => HostMessage::Ping { seq: r.u64()? },
            SHUTDOWN => HostMessage::Shutdown { mode: r.u8()? },
            HANDLE_EXECUTE => HostMessage::HandleExecute {
                handle_id: r.u64()?,
                run_id: r.u64()?,
                bounds: read_bounds(&mut r)?,
                flags: r.u8()?,
                program: read_program(&mut r)?,
            },
            HANDLE_DISPOSE => HostMessage::HandleDispose {
                handle_id: r.u64()?,
            },
            other => {
                return Err(DecodeError(format!(
                    "unknown host message type 0x{other:02x}"
                )))
            }
        };
        r.finish()?;
        Ok(message)
    }
}

impl EngineMessage {
    /// The whole frame, length prefix included.
    pub fn encode(&self) -> Vec<u8> {
        use engine_type::*;
        match self {
            EngineMessage::Ready {
                version,
                pid,
                workers,
                engine,
            } => frame(READY, 14 + engine.len(), |w| {
                w.u16(*version).u32(*pid).u32(*workers).str(engine);
            }),
            EngineMessage::Refuse { reason } => frame(REFUSE, 4 + reason.len(), |w| {
                w.str(reason);
            }),
            EngineMessage::ToolCall { run_id, call } => frame(
                TOOL_CALL,
                24 + call.provider.len() + call.tool.len() + call.args_json.len(),
                |w| {
                    w.u64(*run_id)
                        .u32(call.call_id)
                        .str(&call.provider)
                        .str(&call.tool)
                        .str(&call.args_json);
                },
            ),
            EngineMessage::Result {
                run_id,
                outcome,
                stats,
            } => {
                let ms = |d: Duration| d.as_secs_f64() * 1000.0;
                let hint = match outcome {
                    Ok(r) => {
                        r.output.result_json.as_ref().map_or(0, String::len)
                            + r.output.error.as_ref().map_or(0, |e| e.message.len() + 32)
                            + r.output.logs.iter().map(|l| l.len() + 4).sum::<usize>()
                    }
                    Err(fault) => 16 + fault.message.len(),
                };
                frame(RESULT, 128 + hint, |w| {
                    w.u64(*run_id);
                    match outcome {
                        Ok(r) => {
                            let error = r.output.error.as_ref();
                            w.u8(0)
                                .opt_str(r.output.result_json.as_deref())
                                .opt_str(error.map(|e| e.message.as_str()))
                                .u8(error.map_or(0, |e| e.kind.wire()))
                                .opt_str(error.and_then(|e| e.bound.as_deref()))
                                .str_list(&r.output.logs)
                                .f64(ms(r.queued))
                                .f64(ms(r.run))
                                .u32(r.output.tool_calls)
                                .f64(r.output.heap_used_bytes as f64)
                                .u64(r.handle_id);
                            write_metrics(w, &r.output.metrics);
                        }
                        Err(fault) => {
                            w.u8(1).str(fault.code.as_str()).str(&fault.message);
                        }
                    }
                    write_stats(w, stats);
                })
            }
            EngineMessage::Pong { seq, stats } => frame(PONG, 72, |w| {
                w.u64(*seq);
                write_stats(w, stats);
            }),
            EngineMessage::HandleClosed { handle_id, reason } => {
                frame(HANDLE_CLOSED, 12 + reason.len(), |w| {
                    w.u64(*handle_id).str(reason);
                })
            }
            EngineMessage::Bye => frame(BYE, 0, |_| {}),
            EngineMessage::Log { run_id, line } => frame(LOG, 12 + line.len(), |w| {
                w.u64(*run_id).str(line);
            }),
        }
    }

    /// Decodes one frame body (type byte and fields, without the length prefix).
    pub fn decode(body: &[u8]) -> Decoded<EngineMessage> {
        use engine_type::*;
        let mut r = Reader::new(body);
        let message = match r.u8()? {
            READY => EngineMessage::Ready {
                version: r.u16()?,
                pid: r.u32()?,
                workers: r.u32()?,
                engine: r.str()?,
            },
            REFUSE => EngineMessage::Refuse { reason: r.str()? },
            TOOL_CALL => EngineMessage::ToolCall {
                run_id: r.u64()?,
                call: ToolCall {
                    call_id: r.u32()?,
                    provider: r.str()?,
                    tool: r.str()?,
                    args_json: r.str()?,
                },
            },
            RESULT => {
                let run_id = r.u64()?;
                let outcome = match r.u8()? {
                    0 => {
                        let result_json = r.opt_str()?;
                        let message = r.opt_str()?;
                        let kind = r.u8()?;
                        let bound = r.opt_str()?;
                        let error = match message {
                            None => None,
                            Some(message) => Some(RunError {
                                kind: ErrorKind::from_wire(kind)
                                    .ok_or_else(|| DecodeError(format!("bad error kind {kind}")))?,
                                bound,
                                message,
                                at: None,
                            }),
                        };
                        let output = RunOutput {
                            result_json,
                            error,
                            logs: r.str_list()?,
                            ..RunOutput::default()
                        };
                        let queued = duration_ms(r.f64()?);
                        let run = duration_ms(r.f64()?);
                        let tool_calls = r.u32()?;
                        let heap_used_bytes = r.f64()?;
                        Ok(Report {
                            output: RunOutput {
                                tool_calls,
                                heap_used_bytes: heap_used_bytes.max(0.0) as u64,
                                ..output
                            },
                            queued,
                            run,
                            total: queued + run,
                            handle_id: r.u64()?,
                        }
                        .with_metrics(read_metrics(&mut r)?))
                    }
                    1 => {
                        let code = r.str()?;
                        Err(Fault::new(
                            ErrorCode::from_code(&code).unwrap_or(ErrorCode::WorkerLost),
                            r.str()?,
                        ))
                    }
                    other => return Err(DecodeError(format!("bad result status {other}"))),
                };
                EngineMessage::Result {
                    run_id,
                    outcome,
                    stats: read_stats(&mut r)?,
                }
            }
            PONG => EngineMessage::Pong {
                seq: r.u64()?,
                stats: read_stats(&mut r)?,
            },
            HANDLE_CLOSED => EngineMessage::HandleClosed {
                handle_id: r.u64()?,
                reason: r.str()?,
            },
            BYE => EngineMessage::Bye,
            LOG => EngineMessage::Log {
                run_id: r.u64()?,
                line: r.str()?,
            },
            other => {
                return Err(DecodeError(format!(
                    "unknown engine message type 0x{other:02x}"
                )))
            }
        };
        r.finish()?;
        Ok(message)
    }
}

/// Reads one frame body. `Ok(None)` at a clean end of stream (between frames).
pub fn read_frame(input: &mut impl Read, max_bytes: usize) -> io::Result<Option<Vec<u8>>> {
    let mut prefix = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match input.read(&mut prefix[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = frame_len(prefix, max_bytes)?;
    let mut body = vec![0u8; len];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

/// The length prefix of a frame, checked against the bound before its body is waited for.
fn frame_len(prefix: [u8; 4], max_bytes: usize) -> io::Result<usize> {
    let len = u32::from_le_bytes(prefix) as usize;
    if len == 0 || len > max_bytes.min(HARD_MAX_FRAME_BYTES) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes (allowed: 1 to {max_bytes})"),
        ));
    }
    Ok(len)
}

/// Frames from a stream read in pieces, by a non-blocking reader: bytes go in as they come
/// ([`FrameBuffer::fill`]), whole frame bodies come out ([`FrameBuffer::next_frame`]), each
/// length checked against the bound as soon as its prefix is in, as [`read_frame`] does.
pub struct FrameBuffer {
    bytes: Vec<u8>,
    /// Where the first byte not yet taken is.
    start: usize,
    /// What one read lands in (a frame's worth is copied on; the rest stays untouched).
    chunk: Box<[u8]>,
}

impl Default for FrameBuffer {
    fn default() -> Self {
        FrameBuffer {
            bytes: Vec::new(),
            start: 0,
            chunk: vec![0u8; 64 * 1024].into_boxed_slice(),
        }
    }
}

impl FrameBuffer {
    /// Reads once from `input`: the bytes read (0 at the end of the stream), or its error
    /// (`WouldBlock` when a non-blocking input has nothing yet).
    pub fn fill(&mut self, input: &mut impl Read) -> io::Result<usize> {
        let n = input.read(&mut self.chunk)?;
        if self.start == self.bytes.len() {
            self.bytes.clear();
            self.start = 0;
        } else if self.start >= self.chunk.len() && self.start * 2 >= self.bytes.len() {
            self.bytes.drain(..self.start);
            self.start = 0;
        }
        self.bytes.extend_from_slice(&self.chunk[..n]);
        Ok(n)
    }

    /// The next frame's body when all of it is here; an error for a length out of bounds.
    pub fn next_frame(&mut self, max_bytes: usize) -> io::Result<Option<Vec<u8>>> {
        let waiting = &self.bytes[self.start..];
        let Some(prefix) = waiting.first_chunk::<4>() else {
            return Ok(None);
        };
        let len = frame_len(*prefix, max_bytes)?;
        let Some(body) = waiting.get(4..4 + len) else {
            return Ok(None);
        };
        let body = body.to_vec();
        self.start += 4 + len;
        Ok(Some(body))
    }

    /// Whether part of a frame is waiting for the rest (a stream that ends now was cut).
    pub fn holds_partial_frame(&self) -> bool {
        self.start < self.bytes.len()
    }
}

/// Writes one already-encoded frame and flushes it.
pub fn write_frame(output: &mut impl Write, frame: &[u8]) -> io::Result<()> {
    output.write_all(frame)?;
    output.flush()
}

/// The largest frame either side needs for `limits`-sized payloads: the biggest string a
/// message may carry plus room for logs and fixed fields.
pub fn max_frame_bytes(
    max_code: usize,
    max_reply: usize,
    max_result: usize,
    max_log: usize,
) -> usize {
    let biggest = max_code.max(max_reply).max(max_result);
    // A result frame carries the result and the logs (plus per-line headers) and the error text.
    (biggest + max_log * 2 + (1 << 20)).min(HARD_MAX_FRAME_BYTES)
}

impl From<DecodeError> for io::Error {
    fn from(e: DecodeError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that hands out the given pieces, one per read, then `WouldBlock`, then its end.
    struct Pieces(std::collections::VecDeque<Vec<u8>>, bool);
    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.pop_front() {
                Some(piece) => {
                    buf[..piece.len()].copy_from_slice(&piece);
                    Ok(piece.len())
                }
                None if !self.1 => {
                    self.1 = true;
                    Err(io::ErrorKind::WouldBlock.into())
                }
                None => Ok(0),
            }
        }
    }

    fn drain(buffer: &mut FrameBuffer, input: &mut Pieces) -> io::Result<Vec<Vec<u8>>> {
        let mut frames = Vec::new();
        loop {
            while let Some(body) = buffer.next_frame(100)? {
                frames.push(body);
            }
            match buffer.fill(input) {
                Ok(0) => return Ok(frames),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    }

    #[test]
    fn a_frame_buffer_yields_whole_frames_however_the_bytes_arrive() {
        let stream: Vec<u8> = [b"abc".as_slice(), b"", b"defgh"]
            .iter()
            .filter(|body| !body.is_empty())
            .flat_map(|body| {
                let mut frame = (body.len() as u32).to_le_bytes().to_vec();
                frame.extend_from_slice(body);
                frame
            })
            .collect();
        // One byte at a time, all at once, and cut at every place in between.
        let mut splits: Vec<Vec<Vec<u8>>> = vec![stream.iter().map(|b| vec![*b]).collect()];
        splits.push(vec![stream.clone()]);
        for cut in 1..stream.len() {
            splits.push(vec![stream[..cut].to_vec(), stream[cut..].to_vec()]);
        }
        for pieces in splits {
            let mut input = Pieces(pieces.into(), false);
            let mut buffer = FrameBuffer::default();
            let frames = drain(&mut buffer, &mut input).unwrap();
            assert_eq!(frames, vec![b"abc".to_vec(), b"defgh".to_vec()]);
            assert!(!buffer.holds_partial_frame());
        }
    }

    #[test]
    fn a_frame_buffer_refuses_a_length_out_of_bounds_before_its_body_and_sees_a_cut_frame() {
        let mut buffer = FrameBuffer::default();
        let mut input = Pieces(vec![101u32.to_le_bytes().to_vec()].into(), false);
        let error = drain(&mut buffer, &mut input).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        let mut buffer = FrameBuffer::default();
        let mut input = Pieces(vec![0u32.to_le_bytes().to_vec()].into(), false);
        assert!(
            drain(&mut buffer, &mut input).is_err(),
            "an empty frame is refused"
        );
        let mut buffer = FrameBuffer::default();
        let mut cut = 5u32.to_le_bytes().to_vec();
        cut.extend_from_slice(b"ab");
        let mut input = Pieces(vec![cut].into(), false);
        assert!(drain(&mut buffer, &mut input).unwrap().is_empty());
        assert!(buffer.holds_partial_frame());
    }

    fn roundtrip_host(m: HostMessage) {
        let bytes = m.encode();
        let len = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
        assert_eq!(len, bytes.len() - 4);
        assert_eq!(HostMessage::decode(&bytes[4..]).unwrap(), m);
    }

    fn roundtrip_engine(m: EngineMessage) {
        let bytes = m.encode();
        let mut cursor = io::Cursor::new(bytes);
        let body = read_frame(&mut cursor, 1 << 20).unwrap().unwrap();
        assert_eq!(EngineMessage::decode(&body).unwrap(), m);
        assert!(read_frame(&mut cursor, 1 << 20).unwrap().is_none());
    }

    #[test]
    fn every_message_survives_a_roundtrip() {
        roundtrip_host(HostMessage::Hello {
            min_version: 1,
            max_version: 3,
            config_json: "{\"workers\":2}".into(),
        });
        roundtrip_host(HostMessage::Execute {
            run_id: u64::MAX,
            bounds: vec![("timeout".into(), 12.5), ("memoryLimitMb".into(), 64.0)],
            flags: FLAG_RETAIN,
            fault_injection: Some("panic".into()),
            program: ProgramInput {
                code: "async (p: number) => 'é'".into(),
                params_json: Some("{\"n\":1}".into()),
                typescript: true,
                statements: false,
                explain: true,
            },
            run_config_json: "{}".into(),
        });
        roundtrip_host(HostMessage::Reply {
            run_id: 1,
            call_id: 2,
            json: "{\"result\":1}".into(),
        });
        roundtrip_host(HostMessage::Cancel {
            run_id: 3,
            reason: "stop".into(),
            bound: None,
        });
        roundtrip_host(HostMessage::Cancel {
            run_id: 4,
            reason: "too big".into(),
            bound: Some("maxReplyBytes".into()),
        });
        roundtrip_host(HostMessage::Ping { seq: 9 });
        roundtrip_host(HostMessage::Shutdown { mode: SHUTDOWN_NOW });
        roundtrip_host(HostMessage::HandleExecute {
            handle_id: 4,
            run_id: 5,
            bounds: vec![],
            flags: FLAG_LIVE_LOGS,
            program: ProgramInput {
                statements: true,
                ..ProgramInput::js("x")
            },
        });
        roundtrip_host(HostMessage::HandleDispose { handle_id: 4 });
        let stats = Stats {
            workers: 2,
            busy: 1,
            queued: 0,
            retained: 3,
            completed: 10,
            lost: 1,
            abandoned: 0,
            replaced: 1,
            isolates_created: 12,
            ..Stats::default()
        };
        roundtrip_engine(EngineMessage::Ready {
            version: 1,
            pid: 42,
            workers: 2,
            engine: "test".into(),
        });
        roundtrip_engine(EngineMessage::Refuse {
            reason: "no".into(),
        });
        roundtrip_engine(EngineMessage::ToolCall {
            run_id: 1,
            call: ToolCall {
                call_id: 0,
                provider: "p".into(),
                tool: "t".into(),
                args_json: "[1]".into(),
            },
        });
        let queued = Duration::from_micros(250);
        let run = Duration::from_micros(1500);
        roundtrip_engine(EngineMessage::Result {
            run_id: 7,
            outcome: Ok(Report {
                output: RunOutput {
                    result_json: None,
                    error: Some(RunError::bound("maxLogLines", "boom")),
                    logs: vec!["a".into(), String::new()],
                    tool_calls: 3,
                    heap_used_bytes: 1_000_000,
                    metrics: RunMetrics {
                        isolate: Duration::from_micros(125),
                        compile: Duration::from_micros(500),
                        tool_wait: Duration::from_micros(250),
                        cpu: Duration::from_micros(750),
                        code_cache_hit: true,
                    },
                },
                queued,
                run,
                total: queued + run,
                handle_id: 0,
            }),
            stats: stats.clone(),
        });
        roundtrip_engine(EngineMessage::Result {
            run_id: 8,
            outcome: Err(Fault::new(ErrorCode::QueueFull, "full")),
            stats: stats.clone(),
        });
        roundtrip_engine(EngineMessage::Pong { seq: 2, stats });
        roundtrip_engine(EngineMessage::HandleClosed {
            handle_id: 4,
            reason: "expired".into(),
        });
        roundtrip_engine(EngineMessage::Bye);
        roundtrip_engine(EngineMessage::Log {
            run_id: 9,
            line: "[warn] é".into(),
        });
    }

    #[test]
    fn malformed_frames_are_refused_not_trusted() {
        // Unknown type.
        assert!(HostMessage::decode(&[0x7f]).is_err());
        // A string length that runs past the frame.
        let mut bytes = HostMessage::Ping { seq: 1 }.encode();
        bytes.truncate(bytes.len() - 1);
        assert!(HostMessage::decode(&bytes[4..]).is_err());
        // Trailing bytes.
        let mut bytes = HostMessage::Ping { seq: 1 }.encode();
        bytes.push(0);
        assert!(HostMessage::decode(&bytes[4..]).is_err());
        // A list count that cannot fit.
        let mut w = Writer::default();
        w.u32(u32::MAX);
        assert!(Reader::new(&w.bytes).str_list().is_err());
        // Invalid UTF-8.
        let mut w = Writer::default();
        w.u8(host_type::CANCEL).u64(1).u32(1).u8(0xff);
        assert!(HostMessage::decode(&w.bytes).is_err());
    }

    #[test]
    fn frame_lengths_are_bounded_before_allocation() {
        let mut big = io::Cursor::new((u32::MAX).to_le_bytes().to_vec());
        let err = read_frame(&mut big, 1024).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let mut empty = io::Cursor::new(0u32.to_le_bytes().to_vec());
        assert!(read_frame(&mut empty, 1024).is_err());
        let mut cut = io::Cursor::new(vec![5, 0]);
        assert!(read_frame(&mut cut, 1024).is_err());
    }
}
