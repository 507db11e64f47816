//! The 2026-07-28 side: a client written by hand on tokio, because it must pass every
//! message through without a loss (DESIGN principle 1), and its transports.
//!
//! Seam for M4/M5: [`Transport`] is all that the client needs of a transport. The stdio
//! child is one transport; an HTTP transport (M4) and an in-process link (M5) implement the
//! same trait and feed the same [`TransportEvent`]s.

pub mod client;
pub mod envelope;
pub mod stdio;

use std::fmt;

use serde_json::Value;
use tokio::sync::watch;

use crate::wire::reader::RawLine;

/// What a transport tells its client.
#[derive(Debug)]
pub enum TransportEvent {
    /// One line of the upstream server (or the head and tail of a line over the limit).
    Line(RawLine),
    /// The upstream server sends nothing more (stdout closed). Requests in flight fail.
    Closed,
    /// The upstream server and its process tree are gone.
    Exited(ExitInfo),
}

/// How the upstream process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitInfo {
    Code(i32),
    Signal(i32),
    Unknown,
}

impl fmt::Display for ExitInfo {
    /// The end of the error line `the upstream server <…>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitInfo::Code(code) => write!(f, "exited with code {code}"),
            ExitInfo::Signal(signal) => write!(f, "stopped on signal {signal}"),
            ExitInfo::Unknown => write!(f, "stopped"),
        }
    }
}

impl ExitInfo {
    /// The text of the contract's line `mcp_stdio: warning: stdio server exited (exit code
    /// <n>); no restart is left`, which comes before the bridge's own line about the exit.
    pub fn stdio_line(&self) -> String {
        let how = match self {
            ExitInfo::Code(code) => format!(" (exit code {code})"),
            ExitInfo::Signal(signal) => format!(" (signal {signal})"),
            ExitInfo::Unknown => String::new(),
        };
        format!("stdio server exited{how}; no restart is left")
    }
}

/// A transport to one upstream server. All methods return at once.
pub trait Transport: Send + Sync + 'static {
    /// Queues one frame; false when the transport takes no more frames.
    fn send(&self, frame: &Value) -> bool;
    /// Starts the stop sequence (idempotent). Frames queued before still go out first.
    fn stop(&self);
    /// Becomes `Some` when the upstream server and its tree are gone.
    fn exit_watch(&self) -> watch::Receiver<Option<ExitInfo>>;
    /// The process (group) id of a child process, for the watchdog.
    fn process_id(&self) -> Option<u32>;
}

/// Why an upstream request failed (the front maps each to the error table).
#[derive(Clone, Debug, PartialEq)]
pub enum UpstreamError {
    /// The upstream server answered with this JSON-RPC error object.
    Rpc(Value),
    /// The upstream server stopped or closed its output.
    Closed,
    /// The response is not valid; the text says why (never frame content).
    InvalidResponse(String),
    /// The upstream server ended a listen stream with `notifications/cancelled` (M3).
    Ended,
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpstreamError::Rpc(e) => {
                write!(
                    f,
                    "the upstream server answered with the error {}",
                    e.get("code").unwrap_or(&Value::Null)
                )
            }
            UpstreamError::Closed => write!(f, "the upstream server closed its output"),
            UpstreamError::InvalidResponse(why) => write!(f, "the response is not valid ({why})"),
            UpstreamError::Ended => write!(f, "the upstream server cancelled the request"),
        }
    }
}
