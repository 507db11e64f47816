//! R7 and docs/architecture.md principle 4: the one writer type of the bridge, for each of its
//! two sinks (stdout toward VS Code, and the stdin of the upstream command or of the server in
//! the process): one frame per line, in the order in which the bridge sent the frames. The
//! writer is the lane ([`super::lane`]) with its task: a frame goes out at once from the task
//! that sends it while nothing waits, else through the writer task's queue. At its end the
//! writer flushes and shuts its sink down, so that the reader of the sink reads the end.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;

use super::lane::Lane;
use super::out::Frame;

/// How many bytes of frames may wait for stdout before the upstream reader pauses
/// (docs/architecture.md principle 7): when VS Code reads stdout slowly or not at all, the upstream server then
/// blocks on its own stdout instead of the bridge buffering without a bound.
pub const ROOM_BYTES: usize = 32 << 20;

enum Out {
    Frame(Frame),
    Close,
}

/// The queue of the writer. Cloning it is cheap; every clone feeds the same writer.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Out>,
    room: Room,
    lane: Arc<Lane>,
}

/// The bytes queued for stdout, shared by the outbox and the writer, so that a reader of the
/// upstream can wait until there is room (backpressure instead of an unbounded queue).
#[derive(Clone)]
pub struct Room {
    queued: Arc<AtomicUsize>,
    drained: Arc<Notify>,
    /// The writer ended: nothing drains any more, and nobody waits for room.
    ended: Arc<AtomicBool>,
    limit: usize,
}

impl Room {
    fn new(limit: usize) -> Room {
        Room {
            queued: Arc::new(AtomicUsize::new(0)),
            drained: Arc::new(Notify::new()),
            ended: Arc::new(AtomicBool::new(false)),
            limit,
        }
    }

    /// A room that never waits: a writer whose sink needs no bound of its own (the upstream's
    /// input), and tests of a transport without a writer of stdout.
    pub fn unlimited() -> Room {
        Room::new(usize::MAX)
    }

    /// The bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// Waits until the queued bytes are at most the limit, or the writer has ended.
    pub async fn wait(&self) {
        // The fast path is two atomic loads: the upstream reader calls this for every line.
        while !self.has_room() {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so that a drain between the check and the await
            // still wakes this waiter.
            drained.as_mut().enable();
            if self.has_room() {
                return;
            }
            drained.await;
        }
    }

    fn has_room(&self) -> bool {
        self.queued() <= self.limit || self.ended.load(Ordering::Acquire)
    }

    fn written(&self, bytes: usize) {
        self.queued.fetch_sub(bytes, Ordering::AcqRel);
        self.drained.notify_waiters();
    }

    fn end(&self) {
        self.ended.store(true, Ordering::Release);
        self.drained.notify_waiters();
    }
}

impl Outbox {
    /// Queues one frame. The frame is serialized here, on the task of the caller, so that the
    /// writer only copies bytes. Returns false when the writer has ended.
    pub fn send(&self, frame: &Value) -> bool {
        match frame_line(frame) {
            Some(bytes) => self.send_frame(Frame::from(bytes)),
            None => false,
        }
    }

    /// Queues one frame that is already bytes (a result passed through: a hot-path choice of bridge/README.md).
    pub fn send_frame(&self, frame: Frame) -> bool {
        self.lane.send(frame, |frame| {
            // Only a queued frame takes room: one written at once is in the pipe already.
            let len = frame.len();
            self.room.queued.fetch_add(len, Ordering::AcqRel);
            if self.tx.send(Out::Frame(frame)).is_ok() {
                true
            } else {
                self.room.written(len);
                false
            }
        })
    }

    /// The room of this writer, for the reader of the upstream.
    pub fn room(&self) -> Room {
        self.room.clone()
    }

    /// Ends the writer after the frames queued before.
    pub fn close(&self) {
        self.lane.queue(|| self.tx.send(Out::Close).is_ok());
    }
}

/// One frame as one line: the JSON text and its `\n`, in one buffer that never grows again
/// (the writer writes it as it is).
pub fn frame_line(frame: &Value) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(256);
    serde_json::to_writer(&mut bytes, frame).ok()?;
    bytes.push(b'\n');
    Some(bytes)
}

/// Starts the writer task on `sink`, with [`ROOM_BYTES`] of room (stdout). It ends at
/// [`Outbox::close`], when every outbox is dropped, or at the first write error (the reader
/// closed its end).
pub fn spawn_writer<W>(sink: W) -> (Outbox, JoinHandle<io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    spawn_writer_in(sink, Room::new(ROOM_BYTES))
}

/// [`spawn_writer`] with the room that its queued frames take.
pub fn spawn_writer_in<W>(sink: W, room: Room) -> (Outbox, JoinHandle<io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let lane = Arc::new(Lane::new(crate::wire::stdio_pipes::direct_of(&sink)));
    let handle = tokio::spawn(write_loop(sink, rx, room.clone(), Arc::clone(&lane)));
    (Outbox { tx, room, lane }, handle)
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut sink: W,
    rx: mpsc::UnboundedReceiver<Out>,
    room: Room,
    lane: Arc<Lane>,
) -> io::Result<()> {
    let result = write_frames(&mut sink, rx, &room, &lane).await;
    // The lane lets go of its handle of a pipe first, so that the pipe closes with `sink`.
    lane.end();
    room.end();
    let _ = sink.shutdown().await;
    result
}

async fn write_frames<W: AsyncWrite + Unpin>(
    sink: &mut W,
    mut rx: mpsc::UnboundedReceiver<Out>,
    room: &Room,
    lane: &Lane,
) -> io::Result<()> {
    while let Some(out) = rx.recv().await {
        match out {
            Out::Frame(frame) => {
                let len = write_frame(sink, &frame).await?;
                room.written(len);
                lane.written(|| rx.is_empty());
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

/// Writes the pieces of one frame in order; returns its length.
async fn write_frame<W: AsyncWrite + Unpin>(sink: &mut W, frame: &Frame) -> io::Result<usize> {
    let mut len = 0;
    for piece in frame.pieces() {
        sink.write_all(piece).await?;
        len += piece.len();
    }
    Ok(len)
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

    #[tokio::test]
    async fn room_waits_while_the_reader_of_stdout_lags_and_resumes_when_it_reads() {
        // A pipe of 64 bytes that nobody reads yet: the writer blocks on the first frames.
        let (client, mut server) = tokio::io::duplex(64);
        let (outbox, _handle) = spawn_writer_in(client, Room::new(100));
        let room = outbox.room();
        for i in 0..10 {
            assert!(outbox.send(&json!({"jsonrpc":"2.0","id":i,"result":{}})));
        }
        assert!(room.queued() > 100);
        let waiting = tokio::spawn({
            let room = room.clone();
            async move { room.wait().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "no room while stdout is not read");
        let mut sink = Vec::new();
        let read = tokio::spawn(async move {
            tokio::io::AsyncReadExt::read_to_end(&mut server, &mut sink).await
        });
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("room within the bound once stdout is read")
            .expect("task");
        outbox.close();
        drop(outbox);
        let _ = read.await;
    }

    #[tokio::test]
    async fn room_never_waits_after_the_writer_ended() {
        let (client, server) = tokio::io::duplex(64);
        drop(server);
        let (outbox, handle) = spawn_writer_in(client, Room::new(10));
        assert!(
            outbox.send(&json!({"jsonrpc":"2.0","id":1,"result":{"text":"a long enough frame"}}))
        );
        assert!(handle.await.expect("task").is_err(), "stdout closed");
        tokio::time::timeout(std::time::Duration::from_secs(5), outbox.room().wait())
            .await
            .expect("an ended writer never holds the reader");
    }
}
