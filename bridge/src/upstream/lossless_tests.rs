//! docs/architecture.md principle 1 (lossless pass-through), as a property: for random JSON values (unknown
//! members, deep nesting, unicode escapes, big numbers within the id rules) the value that VS
//! Code receives equals the value that the upstream server sent, after the rules.
//!
//! Both directions go through the bytes of both parse paths: a result line of the upstream
//! through the line reader, the full parse or the pass-through parse (a hot-path choice of bridge/README.md: members kept as
//! the bytes received), the shape rules (R4, R5, R6) and the one writer; the params of a VS Code
//! request through the reader, either parse, the split of R3, the envelope and the upstream
//! frame. The lines are written in several forms (compact, with whitespace, with `\u` escapes),
//! so that the pass-through meets what real peers send. The expected value is computed here, by
//! a model of the top-level rules that is independent of the bridge's code.

use crate::translate::forward::{forward_object, forward_params};
use crate::translate::shape::{shape_object, shape_result};
use crate::upstream::envelope::{Envelope, RequestFrame};
use crate::wire::fast::{Fast, parse_fast};
use crate::wire::frames::result_line;
use crate::wire::lazy::{Body, LazyObject};
use crate::wire::parse::{Message, Parsed, parse_line};
use crate::wire::reader::{LineReader, RawLine};
use crate::wire::writer::spawn_writer;
use serde_json::{Map, Number, Value, json};
use tokio::io::AsyncReadExt;

/// A seeded generator (xorshift), so that a failure repeats with its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Strings with escapes, control characters, quotes, astral characters (surrogate pairs when
/// escaped) and non-ASCII text.
fn string(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "a",
        "text",
        "\"",
        "\\",
        "/",
        "\n",
        "\r\t",
        "\u{0}",
        "\u{1f}",
        "é",
        "日本",
        "\u{1F600}",
        "\u{FFFD}",
        "\u{2028}",
        "\u{7f}",
        "_meta",
        "nextCursor",
        "content",
        " ",
        "",
    ];
    (0..rng.below(6))
        .map(|_| PIECES[rng.below(PIECES.len() as u64) as usize])
        .collect()
}

fn number(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => Value::from(i64::MIN + rng.below(3) as i64),
        1 => Value::from(u64::MAX - rng.below(3)),
        2 => Value::from(rng.next() as i64),
        3 => Value::from(0),
        // Floats that round-trip through f64 (serde_json keeps an f64 unchanged).
        4 => Number::from_f64(f64::from_bits(rng.next() >> 2))
            .map_or(Value::from(1.5), Value::Number),
        _ => Value::from(-(rng.below(1_000_000) as f64) / 8.0),
    }
}

/// Any JSON value, nested up to `depth` levels; objects get unknown members and keys that
/// look like the rules' own.
fn value(rng: &mut Rng, depth: u32) -> Value {
    let pick = if depth == 0 {
        rng.below(5)
    } else {
        rng.below(7)
    };
    match pick {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => number(rng),
        3 | 4 => Value::String(string(rng)),
        5 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth - 1)).collect()),
        _ => Value::Object(object(rng, depth - 1)),
    }
}

fn object(rng: &mut Rng, depth: u32) -> Map<String, Value> {
    (0..rng.below(5))
        .map(|i| (format!("{}{i}", string(rng)), value(rng, depth)))
        .collect()
}

/// A deep chain within the nesting limit of the parser (128 levels for the whole line).
fn deep(rng: &mut Rng) -> Value {
    let mut v = value(rng, 1);
    for i in 0..(100 + rng.below(20)) {
        v = if i % 2 == 0 {
            json!([v])
        } else {
            json!({ "k": v })
        };
    }
    v
}

/// A result of `method`: random members, sometimes the members that the rules look at.
fn result(rng: &mut Rng, method: &str) -> Map<String, Value> {
    let mut r = object(rng, 4);
    if rng.below(3) == 0 {
        r.insert("deep".into(), deep(rng));
    }
    if rng.below(3) == 0 {
        r.insert("resultType".into(), json!("complete"));
    }
    if rng.below(4) == 0 {
        r.insert("ttlMs".into(), number(rng));
    }
    if rng.below(4) == 0 {
        let mut meta = object(rng, 2);
        if rng.below(2) == 0 {
            meta.insert("io.modelcontextprotocol/serverInfo".into(), value(rng, 1));
        }
        r.insert("_meta".into(), Value::Object(meta));
    }
    match method {
        "tools/call" => {
            if rng.below(4) != 0 {
                let content = (0..rng.below(3))
                    .map(|_| json!({"type":"text","text":string(rng),"x":value(rng, 2)}))
                    .collect();
                r.insert("content".into(), Value::Array(content));
            }
        }
        _ => {
            if rng.below(2) == 0 {
                let cursor = if rng.below(2) == 0 {
                    Value::String(string(rng))
                } else {
                    value(rng, 1)
                };
                r.insert("nextCursor".into(), cursor);
            }
        }
    }
    r
}

/// The model of the top-level rules for results without `structuredContent` or tools: what
/// VS Code must receive.
fn expected(method: &str, mut r: Map<String, Value>) -> Value {
    for key in ["resultType", "ttlMs", "cacheScope"] {
        r.remove(key);
    }
    if let Some(Value::Object(meta)) = r.get_mut("_meta")
        && meta.remove("io.modelcontextprotocol/serverInfo").is_some()
        && meta.is_empty()
    {
        r.remove("_meta");
    }
    if method == "resources/list" && r.get("nextCursor").is_some_and(|c| !c.is_string()) {
        r.remove("nextCursor");
    }
    if method == "tools/call" && !r.get("content").is_some_and(Value::is_array) {
        r.insert("content".into(), json!([]));
    }
    r.remove("structuredContent");
    Value::Object(r)
}

/// The forms of one JSON text that peers send: compact, with whitespace between the tokens,
/// with non-ASCII characters as `\u` escapes (surrogate pairs for astral ones), and both.
fn forms(value: &Value, rng: &mut Rng) -> String {
    let text = value.to_string();
    match rng.below(4) {
        0 => text,
        1 => spaced(value),
        2 => escaped(&text),
        _ => escaped(&spaced(value)),
    }
}

/// Pretty JSON on one line: a newline of the pretty form is never inside a string (strings
/// escape theirs), so each becomes a space or a tab.
fn spaced(value: &Value) -> String {
    serde_json::to_string_pretty(value)
        .unwrap_or_default()
        .replace('\n', " \t")
}

/// Every character above U+007F as a `\u` escape: outside strings there are none.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c as u32) < 0x80 {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

async fn read_one(bytes: &[u8]) -> Vec<u8> {
    let mut reader = LineReader::new(bytes, 64 << 20);
    match reader.next().await {
        Ok(RawLine::Line(line)) => line,
        other => panic!("one line: {other:?}"),
    }
}

/// Writes `frame` through the one writer and returns the bytes of stdout.
async fn through_writer(frame: &Value) -> Vec<u8> {
    let (ours, mut theirs) = tokio::io::duplex(1 << 16);
    let (outbox, handle) = spawn_writer(ours);
    let reader = tokio::spawn(async move {
        let mut out = Vec::new();
        let _ = theirs.read_to_end(&mut out).await;
        out
    });
    assert!(outbox.send(frame));
    outbox.close();
    drop(outbox);
    assert!(matches!(handle.await, Ok(Ok(()))));
    reader.await.expect("reader")
}

/// The result that VS Code receives on the full path.
async fn full_path(method: &str, line: &[u8], vscode_id: &Value) -> Vec<u8> {
    let Parsed::Message(Message::Response { body: Ok(raw), .. }) = parse_line(line) else {
        panic!("not a result");
    };
    let (shaped, _) = shape_result(method, raw).expect("an object");
    through_writer(&json!({"jsonrpc":"2.0","id":vscode_id,"result":shaped})).await
}

/// The result that VS Code receives on the pass-through path; `None` when the line does not
/// take it (then the full path is the only one).
fn pass_through(method: &str, line: &[u8], vscode_id: &Value) -> Option<Vec<u8>> {
    let Ok(Fast::Response { result, .. }) = parse_fast(line.to_vec()) else {
        return None;
    };
    let body = match shape_object(method, result) {
        Ok(shaped) => Body::Object(shaped),
        Err(object) => {
            let (shaped, _) = shape_result(method, Value::Object(object.into_map()))?;
            Body::Value(shaped)
        }
    };
    Some(result_line(vscode_id, &body).to_vec())
}

fn one_json_line(out: &[u8], seed: u64) -> Value {
    assert_eq!(out.last(), Some(&b'\n'), "seed {seed}");
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1, "one line");
    serde_json::from_slice(out).expect("JSON")
}

#[tokio::test]
async fn results_reach_vscode_unchanged_after_the_rules() {
    let mut passed = 0;
    for seed in 1..=600u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let method = ["tools/call", "resources/list", "resources/read"][(seed % 3) as usize];
        let mut sent = result(&mut rng, method);
        sent.remove("structuredContent");
        let id = 1 + rng.below(1 << 40) as i64;
        let frame = json!({"jsonrpc":"2.0","id":id,"result":Value::Object(sent.clone())});
        let line = format!("{}\r\n", forms(&frame, &mut rng));
        let line = read_one(line.as_bytes()).await;
        // VS Code's id is any id of the id rules: a string or an integer of 64 bits.
        let vscode_id = if seed % 2 == 0 {
            json!(u64::MAX - seed)
        } else {
            Value::String(string(&mut rng))
        };
        let expected = expected(method, sent);
        let full = full_path(method, &line, &vscode_id).await;
        let mut outs = vec![full.clone()];
        if let Some(fast) = pass_through(method, &line, &vscode_id) {
            passed += 1;
            outs.push(fast);
        }
        for out in outs {
            let received = one_json_line(&out, seed);
            assert_eq!(received["id"], vscode_id, "seed {seed}");
            assert_eq!(
                received["result"],
                expected,
                "seed {seed}: {line:?}",
                line = String::from_utf8_lossy(&line)
            );
            // The members come in the same order on both paths.
            let order = |v: &Value| {
                v["result"]
                    .as_object()
                    .map(|m| m.keys().cloned().collect::<Vec<_>>())
            };
            assert_eq!(
                order(&received),
                order(&one_json_line(&full, seed)),
                "seed {seed}"
            );
        }
    }
    assert!(passed > 150, "the pass-through took {passed} of 600 lines");
}

#[tokio::test]
async fn params_reach_the_upstream_unchanged_after_the_rules() {
    let envelope = Envelope {
        client_info: json!({"name":"Visual Studio Code","version":"1"}),
        capabilities: json!({}),
    };
    let mut passed = 0;
    for seed in 1..=600u64 {
        let mut rng = Rng(seed.wrapping_mul(0xD6E8_FEB8_6659_FD93) | 1);
        let mut params = object(&mut rng, 4);
        params.insert("name".into(), json!("echo"));
        params.insert("arguments".into(), Value::Object(object(&mut rng, 4)));
        if rng.below(2) == 0 {
            params.insert("big".into(), deep(&mut rng));
        }
        let mut sent = params.clone();
        sent.insert(
            "_meta".into(),
            json!({"progressToken": 0, "vscode.x": string(&mut rng)}),
        );
        sent.insert("task".into(), json!({}));
        let frame =
            json!({"jsonrpc":"2.0","id":seed,"method":"tools/call","params":Value::Object(sent)});
        let line = format!("{}\n", forms(&frame, &mut rng));
        let line = read_one(line.as_bytes()).await;
        let Parsed::Message(Message::Request { params: got, .. }) = parse_line(&line) else {
            panic!("seed {seed}: not a request");
        };
        let mut paths = vec![forward_params(got)];
        if let Ok(Fast::Request {
            params: Some(p), ..
        }) = parse_fast(line.clone())
        {
            passed += 1;
            paths.push(forward_object(p));
        }
        let mut seen = Vec::new();
        for fwd in paths {
            let meta = envelope.meta_bytes(None, None, &fwd.meta);
            let frame = RequestFrame::new(7, "tools/call", &fwd.params, meta);
            let bytes = frame.line().to_vec();
            let mut upstream: Value = serde_json::from_slice(&bytes).expect("JSON");
            let meta = upstream["params"]
                .as_object_mut()
                .and_then(|p| p.remove("_meta"))
                .expect("the envelope");
            assert_eq!(
                meta["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
            assert_eq!(meta["vscode.x"], frame_meta_x(&frame), "seed {seed}");
            assert_eq!(
                upstream["params"],
                Value::Object(params.clone()),
                "seed {seed}"
            );
            seen.push(
                upstream["params"]
                    .as_object()
                    .map(|m| m.keys().cloned().collect::<Vec<_>>()),
            );
        }
        assert!(
            seen.windows(2).all(|w| w[0] == w[1]),
            "seed {seed}: the same order"
        );
    }
    assert!(passed > 150, "the pass-through took {passed} of 600 lines");
}

fn frame_meta_x(frame: &RequestFrame) -> Value {
    frame.to_value()["params"]["_meta"]["vscode.x"].clone()
}

/// A result whose text is 1 MiB of escapes and non-ASCII characters passes through as
/// received and reads the same.
#[tokio::test]
async fn a_large_text_with_escapes_passes_through() {
    let text: String = "a\"\\\n\té日\u{1F600}/".repeat(1 << 16);
    let sent = json!({"content":[{"type":"text","text":text}],"x-extra":{"n":[1,2.5,-3]}});
    let frame = json!({"jsonrpc":"2.0","id":9,"result":sent});
    for line in [frame.to_string(), escaped(&frame.to_string())] {
        let out = pass_through("tools/call", line.as_bytes(), &json!(1)).expect("pass-through");
        let received = one_json_line(&out, 0);
        assert_eq!(received["result"], sent);
    }
}

/// What the full parse decides stays with the full parse: the pass-through refuses the line.
#[test]
fn lines_that_a_full_parse_changes_do_not_pass_through() {
    let mut deep = String::new();
    for _ in 0..120 {
        deep.push('[');
    }
    for _ in 0..120 {
        deep.push(']');
    }
    for result in [
        r#"{"t":"\ud800"}"#.to_owned(),
        format!(r#"{{"n":{}}}"#, "9".repeat(301)),
        r#"{"t":"\ud83d x"}"#.to_owned(),
        r#"{"n":1e400}"#.to_owned(),
        format!(r#"{{"d":{deep}}}"#),
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
        assert!(parse_fast(line.into_bytes()).is_err(), "{result}");
    }
    let _ = LazyObject::new();
}
