//! The upstream client: integer ids, the `_meta` envelope, routing of responses and progress
//! by request, `notifications/cancelled` for a request that the bridge gives up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use super::envelope::{self, Envelope};
use super::{Ended, Transport, TransportEvent, UpstreamError};
use crate::log::{self, Level, Scope};
use crate::translate::level::LogLevel;
use crate::wire::parse::{self, Message, Parsed};
use crate::wire::reader::RawLine;

/// Progress notifications kept per request while the request task is busy; more are dropped
/// (progress is advisory, and a flood must not grow memory without a bound).
const PROGRESS_QUEUE: usize = 256;

/// What the front learns of the upstream server besides responses.
#[derive(Debug)]
pub enum ClientEvent {
    /// The connection is gone (the upstream process and its tree, where there is one).
    Ended(Ended),
}

/// Takes each notification of the upstream server that belongs to no request (M3: the events
/// of the listen streams and the log messages). It runs on the router, before the router reads
/// the next line: so whatever it writes to the one writer of VS Code is queued before the
/// response of any later line is even routed (the quirk on the order of list changes and
/// results). It must not block.
pub type NotificationSink = Arc<dyn Fn(String, Option<Value>) + Send + Sync>;

struct Pending {
    progress: Option<mpsc::Sender<Value>>,
    done: oneshot::Sender<Result<Value, UpstreamError>>,
    /// A listen stream: a `notifications/cancelled` of the upstream server for it ends it.
    stream: bool,
}

/// Options of one upstream request.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// The level of VS Code's last `logging/setLevel`.
    pub log_level: Option<LogLevel>,
    /// True when VS Code asked for progress: the request gets a progress token.
    pub progress: bool,
    /// R3: the `_meta` keys of VS Code that go upstream.
    pub meta: Map<String, Value>,
    /// A `subscriptions/listen` stream (M3): the upstream server may end it with
    /// `notifications/cancelled` instead of (or as well as) its result.
    pub stream: bool,
}

/// One 2026-07-28 client over one transport.
pub struct UpstreamClient {
    transport: Arc<dyn Transport>,
    envelope: Envelope,
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, Pending>>,
    closed: AtomicBool,
    max_line_bytes: usize,
}

/// What a request task reads from its call.
#[derive(Debug)]
pub enum CallEvent {
    /// The params of a `notifications/progress` of this request.
    Progress(Value),
    /// The response: the result, or why there is none.
    Done(Result<Value, UpstreamError>),
}

/// One request in flight upstream. Dropping it before its response cancels it upstream.
pub struct Call {
    id: i64,
    client: Arc<UpstreamClient>,
    progress: Option<mpsc::Receiver<Value>>,
    done: oneshot::Receiver<Result<Value, UpstreamError>>,
    finished: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while the lock was held cannot leave the map half-changed (each change is one
    // call), so the data stays usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl UpstreamClient {
    /// Makes the client and starts its router, which reads `events` of the transport and
    /// reports unrouted notifications and the exit to `front`.
    pub fn start(
        transport: Arc<dyn Transport>,
        events: mpsc::UnboundedReceiver<TransportEvent>,
        envelope: Envelope,
        max_line_bytes: usize,
        front: mpsc::UnboundedSender<ClientEvent>,
        sink: NotificationSink,
    ) -> Arc<UpstreamClient> {
        let client = Arc::new(UpstreamClient {
            transport,
            envelope,
            next_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            max_line_bytes,
        });
        tokio::spawn(route(Arc::clone(&client), events, front, sink));
        client
    }

    /// The client capabilities that the bridge declared upstream (VS Code's, after the mask of
    /// C2): the input kinds that an input round may ask VS Code for (R8).
    pub fn capabilities(&self) -> &Value {
        &self.envelope.capabilities
    }

    /// See [`Transport::tools_listed`].
    pub fn tools_listed(&self, result: &mut Value) {
        self.transport.tools_listed(result);
    }

    /// The transport (for the stop sequence and the watchdog).
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// True when the upstream server sends nothing more.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Sends one request. The call is registered before the frame goes out, so that no
    /// response can come before its entry.
    pub fn request(
        self: &Arc<Self>,
        method: &str,
        params: Map<String, Value>,
        opts: &RequestOptions,
    ) -> Result<Call, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (done_tx, done_rx) = oneshot::channel();
        let (progress_tx, progress_rx) = if opts.progress {
            let (tx, rx) = mpsc::channel(PROGRESS_QUEUE);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let meta = self
            .envelope
            .meta(opts.log_level, opts.progress.then_some(id), &opts.meta);
        let frame = envelope::request_frame(id, method, params, meta);
        {
            let mut pending = lock(&self.pending);
            if self.is_closed() {
                return Err(UpstreamError::Closed);
            }
            pending.insert(
                id,
                Pending {
                    progress: progress_tx,
                    done: done_tx,
                    stream: opts.stream,
                },
            );
        }
        if !self.transport.send_request(id, method, &frame) {
            lock(&self.pending).remove(&id);
            return Err(UpstreamError::Closed);
        }
        Ok(Call {
            id,
            client: Arc::clone(self),
            progress: progress_rx,
            done: done_rx,
            finished: false,
        })
    }

    /// Sends `notifications/cancelled` for a request that is still pending.
    fn cancel(&self, id: i64, reason: &str) {
        if lock(&self.pending).remove(&id).is_some() && !self.is_closed() {
            self.transport
                .cancel(id, &envelope::cancel_frame(id, reason));
        }
    }

    /// Fails every request in flight: the upstream server sends nothing more.
    fn close_all(&self) {
        let drained: Vec<Pending> = {
            let mut pending = lock(&self.pending);
            self.closed.store(true, Ordering::SeqCst);
            pending.drain().map(|(_, p)| p).collect()
        };
        for p in drained {
            let _ = p.done.send(Err(UpstreamError::Closed));
        }
    }

    fn complete(&self, id: &Value, body: Result<Value, UpstreamError>) -> bool {
        let Some(id) = id.as_i64() else {
            return false;
        };
        match lock(&self.pending).remove(&id) {
            Some(p) => {
                let _ = p.done.send(body);
                true
            }
            None => false,
        }
    }

    /// M3: the upstream server cancelled a request; only a listen stream ends by it (the
    /// server ends its streams at its stop with a result, a cancellation, or both, in either
    /// order). Nothing of it reaches VS Code.
    fn cancelled_by_server(&self, params: Option<&Value>) {
        let Some(id) = params
            .and_then(|p| p.get("requestId"))
            .and_then(Value::as_i64)
        else {
            return;
        };
        let mut pending = lock(&self.pending);
        if pending.get(&id).is_some_and(|p| p.stream)
            && let Some(p) = pending.remove(&id)
        {
            let _ = p.done.send(Err(UpstreamError::Ended));
        }
    }

    fn progress(&self, params: Option<Value>) {
        let Some(params) = params else {
            return;
        };
        let Some(token) = params.get("progressToken").and_then(Value::as_i64) else {
            log::bridge(
                Level::Debug,
                "dropped a progress notification of the upstream server without a known token",
            );
            return;
        };
        let pending = lock(&self.pending);
        if let Some(tx) = pending.get(&token).and_then(|p| p.progress.as_ref()) {
            let _ = tx.try_send(params);
        }
    }

    /// Stops the transport and waits until the connection (the upstream and its tree) is
    /// gone.
    pub async fn shutdown(&self) -> Option<Ended> {
        self.transport.stop();
        let mut watch = self.transport.end_watch();
        watch.wait_for(Option::is_some).await.ok().and_then(|v| *v)
    }
}

async fn route(
    client: Arc<UpstreamClient>,
    mut events: mpsc::UnboundedReceiver<TransportEvent>,
    front: mpsc::UnboundedSender<ClientEvent>,
    sink: NotificationSink,
) {
    while let Some(event) = events.recv().await {
        match event {
            TransportEvent::Line(RawLine::Line(line)) => {
                handle(&client, parse::parse_line(&line), &sink)
            }
            TransportEvent::Line(RawLine::TooLong { head, tail }) => handle(
                &client,
                parse::too_long(&head, &tail, client.max_line_bytes),
                &sink,
            ),
            TransportEvent::Line(RawLine::Eof) | TransportEvent::Closed => client.close_all(),
            // After the response of the request this changes nothing.
            TransportEvent::Failed { id, error } => {
                client.complete(&Value::from(id), Err(error));
            }
            TransportEvent::Ended(ended) => {
                client.close_all();
                let _ = front.send(ClientEvent::Ended(ended));
                // Nothing comes after the end; the router lets the connection go.
                return;
            }
        }
    }
    client.close_all();
}

fn handle(client: &UpstreamClient, parsed: Parsed, sink: &NotificationSink) {
    match parsed {
        Parsed::Message(Message::Response { id, body }) => {
            let body = body.map_err(UpstreamError::Rpc);
            if !client.complete(&id, body) {
                log::bridge(
                    Level::Debug,
                    "dropped a response of the upstream server to no request in flight",
                );
            }
        }
        Parsed::Message(Message::Notification { method, params }) => match method.as_str() {
            "notifications/progress" => client.progress(params),
            // Quirk of M1: the ids of VS Code and of the upstream are both integers; a
            // cancellation of the upstream must never reach VS Code.
            "notifications/cancelled" => {
                client.cancelled_by_server(params.as_ref());
                log::bridge(
                    Level::Debug,
                    "dropped the notification notifications/cancelled of the upstream server",
                )
            }
            _ => sink(method, params),
        },
        Parsed::Message(Message::Request { method, .. }) => log::bridge(
            Level::Debug,
            &format!(
                "dropped the request {method} of the upstream server: a server of revision 2026-07-28 sends no requests"
            ),
        ),
        Parsed::Invalid { id, cause, detail } => {
            let why = detail.map_or_else(
                || cause.name().to_owned(),
                |d| format!("{} ({d})", cause.name()),
            );
            // The contract's line `mcp_router: warning: dropped <frame>: <outcome>`.
            log::write(
                Scope::McpRouter,
                Level::Warn,
                &format!("dropped a line of the upstream server: {why}"),
            );
            client.complete(&id, Err(UpstreamError::InvalidResponse(why)));
        }
        Parsed::BadAnswer { .. } | Parsed::Dropped => {
            log::write(
                Scope::McpRouter,
                Level::Warn,
                "dropped a line of the upstream server: a response without a valid id",
            );
        }
    }
}

impl Call {
    /// The upstream id of this request (also its progress token).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The next progress or the response. Progress that the upstream sent before its
    /// response always comes first.
    pub async fn next(&mut self) -> CallEvent {
        if self.finished {
            return CallEvent::Done(Err(UpstreamError::Closed));
        }
        let done = match self.progress.as_mut() {
            Some(progress) => tokio::select! {
                biased;
                Some(p) = progress.recv() => return CallEvent::Progress(p),
                done = &mut self.done => done,
            },
            None => (&mut self.done).await,
        };
        // Progress queued before the response still goes first.
        if let Some(p) = self.progress.as_mut().and_then(|rx| rx.try_recv().ok()) {
            self.done = resolved(done);
            return CallEvent::Progress(p);
        }
        self.finished = true;
        CallEvent::Done(done.unwrap_or(Err(UpstreamError::Closed)))
    }

    /// Gives the request up: `notifications/cancelled` with the reason goes upstream.
    pub fn cancel(mut self, reason: &str) {
        self.finished = true;
        self.client.cancel(self.id, reason);
    }
}

/// A receiver that already holds a value (to put a response back behind queued progress).
fn resolved(
    value: Result<Result<Value, UpstreamError>, oneshot::error::RecvError>,
) -> oneshot::Receiver<Result<Value, UpstreamError>> {
    let (tx, rx) = oneshot::channel();
    let _ = tx.send(value.unwrap_or(Err(UpstreamError::Closed)));
    rx
}

impl Drop for Call {
    fn drop(&mut self) {
        if !self.finished {
            self.client
                .cancel(self.id, "the client closed the connection");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::ExitInfo;
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
        mpsc::UnboundedSender<TransportEvent>,
        mpsc::UnboundedReceiver<ClientEvent>,
        Notes,
    ) {
        let (exit, _) = watch::channel(None);
        let rec = Arc::new(Recorder {
            frames: StdMutex::new(Vec::new()),
            exit,
        });
        let (tx, rx) = mpsc::unbounded_channel();
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
            tx.send(line(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":id,"progress":i}}))).ok();
        }
        tx.send(line(
            json!({"jsonrpc":"2.0","id":id,"result":{"content":[]}}),
        ))
        .ok();
        for i in 1..=3 {
            match call.next().await {
                CallEvent::Progress(p) => assert_eq!(p["progress"], i),
                other => panic!("{other:?}"),
            }
        }
        match call.next().await {
            CallEvent::Done(Ok(r)) => assert_eq!(r, json!({"content":[]})),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn quirk_upstream_cancelled_is_dropped_and_errors_pass() {
        let (client, _rec, tx, _f, mut notes) = setup();
        let mut call = client
            .request("tools/list", Map::new(), &RequestOptions::default())
            .expect("sent");
        tx.send(line(
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}),
        ))
        .ok();
        tx.send(line(json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}))).ok();
        tx.send(line(
            json!({"jsonrpc":"2.0","id":call.id(),"error":{"code":-32601,"message":"m"}}),
        ))
        .ok();
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
            tx.send(line(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}))).ok();
        }
        assert!(matches!(
            listen.next().await,
            CallEvent::Done(Err(UpstreamError::Ended))
        ));
        tx.send(line(json!({"jsonrpc":"2.0","id":call.id(),"result":{}})))
            .ok();
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
        tx.send(TransportEvent::Closed).ok();
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
        tx.send(TransportEvent::Ended(ended)).ok();
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
        tx.send(TransportEvent::Failed {
            id: failed.id(),
            error: UpstreamError::HttpStatus(503),
        })
        .ok();
        tx.send(line(
            json!({"jsonrpc":"2.0","id":answered.id(),"result":{}}),
        ))
        .ok();
        tx.send(TransportEvent::Failed {
            id: answered.id(),
            error: UpstreamError::TransportFailed("x".into()),
        })
        .ok();
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
        tx.send(TransportEvent::Line(RawLine::TooLong {
            head: head.into_bytes(),
            tail: b"xx\"}}".to_vec(),
        }))
        .ok();
        match call.next().await {
            CallEvent::Done(Err(UpstreamError::InvalidResponse(why))) => {
                assert!(why.starts_with("line_too_long"))
            }
            other => panic!("{other:?}"),
        }
    }
}
