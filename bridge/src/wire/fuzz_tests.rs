//! Fuzzing on stable: the line reader, the parsers, the id recovery and the frames that the
//! bridge writes (the buffers that the reader returns are bounded by the limit, not by the
//! line; the it tests' fault_matrix u12 measures the peak memory of a 1 GiB line). Each target
//! is driven by a seeded generator (`crate::test_support::values::Rng`) over generated and
//! mutated inputs and checks properties: round trips (parse, write, parse), the invariants of
//! the output (one frame per line, valid JSON-RPC, ids preserved) and bounds (no buffer past
//! the limits). Each counts the cases that reached its property and fails below a floor
//! (`assert_floor`). The generators and the number of cases: `crate::test_support::fuzz`.

use std::pin::Pin;
use std::task::{Context, Poll};

use crate::test_support::fuzz::{assert_floor, cases, mutated, random_bytes, rng, seed_messages};
use crate::test_support::values::Rng;
use crate::wire::fast::{Fast, parse_fast};
use crate::wire::frames::result_line;
use crate::wire::lazy::Body;
use crate::wire::parse::{Message, Parsed, classify, parse_line, too_long, valid_id};
use crate::wire::reader::{KEEP_BYTES, LineReader, RawLine};
use crate::wire::recover::{recover_id, recover_leading_id, recover_trailing_id};
use serde_json::{Value, json};
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
    let (mut lines, mut long) = (0, 0);
    let run = cases() / 10;
    for case in 0..run {
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
                    lines += 1;
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
                    long += 1;
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
    // Lines within the limit and lines past it, in most cases each.
    assert_floor("line reader: lines", lines, run, 1000);
    assert_floor("line reader: lines past the limit", long, run, 300);
}

// ---------------------------------------------------------------------------------------
// Target: the request parser and the id recovery

/// A message written back as the JSON-RPC line that it was read from.
fn write_message(message: &Message) -> Vec<u8> {
    let frame = match message {
        Message::Request { id, method, params } => {
            let mut f = json!({"jsonrpc":"2.0","id":id,"method":method});
            if let Some(p) = params {
                f["params"] = p.clone();
            }
            f
        }
        Message::Notification { method, params } => {
            let mut f = json!({"jsonrpc":"2.0","method":method});
            if let Some(p) = params {
                f["params"] = p.clone();
            }
            f
        }
        Message::Response { id, body: Ok(r) } => json!({"jsonrpc":"2.0","id":id,"result":r}),
        Message::Response { id, body: Err(e) } => json!({"jsonrpc":"2.0","id":id,"error":e}),
    };
    serde_json::to_vec(&frame).unwrap()
}

/// The full parse: a message that it reads, written back, reads as the same message (parse,
/// write, parse); the ids that it and the id recovery give are valid ids; a line that is one
/// JSON value parses as that value.
#[test]
fn fuzz_request_parser_and_id_recovery() {
    let mut rng = rng(2);
    let run = cases() * 4;
    let (mut messages, mut recovered) = (0, 0);
    for case in 0..run {
        let bytes = if case % 3 == 0 {
            let n = (rng.next() % 200) as usize;
            random_bytes(&mut rng, n)
        } else {
            mutated(&mut rng)
        };
        let parsed = parse_line(&bytes);
        match &parsed {
            Parsed::Message(m) => {
                messages += 1;
                let written = write_message(m);
                assert_eq!(
                    parse_line(&written),
                    parsed,
                    "case {case}: the round trip of {}",
                    String::from_utf8_lossy(&bytes)
                );
                if let Message::Request { id, .. } | Message::Response { id, .. } = m {
                    assert!(valid_id(id), "case {case}: an invalid id {id}");
                }
            }
            Parsed::Invalid { id, .. } => {
                assert!(id.is_null() || valid_id(id), "case {case}: the id {id}")
            }
            _ => {}
        }
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
            recovered += 1;
            assert!(valid_id(&id), "case {case}: recovered an invalid id {id}");
        }
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
    assert_floor("full parse: messages", messages, run, 60);
    assert_floor("id recovery: ids", recovered, run, 100);
}

/// The frames of the one writer's result line: one line that ends with its only newline (a
/// newline or a control character inside a value is escaped), valid JSON-RPC 2.0,
/// the id and the value as given, for results of both bodies (members kept as received, or
/// values).
#[test]
fn fuzz_result_frames_are_one_valid_line() {
    let mut rng = rng(10);
    let run = cases() * 2;
    let mut raw = 0;
    for case in 0..run {
        let id = if rng.next().is_multiple_of(2) {
            json!(rng.next())
        } else {
            Value::String(String::from_utf8_lossy(&random_bytes(&mut rng, 6)).into_owned())
        };
        let result = crate::test_support::values::value(&mut rng, 4);
        let result = match result {
            Value::Object(_) => result,
            other => json!({"content":[{"type":"text","text":"\n\u{2028}"}],"v":other}),
        };
        // The pass-through body: the members of a response line of the upstream, as received.
        let line = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":1,"result":result})).unwrap();
        let body = match parse_fast(line) {
            Ok(Fast::Response { result, .. }) => {
                raw += 1;
                Body::Object(result)
            }
            _ => Body::Value(result.clone()),
        };
        let out = result_line(&id, &body).to_vec();
        assert_eq!(out.last(), Some(&b'\n'), "case {case}");
        assert_eq!(
            out.iter().filter(|b| **b == b'\n').count(),
            1,
            "case {case}: one line"
        );
        let frame: Value = serde_json::from_slice(&out).expect("a JSON line");
        assert_eq!(frame["jsonrpc"], "2.0", "case {case}");
        assert_eq!(frame["id"], id, "case {case}: the id");
        assert_eq!(frame["result"], result, "case {case}: the result");
        assert_eq!(frame.as_object().map(|f| f.len()), Some(3), "case {case}");
    }
    assert_floor("result frames: pass-through bodies", raw, run, 300);
}

/// The pass-through parse (a hot-path choice of bridge/README.md) takes only what the full parse reads the same way: a
/// line that it takes is one JSON value, and its id, method, params and result equal those of
/// the full parse. Real messages and their mutations (most of which are not JSON).
#[test]
fn fuzz_pass_through_parse_agrees_with_the_full_parse() {
    let mut rng = rng(9);
    let mut taken = 0;
    let run = cases() * 4;
    for case in 0..run {
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
    assert_floor("pass-through parse: lines taken", taken, run, 50);
}
