//! JSON-RPC line framing over any `AsyncRead`/`AsyncWrite` (the stdio transport of every
//! revision): one frame per line, each line at most `--max-line-bytes`.
//!
//! [`LineLink`] is the framing alone: the bridge's one writer type ([`crate::wire::writer`])
//! on the write side, a reader task on the other. [`LineTransport`] is the one transport of
//! lines: over the pipes of the upstream command (its supervision in [`super::child`]), or
//! over any pair of streams, for example an in-memory pipe to a server in the same process.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, watch};

use super::events::Events;
use super::{Ended, Outgoing, Transport, TransportEvent};
use crate::wire::reader::{LineReader, RawLine};
use crate::wire::writer::{Outbox, Room, spawn_writer_in};

/// The two halves of a line-framed connection: the writer of the frames, and a reader task
/// that turns each line into a [`TransportEvent::Line`].
#[derive(Clone)]
pub struct LineLink {
    /// The upstream's input takes frames without a bound of its own: its frames are VS
    /// Code's requests, which the table of requests in flight bounds.
    writer: Outbox,
    /// Notified once when the read side ends (end of input or a read error).
    pub read_closed: Arc<Notify>,
}

impl LineLink {
    /// Starts the writer and the reader tasks. The reader waits for `room` before each line,
    /// so that a line waits in the peer's pipe, not in the memory of the bridge, while VS Code
    /// does not read (backpressure).
    pub fn spawn<R, W>(
        read: R,
        write: W,
        max_line_bytes: usize,
        events: Events,
        room: Room,
    ) -> LineLink
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (writer, _) = spawn_writer_in(write, Room::unlimited());
        let read_closed = Arc::new(Notify::new());
        tokio::spawn(read_loop(
            read,
            max_line_bytes,
            events,
            Arc::clone(&read_closed),
            room,
        ));
        LineLink {
            writer,
            read_closed,
        }
    }

    /// Sends one frame (a request with its members as received); false when the writer has
    /// stopped.
    pub fn send(&self, frame: Outgoing<'_>) -> bool {
        match frame {
            Outgoing::Request(request) => self.writer.send_frame(request.line()),
            Outgoing::Message(message) => self.writer.send(message),
        }
    }

    /// Closes the write side after the frames sent before (the first step of a stop).
    pub fn close(&self) {
        self.writer.close();
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    input: R,
    max: usize,
    events: Events,
    closed: Arc<Notify>,
    room: Room,
) {
    let mut reader = LineReader::new(input, max);
    loop {
        room.wait().await;
        match reader.next().await {
            Ok(RawLine::Eof) | Err(_) => break,
            Ok(line) => {
                if !events.send(TransportEvent::Line(line)) {
                    break;
                }
            }
        }
    }
    let _ = events.send(TransportEvent::Closed);
    closed.notify_one();
}

/// The one transport of lines: the upstream command's pipes, or a pair of streams without a
/// process.
pub struct LineTransport {
    link: LineLink,
    end: watch::Receiver<Option<Ended>>,
    stopper: Stopper,
}

/// How the stop of a transport of lines goes on after its first step.
pub(super) enum Stopper {
    /// The supervisor of the upstream command runs the stop sequence of R7 (it closes the
    /// child's stdin first).
    Process(Arc<Notify>),
    /// A pair of streams: the bridge closes its side, and the peer gets `grace` to close its
    /// own (None: until it does).
    Pipe {
        end_tx: Arc<watch::Sender<Option<Ended>>>,
        grace: Option<Duration>,
    },
}

impl LineTransport {
    /// A transport over `link` that ends when `end` says so and stops by `stopper`.
    pub(super) fn new(
        link: LineLink,
        end: watch::Receiver<Option<Ended>>,
        stopper: Stopper,
    ) -> Arc<LineTransport> {
        Arc::new(LineTransport { link, end, stopper })
    }

    /// A transport over a pair of streams for a server in the same process (the embedded
    /// bridge; the tests' pairs with no `grace`, which wait for the peer): it has no process to
    /// signal, so after the end of its input it gets `grace` to close its side,
    /// as a child gets before its termination signal, and then the stop goes on without it (an
    /// rmcp server can hold its side for its own drain time when the end of input meets a
    /// listen stream that is being opened).
    pub fn spawn_with_grace<R, W>(
        read: R,
        write: W,
        max_line_bytes: usize,
        events: Events,
        room: Room,
        grace: Option<Duration>,
    ) -> Arc<LineTransport>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let link = LineLink::spawn(read, write, max_line_bytes, events.clone(), room);
        let (end_tx, end) = watch::channel(None);
        let end_tx = Arc::new(end_tx);
        let closed = Arc::clone(&link.read_closed);
        let ends = Arc::clone(&end_tx);
        tokio::spawn(async move {
            closed.notified().await;
            let ended = Ended { exit: None };
            let _ = events.send(TransportEvent::Ended(ended));
            let _ = ends.send(Some(ended));
        });
        LineTransport::new(link, end, Stopper::Pipe { end_tx, grace })
    }
}

impl Transport for LineTransport {
    fn send(&self, frame: Outgoing<'_>) -> bool {
        self.link.send(frame)
    }

    fn cancel(&self, _id: i64, frame: &Value) {
        self.link.send(Outgoing::Message(frame));
    }

    fn stop(&self) {
        match &self.stopper {
            // notify_one keeps a permit, so a stop before the supervisor waits is not lost.
            Stopper::Process(stop) => stop.notify_one(),
            Stopper::Pipe { end_tx, grace } => {
                self.link.close();
                if let (Some(grace), Ok(runtime)) = (*grace, tokio::runtime::Handle::try_current())
                {
                    let end_tx = Arc::clone(end_tx);
                    runtime.spawn(async move {
                        tokio::time::sleep(grace).await;
                        end_tx.send_if_modified(|end| {
                            let waited_out = end.is_none();
                            if waited_out {
                                *end = Some(Ended { exit: None });
                            }
                            waited_out
                        });
                    });
                }
            }
        }
    }

    fn end_watch(&self) -> watch::Receiver<Option<Ended>> {
        self.end.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::envelope::RequestFrame;
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn frames_go_out_as_lines_and_lines_come_back_as_events() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (our_read, our_write) = tokio::io::split(ours);
        let (their_read, mut their_write) = tokio::io::split(theirs);
        let (tx, mut rx) = crate::upstream::events::channel();
        let t =
            LineTransport::spawn_with_grace(our_read, our_write, 1024, tx, Room::unlimited(), None);
        let params = crate::wire::lazy::LazyObject::new();
        let frame = RequestFrame::new(1, "tools/list", &params, b"{}".to_vec());
        assert!(t.send(Outgoing::Request(&frame)));
        let mut peer = BufReader::new(their_read).lines();
        assert_eq!(
            peer.next_line().await.ok().flatten().as_deref(),
            Some(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{}}}"
            )
        );
        their_write
            .write_all(b"{\"id\":1,\"result\":{}}\n")
            .await
            .ok();
        match rx.recv().await {
            Some(TransportEvent::Line(RawLine::Line(l))) => {
                assert_eq!(l, b"{\"id\":1,\"result\":{}}")
            }
            other => panic!("{other:?}"),
        }
        drop(their_write);
        drop(peer);
        assert!(matches!(rx.recv().await, Some(TransportEvent::Closed)));
        assert!(matches!(
            rx.recv().await,
            Some(TransportEvent::Ended(Ended { exit: None }))
        ));
        let mut end = t.end_watch();
        assert!(end.wait_for(Option::is_some).await.is_ok());
    }

    #[tokio::test]
    async fn the_stop_waits_for_a_server_in_the_process_only_its_grace() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (our_read, our_write) = tokio::io::split(ours);
        let (tx, _rx) = crate::upstream::events::channel();
        let grace = Some(std::time::Duration::from_millis(50));
        let t = LineTransport::spawn_with_grace(
            our_read,
            our_write,
            1024,
            tx,
            Room::unlimited(),
            grace,
        );
        // The peer keeps its side open (`theirs` lives to the end of the test).
        t.stop();
        let mut end = t.end_watch();
        let waited = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            end.wait_for(Option::is_some),
        )
        .await;
        assert!(waited.is_ok(), "the stop ends after the grace");
        drop(theirs);
    }

    #[tokio::test]
    async fn the_stop_closes_the_write_side_after_the_queued_frames() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (our_read, our_write) = tokio::io::split(ours);
        let (their_read, _their_write) = tokio::io::split(theirs);
        let (tx, _rx) = crate::upstream::events::channel();
        let t =
            LineTransport::spawn_with_grace(our_read, our_write, 1024, tx, Room::unlimited(), None);
        t.cancel(3, &json!({"method":"notifications/cancelled"}));
        t.stop();
        let mut peer = BufReader::new(their_read).lines();
        assert!(peer.next_line().await.ok().flatten().is_some());
        assert_eq!(peer.next_line().await.ok().flatten(), None);
    }
}
