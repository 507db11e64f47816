#![allow(clippy::unwrap_used)] // a test fails by its panic
//! Fuzzing on stable (issue 14; bridge/README.md "Reliability"): each target is driven by a
//! seeded generator (support::values::Rng) over generated and mutated inputs, and checks that
//! the rule does not panic, that it gives the same output for the same input, that it stays
//! within its limits (the line reader: the buffers that it returns are bounded by the limit,
//! not by the line; the process test u12 of fault_matrix.rs measures the peak memory of a
//! 1 GiB line), and the rule's own invariants.
//!
//! CI runs `DEFAULT_CASES` cases per target (a few seconds in all); `MCP_FUZZ_CASES=<n>` runs
//! n cases per target and `MCP_FUZZ_SEED=<n>` picks another sequence, for long runs:
//!
//! ```sh
//! MCP_FUZZ_CASES=1000000 MCP_FUZZ_SEED=$RANDOM cargo test -p mcp-bridge-vscode --test fuzz_targets
//! ```

use crate::support;

use std::ffi::OsString;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_bridge_vscode::cli::{self, url_rule::check_url};
use mcp_bridge_vscode::input::answers::{ClientAnswer, shape_answer};
use mcp_bridge_vscode::input::check::ClientCaps;
use mcp_bridge_vscode::input::complete::{ElicitationIds, UrlSteps};
use mcp_bridge_vscode::input::parse::parse_input_required;
use mcp_bridge_vscode::input::route::plan_round;
use mcp_bridge_vscode::input::url::url_allowed;
use mcp_bridge_vscode::listen::filter::classify as listen_classify;
use mcp_bridge_vscode::listen::replay::{Declared, listen_filter};
use mcp_bridge_vscode::translate::forward::{classify as method_class, forward_params};
use mcp_bridge_vscode::translate::initialize::{
    ServerInfoFallback, initialize_result, parse_initialize, upstream_capabilities,
};
use mcp_bridge_vscode::translate::schema::{FixKind, output_schema_allowed, repair_input_schema};
use mcp_bridge_vscode::translate::shape::{is_list, shape_result};
use mcp_bridge_vscode::wire::fast::{Fast, parse_fast};
use mcp_bridge_vscode::wire::parse::{Message, Parsed, classify, parse_line, too_long, valid_id};
use mcp_bridge_vscode::wire::reader::{KEEP_BYTES, LineReader, RawLine};
use mcp_bridge_vscode::wire::recover::{recover_id, recover_leading_id, recover_trailing_id};
use serde_json::{Value, json};
use support::values::{Rng, value};
use tokio::io::{AsyncRead, ReadBuf};

/// Cases per target in CI.
const DEFAULT_CASES: u64 = 3_000;

fn cases() -> u64 {
    std::env::var("MCP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn rng(target: u64) -> Rng {
    let seed: u64 = std::env::var("MCP_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x0f22);
    Rng(seed ^ target.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

// ---------------------------------------------------------------------------------------
// Generators

/// Real messages of both sides, the seeds of the mutations.
fn seed_messages(rng: &mut Rng) -> Vec<u8> {
    let v = value(rng, 3);
    let id = match rng.next() % 5 {
        0 => json!(rng.next() % 1000),
        1 => json!("b-7"),
        2 => json!(null),
        3 => json!(-1.5),
        _ => json!({"x": 1}),
    };
    let frame = match rng.next() % 6 {
        0 => {
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":v}})
        }
        1 => json!({"jsonrpc":"2.0","id":id,"result":v}),
        2 => json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,"message":"m","data":v}}),
        3 => json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}),
        4 => json!({"method":"x","params":v,"jsonrpc":"2.0","id":id}),
        _ => v,
    };
    serde_json::to_vec(&frame).unwrap()
}

/// A mutation of a real message: flips, inserts, deletions, truncation, duplication.
fn mutated(rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed_messages(rng);
    const PIECES: &[&[u8]] = &[
        b"\"",
        b"\\",
        b"\\u",
        b"\\ud800",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"\"id\":",
        b"\n",
        b"\r",
        b"\0",
        b"\xff",
        b"\xc3",
        b"1e999",
        b"-0",
        b"null",
        b"\"b-",
        b"\xf0\x9f\x98",
    ];
    for _ in 0..rng.next() % 4 {
        let at = if bytes.is_empty() {
            0
        } else {
            (rng.next() as usize) % bytes.len()
        };
        match rng.next() % 5 {
            0 if !bytes.is_empty() => bytes[at] ^= 1 << (rng.next() % 8),
            1 => {
                let piece = PIECES[(rng.next() as usize) % PIECES.len()];
                bytes.splice(at..at, piece.iter().copied());
            }
            2 if !bytes.is_empty() => {
                let end = (at + 1 + (rng.next() as usize) % 8).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => bytes.truncate(at),
            _ => {
                let copy = bytes[at..].to_vec();
                bytes.extend(copy);
            }
        }
    }
    bytes
}

fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| (rng.next() & 0xff) as u8).collect()
}

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

/// The pass-through parse (issue 15) takes only what the full parse reads the same way: a
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

// ---------------------------------------------------------------------------------------
// Target: the translation rules (initialize, forward, shape, schema repair)

const METHODS: &[&str] = &[
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "x/unknown",
];

#[test]
fn fuzz_translation_rules() {
    let mut rng = rng(3);
    let fallback = ServerInfoFallback {
        name: "n".into(),
        version: "v".into(),
    };
    for case in 0..cases() * 2 {
        let v = value(&mut rng, 5);
        let p = parse_initialize(Some(&v));
        assert_eq!(
            format!("{p:?}"),
            format!("{:?}", parse_initialize(Some(&v)))
        );
        let caps = upstream_capabilities(&v);
        assert_eq!(caps, upstream_capabilities(&v));
        let discover = json!({"resultType":"complete","capabilities":v,"_meta":{"io.modelcontextprotocol/serverInfo":value(&mut rng, 2)}});
        for d in [&v, &discover] {
            let r = initialize_result(d, &fallback);
            assert_eq!(r, initialize_result(d, &fallback), "case {case}");
            assert_eq!(r["protocolVersion"], "2025-11-25");
            assert!(
                r["capabilities"].is_object() && r["serverInfo"]["name"].is_string(),
                "{r}"
            );
        }
        let f = forward_params(Some(v.clone()));
        assert_eq!(
            format!("{f:?}"),
            format!("{:?}", forward_params(Some(v.clone())))
        );
        let method = METHODS[(rng.next() as usize) % METHODS.len()];
        let _ = method_class(method);
        let result = if case % 2 == 0 {
            json!({"resultType":"complete","tools":[{"name":"t","inputSchema":value(&mut rng, 6)}],"nextCursor":value(&mut rng, 1),"content":value(&mut rng, 1)})
        } else {
            v.clone()
        };
        let shaped = shape_result(method, result.clone());
        assert_eq!(
            format!("{shaped:?}"),
            format!("{:?}", shape_result(method, result))
        );
        if let Some((r, _)) = &shaped {
            if let Some(c) = r.get("nextCursor").filter(|_| is_list(method)) {
                assert!(c.is_string(), "R4: {r}");
            }
            if method == "tools/call" {
                assert!(r["content"].is_array(), "R5: {r}");
            }
        }
        // Schema repair: deterministic and idempotent (a second repair finds nothing more).
        let mut schema = value(&mut rng, 6);
        let mut again = schema.clone();
        let fixes = repair_input_schema(&mut schema);
        assert_eq!(
            format!("{fixes:?}"),
            format!("{:?}", repair_input_schema(&mut again))
        );
        assert_eq!(schema, again);
        let second = repair_input_schema(&mut again);
        assert!(
            second.iter().all(|f| f.kind == FixKind::TooDeep),
            "case {case}: not idempotent: {second:?}"
        );
        assert_eq!(schema, again);
        let _ = output_schema_allowed(&schema);
    }
}

// ---------------------------------------------------------------------------------------
// Target: the input round (parse, check, answer shaping)

#[test]
fn fuzz_input_round() {
    let mut rng = rng(4);
    let all = ClientCaps {
        form: true,
        url: true,
        sampling: true,
        sampling_tools: true,
        roots: true,
    };
    let kinds = ["elicitation/create", "sampling/createMessage", "roots/list"];
    for case in 0..cases() * 2 {
        let mut requests = serde_json::Map::new();
        for k in 0..rng.next() % 4 {
            let method = kinds[(rng.next() % 3) as usize];
            let params = if rng.next().is_multiple_of(3) {
                json!({"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"a":value(&mut rng, 2)}}})
            } else {
                value(&mut rng, 4)
            };
            requests.insert(format!("k{k}"), json!({"method": method, "params": params}));
        }
        let round = json!({"resultType":"input_required","inputRequests":requests,"requestState":value(&mut rng, 1)});
        let parsed = parse_input_required(&round);
        assert_eq!(
            format!("{parsed:?}"),
            format!("{:?}", parse_input_required(&round))
        );
        let Ok(parsed) = parsed else { continue };
        for caps in [&all, &ClientCaps::default()] {
            let plan = plan_round(
                &parsed,
                caps,
                &mut UrlSteps::new(),
                &mut ElicitationIds::new(),
            );
            let plan2 = plan_round(
                &parsed,
                caps,
                &mut UrlSteps::new(),
                &mut ElicitationIds::new(),
            );
            assert_eq!(format!("{plan:?}"), format!("{plan2:?}"), "case {case}");
            let Ok(plan) = plan else { continue };
            for q in &plan.questions {
                let answer = match rng.next() % 3 {
                    0 => ClientAnswer::Result(
                        json!({"action":"accept","content":value(&mut rng, 2)}),
                    ),
                    1 => ClientAnswer::Result(value(&mut rng, 3)),
                    _ => ClientAnswer::Error(value(&mut rng, 2)),
                };
                let a = shape_answer(q, &answer);
                assert_eq!(format!("{a:?}"), format!("{:?}", shape_answer(q, &answer)));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Target: the listen filter

#[test]
fn fuzz_listen_filter() {
    let mut rng = rng(5);
    let methods = [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
        "notifications/subscriptions/acknowledged",
        "notifications/message",
        "x",
    ];
    for _ in 0..cases() * 4 {
        let m = methods[(rng.next() % 5) as usize];
        let frame = json!({"jsonrpc":"2.0","method":m,"params":value(&mut rng, 4)});
        let e = listen_classify(&frame);
        assert_eq!(format!("{e:?}"), format!("{:?}", listen_classify(&frame)));
        let declared = Declared::from_initialize_result(&value(&mut rng, 4));
        let uris: Vec<String> = (0..rng.next() % 3)
            .map(|i| format!("file:///{i}"))
            .collect();
        assert_eq!(
            listen_filter(&declared, &uris),
            listen_filter(&declared, &uris)
        );
    }
}

// ---------------------------------------------------------------------------------------
// Target: the URL rules (the URL form's `check_url`, the URL elicitation's `url_allowed`)

const SCHEMES: &[&str] = &[
    "https://",
    "http://",
    "HTTPS://",
    "HtTp://",
    "ftp://",
    "file://",
    "javascript:",
    "http:",
    "https:/",
    "https:///",
    "data:",
    "vscode://",
    "command:",
];
const HOSTS: &[&str] = &[
    "example.com",
    "localhost",
    "LOCALHOST.",
    "a.localhost",
    "localhost.evil.com",
    "127.0.0.1",
    "127.1",
    "0x7f.1",
    "2130706433",
    "128.0.0.1",
    "[::1]",
    "[::2]",
    "[::ffff:127.0.0.1]",
    "[0:0:0:0:0:0:0:1]",
    "%6cocalhost",
    "xn--bcher-kva.example",
    "bücher.example",
    "user@localhost",
    "u:p@127.0.0.1",
    "@localhost",
    "evil.com\\@localhost",
    "evil.com%2f@localhost",
    "",
    " ",
    "localhost:0",
    "localhost:65536",
    "localhost:8080",
    "[::1]:443",
    "ex ample.com",
    "\u{3002}x",
];
const TAILS: &[&str] = &[
    "", "/", "/mcp", "/mcp?x=1", "#frag", "/a#", "?q", "\\x", "/%2e%2e/", "/\u{0}",
];

#[test]
fn fuzz_url_rules() {
    let mut rng = rng(6);
    for case in 0..cases() * 4 {
        let mut url = String::new();
        for _ in 0..1 + rng.next() % 2 {
            url.push_str(SCHEMES[(rng.next() as usize) % SCHEMES.len()]);
            url.push_str(HOSTS[(rng.next() as usize) % HOSTS.len()]);
            url.push_str(TAILS[(rng.next() as usize) % TAILS.len()]);
        }
        if rng.next().is_multiple_of(4) {
            let bytes = mutated_text(&mut rng, &url);
            url = bytes;
        }
        let checked = check_url(&url);
        assert_eq!(
            format!("{checked:?}"),
            format!("{:?}", check_url(&url)),
            "case {case}"
        );
        if let Ok(u) = &checked {
            assert!(u.username().is_empty() && u.password().is_none(), "{url}");
            assert!(u.fragment().is_none(), "{url}");
            let loopback = u
                .host()
                .is_some_and(|h| mcp_bridge_vscode::cli::url_rule::is_loopback(&h));
            assert!(
                u.scheme() == "https" || (u.scheme() == "http" && loopback),
                "{url}"
            );
        }
        let allowed = url_allowed(&url);
        assert_eq!(allowed, url_allowed(&url));
        if allowed {
            let lower = url.to_ascii_lowercase();
            assert!(
                lower.starts_with("https://") || lower.starts_with("http://"),
                "{url}"
            );
            assert!(!url.contains('\\'), "{url}");
        }
    }
}

fn mutated_text(rng: &mut Rng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let extra = [
        '%', '@', '\\', '/', ':', '[', ']', '.', '#', '?', 'é', '\u{ff0e}',
    ];
    for _ in 0..1 + rng.next() % 3 {
        let at = (rng.next() as usize) % (chars.len() + 1);
        if rng.next().is_multiple_of(2) || chars.is_empty() {
            chars.insert(at, extra[(rng.next() as usize) % extra.len()]);
        } else {
            chars.remove(at.min(chars.len() - 1));
        }
    }
    chars.into_iter().collect()
}

/// Fixed vectors of the two URL rules (the contract's URL form and URL elicitation rules, and
/// the troubleshooting line of a refused URL): (URL, check_url accepts, url_allowed accepts).
const URL_VECTORS: &[(&str, bool, bool)] = &[
    ("https://mcp.example.com/mcp", true, true),
    ("HTTPS://mcp.example.com/mcp", true, true),
    ("https://mcp.example.com:8443/mcp?x=1", true, true),
    ("http://localhost/mcp", true, true),
    ("http://LOCALHOST:8080/mcp", true, true),
    // The URL form takes `localhost` and `*.localhost`, not the root form `localhost.`.
    ("http://localhost./mcp", false, true),
    ("http://127.0.0.1:3000/mcp", true, true),
    ("http://127.9.8.7/", true, true),
    ("http://[::1]:3000/mcp", true, true),
    ("http://[0:0:0:0:0:0:0:1]/", true, true),
    ("http://[::ffff:127.0.0.1]/", false, true),
    ("http://a.localhost/mcp", true, false),
    ("http://example.com/mcp", false, false),
    ("http://localhost.example.com/", false, false),
    ("http://128.0.0.1/", false, false),
    ("http://[::2]/", false, false),
    ("ftp://example.com/", false, false),
    ("file:///etc/passwd", false, false),
    ("javascript:alert(1)", false, false),
    ("vscode://ext/x", false, false),
    ("command:workbench.action.quit", false, false),
    ("data:text/html,x", false, false),
    ("https://user@example.com/", false, true),
    ("https://user:pass@example.com/", false, true),
    ("http://user@localhost/", false, false),
    ("http://u:p@127.0.0.1/", false, false),
    ("https://@example.com/", false, true),
    ("http://localhost@example.com/", false, false),
    ("http://evil.com\\@localhost/", false, false),
    // The URL form connects where the WHATWG parser says (the host before the backslash);
    // a URL elicitation needs both parsers to agree.
    ("https://example.com\\@example.org/", true, false),
    ("http://localhost\\.evil.com/", true, false),
    ("https://example.com/#frag", false, true),
    ("https://example.com/a#", false, true),
    ("https:///x", false, false),
    ("https://", false, false),
    ("https://example.com:0/", false, true),
    ("https://example.com:65536/", false, false),
    ("https://bücher.example/", false, false),
    ("https://xn--bcher-kva.example/", true, true),
    ("https://ex ample.com/", false, false),
    ("http://%6cocalhost/", true, false),
    ("http://127.1/", true, false),
    ("http://0x7f.0.0.1/", true, false),
    ("http://2130706433/", true, false),
    ("http:localhost/", true, false),
    ("", false, false),
    ("https://exa%41mple.com/", true, false),
];

#[test]
fn url_rule_vectors() {
    let mut wrong = Vec::new();
    for (url, form, elicitation) in URL_VECTORS {
        let got = (check_url(url).is_ok(), url_allowed(url));
        if got != (*form, *elicitation) {
            wrong.push(format!(
                "{url:?}: got {got:?}, want {:?}",
                (form, elicitation)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(URL_VECTORS.len() >= 40);
}

// ---------------------------------------------------------------------------------------
// Target: the command line

const ARGS: &[&str] = &[
    "--",
    "--name",
    "--log-level",
    "--discover-timeout",
    "--max-line-bytes",
    "--header",
    "--header-env",
    "--ca-file",
    "--max-response-bytes",
    "--client-id",
    "--client-issuer",
    "--token-store",
    "--redirect-port",
    "--no-browser",
    "--sign-in-timeout",
    "--account",
    "-h",
    "--help",
    "-V",
    "--version",
    "--bogus",
    "-x",
    "=",
    "debug",
    "0",
    "86401",
    "1073741825",
    "64",
    "https://mcp.example.com/mcp",
    "http://example.com/",
    "Authorization=AUTH_VAR",
    "X-Api-Key:Vq9z-planted",
    "cmd",
    "--name=demo",
    "--log-level=warn",
    "--discover-timeout=5",
];

#[test]
fn fuzz_command_line() {
    let mut rng = rng(7);
    // clap builds its command for each parse: a third of the cases keeps this target at about
    // two seconds in the debug build.
    for case in 0..cases() / 3 {
        let args: Vec<OsString> = (0..rng.next() % 7)
            .map(|_| OsString::from(ARGS[(rng.next() as usize) % ARGS.len()]))
            .collect();
        let a = cli::parse(&args);
        let b = cli::parse(&args);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "case {case}: {args:?}");
        if let Err(e) = a {
            let text = e.to_string();
            assert!(!text.is_empty());
            assert!(!text.contains('\n'), "one line: {text}");
            // A value on the command line is never in an error line.
            assert!(!text.contains("Vq9z-planted"), "{args:?}: {text}");
        }
    }
}
