#![allow(clippy::unwrap_used)] // a test fails by its panic
//! Fuzzing on stable: the line reader, the parsers and the id recovery (the buffers that the reader returns are bounded by the limit, not by the line; the it tests' fault_matrix u12 measures the peak memory of a 1 GiB line). Each target is driven by a seeded generator
//! (`crate::test_support::values::Rng`) over generated and mutated inputs, and checks that
//! the rule does not panic, that it gives the same output for the same input, that it stays
//! within its limits, and the rule's own invariants. The generators and the number of
//! cases: `crate::test_support::fuzz`.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::test_support::fuzz::{cases, mutated, random_bytes, rng, seed_messages};
use crate::test_support::values::Rng;
use crate::wire::fast::{Fast, parse_fast};
use crate::wire::parse::{Message, Parsed, classify, parse_line, too_long, valid_id};
use crate::wire::reader::{KEEP_BYTES, LineReader, RawLine};
use crate::wire::recover::{recover_id, recover_leading_id, recover_trailing_id};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

// ---------------------------------------------------------------------------------------
// Target: the line reader

/// An input that gives its bytes in the chunk sizes of a seed.
struct Chunked {
    data: Vec<u8>,
    at: usize,
    rng: Rng,
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let left = self.data.len() - self.at;
        let want = 1 + (self.rng.next() as usize) % 70_000;
        let n = left.min(want).min(buf.remaining());
        let at = self.at;
        buf.put_slice(&self.data[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

fn read_all(
    runtime: &tokio::runtime::Runtime,
    data: &[u8],
    max: usize,
    chunks: u64,
) -> Vec<RawLine> {
    runtime.block_on(async {
        let input = Chunked {
            data: data.to_vec(),
            at: 0,
            rng: Rng(chunks),
        };
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            match reader.next().await.unwrap() {
                RawLine::Eof => break,
                line => out.push(line),
            }
        }
        out
    })
}

/// The line reader: the same lines for any chunking of the input, lines within the limit,
/// the head and tail of a long line at most KEEP_BYTES each, and the memory of one line
/// bounded by the limit, not by the length of the line.
#[test]
fn fuzz_line_reader() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut rng = rng(1);
    for case in 0..cases() / 10 {
        let max = [16usize, 300, 4096, 65_536][(rng.next() % 4) as usize];
        let mut data = Vec::new();
        for _ in 0..rng.next() % 8 {
            match rng.next() % 4 {
                0 => data.extend(mutated(&mut rng)),
                1 => {
                    let n = (rng.next() % 64) as usize;
                    data.extend(random_bytes(&mut rng, n))
                }
                2 => data.extend(std::iter::repeat_n(b'a', (rng.next() % 300_000) as usize)),
                _ => data.extend_from_slice(b" \t\r"),
            }
            data.push(b'\n');
        }
        let a = read_all(&runtime, &data, max, case);
        let b = read_all(&runtime, &data, max, case ^ 0xdead);
        assert_eq!(a, b, "case {case}: another chunking gave other lines");
        for line in &a {
            match line {
                RawLine::Line(l) => {
                    assert!(l.len() <= max, "case {case}");
                    // The memory of a line is bounded by the limit, not by the input.
                    assert!(
                        l.capacity() <= 2 * max + 256 * 1024,
                        "case {case}: {}",
                        l.capacity()
                    );
                    assert!(!l.contains(&b'\n'));
                }
                RawLine::TooLong { head, tail } => {
                    assert!(head.len() <= KEEP_BYTES && tail.len() <= KEEP_BYTES);
                    assert!(
                        head.capacity() <= 2 * max + 256 * 1024
                            && tail.capacity() <= 4 * KEEP_BYTES
                    );
                }
                RawLine::Eof => unreachable!(),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Target: the request parser and the id recovery

#[test]
fn fuzz_request_parser_and_id_recovery() {
    let mut rng = rng(2);
    for case in 0..cases() * 4 {
        let bytes = if case % 3 == 0 {
            let n = (rng.next() % 200) as usize;
            random_bytes(&mut rng, n)
        } else {
            mutated(&mut rng)
        };
        let parsed = parse_line(&bytes);
        assert_eq!(
            parsed,
            parse_line(&bytes),
            "case {case}: not the same output"
        );
        let cut = (rng.next() as usize) % (bytes.len() + 1);
        let head = &bytes[..cut.min(KEEP_BYTES)];
        let tail = &bytes[bytes.len().saturating_sub(KEEP_BYTES).max(cut)..];
        for id in [
            recover_id(head, tail),
            recover_leading_id(&bytes),
            recover_trailing_id(&bytes),
        ]
        .into_iter()
        .flatten()
        {
            assert!(valid_id(&id), "case {case}: recovered an invalid id {id}");
        }
        assert_eq!(recover_id(head, tail), recover_id(head, tail));
        let _ = too_long(head, tail, 1 << 20);
        // A line that is one JSON value parses as that value.
        if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
            assert_eq!(
                parsed,
                classify(v),
                "case {case}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}

/// The pass-through parse (a hot-path choice of bridge/README.md) takes only what the full parse reads the same way: a
/// line that it takes is one JSON value, and its id, method, params and result equal those of
/// the full parse. Real messages and their mutations (most of which are not JSON).
#[test]
fn fuzz_pass_through_parse_agrees_with_the_full_parse() {
    let mut rng = rng(9);
    let mut taken = 0;
    for case in 0..cases() * 4 {
        let bytes = if case % 2 == 0 {
            seed_messages(&mut rng)
        } else {
            mutated(&mut rng)
        };
        let Ok(fast) = parse_fast(bytes.clone()) else {
            continue;
        };
        taken += 1;
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            serde_json::from_slice::<Value>(&bytes).is_ok(),
            "case {case}: the pass-through took a line that is not JSON: {text}"
        );
        match (fast, parse_line(&bytes)) {
            (
                Fast::Request { id, method, params },
                Parsed::Message(Message::Request {
                    id: full_id,
                    method: full_method,
                    params: full_params,
                }),
            ) => assert_eq!(
                (id, method, params.map(|p| Value::Object(p.into_map()))),
                (full_id, full_method, full_params),
                "case {case}: {text}"
            ),
            (
                Fast::Response { id, result },
                Parsed::Message(Message::Response {
                    id: full_id,
                    body: Ok(full_result),
                }),
            ) => assert_eq!(
                (id, Value::Object(result.into_map())),
                (full_id, full_result),
                "case {case}: {text}"
            ),
            (fast, full) => panic!("case {case}: {fast:?}, but the full parse: {full:?}: {text}"),
        }
    }
    assert!(
        taken >= cases() / 8,
        "the pass-through took only {taken} lines"
    );
}
