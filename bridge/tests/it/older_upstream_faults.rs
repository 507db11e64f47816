//! L4 (docs/older-servers.md) against a broken or hostile older server at a URL, on the real
//! binary: a fake Streamable HTTP server of 2025-11-25 written here, whose answers each test
//! scripts by the request's method, headers and body, and which records when each request
//! came and each stream closed. The bounds: reconnects of an event stream paced and capped (an
//! event id alone is no progress), and a notification POST that never ends does not hold the
//! frames behind it.
#![cfg(unix)]

use crate::support;

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Bridge, call, request};

/// The floor under the server's `retry` (L4, `RESUME_WAIT_MIN` of the bridge): a contract
/// bound, not a pace of the test.
const RESUME_FLOOR: Duration = Duration::from_millis(250);

/// One request that the fake server got.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
    pub at: Instant,
}

/// What the fake server does with one request.
pub enum Answer {
    /// Writes these bytes (a whole response with its length) and keeps the connection.
    Bytes(Vec<u8>),
    /// Writes these bytes, then closes (an event stream that the server ends).
    Close(Vec<u8>),
    /// Writes nothing and never answers, until the client closes.
    Hang,
}

/// A fake older server on 127.0.0.1: the requests it got, and when it closed each stream.
struct FakeOlder {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    closed: Arc<Mutex<Vec<Instant>>>,
}

impl FakeOlder {
    fn start(handler: impl Fn(&Seen) -> Answer + Send + Sync + 'static) -> FakeOlder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let handler = Arc::new(handler);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let closed = Arc::new(Mutex::new(Vec::new()));
        let (s, c) = (Arc::clone(&seen), Arc::clone(&closed));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (handler, s, c) = (Arc::clone(&handler), Arc::clone(&s), Arc::clone(&c));
                std::thread::spawn(move || serve(stream, &*handler, &s, &c));
            }
        });
        FakeOlder { url, seen, closed }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen").clone()
    }

    fn closed(&self) -> Vec<Instant> {
        self.closed.lock().expect("closed").clone()
    }
}

fn serve(
    stream: TcpStream,
    handler: &dyn Fn(&Seen) -> Answer,
    seen: &Mutex<Vec<Seen>>,
    closed: &Mutex<Vec<Instant>>,
) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let Some(raw) = support::url_upstreams::read_request(&mut reader) else {
            return;
        };
        let request = Seen {
            method: raw.method,
            headers: raw.headers,
            body: raw.body,
            at: Instant::now(),
        };
        seen.lock().expect("seen").push(request.clone());
        match handler(&request) {
            Answer::Bytes(bytes) => {
                if writer.write_all(&bytes).is_err() {
                    return;
                }
            }
            Answer::Close(bytes) => {
                let _ = writer.write_all(&bytes);
                let _ = writer.shutdown(std::net::Shutdown::Both);
                closed.lock().expect("closed").push(Instant::now());
                return;
            }
            Answer::Hang => {
                let mut buf = [0u8; 1024];
                while matches!(reader.get_mut().read(&mut buf), Ok(n) if n > 0) {}
                return;
            }
        }
    }
}

fn json_answer(body: &Value, extra: &str) -> Answer {
    let body = body.to_string();
    Answer::Bytes(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

fn status(code: u16) -> Answer {
    Answer::Bytes(format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\n\r\n").into_bytes())
}

/// An event stream of `events` (raw SSE text) that the server then closes.
fn stream_then_close(events: &str) -> Answer {
    Answer::Close(
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{events}")
            .into_bytes(),
    )
}

/// The answers of a working older server: `initialize` with a session, 202 to every
/// notification, a result to `tools/list`, 200 to the DELETE; `None` for what a test scripts.
fn usual(req: &Seen) -> Option<Answer> {
    let id = req.body.get("id").cloned().unwrap_or(Value::Null);
    match (req.method.as_str(), req.body["method"].as_str()) {
        ("POST", Some("initialize")) => Some(json_answer(
            &json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-11-25",
                "capabilities":{"tools":{}},"serverInfo":{"name":"fake-older","version":"1"}}}),
            "Mcp-Session-Id: s-1\r\n",
        )),
        ("POST", Some("tools/list")) => Some(json_answer(
            &json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}),
            "",
        )),
        ("DELETE", _) => Some(status(200)),
        ("POST", _) if req.body.get("id").is_none() => Some(status(202)),
        _ => None,
    }
}

/// The bridge in front of `url` as an older server, initialized, after
/// `notifications/initialized`.
fn started(url: &str) -> Bridge {
    let mut b = Bridge::start_with_env_removed(
        &["--upstream-revision", "2025-11-25", url],
        &[],
        &support::MACHINE_VARS,
    );
    let result = b.initialize();
    assert_eq!(result["protocolVersion"], "2025-11-25", "{result}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    b
}

/// The GETs of the event stream that resumed with `Last-Event-ID` (or, with `false`, the
/// GETs without it).
fn gets(server: &FakeOlder, resumed: bool) -> Vec<Seen> {
    server
        .seen()
        .into_iter()
        .filter(|s| s.method == "GET" && s.headers.contains_key("last-event-id") == resumed)
        .collect()
}

/// Each GET in `gets` came at least the floor after the stream before it closed.
fn paced(gets: &[Seen], closed: &[Instant]) {
    for get in gets {
        let before = closed.iter().filter(|c| **c <= get.at).max();
        let Some(before) = before else { continue };
        let pause = get.at - *before;
        assert!(
            pause >= RESUME_FLOOR,
            "a GET came {pause:?} after the stream before it closed (retry: 0)"
        );
    }
}

/// L4: a POST's stream that the server closes before its response, whose every resumption
/// brings only an event id and `retry: 0`, is resumed 3 times, each after the floor of 250 ms,
/// then its request fails with `transport_failed` and a warning line; the session goes on.
#[test]
fn l4_a_resumed_stream_that_brings_only_event_ids_fails_its_request_after_three_paced_reconnects() {
    let server = FakeOlder::start(|req| {
        if let Some(answer) = usual(req) {
            return answer;
        }
        match (req.method.as_str(), req.headers.get("last-event-id")) {
            ("POST", _) => stream_then_close("id: 1\nretry: 0\n\n"),
            ("GET", Some(last)) => {
                let next = last.parse::<u64>().unwrap_or(0) + 1;
                stream_then_close(&format!("id: {next}\nretry: 0\n\n"))
            }
            _ => status(405),
        }
    });
    let mut b = started(&server.url);
    let r = b.exchange(&call(2, "wait", json!({})));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(r.to_string().contains("transport_failed"), "{r}");
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: warning: the event stream of the request was resumed 3 times without a message: the bridge gives the request up"
    });
    let resumed = gets(&server, true);
    assert_eq!(resumed.len(), 3, "{resumed:?}");
    paced(&resumed, &server.closed());
    let list = b.exchange(&request(3, "tools/list", json!({})));
    assert_eq!(list["result"]["tools"], json!([]), "{list}");
    b.close_and_expect_exit_0();
}

/// L4: the GET stream of a server that answers each GET with an event id alone and
/// `retry: 0`, then closes, is opened 3 times, each after the floor of 250 ms, then given up
/// with a warning line.
#[test]
fn l4_a_get_stream_that_brings_only_event_ids_is_given_up_after_three_paced_opens() {
    let server = FakeOlder::start(|req| {
        if let Some(answer) = usual(req) {
            return answer;
        }
        match req.method.as_str() {
            "GET" => stream_then_close("id: 7\nretry: 0\n\n"),
            _ => status(404),
        }
    });
    let mut b = started(&server.url);
    b.expect_line(|l| {
        l.starts_with(
            "mcp-bridge-vscode: bridge: warning: the GET stream of the upstream server broke",
        )
    });
    let opened = server
        .seen()
        .into_iter()
        .filter(|s| s.method == "GET")
        .collect::<Vec<_>>();
    assert_eq!(opened.len(), 3, "{opened:?}");
    paced(&opened, &server.closed());
    let list = b.exchange(&request(2, "tools/list", json!({})));
    assert_eq!(list["result"]["tools"], json!([]), "{list}");
    b.close_and_expect_exit_0();
}

/// L4: a notification whose POST never gets an answer holds the dispatcher at most 10 s
/// (`MESSAGE_BOUND`): a warning line, and the request behind it goes.
#[test]
fn l4_a_notification_post_that_never_ends_does_not_hold_the_frames_behind_it() {
    let server = FakeOlder::start(|req| {
        if req.body["method"] == "notifications/initialized" {
            return Answer::Hang;
        }
        usual(req).unwrap_or_else(|| status(405))
    });
    let mut b = started(&server.url);
    let list = b.exchange(&request(2, "tools/list", json!({})));
    assert_eq!(list["result"]["tools"], json!([]), "{list}");
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: warning: a message to the upstream server got no answer within 10 s: the bridge gave it up and sends the next one"
    });
    b.close_and_expect_exit_0();
}
