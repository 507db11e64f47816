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
    fn send_request(&self, _id: i64, _method: &str, frame: &Value) -> bool {
        lock(&self.frames).push(frame.clone());
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
    let sink: NotificationSink = Arc::new(move |method, params| {
        let _ = ntx.send((method, params));
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

/// What a test [`Completion`] saw: progress as `Ok`, the response as `Err` (its id and
/// result), in order.
type Seen = Arc<StdMutex<Vec<Result<Value, (i64, Result<Value, String>)>>>>;

struct Recorded(Seen);

impl Completion for Recorded {
    fn progress(&self, params: Value) {
        lock(&self.0).push(Ok(params));
    }

    fn done(self: Box<Self>, id: i64, result: Result<Body, UpstreamError>) {
        let result = result.map(Body::into_value).map_err(|e| e.to_string());
        lock(&self.0).push(Err((id, result)));
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
    let transport = crate::upstream::lines::LineTransport::spawn(
        our_read,
        our_write,
        1 << 20,
        tx,
        crate::wire::writer::Room::unlimited(),
    );
    let env = Envelope {
        client_info: json!({"name":"c","version":"1"}),
        capabilities: json!({}),
    };
    let (ftx, _frx) = mpsc::unbounded_channel();
    let sink: NotificationSink = Arc::new(|_, _| {});
    let client = UpstreamClient::start(transport, inbox, env, 1 << 20, ftx, sink);
    let lines = tokio::io::BufReader::new(their_read).lines();
    (client, lines, their_write)
}

/// A hot-path choice (bridge/README.md): a request finished by the router gets its progress and then its response, in
/// the upstream's order; one that is given up gets neither, and the upstream its
/// cancellation; at the close, one still in flight gets `Closed`.
#[tokio::test]
async fn o4_an_inline_request_gets_progress_then_its_response_and_none_once_given_up() {
    use tokio::io::AsyncWriteExt;
    let (client, mut upstream, mut reply) = over_lines();
    let seen: Seen = Arc::default();
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
    let answered = client.reserve_id();
    let line = client.request_line(answered, "tools/call", &params, &opts);
    client.send_inline(answered, line, Box::new(Recorded(Arc::clone(&seen))));
    let given_up = client.reserve_id();
    let line = client.request_line(given_up, "tools/call", &params, &opts);
    client.send_inline(given_up, line, Box::new(Recorded(Arc::clone(&seen))));
    let open = client.reserve_id();
    let line = client.request_line(open, "tools/list", &LazyObject::new(), &opts);
    client.send_inline(open, line, Box::new(Recorded(Arc::clone(&seen))));
    let first = next().await;
    assert_eq!(first["id"], answered);
    assert_eq!(first["params"]["name"], "echo");
    assert_eq!(first["params"]["_meta"]["progressToken"], answered);
    assert_eq!(next().await["id"], given_up);
    assert_eq!(next().await["id"], open);
    assert!(client.give_up(given_up, "the client canceled the request"));
    assert!(!client.give_up(given_up, "twice"), "given up once");
    assert_eq!(
        next().await,
        envelope::cancel_frame(given_up, "the client canceled the request")
    );
    let upstream_lines = [
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":answered,"progress":1}}),
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":given_up,"progress":1}}),
        json!({"jsonrpc":"2.0","id":given_up,"result":{}}),
        json!({"jsonrpc":"2.0","id":answered,"result":{"content":[]}}),
    ];
    for v in upstream_lines {
        reply
            .write_all(format!("{v}\n").as_bytes())
            .await
            .expect("write");
    }
    // The end of the upstream: the request still in flight gets `Closed`.
    reply.shutdown().await.expect("shutdown");
    let mut end = client.transport().end_watch();
    // The router has seen the end of the lines before the transport reports its end.
    let ended = tokio::time::timeout(bound, end.wait_for(Option::is_some)).await;
    assert!(ended.expect("the end in time").is_ok());
    let seen = lock(&seen).clone();
    assert_eq!(
        seen,
        [
            Ok(json!({"progressToken":answered,"progress":1})),
            Err((answered, Ok(json!({"content":[]})))),
            Err((open, Err(UpstreamError::Closed.to_string()))),
        ]
    );
    assert!(client.is_closed());
}
