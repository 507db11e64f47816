//! L4 against a fake older server on 127.0.0.1 that counts its open connections: the bounds of
//! the transport that no process test reaches without the client's side (the cancellation of
//! a request closes its POST).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

use crate::upstream::http::{HttpOptions, HttpTransport};
use crate::upstream::{Outgoing, Transport, TransportEvent};
use crate::wire::reader::RawLine;
use crate::wire::writer::Room;

/// A bound for what the fake server must see (not a pace: each wait ends when it is seen).
const SEEN_BOUND: Duration = Duration::from_secs(10);

/// One request of the fake server: its method line and its JSON body.
async fn read_request(stream: &mut TcpStream) -> Option<(String, Value)> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.ok()?;
    let method = head.split(' ').next().unwrap_or_default().to_owned();
    Some((method, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

/// A fake Streamable HTTP server: `initialize` gets a result and a session, a notification
/// 202, the GET 405, and each `tools/call` an event stream that never ends; `open` counts the
/// connections of those streams that the client has not closed.
async fn hanging_server() -> (String, watch::Receiver<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let (open_tx, open) = watch::channel(0usize);
    let open_tx = Arc::new(open_tx);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let open_tx = Arc::clone(&open_tx);
            tokio::spawn(async move {
                let Some((method, body)) = read_request(&mut stream).await else {
                    return;
                };
                let id = body.get("id").cloned().unwrap_or(Value::Null);
                let answer = match (method.as_str(), body["method"].as_str()) {
                    ("POST", Some("initialize")) => {
                        let result = json!({"jsonrpc":"2.0","id":id,"result":{
                            "protocolVersion":"2025-11-25","capabilities":{},
                            "serverInfo":{"name":"fake","version":"1"}}})
                        .to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{result}",
                            result.len()
                        )
                    }
                    ("POST", Some("tools/call")) => {
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n: open\n\n";
                        if stream.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        open_tx.send_modify(|n| *n += 1);
                        let mut rest = [0u8; 256];
                        while matches!(stream.read(&mut rest).await, Ok(n) if n > 0) {}
                        open_tx.send_modify(|n| *n -= 1);
                        return;
                    }
                    ("POST", _) => {
                        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_owned()
                    }
                    _ => "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_owned(),
                };
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, open)
}

/// The transport to `url` without a sign-in, and the events it sends.
fn link_to(url: &str) -> (Arc<HttpTransport>, mpsc::UnboundedReceiver<TransportEvent>) {
    let (events, rx) = crate::upstream::events::channel();
    let opts = Arc::new(HttpOptions {
        url: url.parse().expect("url"),
        headers: Vec::new(),
        max_response_bytes: 1 << 20,
        extra_roots: Vec::new(),
    });
    let transport = HttpTransport::new(opts, None, events, Room::unlimited()).expect("a client");
    (transport, rx)
}

/// Waits until `open` counts `n`.
async fn open_becomes(open: &mut watch::Receiver<usize>, n: usize) {
    let seen = tokio::time::timeout(SEEN_BOUND, open.wait_for(|o| *o == n))
        .await
        .map(|_| ());
    assert!(
        seen.is_ok(),
        "the server counts {} open streams, not {n}",
        *open.borrow()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l4_a_cancelled_request_closes_its_post_stream() {
    let (url, mut open) = hanging_server().await;
    let (link, mut events) = link_to(&url);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}});
    assert!(link.send(Outgoing::Message(&init)));
    let answer = tokio::time::timeout(SEEN_BOUND, events.recv()).await;
    assert!(
        matches!(answer, Ok(Some(TransportEvent::Line(RawLine::Line(_))))),
        "the initialize result comes"
    );
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert!(link.send(Outgoing::Message(&initialized)));
    let calls = 20;
    for id in 2..2 + calls {
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"wait"}});
        assert!(link.send(Outgoing::Message(&call)));
    }
    open_becomes(&mut open, calls as usize).await;
    for id in 2..2 + calls {
        link.cancel(
            id,
            &crate::upstream::envelope::cancel_frame(id, "the client canceled the request"),
        );
    }
    open_becomes(&mut open, 0).await;
    link.stop();
}
