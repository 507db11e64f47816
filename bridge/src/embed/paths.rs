//! The output before a path is selected, and the server's own path: a pipe to the server whose
//! lines are copied to the output, whole line by whole line, by a pump task.
//!
//! A `server/discover` answered by the server (`Discover::Answer`) opens this pipe before any
//! path is selected. When `initialize` then selects the bridge, the pipe closes and its pump
//! writes the rest of the server's answers before the bridge writes its first frame; when
//! another message selects the server's path, the same pipe goes on.

use std::io;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::errors::{Cause, error_object};
use crate::upstream::connect::{Pipe, PipeConnect};

/// The read buffer of the pump.
const PUMP_BYTES: usize = 64 * 1024;
/// How long a pump that was told to stop gets to give back the output.
const PUMP_STOP: Duration = Duration::from_millis(500);

/// The output of the connection, with or without a pipe to the server.
pub(super) enum Out<W> {
    Direct(W),
    Linked(Link<W>),
}

/// A pipe to the server whose output a pump copies to the output of the connection.
pub(super) struct Link<W> {
    write: Box<dyn AsyncWrite + Unpin + Send>,
    pump: JoinHandle<W>,
    stop: CancellationToken,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Out<W> {
    /// The pipe to the server, made at the first need.
    pub(super) fn link(self, connect: &PipeConnect) -> io::Result<Link<W>> {
        match self {
            Out::Linked(link) => Ok(link),
            Out::Direct(output) => {
                let Pipe { read, write } = connect.connect()?;
                let stop = CancellationToken::new();
                let pump = tokio::spawn(pump(read, output, stop.clone()));
                Ok(Link { write, pump, stop })
            }
        }
    }

    /// Hands one line to the server, which answers on the output.
    pub(super) async fn forward(
        self,
        connect: &PipeConnect,
        mut line: Vec<u8>,
    ) -> io::Result<Out<W>> {
        let mut link = self.link(connect)?;
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        link.write.write_all(&line).await?;
        link.write.flush().await?;
        Ok(Out::Linked(link))
    }

    /// Answers the request `id` with -32601 (`Discover::Refuse`; the server never sees it).
    pub(super) async fn refuse(&mut self, id: Value) -> io::Result<()> {
        let frame =
            json!({"jsonrpc":"2.0","id":id,"error":error_object(Cause::MethodNotFound, None)});
        let mut line = serde_json::to_vec(&frame).map_err(io::Error::other)?;
        line.push(b'\n');
        match self {
            Out::Direct(output) => {
                output.write_all(&line).await?;
                output.flush().await
            }
            // The policy refuses before any pipe is made; a pipe would own the output.
            Out::Linked(_) => Ok(()),
        }
    }

    /// The output for the bridge: a pipe to the server closes first, and its pump writes the
    /// rest of the server's answers (at most `grace`).
    pub(super) async fn into_output(self, grace: Duration) -> io::Result<W> {
        match self {
            Out::Direct(output) => Ok(output),
            Out::Linked(link) => link.close(grace).await,
        }
    }

    /// The end before a path: a pipe to the server closes (at most `grace`).
    pub(super) async fn finish(self, grace: Duration) {
        if let Out::Linked(link) = self {
            let _ = link.close(grace).await;
        }
    }
}

impl<W: Send + 'static> Link<W> {
    /// Closes the server's input; the pump copies what the server still writes until it
    /// closes its output or `grace` ends.
    async fn close(mut self, grace: Duration) -> io::Result<W> {
        let _ = tokio::time::timeout(grace, self.write.shutdown()).await;
        if let Ok(done) = tokio::time::timeout(grace, &mut self.pump).await {
            return done.map_err(io::Error::other);
        }
        self.stop.cancel();
        match tokio::time::timeout(PUMP_STOP, self.pump).await {
            Ok(done) => done.map_err(io::Error::other),
            Err(_) => Err(io::Error::other("the output does not take more bytes")),
        }
    }
}

/// The server's own path: the bytes already read, then the rest of the input, go to the
/// server's pipe unchanged; its output goes to the output. At the end of input the server's
/// input closes, and its requests in flight get `grace` to write their responses; then the
/// pipe is dropped. The path also ends when the server closes its output.
pub(super) async fn serve_server<R, W>(link: Link<W>, mut input: R, grace: Duration)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let Link {
        mut write,
        mut pump,
        stop,
    } = link;
    let server_ended = tokio::select! {
        _ = tokio::io::copy(&mut input, &mut write) => false,
        _ = &mut pump => true,
    };
    if server_ended {
        return;
    }
    let _ = tokio::time::timeout(grace, write.shutdown()).await;
    if tokio::time::timeout(grace, &mut pump).await.is_err() {
        stop.cancel();
        let _ = tokio::time::timeout(PUMP_STOP, pump).await;
    }
}

/// Copies the server's lines to `output`, each line whole, until the server closes its
/// output, `output` fails, or `stop`; gives `output` back.
async fn pump<W: AsyncWrite + Unpin>(
    read: Box<dyn AsyncRead + Unpin + Send>,
    mut output: W,
    stop: CancellationToken,
) -> W {
    let mut reader = BufReader::with_capacity(PUMP_BYTES, read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = tokio::select! {
            read = reader.read_until(b'\n', &mut line) => read,
            () = stop.cancelled() => break,
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let wrote = tokio::select! {
            wrote = write_line(&mut output, &line, reader.buffer().is_empty()) => wrote,
            () = stop.cancelled() => break,
        };
        if wrote.is_err() {
            break;
        }
    }
    let _ = tokio::time::timeout(PUMP_STOP, output.flush()).await;
    output
}

async fn write_line<W: AsyncWrite + Unpin>(
    output: &mut W,
    line: &[u8],
    flush: bool,
) -> io::Result<()> {
    output.write_all(line).await?;
    if flush {
        output.flush().await?;
    }
    Ok(())
}
