//! One outgoing frame as a list of byte pieces (a hot-path choice of bridge/README.md): the small parts are built in one
//! buffer, and a large member that is passed through goes out as the slice of the line it
//! came in, so that the frame never holds a second full copy of it.

use bytes::Bytes;
use serde::Serialize;

use super::scan::STOPS_PLAIN_RUN;

/// A member shorter than this is copied into the frame's own buffer: one write per small
/// frame matters more than a copy of a few KiB.
pub(crate) const COPY_BELOW: usize = 64 * 1024;

/// One frame, ready for a writer: its pieces, written in order, end with the `\n`.
#[derive(Clone, Debug)]
pub struct Frame {
    repr: Repr,
}

/// Most frames are small and made in one buffer: they keep it as it is, without the
/// allocations of a list of shared pieces (a hot-path choice of bridge/README.md: every response is a frame).
#[derive(Clone, Debug)]
enum Repr {
    One(Vec<u8>),
    Pieces(Vec<Bytes>),
}

impl Default for Frame {
    fn default() -> Frame {
        Frame {
            repr: Repr::One(Vec::new()),
        }
    }
}

impl Frame {
    /// The byte pieces of the line, in order.
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        let (one, many): (Option<&[u8]>, &[Bytes]) = match &self.repr {
            Repr::One(line) => (Some(line), &[]),
            Repr::Pieces(pieces) => (None, pieces),
        };
        one.into_iter().chain(many.iter().map(|b| &b[..]))
    }

    /// The length of the line in bytes.
    pub fn len(&self) -> usize {
        self.pieces().map(<[u8]>::len).sum()
    }

    /// The whole line in one buffer (tests, and transports that need one body).
    #[cfg(test)]
    pub fn to_vec(&self) -> Vec<u8> {
        if let Repr::One(line) = &self.repr {
            return line.clone();
        }
        let mut all = Vec::with_capacity(self.len());
        for piece in self.pieces() {
            all.extend_from_slice(piece);
        }
        all
    }
}

impl Frame {
    /// The frame without its first `n` bytes: the rest after a partial write. No piece is
    /// copied; a one-buffer frame becomes one shared piece.
    pub fn skip(self, n: usize) -> Frame {
        let pieces = match self.repr {
            Repr::One(line) => vec![Bytes::from(line)],
            Repr::Pieces(pieces) => pieces,
        };
        let mut left = n;
        let mut rest = Vec::with_capacity(pieces.len());
        for piece in pieces {
            if left >= piece.len() {
                left -= piece.len();
            } else {
                rest.push(piece.slice(left..));
                left = 0;
            }
        }
        Frame {
            repr: Repr::Pieces(rest),
        }
    }
}

impl From<Vec<u8>> for Frame {
    fn from(line: Vec<u8>) -> Frame {
        Frame {
            repr: Repr::One(line),
        }
    }
}

/// Builds a [`Frame`].
#[derive(Debug, Default)]
pub struct FrameBuf {
    pieces: Vec<Bytes>,
    current: Vec<u8>,
}

impl FrameBuf {
    #[cfg(test)]
    pub fn new() -> FrameBuf {
        FrameBuf::with_capacity(256)
    }

    /// A builder whose buffer holds `bytes` before it grows.
    pub fn with_capacity(bytes: usize) -> FrameBuf {
        FrameBuf {
            pieces: Vec::new(),
            current: Vec::with_capacity(bytes),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.current.extend_from_slice(bytes);
    }

    /// A slice of a received line: copied when short, else handed on without a copy.
    pub fn push_bytes(&mut self, bytes: &Bytes) {
        if bytes.len() < COPY_BELOW {
            self.current.extend_from_slice(bytes);
        } else {
            self.flush_current();
            self.pieces.push(bytes.clone());
        }
    }

    /// Any serializable value as compact JSON (a `Value`, a key, an id).
    pub fn push_value<T: Serialize + ?Sized>(&mut self, value: &T) {
        // Writing a Value or a string into a Vec cannot fail (no I/O, string keys only).
        let _ = serde_json::to_writer(&mut self.current, value);
    }

    /// A string as a JSON string (a key of an object). A string without a byte to escape,
    /// as most keys are, goes in as it is: serde_json would write the same bytes.
    pub fn push_value_str(&mut self, s: &str) {
        if s.bytes().any(|b| STOPS_PLAIN_RUN[usize::from(b)]) {
            return self.push_value(s);
        }
        self.current.push(b'"');
        self.current.extend_from_slice(s.as_bytes());
        self.current.push(b'"');
    }

    fn flush_current(&mut self) {
        if !self.current.is_empty() {
            let next = Vec::with_capacity(256);
            self.pieces
                .push(Bytes::from(std::mem::replace(&mut self.current, next)));
        }
    }

    /// The frame with its `\n`.
    pub fn into_line(mut self) -> Frame {
        self.current.push(b'\n');
        self.into_frame()
    }

    /// The frame as it is (without a `\n`).
    pub fn into_frame(mut self) -> Frame {
        if self.pieces.is_empty() {
            return Frame::from(self.current);
        }
        if !self.current.is_empty() {
            self.pieces.push(Bytes::from(self.current));
        }
        Frame {
            repr: Repr::Pieces(self.pieces),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_is_written_as_serde_json_writes_it() {
        for s in [
            "name",
            "",
            "a\"b",
            "a\\b",
            "tab\there",
            "\u{1}",
            "é€😀",
            "\u{7f}",
        ] {
            let mut f = FrameBuf::new();
            f.push_value_str(s);
            let expected = serde_json::to_vec(s).unwrap_or_default();
            assert_eq!(f.into_frame().to_vec(), expected, "{s:?}");
        }
    }

    #[test]
    fn small_parts_make_one_piece_and_a_large_slice_is_not_copied() {
        let mut f = FrameBuf::new();
        f.push(b"{\"a\":");
        f.push_bytes(&Bytes::from_static(b"\"short\""));
        f.push(b"}");
        let line = f.into_line();
        assert_eq!(line.pieces().count(), 1);
        assert_eq!(line.to_vec(), b"{\"a\":\"short\"}\n");

        let big = Bytes::from(vec![b'x'; COPY_BELOW]);
        let mut f = FrameBuf::new();
        f.push(b"[");
        f.push_bytes(&big);
        f.push(b"]");
        let line = f.into_line();
        assert_eq!(line.pieces().count(), 3);
        assert_eq!(
            line.pieces().nth(1).map(<[u8]>::as_ptr),
            Some(big.as_ptr()),
            "the same buffer"
        );
        assert_eq!(line.len(), COPY_BELOW + 3);
    }
}
