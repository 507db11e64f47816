//! The one place that turns the target of the bridge into a connection: the command of the
//! command form, the URL of the URL form (M4), or a server in the same process reached over
//! an in-memory pipe (M5, the embedded bridge). The front asks for a connection and never
//! names a transport.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use super::Transport;
pub use super::child::ChildEnv;
use super::child::{self, ChildOptions};
use super::events::{Inbox, events};
use super::http::{HttpOptions, HttpTransport};
use super::lines::LineTransport;
use crate::auth::TokenSource;
use crate::errors::Cause;
use crate::wire::writer::Room;

/// What the bridge connects to.
#[derive(Clone, Debug)]
pub enum Target {
    /// `-- <command> [args...]`: a child process on stdio.
    Command {
        /// The program.
        command: OsString,
        /// Its arguments.
        args: Vec<OsString>,
        /// Variables for the child alone: the bridge's own secrets of `--secret-env`.
        env: ChildEnv,
    },
    /// `<url>`: Streamable HTTP, with the sign-in that gives its requests their bearer (M4;
    /// `None` with a static `Authorization` header).
    Url(Arc<HttpOptions>, Option<TokenSource>),
    /// M5: a server of revision 2026-07-28 in the same process, over an in-memory pipe with
    /// the line framing of stdio; each connection (each `initialize`) asks for a new pipe.
    Pipe(PipeConnect),
}

/// One end of an in-memory pipe to a server in the same process: the bridge reads the
/// server's lines from `read` and writes its own to `write`. The server serves the other end
/// with its own line transport; closing `write` is the end of its input.
pub struct Pipe {
    /// The server's lines toward the bridge.
    pub read: Box<dyn AsyncRead + Unpin + Send>,
    /// The bridge's lines toward the server.
    pub write: Box<dyn AsyncWrite + Unpin + Send>,
}

impl Pipe {
    /// A pipe of the two ends `read` and `write`.
    pub fn new(
        read: impl AsyncRead + Unpin + Send + 'static,
        write: impl AsyncWrite + Unpin + Send + 'static,
    ) -> Pipe {
        Pipe {
            read: Box::new(read),
            write: Box::new(write),
        }
    }
}

/// The function that makes a new [`Pipe`] to the server (called once per connection).
#[derive(Clone)]
pub struct PipeConnect(pub Arc<dyn Fn() -> io::Result<Pipe> + Send + Sync>);

impl PipeConnect {
    /// The function `connect`, called once per connection.
    pub fn new(connect: impl Fn() -> io::Result<Pipe> + Send + Sync + 'static) -> PipeConnect {
        PipeConnect(Arc::new(connect))
    }

    /// A new pipe to the server.
    pub fn connect(&self) -> io::Result<Pipe> {
        (self.0)()
    }
}

impl fmt::Debug for PipeConnect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PipeConnect(..)")
    }
}

/// The options of a connection that do not depend on its target.
#[derive(Clone)]
pub struct ConnectOptions {
    pub max_line_bytes: usize,
    /// The `shutdown_grace` of the stop sequence (R7) for a child, and for a server in the process.
    pub grace: Duration,
    /// The process (group) id of the current child, for the watchdog of the executable.
    pub pid: Arc<AtomicU32>,
}

/// A transport and the events that it sends.
pub struct Connection {
    pub transport: Arc<dyn Transport>,
    pub events: Inbox,
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
        matches!(self, Target::Url(..))
    }
}

/// Opens a connection to `target`. `room` holds the upstream's messages back while VS Code
/// does not read (backpressure).
pub fn connect(
    target: &Target,
    opts: &ConnectOptions,
    room: Room,
) -> Result<Connection, ConnectError> {
    let (tx, events) = events();
    let transport: Arc<dyn Transport> = match target {
        Target::Command { command, args, env } => {
            let child = ChildOptions {
                max_line_bytes: opts.max_line_bytes,
                grace: opts.grace,
                pid: Arc::clone(&opts.pid),
            };
            child::spawn(command, args, env, &child, tx, room).map_err(|e| ConnectError {
                cause: Cause::SpawnFailed,
                line: format!("cannot start the upstream command: {e}"),
            })?
        }
        Target::Pipe(pipe) => {
            let Pipe { read, write } = pipe.connect().map_err(|e| ConnectError {
                cause: Cause::NotConnected,
                line: format!("cannot reach the server in the process: {e}"),
            })?;
            LineTransport::spawn_with_grace(
                read,
                write,
                opts.max_line_bytes,
                tx,
                room,
                Some(opts.grace),
            )
        }
        Target::Url(http, tokens) => HttpTransport::new(Arc::clone(http), tokens.clone(), tx, room)
            .map_err(|e| ConnectError {
                cause: Cause::NotConnected,
                line: format!("cannot make the HTTP client for the upstream server: {e}"),
            })?,
    };
    Ok(Connection { transport, events })
}
