//! docs/architecture.md principle 1 (lossless pass-through), as a property of the bridge's
//! real router: for random JSON values (unknown members, deep nesting, unicode escapes, big
//! numbers within the id rules) what the upstream receives equals what VS Code sent, and what
//! VS Code receives equals what the upstream sent, after the rules.
//!
//! The router is [`crate::front::serve`], the function that the executable runs, between a
//! scripted VS Code and a scripted upstream over in-memory pipes
//! ([`crate::front::scripted_peers`]). The lines are written in several forms (compact, with
//! whitespace, with `\u` escapes), so that both parse paths (the pass-through of
//! bridge/README.md, whose members are the bytes received, and the full parse) are taken in
//! both directions; the test counts each and fails below a floor. The expected value is
//! computed here, by a model of the top-level rules (R3, R4, R5, R6, C1) that is independent
//! of the bridge's code.

use crate::front::scripted_peers::Router;
use crate::translate::shape::{shape_object, shape_result};
use crate::wire::fast::{Fast, parse_fast};
use crate::wire::frames::result_line;
use crate::wire::lazy::{Body, LazyObject};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value, json};
use std::collections::BTreeMap;

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

/// The result that VS Code receives on the pass-through path (the writer's result line);
/// `None` when the line does not take it.
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

/// The members of the object `field` of a frame, each as the JSON text of the line.
fn raw_members(line: &[u8], field: &str) -> BTreeMap<String, String> {
    let frame: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(line).expect("a frame");
    let inner: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(frame[field].get()).expect("an object");
    inner
        .into_iter()
        .map(|(k, v)| (k, v.get().to_owned()))
        .collect()
}

fn keys(map: &Map<String, Value>) -> Vec<&String> {
    map.keys().collect()
}

/// The cases of the router test, and how many took each path in each direction.
const ROUTER_CASES: u64 = 400;
const PATH_FLOOR: u64 = 100;

#[derive(Default, Debug)]
struct Paths {
    request_fast: u64,
    request_full: u64,
    result_fast: u64,
    result_full: u64,
}

/// VS Code's params of `method`: unknown members (deep ones too), and a `_meta` of unknown
/// members with a `progressToken` at a random place. Gives the params without `_meta`, the
/// unknown members of `_meta` and the token.
fn vscode_params(rng: &mut Rng, method: &str) -> (Map<String, Value>, Map<String, Value>, Value) {
    let mut params = object(rng, 4);
    match method {
        "tools/call" => {
            params.insert("name".into(), json!("echo"));
            params.insert("arguments".into(), Value::Object(object(rng, 4)));
        }
        "resources/read" => {
            params.insert("uri".into(), json!("file:///x"));
        }
        _ => {}
    }
    if rng.below(3) == 0 {
        params.insert("big".into(), deep(rng));
    }
    // R3: the keys that go upstream (`traceparent`, `tracestate`, valid `vscode.` keys) among
    // keys that stay with the bridge (the random ones never look like those).
    let mut unknown = object(rng, 2);
    for i in 0..rng.below(4) {
        let key = match rng.below(4) {
            0 => "traceparent".to_owned(),
            1 => "tracestate".to_owned(),
            2 => format!("vscode.conversationId{i}"),
            _ => format!("vscode.a-b_c.d{i}"),
        };
        unknown.shift_remove(&key);
        let at = rng.below(unknown.len() as u64 + 1) as usize;
        unknown.shift_insert(at, key, value(rng, 2));
    }
    let token = if rng.below(2) == 0 {
        Value::String(format!("t{}", string(rng)))
    } else {
        json!(rng.below(1 << 50))
    };
    (params, unknown, token)
}

/// docs/architecture.md principle 1 through the router that the executable runs: VS Code's
/// requests reach the upstream, and the upstream's results and progress reach VS Code, with
/// every member that no rule names unchanged (byte for byte on the pass-through), in the
/// order sent, including the unknown members of `_meta` and VS Code's `progressToken`.
#[tokio::test]
async fn the_router_keeps_every_member_that_no_rule_names() {
    let mut router = Router::start().await;
    let mut paths = Paths::default();
    for seed in 1..=ROUTER_CASES {
        let mut rng = Rng(seed.wrapping_mul(0xD6E8_FEB8_6659_FD93) | 1);
        let method = ["tools/call", "resources/list", "resources/read"][(seed % 3) as usize];
        let (params, unknown, token) = vscode_params(&mut rng, method);
        let mut meta = unknown.clone();
        let at = rng.below(meta.len() as u64 + 1) as usize;
        meta.shift_insert(at, "progressToken".into(), token.clone());
        let mut sent = params.clone();
        sent.insert("_meta".into(), Value::Object(meta));
        let vscode_id = if seed % 2 == 0 {
            json!(u64::MAX - seed)
        } else {
            Value::String(format!("{seed}{}", string(&mut rng)))
        };
        let frame = json!({"jsonrpc":"2.0","id":vscode_id,"method":method,"params":sent});
        let line = forms(&frame, &mut rng);
        let fast_in = parse_fast(line.clone().into_bytes()).is_ok();
        router.vscode_send(line.as_bytes()).await;

        // VS Code → the upstream.
        let up_line = router.upstream_request_line(method).await;
        let up: Value = serde_json::from_slice(&up_line).expect("JSON");
        let mut got = up["params"].as_object().cloned().expect("params");
        let Some(Value::Object(up_meta)) = got.remove("_meta") else {
            panic!("seed {seed}: no _meta upstream: {up}");
        };
        assert_eq!(got, params, "seed {seed}: the params upstream");
        assert_eq!(
            keys(&got),
            keys(&params),
            "seed {seed}: the order of params"
        );
        if fast_in {
            paths.request_fast += 1;
            let (sent_raw, got_raw) = (
                raw_members(line.as_bytes(), "params"),
                raw_members(&up_line, "params"),
            );
            for k in params.keys() {
                assert_eq!(got_raw[k], sent_raw[k], "seed {seed}: the bytes of {k:?}");
            }
        } else {
            paths.request_full += 1;
        }
        let kept: Vec<(&String, &Value)> = up_meta
            .iter()
            .filter(|(k, _)| unknown.contains_key(*k))
            .collect();
        let passes = |k: &str| k.starts_with("vscode.") || k == "traceparent" || k == "tracestate";
        assert_eq!(
            kept,
            unknown
                .iter()
                .filter(|(k, _)| passes(k))
                .collect::<Vec<_>>(),
            "seed {seed}: the unknown members of _meta upstream: {up_meta:?}"
        );
        assert_eq!(
            up_meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let up_token = up_meta["progressToken"].clone();
        assert!(up_token.is_number(), "seed {seed}: {up_meta:?}");

        // The upstream → VS Code: a progress notification, then the result.
        let progress = json!({"progressToken":up_token,"progress":1,"total":2,
            "message":string(&mut rng),"x-extra":value(&mut rng, 2)});
        let note = json!({"jsonrpc":"2.0","method":"notifications/progress","params":progress});
        router
            .upstream_send(forms(&note, &mut rng).as_bytes())
            .await;
        let mut result = result(&mut rng, method);
        result.remove("structuredContent");
        let answer = json!({"jsonrpc":"2.0","id":up["id"],"result":Value::Object(result.clone())});
        let answer = forms(&answer, &mut rng);
        let fast_out = parse_fast(answer.clone().into_bytes()).is_ok();
        router.upstream_send(answer.as_bytes()).await;

        let mut progress_seen = 0;
        let out = loop {
            let out = router.vscode_next().await;
            let v = one_json_line(&out, seed);
            if v["method"] == "notifications/progress" {
                progress_seen += 1;
                // O4: VS Code's token and the members of 2025-11-25 progress only.
                let mut expected = progress.as_object().cloned().expect("an object");
                expected.insert("progressToken".into(), token.clone());
                expected.remove("x-extra");
                let got = v["params"].as_object().expect("params");
                assert_eq!(got, &expected, "seed {seed}: the progress");
                assert_eq!(
                    keys(got),
                    keys(&expected),
                    "seed {seed}: the order of progress"
                );
                continue;
            }
            break out;
        };
        assert_eq!(progress_seen, 1, "seed {seed}: one progress notification");
        let received = one_json_line(&out, seed);
        assert_eq!(received["id"], vscode_id, "seed {seed}: the id");
        let expected = expected(method, result.clone());
        let got = received["result"].as_object().expect("a result");
        assert_eq!(
            &Value::Object(got.clone()),
            &expected,
            "seed {seed}: the result:\n{answer}"
        );
        let expected = expected.as_object().expect("an object");
        assert_eq!(
            keys(got),
            keys(expected),
            "seed {seed}: the order of the result"
        );
        if fast_out {
            paths.result_fast += 1;
            let (sent_raw, got_raw) = (
                raw_members(answer.as_bytes(), "result"),
                raw_members(&out, "result"),
            );
            for (k, v) in expected {
                if k != "_meta" && result.get(k) == Some(v) {
                    assert_eq!(got_raw[k], sent_raw[k], "seed {seed}: the bytes of {k:?}");
                }
            }
        } else {
            paths.result_full += 1;
        }
    }
    eprintln!("the router's paths over {ROUTER_CASES} cases: {paths:?}");
    for taken in [
        paths.request_fast,
        paths.request_full,
        paths.result_fast,
        paths.result_full,
    ] {
        assert!(
            taken >= PATH_FLOOR,
            "each path of each direction at least {PATH_FLOOR} times: {paths:?}"
        );
    }
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
