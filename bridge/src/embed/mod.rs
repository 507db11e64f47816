//! M5, the embedded bridge: one executable serves VS Code (revision 2025-11-25, through the
//! bridge), the Copilot harness and every client of revision 2026-07-28 (through the server's
//! own stdio transport) on one stdin/stdout, without a second process.
//!
//! The first message selects the path (bridge/README.md, "Embedding the bridge in an rmcp
//! server"; the module `first`):
//!
//! - a request named exactly `initialize` → the bridge: the same core as the executable
//!   (`front::serve`), whose upstream is the server in the same process over an
//!   in-memory pipe (`Target::Pipe`) with the line framing of stdio;
//! - any other message, or a line that is not valid JSON-RPC → the server's own transport,
//!   over a pipe of its own, without the bridge;
//! - a `server/discover` before them selects no path: [`Discover`] tells who answers it.
//!
//! Each path gets the bytes already read unchanged. The end of input before any request
//! returns [`Served::Nothing`]. Both paths stop in a bounded time with requests in flight,
//! and no watchdog is armed: the host owns the process.
//!
//! Two entry points: the generic [`serve_stdio_with`] serves any server that can be reached
//! through an in-memory pipe; with the cargo feature `rmcp`, `serve_stdio` serves an rmcp
//! `ServerHandler`. Both take their input and output as a pair, as rmcp's transports do:
//! [`stdio`] is the pair of the process. bridge/README.md ("Embedding the bridge in an rmcp
//! server") shows both.

pub(crate) mod first;
mod paths;
#[cfg(feature = "rmcp")]
mod with_rmcp;

use std::io;
use std::time::Duration;

pub use self::first::Discover;
use self::first::{FirstLines, Next, Path, Step, step};
use self::paths::Out;
#[cfg(feature = "rmcp")]
pub use self::with_rmcp::serve_stdio;
use crate::cli::{DEFAULT_DISCOVER_TIMEOUT, DEFAULT_MAX_LINE_BYTES};
use crate::front::{self, Hooks, Outcome};
use crate::log::{self, Level};
use crate::translate::initialize::ServerInfoFallback;
pub use crate::upstream::connect::Pipe;
use crate::upstream::connect::{PipeConnect, Target};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

/// The options of the embedded bridge. Made with `Options::default()` or
/// `Options::from(Discover::Refuse)` (which changes only the policy); each field can then be
/// set. Non-exhaustive, so that a later option is not a breaking change.
///
/// ```
/// use mcp_bridge_vscode::embed::{Discover, Options};
///
/// let mut options = Options::from(Discover::Refuse);
/// options.name = Some("my-server".to_owned());
/// assert_eq!(options.discover, Discover::Refuse);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Who answers a `server/discover` that comes before the first other request.
    pub discover: Discover,
    /// `serverInfo` for VS Code when the server's discover result has none (R1); the rmcp
    /// form takes the server's own name and version when these are `None`.
    pub name: Option<String>,
    /// The version of that `serverInfo` (see `name`).
    pub version: Option<String>,
    /// The longest line of the first lines and of the bridge's two sides (a longer first line
    /// is dropped with a warning, and the next line decides).
    pub max_line_bytes: usize,
    /// The requests of VS Code in flight at once on the bridge path (-32603 above it).
    pub max_in_flight: usize,
    /// The `shutdown_grace` of the stop sequence (R7): on the server's path, what requests in flight get
    /// after the end of input before the pipe is dropped.
    pub shutdown_grace: Duration,
    /// How long the bridge waits for the server's answer to `server/discover`.
    pub discover_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            discover: Discover::Answer,
            name: None,
            version: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight: front::inflight::MAX_IN_FLIGHT,
            shutdown_grace: crate::upstream::child::SHUTDOWN_GRACE,
            discover_timeout: DEFAULT_DISCOVER_TIMEOUT,
        }
    }
}

impl From<Discover> for Options {
    fn from(discover: Discover) -> Options {
        Options {
            discover,
            ..Options::default()
        }
    }
}

/// How a connection was served. Non-exhaustive: a match needs a `_` arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Served {
    /// The input ended before a request selected a path.
    Nothing,
    /// The bridge served VS Code until the end of input, or (`server_closed`) until the
    /// server closed its pipe while the input was open.
    Bridge {
        /// The server closed its pipe first.
        server_closed: bool,
    },
    /// The server's own transport served the connection.
    Server,
}

/// The input and the output of the process (its stdin and stdout, as pipes on the reactor
/// where they are pipes), for either entry point. Call it inside a tokio runtime.
pub fn stdio() -> (
    impl AsyncRead + Unpin + Send + 'static,
    impl AsyncWrite + Unpin + Send + 'static,
) {
    (
        crate::wire::stdio_pipes::stdin(),
        crate::wire::stdio_pipes::stdout(),
    )
}

/// Serves one connection on `io` (an input and an output, e.g. [`stdio`]) with the server
/// that `connect` reaches: each call of `connect` gives one new [`Pipe`] whose other end the
/// server serves with its own line transport (for example one end of
/// [`tokio::io::duplex`], with the server's serving task spawned on the other). Returns after
/// the bounded stop of the selected path. An error is one of reading the first lines, of
/// writing the answer to a `server/discover`, or of `connect`.
pub async fn serve_stdio_with<F, R, W>(
    connect: F,
    options: impl Into<Options>,
    (input, output): (R, W),
) -> io::Result<Served>
where
    F: Fn() -> io::Result<Pipe> + Send + Sync + 'static,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let options = options.into();
    let connect = PipeConnect::new(connect);
    let grace = options.shutdown_grace;
    let mut lines = FirstLines::new(input, options.max_line_bytes);
    let mut out = Out::Direct(output);
    let path = loop {
        let next = match lines.next().await {
            Ok(next) => next,
            Err(error) => {
                out.finish(grace).await;
                return Err(error);
            }
        };
        let (kind, len) = match next {
            Next::Eof => {
                out.finish(grace).await;
                return Ok(Served::Nothing);
            }
            Next::TooLong => {
                let limit = options.max_line_bytes;
                log::bridge(
                    Level::Warn,
                    &format!("dropped a frame longer than {limit} bytes"),
                );
                continue;
            }
            Next::Line { kind, len } => (kind, len),
        };
        match step(kind, options.discover) {
            Step::Select(path) => break path,
            Step::Skip => {
                lines.consume(len);
            }
            Step::Forward => {
                let line = lines.consume(len);
                out = out.forward(&connect, line).await?;
            }
            Step::Refuse(id) => {
                lines.consume(len);
                out.refuse(id).await?;
            }
        }
    };
    let (input, prefix) = lines.into_parts();
    let input = std::io::Cursor::new(prefix).chain(input);
    match path {
        Path::Bridge => {
            let output = out.into_output(grace).await?;
            let opts = front::Options {
                upstream: Target::Pipe(connect),
                fallback: ServerInfoFallback {
                    name: options.name.unwrap_or_else(|| "mcp-server".to_owned()),
                    version: options.version.unwrap_or_else(|| crate::VERSION.to_owned()),
                },
                discover_timeout: options.discover_timeout,
                // S1 is for a server that starts as a process of its own; this one runs here.
                answer_initialize_after: None,
                // The embedded server speaks revision 2026-07-28 (docs/architecture.md, M5).
                upstream_revision: crate::cli::UpstreamRevision::Modern,
                max_line_bytes: options.max_line_bytes,
                max_in_flight: options.max_in_flight,
                shutdown_grace: grace,
                sign_in: None,
                refusal: None,
            };
            let outcome = front::serve(opts, input, output, Hooks::default()).await;
            let server_closed = matches!(outcome, Outcome::UpstreamExited(_));
            Ok(Served::Bridge { server_closed })
        }
        Path::Server => {
            let link = out.link(&connect)?;
            paths::serve_server(link, input, grace).await;
            Ok(Served::Server)
        }
    }
}
