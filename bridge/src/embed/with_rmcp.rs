//! The embedded bridge for an rmcp `ServerHandler` (cargo feature `rmcp`): each pipe is one
//! end of a [`tokio::io::duplex`], and the handler serves the other end with rmcp's own line
//! transport (`AsyncRwTransport`), as `rmcp::transport::stdio()` would serve stdin and stdout.
//!
//! After the path stopped, the sessions that are left are cancelled (rmcp fires the cancel
//! tokens of their requests) and get a bounded time to end; nothing waits longer.

use std::io;
use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::service::{RoleServer, ServiceExt};
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Options, Pipe, Served, serve_stdio_with};

/// The bytes that the in-memory pipe holds in each direction.
const PIPE_BYTES: usize = 1 << 20;
/// How long the sessions that are left get after their cancellation.
const CANCEL_WAIT: Duration = Duration::from_secs(1);

/// Serves `handler` on `io` (an input and an output; [`super::stdio`] for the process's):
/// VS Code's `initialize` gets the bridge, every other client rmcp's own stdio serving. Call
/// `serve_stdio(handler, Options::default(), embed::stdio())` in place of
/// `handler.serve(rmcp::transport::stdio())`.
pub async fn serve_stdio<H, R, W>(
    handler: H,
    options: impl Into<Options>,
    io: (R, W),
) -> io::Result<Served>
where
    H: ServerHandler + Clone + Send + Sync + 'static,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let mut options = options.into();
    if options.name.is_none() || options.version.is_none() {
        let info = handler.get_info().server_info;
        options.name.get_or_insert(info.name);
        options.version.get_or_insert(info.version);
    }
    let max_line_bytes = options.max_line_bytes;
    let sessions = TaskTracker::new();
    let cancel = CancellationToken::new();
    let connect = {
        let sessions = sessions.clone();
        let cancel = cancel.clone();
        move || {
            let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
            let (read, write) = tokio::io::split(theirs);
            let transport = AsyncRwTransport::<RoleServer, _, _>::new_server(read, write)
                .with_max_line_length(max_line_bytes);
            let handler = handler.clone();
            let ct = cancel.child_token();
            sessions.spawn(async move {
                // The end of the pipe before the first request is a normal end.
                if let Ok(running) = handler.serve_with_ct(transport, ct).await {
                    let _ = running.waiting().await;
                }
            });
            let (read, write) = tokio::io::split(ours);
            Ok(Pipe::new(read, write))
        }
    };
    let served = serve_stdio_with(connect, options, io).await;
    cancel.cancel();
    sessions.close();
    let _ = tokio::time::timeout(CANCEL_WAIT, sessions.wait()).await;
    served
}
