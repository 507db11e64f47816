//! R7 and DESIGN principle 4: exactly one task writes stdout, one frame per line, in the
//! order in which the bridge queued the frames.

use std::io;

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

enum Out {
    Frame(Vec<u8>),
    Close,
}

/// The queue of the writer. Cloning it is cheap; every clone feeds the same writer.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Out>,
}

impl Outbox {
    /// Queues one frame. The frame is serialized here, on the task of the caller, so that the
    /// writer only copies bytes. Returns false when the writer has ended.
    pub fn send(&self, frame: &Value) -> bool {
        match serde_json::to_vec(frame) {
            Ok(bytes) => self.tx.send(Out::Frame(bytes)).is_ok(),
            Err(_) => false,
        }
    }

    /// Ends the writer after the frames queued before.
    pub fn close(&self) {
        let _ = self.tx.send(Out::Close);
    }
}

/// Starts the writer task on `sink`. It ends at [`Outbox::close`], when every outbox is
/// dropped, or at the first write error (VS Code closed stdout).
pub fn spawn_writer<W>(sink: W) -> (Outbox, JoinHandle<io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let handle = tokio::spawn(write_loop(sink, rx));
    (Outbox { tx }, handle)
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut sink: W,
    mut rx: mpsc::UnboundedReceiver<Out>,
) -> io::Result<()> {
    while let Some(out) = rx.recv().await {
        match out {
            Out::Frame(mut bytes) => {
                bytes.push(b'\n');
                sink.write_all(&bytes).await?;
            }
            Out::Close => break,
        }
        // Flush when nothing else waits, so that a burst becomes one write and a single frame
        // is not held back.
        if rx.is_empty() {
            sink.flush().await?;
        }
    }
    sink.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn r7_one_frame_per_line_in_queue_order() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let (outbox, handle) = spawn_writer(client);
        assert!(outbox.send(&json!({"jsonrpc":"2.0","id":1,"result":{}})));
        assert!(outbox.send(&json!({"text":"a\nb"})));
        outbox.close();
        assert!(handle.await.is_ok());
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut server, &mut out)
            .await
            .ok();
        assert_eq!(
            out,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"text\":\"a\\nb\"}\n"
        );
        assert!(!outbox.send(&json!(1)), "closed writer refuses frames");
    }
}
