//! The one upstream client, of every revision: written by hand on tokio, because it must pass
//! every message through without a loss (docs/architecture.md principle 1), and its
//! transports. The revision of a connection is a negotiated value, its [`dialect::Dialect`]:
//! every connection starts as 2026-07-28 (`server/discover`), and the front turns it to an
//! older revision once (L1); the client, the transports and the front's exchanges are the same
//! for both.
//!
//! The seam: [`connect::connect`] is the one place that turns a [`connect::Target`] (a
//! command, a URL, or a server in the same process over a pipe) into a connection, a
//! [`Transport`] and its stream of [`TransportEvent`]s. [`Transport`] is all that the client
//! needs of a transport: one [`Transport::send`] of an [`Outgoing`] frame (a request in its
//! dialect, or a notification or response of the client), `cancel`, `stop`, the end
//! (`end_watch`) and `tools_listed`; no method names a revision. The events are
//! transport-neutral: a message, the failure of one request (an HTTP status, a broken stream)
//! that leaves the connection up, the close of the server's output, or the end of the
//! connection (with the exit status only for a process). The client and the front never name a
//! transport.
//!
//! The files:
//! - [`connect`]: the target (a command, a URL, a pipe) into a connection;
//! - [`client`]: the client (ids, the request frame of its dialect, `_meta`, progress and
//!   responses routed by request, cancellation); the server's notifications and requests that
//!   belong to no request go to the front's [`client::IncomingSink`]. It never names a
//!   transport;
//! - [`dialect`]: the revision of a connection and what it changes;
//! - [`envelope`]: the `_meta` envelope of 2026-07-28 (R1, R3) and the request frame of each
//!   dialect;
//! - [`events`]: where a transport reports its events: the client's router runs on the
//!   transport's own task, one event at a time, in order;
//! - [`lines`]: JSON-RPC line framing over any `AsyncRead`/`AsyncWrite` (its writer is
//!   `wire/writer.rs`, the one writer type), and `LineTransport`, the one transport of lines:
//!   the upstream command's pipes or a pair of streams (an in-memory pipe);
//! - [`child`]: the upstream command: process group or job object, the stop sequence, over
//!   [`lines`];
//! - [`http`]: the URL form (M4), one implementation for every revision: the one POST, the
//!   GET of an event stream, the bearer and the answer to a 401 or 403 (`post.rs`); the
//!   answer, a JSON body or SSE events, with the cursor and the pacing of a resumed stream
//!   (`sse.rs`); the task of each request in flight, whose cancellation closes its stream
//!   (`inflight.rs`). What is the era's: for 2026-07-28 the standard headers (`headers.rs`)
//!   and `x-mcp-header` (`params.rs`); for an older server (L4, `http/older/`) the order of
//!   its dispatcher (`mod.rs`), the session id and revision headers (`session.rs`), the GET
//!   stream and the resumption of a POST's stream (`stream.rs`), and the HTTP+SSE transport
//!   of 2024-11-05 (`legacy.rs`). Each request asks the token source of `auth/` for its
//!   bearer (it never sees the sign-in's session).

pub mod child;
pub mod client;
pub mod connect;
pub mod dialect;
pub mod envelope;
pub mod events;
pub mod http;
pub mod lines;

use std::fmt;

use serde_json::Value;
use tokio::sync::watch;

use crate::wire::reader::RawLine;

/// What a transport tells its client. The events are transport-neutral: a message, the
/// failure of one request, and the end of the connection.
#[derive(Debug)]
pub enum TransportEvent {
    /// One message of the upstream server: a line on stdio, a JSON body or one SSE event over
    /// HTTP (or the head and tail of a message over the limit).
    Line(RawLine),
    /// One request failed without a JSON-RPC answer (an HTTP status, a broken stream, a
    /// connection that could not be made). Only that request fails; the connection goes on.
    Failed { id: i64, error: UpstreamError },
    /// The upstream server sends nothing more (stdout closed). Requests in flight fail.
    Closed,
    /// The connection is gone for good: the exit status where there is a process.
    Ended(Ended),
}

/// How a connection ended: the exit status where there is a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    pub exit: Option<ExitInfo>,
}

impl fmt::Display for Ended {
    /// The end of the error line `the upstream server <…>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.exit {
            Some(exit) => exit.fmt(f),
            None => write!(f, "closed the connection"),
        }
    }
}

/// How the upstream process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitInfo {
    Code(i32),
    #[cfg_attr(
        windows,
        expect(dead_code, reason = "a Windows process ends with a code only")
    )]
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
    /// The text of the line of docs/stderr.md `mcp_stdio: warning: stdio server exited (exit code
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

/// One frame that goes upstream.
#[derive(Clone, Copy, Debug)]
pub enum Outgoing<'a> {
    /// A request of the client; its frame says the dialect it is written in.
    Request(&'a envelope::RequestFrame<'a>),
    /// A notification or a response of the client (L2, L3: `notifications/initialized`, the
    /// answer to a request of an older server). A server of 2026-07-28 gets none.
    Message(&'a Value),
}

/// A transport to one upstream server. All methods return at once.
pub trait Transport: Send + Sync + 'static {
    /// Queues one frame; false when the transport takes no more frames. A transport of lines
    /// writes the members of a request's params as received (a hot-path choice of
    /// bridge/README.md); HTTP reads the frame for its headers.
    fn send(&self, frame: Outgoing<'_>) -> bool;
    /// Gives up the request `id`. On stdio the frame `notifications/cancelled` goes out; over
    /// HTTP the response stream of the request closes, which is the cancellation there (an
    /// older server's session gets the frame too, L4).
    fn cancel(&self, id: i64, frame: &Value);
    /// Starts the stop sequence (idempotent). Frames queued before still go out first.
    fn stop(&self);
    /// Becomes `Some` when the connection is gone: with the exit status where there is a
    /// process. A transport without a process ends at its stop.
    fn end_watch(&self) -> watch::Receiver<Option<Ended>>;
    /// A `tools/list` result of the upstream server, before it goes to VS Code: a transport
    /// can learn from it what later calls need (HTTP: the parameters of `x-mcp-header`), and
    /// leave out tools that it cannot call.
    fn tools_listed(&self, _result: &mut Value) {}
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
    /// The connection of one request failed (connect, TLS, a broken stream); the text says
    /// why, never with a URL, a header or frame content. The next request tries again.
    TransportFailed(String),
    /// An HTTP status without a JSON-RPC answer.
    HttpStatus(u16),
    /// An HTTP status whose body is a JSON-RPC error (L1, L4: the status of a refused
    /// `server/discover` tells an older server, whatever the error says).
    Refused { status: u16, error: Value },
    /// M4: the sign-in that a 401 or 403 needed did not complete.
    SignIn(crate::auth::outcome::SignInError),
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. } => {
                write!(
                    f,
                    "the upstream server answered with the error {}",
                    e.get("code").unwrap_or(&Value::Null)
                )
            }
            UpstreamError::Closed => write!(f, "the upstream server closed its output"),
            UpstreamError::InvalidResponse(why) => write!(f, "the response is not valid ({why})"),
            UpstreamError::Ended => write!(f, "the upstream server cancelled the request"),
            UpstreamError::TransportFailed(why) => write!(f, "the connection failed ({why})"),
            UpstreamError::HttpStatus(status) => write!(f, "HTTP status {status}"),
            UpstreamError::SignIn(e) => write!(f, "the sign-in failed ({e})"),
        }
    }
}

impl UpstreamError {
    /// The JSON-RPC error object with which the upstream server answered, with or without an
    /// HTTP status.
    pub fn rpc(&self) -> Option<&Value> {
        match self {
            UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. } => Some(e),
            _ => None,
        }
    }
}

/// M4: the next change of a sign-in counter ([`crate::auth::TokenSource::sign_ins`],
/// [`crate::auth::TokenSource::wait`]); never without one, or after its sender is gone.
pub async fn next_change(counter: &mut Option<watch::Receiver<u64>>) {
    match counter {
        Some(rx) => {
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}
