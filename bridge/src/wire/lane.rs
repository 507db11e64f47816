//! The lane of one writer (stdout, or the stdin of the upstream command): frames leave in the
//! order in which they were sent, and one lock decides who writes the next one.
//!
//! While the writer task has nothing in hand and the sink is a pipe on the reactor, the task
//! that sends a frame writes it at once, without waiting (a hot-path choice of bridge/README.md: the hop to the writer task
//! cost a wake-up and a poll on every message, in both directions). Everything else goes to
//! the writer's queue: a frame while earlier ones wait, a frame that a full pipe does not
//! take, and the rest of a frame that it takes in part. Because both decisions happen under
//! the lock, and a frame is only written at once while the queue is empty, the order of the
//! lane is the order of the sends (R7, docs/architecture.md principle 4: the lane is the one place that
//! orders the frames of its sink).

use std::io::{self, IoSlice};
use std::sync::{Arc, Mutex, MutexGuard};

use super::out::Frame;

/// A sink that takes bytes without waiting, or says that it would block.
pub trait TryWrite: Send + Sync {
    fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
}

#[cfg(unix)]
impl TryWrite for tokio::net::unix::pipe::Sender {
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        tokio::net::unix::pipe::Sender::try_write(self, buf)
    }

    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        tokio::net::unix::pipe::Sender::try_write_vectored(self, bufs)
    }
}

/// A frame of more pieces than this goes to the queue: one system call takes at most this
/// many (small frames are one piece).
const MAX_PIECES: usize = 8;

/// The lane of one sink; the senders and the writer task share it.
pub struct Lane {
    state: Mutex<State>,
}

struct State {
    /// The writer task has frames in its queue or in hand.
    busy: bool,
    /// The sink, where it can be written without waiting; `None` once the writer ended, so
    /// that the sink closes with the writer's own handle.
    direct: Option<Arc<dyn TryWrite>>,
}

impl Lane {
    pub fn new(direct: Option<Arc<dyn TryWrite>>) -> Lane {
        Lane {
            state: Mutex::new(State {
                busy: false,
                direct,
            }),
        }
    }

    /// Sends `frame`: written at once where the lane allows it, else (or its rest) handed to
    /// `queue`, the writer's queue. Returns true when the frame was written, else what `queue`
    /// returned (false: the writer ended).
    pub fn send(&self, frame: Frame, queue: impl FnOnce(Frame) -> bool) -> bool {
        let mut state = self.lock();
        let mut frame = frame;
        if !state.busy
            && let Some(sink) = &state.direct
        {
            match write_now(sink.as_ref(), frame) {
                None => return true,
                Some(rest) => frame = rest,
            }
        }
        state.busy = true;
        queue(frame)
    }

    /// Hands something to the writer's queue (the end of the writer), after every frame sent
    /// before; no frame is written at once until the writer drained its queue.
    pub fn queue(&self, queue: impl FnOnce() -> bool) -> bool {
        let mut state = self.lock();
        state.busy = true;
        queue()
    }

    /// The writer task wrote a frame: once `drained` says that its queue is empty, the next
    /// frame may be written at once again. Asked under the lock, so that no send can queue a
    /// frame between the answer and the change.
    pub fn written(&self, drained: impl FnOnce() -> bool) {
        let mut state = self.lock();
        if drained() {
            state.busy = false;
        }
    }

    /// The writer ended: every later frame goes to its (closed) queue, and the sink is
    /// released so that it closes with the writer's handle.
    pub fn end(&self) {
        let mut state = self.lock();
        state.busy = true;
        state.direct = None;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }
}

/// Writes as much of `frame` as `sink` takes now; gives back what is left (`None`: all of it
/// was written). An error, like a full pipe, leaves the frame to the writer task, which
/// waits for room or ends with the error itself.
fn write_now(sink: &dyn TryWrite, frame: Frame) -> Option<Frame> {
    if frame.pieces().count() > MAX_PIECES {
        return Some(frame);
    }
    let written = {
        let mut slices = [IoSlice::new(&[]); MAX_PIECES];
        let mut count = 0;
        for (slot, piece) in slices.iter_mut().zip(frame.pieces()) {
            *slot = IoSlice::new(piece);
            count += 1;
        }
        // Most frames are one piece: a plain write costs less than a vectored one.
        match &slices[..count] {
            [one] => sink.try_write(one),
            many => sink.try_write_vectored(many),
        }
    };
    match written {
        Ok(n) if n >= frame.len() => None,
        Ok(n) => Some(frame.skip(n)),
        Err(_) => Some(frame),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that takes at most `room` bytes, then would block.
    struct Sink {
        room: Mutex<usize>,
        taken: Mutex<Vec<u8>>,
    }

    impl TryWrite for Sink {
        fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
            self.try_write_vectored(&[IoSlice::new(buf)])
        }

        fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            let mut room = self.room.lock().expect("lock");
            if *room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(*room - n);
                self.taken
                    .lock()
                    .expect("lock")
                    .extend_from_slice(&b[..take]);
                n += take;
            }
            *room -= n;
            Ok(n)
        }
    }

    fn sink(room: usize) -> Arc<Sink> {
        Arc::new(Sink {
            room: Mutex::new(room),
            taken: Mutex::new(Vec::new()),
        })
    }

    #[test]
    fn r7_a_frame_is_written_at_once_only_while_the_writer_has_nothing_in_hand() {
        let s = sink(1 << 10);
        let lane = Lane::new(Some(s.clone() as Arc<dyn TryWrite>));
        let mut queued = Vec::new();
        assert!(lane.send(Frame::from(b"a\n".to_vec()), |_| unreachable!()));
        // The pipe is full: the frame goes to the queue, and so does the next one, although
        // the pipe has room again, so that it cannot overtake the first.
        *s.room.lock().expect("lock") = 0;
        assert!(lane.send(Frame::from(b"b\n".to_vec()), |f| {
            queued.push(f.to_vec());
            true
        }));
        *s.room.lock().expect("lock") = 1 << 10;
        assert!(lane.send(Frame::from(b"c\n".to_vec()), |f| {
            queued.push(f.to_vec());
            true
        }));
        assert_eq!(queued, [b"b\n".to_vec(), b"c\n".to_vec()]);
        // The writer drained its queue: frames are written at once again.
        lane.written(|| false);
        assert!(lane.send(Frame::from(b"d\n".to_vec()), |_| true));
        assert_eq!(
            s.taken.lock().expect("lock").as_slice(),
            b"a\n",
            "d still queued"
        );
        lane.written(|| true);
        assert!(lane.send(Frame::from(b"e\n".to_vec()), |_| unreachable!()));
        assert_eq!(s.taken.lock().expect("lock").as_slice(), b"a\ne\n");
    }

    #[test]
    fn r7_the_rest_of_a_partial_write_goes_to_the_queue() {
        let s = sink(3);
        let lane = Lane::new(Some(s.clone() as Arc<dyn TryWrite>));
        let mut rest = Vec::new();
        assert!(lane.send(Frame::from(b"abcdef\n".to_vec()), |f| {
            rest = f.to_vec();
            true
        }));
        assert_eq!(s.taken.lock().expect("lock").as_slice(), b"abc");
        assert_eq!(rest, b"def\n");
    }

    #[test]
    fn r7_after_the_end_every_frame_goes_to_the_closed_queue() {
        let s = sink(1 << 10);
        let lane = Lane::new(Some(s.clone() as Arc<dyn TryWrite>));
        lane.end();
        assert_eq!(Arc::strong_count(&s), 1, "the lane let go of the sink");
        assert!(!lane.send(Frame::from(b"x\n".to_vec()), |_| false));
        assert!(s.taken.lock().expect("lock").is_empty());
    }
}
