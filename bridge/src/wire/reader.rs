//! The line reader of both sides: newline-delimited frames with a length limit.
//!
//! A line longer than the limit is skipped to its end without being kept in memory; only its
//! first and last 256 bytes stay, so that the id can be recovered for the error.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Bytes kept from the start and from the end of a line that is too long.
pub const KEEP_BYTES: usize = 256;
/// The read buffer: big enough that a 16 MiB result takes few system calls.
const BUFFER_BYTES: usize = 256 * 1024;

/// One read of the reader.
#[derive(Debug, PartialEq, Eq)]
pub enum RawLine {
    /// A line without its `\n` and without one trailing `\r`.
    Line(Vec<u8>),
    /// A line over the limit: its first and last bytes.
    TooLong { head: Vec<u8>, tail: Vec<u8> },
    /// The end of the input.
    Eof,
}

/// Reads lines of at most `max` bytes.
///
/// [`LineReader::next`] is cancel-safe: the part of a line read so far stays in the reader,
/// so a `select!` may drop the future and call `next` again without losing a byte (the
/// dispatch of VS Code's lines reads stdin this way, without a task of its own).
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    /// The line in progress.
    line: Vec<u8>,
    /// The head and tail of a line in progress that passed `max`.
    over: Option<(Vec<u8>, Vec<u8>)>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(BUFFER_BYTES, inner),
            max,
            line: Vec::new(),
            over: None,
        }
    }

    /// The next line that is not blank (spaces and tabs only), or the end of input.
    /// Cancel-safe (see [`LineReader`]).
    pub async fn next(&mut self) -> io::Result<RawLine> {
        loop {
            match self.next_raw().await? {
                RawLine::Line(line) if line.iter().all(|b| *b == b' ' || *b == b'\t') => continue,
                other => return Ok(other),
            }
        }
    }

    async fn next_raw(&mut self) -> io::Result<RawLine> {
        loop {
            // The only await: everything after it runs to the end of the chunk, so a
            // cancellation here loses nothing.
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                // A last line without a newline still counts.
                if self.line.is_empty() && self.over.is_none() {
                    return Ok(RawLine::Eof);
                }
                return Ok(self.take_line());
            }
            let (chunk, used, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            match self.over.as_mut() {
                Some((head, tail)) => {
                    // The head fills up to KEEP_BYTES whatever the chunks: a line that passed
                    // the limit in a small chunk gets the same head as in one large chunk.
                    let room = KEEP_BYTES.saturating_sub(head.len()).min(chunk.len());
                    head.extend_from_slice(&chunk[..room]);
                    keep_tail(tail, chunk);
                }
                None if self.line.len() + chunk.len() > self.max => {
                    let before = std::mem::take(&mut self.line);
                    let mut head = before[..before.len().min(KEEP_BYTES)].to_vec();
                    head.extend_from_slice(&chunk[..chunk.len().min(KEEP_BYTES)]);
                    head.truncate(KEEP_BYTES);
                    let mut tail = Vec::new();
                    keep_tail(
                        &mut tail,
                        &before[before.len().saturating_sub(KEEP_BYTES)..],
                    );
                    keep_tail(&mut tail, chunk);
                    self.over = Some((head, tail));
                }
                None => self.line.extend_from_slice(chunk),
            }
            self.inner.consume(used);
            if done {
                return Ok(self.take_line());
            }
        }
    }
}

impl<R> LineReader<R> {
    /// The line in progress, ended; the reader is ready for the next one.
    fn take_line(&mut self) -> RawLine {
        finish(std::mem::take(&mut self.line), self.over.take())
    }
}

fn keep_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    if chunk.len() >= KEEP_BYTES {
        tail.clear();
        tail.extend_from_slice(&chunk[chunk.len() - KEEP_BYTES..]);
    } else {
        tail.extend_from_slice(chunk);
        if tail.len() > KEEP_BYTES {
            tail.drain(..tail.len() - KEEP_BYTES);
        }
    }
}

fn finish(mut line: Vec<u8>, over: Option<(Vec<u8>, Vec<u8>)>) -> RawLine {
    match over {
        Some((head, mut tail)) => {
            if tail.last() == Some(&b'\r') {
                tail.pop();
            }
            RawLine::TooLong { head, tail }
        }
        None => {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            RawLine::Line(line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls `next` once: it takes what is there and is then dropped, as by a `select!`.
    async fn poll_once<R: AsyncRead + Unpin>(reader: &mut LineReader<R>) {
        tokio::select! {
            biased;
            line = reader.next() => panic!("no line is complete yet: {line:?}"),
            () = std::future::ready(()) => {}
        }
    }

    #[tokio::test]
    async fn a_line_in_progress_survives_a_dropped_next() {
        use tokio::io::AsyncWriteExt;
        let (mut w, r) = tokio::io::duplex(1 << 16);
        let mut reader = LineReader::new(r, 16);
        assert!(w.write_all(b"{\"a\":").await.is_ok());
        poll_once(&mut reader).await;
        assert!(w.write_all(b"1}\n0123456789").await.is_ok());
        assert_eq!(
            reader.next().await.ok(),
            Some(RawLine::Line(b"{\"a\":1}".to_vec()))
        );
        // A line over the limit in progress keeps its head and tail across a drop too.
        poll_once(&mut reader).await;
        assert!(w.write_all(b"abcdefghij\n").await.is_ok());
        assert_eq!(
            reader.next().await.ok(),
            Some(RawLine::TooLong {
                head: b"0123456789abcdefghij".to_vec(),
                tail: b"0123456789abcdefghij".to_vec(),
            })
        );
        drop(w);
        assert_eq!(reader.next().await.ok(), Some(RawLine::Eof));
    }

    async fn read_all(input: &[u8], max: usize) -> Vec<RawLine> {
        let mut r = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            match r.next().await {
                Ok(RawLine::Eof) => return out,
                Ok(line) => out.push(line),
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[tokio::test]
    async fn r7_lines_crlf_blank_and_last_line_without_newline() {
        let got = read_all(b"a\r\n\n  \t\n{\"b\":1}\nlast", 100).await;
        assert_eq!(
            got,
            vec![
                RawLine::Line(b"a".to_vec()),
                RawLine::Line(b"{\"b\":1}".to_vec()),
                RawLine::Line(b"last".to_vec())
            ]
        );
        assert!(read_all(b"", 10).await.is_empty());
    }

    #[tokio::test]
    async fn line_at_the_limit_passes_and_one_over_is_too_long() {
        let got = read_all(b"12345\n123456\nok\n", 5).await;
        assert_eq!(got[0], RawLine::Line(b"12345".to_vec()));
        assert_eq!(
            got[1],
            RawLine::TooLong {
                head: b"123456".to_vec(),
                tail: b"123456".to_vec()
            }
        );
        assert_eq!(got[2], RawLine::Line(b"ok".to_vec()));
    }

    #[tokio::test]
    async fn long_line_keeps_head_and_tail_only() {
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"id\":7,");
        input.extend(std::iter::repeat_n(b'x', 3 * BUFFER_BYTES));
        input.extend_from_slice(b",\"end\":1}\r\nnext\n");
        let got = read_all(&input, 1000).await;
        match &got[0] {
            RawLine::TooLong { head, tail } => {
                assert_eq!(head.len(), KEEP_BYTES);
                assert!(head.starts_with(b"{\"id\":7,"));
                assert_eq!(tail.len(), KEEP_BYTES - 1);
                assert!(tail.ends_with(b",\"end\":1}"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(got[1], RawLine::Line(b"next".to_vec()));
    }

    /// A reader that gives `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl tokio::io::AsyncRead for Trickle<'_> {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            let n = self.step.min(self.data.len()).min(buf.remaining());
            buf.put_slice(&self.data[..n]);
            self.data = &self.data[n..];
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_in_small_chunks_keeps_a_full_head() {
        let line: Vec<u8> = (0..600u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut input = line.clone();
        input.push(b'\n');
        for step in [1, 7, 20, 600] {
            let mut r = LineReader::new(Trickle { data: &input, step }, 16);
            match r.next().await {
                Ok(RawLine::TooLong { head, tail }) => {
                    assert_eq!(head, line[..KEEP_BYTES], "step {step}");
                    assert_eq!(tail, line[line.len() - KEEP_BYTES..], "step {step}");
                }
                other => panic!("step {step}: {other:?}"),
            }
        }
    }
}
