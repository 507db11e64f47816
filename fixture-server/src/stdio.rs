//! The stdio transport: rmcp's line transport on stdin and stdout, with a reader that tells
//! the fixture when stdin ends (R7), and the misbehaving mode `--close-stdout`.
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{QuitReason, ServerInitializeError};
use tokio::io::{AsyncRead, ReadBuf};

use crate::cli::Options;
use crate::log;
use crate::server::Fixture;
use crate::state::{Lifecycle, State};

/// How long `--close-stdout` keeps running.
const MISBEHAVE_FOR: Duration = Duration::from_secs(120);

/// Serves one session on stdio until stdin ends.
pub async fn serve(options: Options) -> Result<(), String> {
    if options.close_stdout {
        return misbehave().await;
    }
    let state = Arc::new(State::new(options));
    let reader = EndSignal {
        inner: tokio::io::stdin(),
        lifecycle: state.lifecycle.clone(),
    };
    let running = match Fixture::new(state)
        .serve((reader, tokio::io::stdout()))
        .await
    {
        Ok(running) => running,
        // The end of stdin before the first request that starts a session.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(format!("the session did not start: {error}")),
    };
    match running.waiting().await {
        Ok(QuitReason::Closed | QuitReason::Cancelled) => Ok(()),
        Ok(reason) => Err(format!("the session stopped: {reason:?}")),
        Err(error) => Err(format!("the session failed: {error}")),
    }
}

/// An `AsyncRead` that ends the listen streams and the work in flight when its reader reaches
/// the end of stdin. rmcp then has only finished handlers to wait for, thus the process exits
/// in a few milliseconds instead of after rmcp's drain limit of 5 s.
struct EndSignal<R> {
    inner: R,
    lifecycle: Lifecycle,
}

impl<R: AsyncRead + Unpin> AsyncRead for EndSignal<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        let ended = match &poll {
            Poll::Ready(Ok(())) => buf.filled().len() == before && buf.remaining() > 0,
            Poll::Ready(Err(_)) => true,
            Poll::Pending => false,
        };
        if ended {
            this.lifecycle.input_ended();
        }
        poll
    }
}

/// `--close-stdout`: a server that closes stdout at once and then runs without reading stdin,
/// so that a test can see the bridge stop a child process that does not exit by itself.
async fn misbehave() -> Result<(), String> {
    close_stdout()?;
    log::warning(
        "stdio",
        "closed stdout; running 120 s without reading stdin",
    );
    tokio::time::sleep(MISBEHAVE_FOR).await;
    Ok(())
}

/// Closes the pipe of stdout: file descriptor 1 becomes `/dev/null` (dup2 closes the pipe in
/// the same step, and the standard library keeps a valid descriptor 1).
#[cfg(unix)]
fn close_stdout() -> Result<(), String> {
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(|error| format!("cannot open /dev/null: {error}"))?;
    rustix::stdio::dup2_stdout(&null).map_err(|error| format!("cannot close stdout: {error}"))
}

#[cfg(not(unix))]
fn close_stdout() -> Result<(), String> {
    Err("--close-stdout works only on POSIX systems".into())
}
