//! Unit tests of the upstream client (a recording transport, events by hand).
use super::*;
use crate::upstream::ExitInfo;
use crate::upstream::events::{Events, events};
use serde_json::json;
use std::sync::Mutex as StdMutex;
use tokio::sync::watch;

/// A transport that records frames.
struct Recorder {
    frames: StdMutex<Vec<Value>>,
    exit: watch::Sender<Option<Ended>>,
}

impl Transport for Recorder {
    fn send(&self, frame: Outgoing<'_>) -> bool {
        let value = match frame {
            Outgoing::Request(request) => request.to_value(),
            Outgoing::Message(message) => message.clone(),
        };
        lock(&self.frames).push(value);
        true
    }
    fn cancel(&self, _id: i64, frame: &Value) {
        lock(&self.frames).push(frame.clone());
    }
    fn stop(&self) {
        let _ = self.exit.send(Some(Ended { exit: None }));
    }
    fn end_watch(&self) -> watch::Receiver<Option<Ended>> {
        self.exit.subscribe()
    }
}

/// What the sink of a test client received.
type Notes = mpsc::UnboundedReceiver<(String, Option<Value>)>;

fn setup() -> (
    Arc<UpstreamClient>,
    Arc<Recorder>,
    Events,
    mpsc::UnboundedReceiver<ClientEvent>,
    Notes,
) {
    let (exit, _) = watch::channel(None);
    let rec = Arc::new(Recorder {
        frames: StdMutex::new(Vec::new()),
        exit,
    });
    let (tx, rx) = events();
    let (ftx, frx) = mpsc::unbounded_channel();
    let env = Envelope {
        client_info: json!({"name":"c","version":"1"}),
        capabilities: json!({}),
    };
    let (ntx, nrx) = mpsc::unbounded_channel();
    let sink: IncomingSink = Arc::new(move |incoming| {
        if let Incoming::Notification { method, params } = incoming {
            let _ = ntx.send((method, params));
        }
    });
    let client = UpstreamClient::start(rec.clone(), rx, env, 1 << 20, ftx, sink);
    (client, rec, tx, frx, nrx)
}

fn line(v: Value) -> TransportEvent {
    TransportEvent::Line(RawLine::Line(v.to_string().into_bytes()))
}

#[tokio::test]
async fn o4_progress_is_routed_by_request_and_comes_before_the_response() {
    let (client, rec, tx, _f, _n) = setup();
    let opts = RequestOptions {
        progress: true,
        ..Default::default()
    };
    let mut call = client
        .request("tools/call", Map::new(), &opts)
        .expect("sent");
    let id = call.id();
    assert_eq!(lock(&rec.frames)[0]["params"]["_meta"]["progressToken"], id);
    for i in 1..=3 {
        tx.send(line(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":id,"progress":i}})));
    }
    assert!(tx.send(line(
        json!({"jsonrpc":"2.0","id":id,"result":{"content":[]}}),
    )));
    for i in 1..=3 {
        match call.next().await {
            CallEvent::Progress(p) => assert_eq!(p["progress"], i),
            other => panic!("{other:?}"),
        }
    }
    match call.next().await {
        CallEvent::Done(Ok(r)) => assert_eq!(r.into_value(), json!({"content":[]})),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn quirk_upstream_cancelled_is_dropped_and_errors_pass() {
    let (client, _rec, tx, _f, mut notes) = setup();
    let mut call = client
        .request("tools/list", Map::new(), &RequestOptions::default())
        .expect("sent");
    assert!(tx.send(line(
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}),
    )));
    tx.send(line(json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}})));
    assert!(tx.send(line(
        json!({"jsonrpc":"2.0","id":call.id(),"error":{"code":-32601,"message":"m"}}),
    )));
    match call.next().await {
        CallEvent::Done(Err(UpstreamError::Rpc(e))) => assert_eq!(e["code"], -32601),
        other => panic!("{other:?}"),
    }
    match notes.recv().await {
        Some((method, _)) => assert_eq!(method, "notifications/message"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn m3_the_upstream_cancellation_ends_only_a_listen_stream() {
    let (client, _rec, tx, _f, _n) = setup();
    let stream = RequestOptions {
        stream: true,
        ..Default::default()
    };
    let mut listen = client
        .request("subscriptions/listen", Map::new(), &stream)
        .expect("sent");
    let mut call = client
        .request("tools/call", Map::new(), &RequestOptions::default())
        .expect("sent");
    for id in [listen.id(), call.id()] {
        assert!(tx.send(line(
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}),
        )));
    }
    assert!(matches!(
        listen.next().await,
        CallEvent::Done(Err(UpstreamError::Ended))
    ));
    assert!(tx.send(line(json!({"jsonrpc":"2.0","id":call.id(),"result":{}}))));
    assert!(matches!(call.next().await, CallEvent::Done(Ok(_))));
}

#[tokio::test]
async fn dropping_a_call_cancels_it_upstream() {
    let (client, rec, _tx, _f, _n) = setup();
    let call = client
        .request("tools/call", Map::new(), &RequestOptions::default())
        .expect("sent");
    let id = call.id();
    call.cancel("the client canceled the request");
    let call2 = client
        .request("tools/call", Map::new(), &RequestOptions::default())
        .expect("sent");
    drop(call2);
    let frames = lock(&rec.frames).clone();
    assert_eq!(
        frames[1],
        envelope::cancel_frame(id, "the client canceled the request")
    );
    assert_eq!(
        frames[3]["params"]["reason"],
        "the client closed the connection"
    );
    assert_eq!(frames.len(), 4);
}

#[tokio::test]
async fn close_fails_every_call_and_later_requests() {
    let (client, _rec, tx, mut front, _n) = setup();
    let mut call = client
        .request("tools/call", Map::new(), &RequestOptions::default())
        .expect("sent");
    tx.send(TransportEvent::Closed);
    assert!(matches!(
        call.next().await,
        CallEvent::Done(Err(UpstreamError::Closed))
    ));
    assert!(matches!(
        client.request("x", Map::new(), &RequestOptions::default()),
        Err(UpstreamError::Closed)
    ));
    let ended = Ended {
        exit: Some(ExitInfo::Code(3)),
    };
    tx.send(TransportEvent::Ended(ended));
    assert!(matches!(front.recv().await, Some(ClientEvent::Ended(e)) if e == ended));
}

#[tokio::test]
async fn a_failed_request_fails_only_its_call_and_a_late_failure_changes_nothing() {
    let (client, _rec, tx, _f, _n) = setup();
    let opts = RequestOptions::default();
    let mut failed = client
        .request("tools/call", Map::new(), &opts)
        .expect("sent");
    let mut answered = client
        .request("tools/call", Map::new(), &opts)
        .expect("sent");
    assert!(tx.send(TransportEvent::Failed {
        id: failed.id(),
        error: UpstreamError::HttpStatus(503),
    }));
    assert!(tx.send(line(
        json!({"jsonrpc":"2.0","id":answered.id(),"result":{}}),
    )));
    assert!(tx.send(TransportEvent::Failed {
        id: answered.id(),
        error: UpstreamError::TransportFailed("x".into()),
    }));
    assert!(matches!(
        failed.next().await,
        CallEvent::Done(Err(UpstreamError::HttpStatus(503)))
    ));
    assert!(matches!(answered.next().await, CallEvent::Done(Ok(_))));
    assert!(!client.is_closed(), "the connection goes on");
    assert!(client.request("tools/list", Map::new(), &opts).is_ok());
}

#[tokio::test]
async fn a_bad_line_with_the_id_of_a_call_fails_that_call() {
    let (client, _rec, tx, _f, _n) = setup();
    let mut call = client
        .request("tools/call", Map::new(), &RequestOptions::default())
        .expect("sent");
    let head = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"x\":\"",
        call.id()
    );
    assert!(tx.send(TransportEvent::Line(RawLine::TooLong {
        head: head.into_bytes(),
        tail: b"xx\"}}".to_vec(),
    })));
    match call.next().await {
        CallEvent::Done(Err(UpstreamError::InvalidResponse(why))) => {
            assert!(why.starts_with("line_too_long"))
        }
        other => panic!("{other:?}"),
    }
}

/// A client over a real transport of lines; the test plays the upstream server on the
/// other ends of the pipes.
fn over_lines() -> (
    Arc<UpstreamClient>,
    tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
) {
    use tokio::io::AsyncBufReadExt;
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (our_read, our_write) = tokio::io::split(ours);
    let (their_read, their_write) = tokio::io::split(theirs);
    let (tx, inbox) = events();
    let transport = crate::upstream::lines::LineTransport::spawn_with_grace(
        our_read,
        our_write,
        1 << 20,
        tx,
        crate::wire::writer::Room::unlimited(),
        None,
    );
    let env = Envelope {
        client_info: json!({"name":"c","version":"1"}),
        capabilities: json!({}),
    };
    let (ftx, _frx) = mpsc::unbounded_channel();
    let sink: IncomingSink = Arc::new(|_| {});
    let client = UpstreamClient::start(transport, inbox, env, 1 << 20, ftx, sink);
    let lines = tokio::io::BufReader::new(their_read).lines();
    (client, lines, their_write)
}

/// O4 over a real transport of lines: a call gets its progress and then its response, in the
/// upstream's order; one that is given up gets neither, and the upstream its cancellation;
/// at the close, one still in flight gets `Closed`.
#[tokio::test]
async fn o4_over_lines_progress_then_the_response_none_once_given_up_and_closed_at_the_end() {
    use tokio::io::AsyncWriteExt;
    let (client, mut upstream, mut reply) = over_lines();
    let opts = RequestOptions {
        progress: true,
        ..Default::default()
    };
    let params = LazyObject::from(
        json!({"name":"echo"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    );
    // Every wait of the test is bounded.
    let bound = std::time::Duration::from_secs(10);
    let mut next = async || -> Value {
        let line = tokio::time::timeout(bound, upstream.next_line())
            .await
            .expect("a line in time");
        serde_json::from_str(&line.ok().flatten().unwrap_or_default()).unwrap_or_default()
    };
    let mut answered = client
        .request_with("tools/call", &params, &opts)
        .expect("sent");
    let given_up = client
        .request_with("tools/call", &params, &opts)
        .expect("sent");
    let mut open = client
        .request_with("tools/list", &LazyObject::new(), &opts)
        .expect("sent");
    let (answered_id, given_up_id) = (answered.id(), given_up.id());
    let first = next().await;
    assert_eq!(first["id"], answered_id);
    assert_eq!(first["params"]["name"], "echo");
    assert_eq!(first["params"]["_meta"]["progressToken"], answered_id);
    assert_eq!(next().await["id"], given_up_id);
    assert_eq!(next().await["id"], open.id());
    given_up.cancel("the client canceled the request");
    assert!(!client.give_up(given_up_id, "twice"), "given up once");
    assert_eq!(
        next().await,
        envelope::cancel_frame(given_up_id, "the client canceled the request")
    );
    let upstream_lines = [
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":answered_id,"progress":1}}),
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":given_up_id,"progress":1}}),
        json!({"jsonrpc":"2.0","id":given_up_id,"result":{}}),
        json!({"jsonrpc":"2.0","id":answered_id,"result":{"content":[]}}),
    ];
    for v in upstream_lines {
        reply
            .write_all(format!("{v}\n").as_bytes())
            .await
            .expect("write");
    }
    // The end of the upstream: the request still in flight gets `Closed`.
    reply.shutdown().await.expect("shutdown");
    match tokio::time::timeout(bound, answered.next())
        .await
        .expect("progress in time")
    {
        CallEvent::Progress(p) => assert_eq!(p, json!({"progressToken":answered_id,"progress":1})),
        other => panic!("{other:?}"),
    }
    match tokio::time::timeout(bound, answered.next())
        .await
        .expect("the response in time")
    {
        CallEvent::Done(Ok(body)) => assert_eq!(body.into_value(), json!({"content":[]})),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        tokio::time::timeout(bound, open.next())
            .await
            .expect("the end in time"),
        CallEvent::Done(Err(UpstreamError::Closed))
    ));
    assert!(client.is_closed());
}
