//! The one place that turns the target of the bridge into a connection: the command of the
//! command form, or the URL of the URL form (M4). The front asks for a connection and never
//! names a transport.

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use tokio::sync::mpsc;

use super::child::{ChildOptions, ChildTransport};
use super::http::{HttpOptions, HttpTransport};
use super::{Transport, TransportEvent};
use crate::translate::errors::Cause;
use crate::wire::writer::Room;

/// What the bridge connects to.
#[derive(Clone, Debug)]
pub enum Target {
    /// `-- <command> [args...]`: a child process on stdio.
    Command {
        command: OsString,
        args: Vec<OsString>,
    },
    /// `<url>`: Streamable HTTP.
    Url(Arc<HttpOptions>),
}

/// The options of a connection that do not depend on its target.
#[derive(Clone)]
pub struct ConnectOptions {
    pub max_line_bytes: usize,
    /// The contract's `shutdown_grace` for a child.
    pub grace: Duration,
    /// The process (group) id of the current child, for the watchdog of the executable.
    pub pid: Arc<AtomicU32>,
}

/// A transport and the events that it sends.
pub struct Connection {
    pub transport: Arc<dyn Transport>,
    pub events: mpsc::UnboundedReceiver<TransportEvent>,
}

/// Why no connection could be made: the cause of the error for `initialize`, and the line
/// for stderr (no header value, no secret).
#[derive(Debug)]
pub struct ConnectError {
    pub cause: Cause,
    pub line: String,
}

impl Target {
    /// True for an upstream server at a URL (O10: only `data:` icons reach VS Code).
    pub fn is_remote(&self) -> bool {
        matches!(self, Target::Url(_))
    }
}

/// Opens a connection to `target`. `room` holds the upstream's messages back while VS Code
/// does not read (backpressure).
pub fn connect(
    target: &Target,
    opts: &ConnectOptions,
    room: Room,
) -> Result<Connection, ConnectError> {
    let (tx, events) = mpsc::unbounded_channel();
    let transport: Arc<dyn Transport> = match target {
        Target::Command { command, args } => {
            let child = ChildOptions {
                max_line_bytes: opts.max_line_bytes,
                grace: opts.grace,
                pid: Arc::clone(&opts.pid),
            };
            ChildTransport::spawn(command, args, &child, tx, room).map_err(|e| ConnectError {
                cause: Cause::SpawnFailed,
                line: format!("cannot start the upstream command: {e}"),
            })?
        }
        Target::Url(http) => {
            HttpTransport::new(Arc::clone(http), tx, room).map_err(|e| ConnectError {
                cause: Cause::NotConnected,
                line: format!("cannot make the HTTP client for the upstream server: {e}"),
            })?
        }
    };
    Ok(Connection { transport, events })
}
