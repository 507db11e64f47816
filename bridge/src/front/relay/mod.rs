//! L1–L3: the relay of an upstream server of revision 2025-11-25 or older
//! (docs/older-servers.md). The connection, the states, the stop and the exit stay the
//! front's; the relay takes every line of the upstream server from the router
//! ([`UpstreamClient::relay_lines`]) and every line of VS Code from the dispatch once the
//! `initialize` of the older server succeeded.
//!
//! Ids: each request of VS Code goes upstream with an integer id of the upstream client's own
//! counter, so that it never meets the id of the `server/discover` before it; its progress
//! token is that id (C3). The requests of the upstream server reach VS Code with the bridge's
//! string ids `b-1`, `b-2`, … ([`super::client_requests`]) that no id of VS Code can equal.
//!
//! Modules: this one holds the table of VS Code's requests and the upstream's notifications;
//! [`server_requests`] the requests of the upstream server to VS Code.

mod server_requests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::Shared;
use super::inflight::{REASON_TIMEOUT, Slot, key_of};
use super::request::{complete, error_of, timed_out};
use crate::errors::{Cause, error_object, upstream_error};
use crate::input::check::ClientCaps;
use crate::log::{self, Level};
use crate::translate::forward::{LIST_TIMEOUT, MethodClass, classify};
use crate::translate::icons::keep_data_icons;
use crate::translate::initialize::InitializeParams;
use crate::translate::level;
use crate::translate::older::{accepted_revision, upstream_cancel, upstream_request};
use crate::upstream::UpstreamError;
use crate::upstream::client::{
    Relayed, UpstreamClient, dropped_invalid_line, dropped_line_without_id,
};
use crate::wire::parse::{self, Message, Parsed};
use crate::wire::reader::RawLine;

/// The relay of one older upstream server.
pub(crate) struct Relay {
    client: Arc<UpstreamClient>,
    /// VS Code's requests upstream, by the bridge's integer id.
    pending: Mutex<HashMap<i64, Pending>>,
    /// The upstream server's requests to VS Code that wait for an answer: the key of the
    /// server's id → the bridge's `b-` id (for a cancellation of the server).
    asked: Mutex<HashMap<String, String>>,
    /// The input kinds that VS Code declared (C2, O1, O2, O3).
    caps: ClientCaps,
    /// VS Code's `logging/setLevel` went upstream (else the level of one that the front
    /// answered before the result goes upstream after `notifications/initialized`, O5).
    level_sent: AtomicBool,
    /// O10: an upstream server at a URL.
    remote: bool,
}

/// One request of VS Code (or of the bridge) upstream.
struct Pending {
    /// VS Code's request, and the token of its progress (O4).
    slot: Option<Slot>,
    token: Option<Value>,
    done: oneshot::Sender<Result<Value, UpstreamError>>,
}

/// How the `initialize` of an older server ended.
pub(crate) enum Initialized {
    /// The result for VS Code.
    Ready(Value),
    /// The error for VS Code, after its warning line.
    Failed(Value),
    /// VS Code cancelled `initialize`, or stdin ended.
    Cancelled,
}

/// What the dispatch does with a line of VS Code while the relay serves.
pub(crate) enum Taken {
    /// Nothing more: the relay took it.
    Done,
    /// A request to relay: the dispatch admits it, then calls [`forward`].
    Forward {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// The front's own: answers of VS Code to `b-` requests, cancellations, `initialize`,
    /// `server/discover`, lines that are not valid.
    Front(Parsed),
}

impl Relay {
    /// Takes the lines of `client` over (L2). The hook holds the connection and the relay
    /// weakly: the upstream client must not keep them alive.
    pub(crate) fn start(
        shared: &Arc<Shared>,
        client: &Arc<UpstreamClient>,
        init: &InitializeParams,
    ) -> Arc<Relay> {
        let relay = Arc::new(Relay {
            client: Arc::clone(client),
            pending: Mutex::new(HashMap::new()),
            asked: Mutex::new(HashMap::new()),
            caps: ClientCaps::from_capabilities(&init.capabilities),
            level_sent: AtomicBool::new(false),
            remote: shared.opts.upstream.is_remote(),
        });
        let weak_shared = Arc::downgrade(shared);
        let weak_relay: Weak<Relay> = Arc::downgrade(&relay);
        client.relay_lines(Box::new(move |event| {
            if let (Some(shared), Some(relay)) = (weak_shared.upgrade(), weak_relay.upgrade()) {
                match event {
                    Relayed::Line(line) => relay.on_upstream_line(&shared, line),
                    Relayed::Failed(id, error) => relay.failed(id, error),
                }
            }
        }));
        relay
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<i64, Pending>> {
        crate::sync::lock(&self.pending)
    }

    fn asked(&self) -> MutexGuard<'_, HashMap<String, String>> {
        crate::sync::lock(&self.asked)
    }

    /// One frame to the upstream server; false when it takes no more.
    fn send(&self, frame: &Value) -> bool {
        self.client
            .transport()
            .relay_link()
            .is_some_and(|link| link.send(frame))
    }

    /// Sends a request upstream with the next id; its answer comes on the receiver.
    fn request(
        &self,
        method: &str,
        params: Option<Value>,
        slot: Option<Slot>,
    ) -> Option<(i64, oneshot::Receiver<Result<Value, UpstreamError>>)> {
        let id = self.client.reserve_id();
        let (frame, token) = upstream_request(id, method, params);
        let (done, rx) = oneshot::channel();
        self.pending().insert(id, Pending { slot, token, done });
        if self.send(&frame) {
            Some((id, rx))
        } else {
            self.pending().remove(&id);
            None
        }
    }

    /// Gives up request `id` upstream (a cancellation or a time-out of VS Code's side): its
    /// late answer is dropped. False when it was answered already.
    fn give_up(&self, id: i64, reason: &str) -> bool {
        let gone = self.pending().remove(&id).is_some();
        if gone {
            self.send(&upstream_cancel(id, reason));
        }
        gone
    }

    /// L1: VS Code's `initialize` upstream, as VS Code sent it, within `timeout`.
    pub(crate) async fn initialize(
        &self,
        slot: &Slot,
        init: &InitializeParams,
        timeout: Duration,
    ) -> Initialized {
        let failed = |detail: String, error: Value| {
            log::bridge(
                Level::Warn,
                &format!("initialize of the older upstream server failed: {detail}"),
            );
            Initialized::Failed(error)
        };
        let Some((id, answer)) = self.request("initialize", Some(init.raw.clone()), None) else {
            return failed(
                "the upstream server closed its input".to_owned(),
                error_object(Cause::UpstreamExited, None),
            );
        };
        let answer = tokio::select! {
            answer = answer => answer,
            () = slot.token.cancelled() => {
                self.give_up(id, slot.reason());
                return Initialized::Cancelled;
            }
            () = tokio::time::sleep(timeout) => {
                self.give_up(id, REASON_TIMEOUT);
                return failed(
                    format!("no response in {}", crate::errors::format_limit(timeout)),
                    timed_out(slot, timeout),
                );
            }
        };
        let mut result = match answer {
            Ok(Ok(result)) => result,
            Ok(Err(UpstreamError::Rpc(error))) => {
                let code = error.get("code").cloned().unwrap_or(Value::Null);
                return failed(
                    format!("the upstream server answered with the error {code}"),
                    upstream_error(error),
                );
            }
            Ok(Err(error)) => return failed(error.to_string(), error_of(error)),
            Err(_) => {
                return failed(
                    "the upstream server closed its output".to_owned(),
                    error_object(Cause::UpstreamExited, None),
                );
            }
        };
        let Some(revision) = accepted_revision(&result).map(str::to_owned) else {
            let named = result
                .get("protocolVersion")
                .cloned()
                .unwrap_or(Value::Null);
            return failed(
                format!("the upstream server answered with the revision {named}"),
                error_object(
                    Cause::InvalidResponse,
                    Some(&format!(
                        "initialize: the revision {named} is not one that the bridge relays"
                    )),
                ),
            );
        };
        // R1: the bridge declares no tasks to VS Code (it relays no task results).
        if let Some(caps) = result
            .get_mut("capabilities")
            .and_then(Value::as_object_mut)
        {
            caps.remove("tasks");
        }
        if self.remote {
            keep_data_icons("initialize", &mut result);
        }
        log::bridge(
            Level::Info,
            &format!("the upstream server speaks revision {revision}: the bridge relays it"),
        );
        Initialized::Ready(result)
    }

    /// L2: a line of VS Code while the relay serves.
    pub(crate) fn take(&self, shared: &Shared, parsed: Parsed) -> Taken {
        match parsed {
            Parsed::Message(Message::Request { id, method, params }) => match method.as_str() {
                // R2, C1: the front's answers (already_initialized, -32601).
                "initialize" | "server/discover" => {
                    Taken::Front(Parsed::Message(Message::Request { id, method, params }))
                }
                _ => {
                    if method == "logging/setLevel" {
                        // O5: the level also filters the log messages that reach VS Code.
                        if let Some(level) = level::set_level_params(params.as_ref()) {
                            shared.level.store(level.rank() + 1, Ordering::Relaxed);
                        }
                        self.level_sent.store(true, Ordering::Relaxed);
                    }
                    Taken::Forward { id, method, params }
                }
            },
            Parsed::Message(Message::Notification { method, params })
                if method != "notifications/cancelled" =>
            {
                self.send(&notification(&method, params));
                if method == "notifications/initialized" {
                    shared.initialized.store(true, Ordering::Release);
                    self.send_saved_level(shared);
                }
                Taken::Done
            }
            other => Taken::Front(other),
        }
    }

    /// O5: a `logging/setLevel` that the front answered before the result goes upstream
    /// after `notifications/initialized`; its answer is the bridge's and goes nowhere.
    fn send_saved_level(&self, shared: &Shared) {
        if self.level_sent.load(Ordering::Relaxed) {
            return;
        }
        if let Some(level) = shared.log_level() {
            let params = serde_json::json!({"level": level.as_str()});
            let _ = self.request("logging/setLevel", Some(params), None);
        }
    }

    /// L4: a request of the relay that got no JSON-RPC answer (over HTTP): it fails with the
    /// cause; after its response nothing happens.
    fn failed(&self, id: i64, error: UpstreamError) {
        if let Some(p) = self.pending().remove(&id) {
            let _ = p.done.send(Err(error));
        }
    }

    /// A line of the upstream server, on the router, in the upstream's order.
    fn on_upstream_line(self: &Arc<Self>, shared: &Arc<Shared>, line: RawLine) {
        let parsed = match line {
            RawLine::Line(bytes) => parse::parse_line(&bytes),
            RawLine::TooLong { head, tail } => {
                parse::too_long(&head, &tail, shared.opts.max_line_bytes)
            }
            RawLine::Eof => return,
        };
        match parsed {
            Parsed::Message(Message::Response { id, body }) => {
                let pending = id.as_i64().and_then(|id| self.pending().remove(&id));
                match pending {
                    Some(p) => {
                        let _ = p.done.send(body.map_err(UpstreamError::Rpc));
                    }
                    None => log::bridge(
                        Level::Debug,
                        "dropped a response of the upstream server to no request in flight",
                    ),
                }
            }
            Parsed::Message(Message::Notification { method, params }) => {
                self.on_notification(shared, &method, params);
            }
            Parsed::Message(Message::Request { id, method, params }) => {
                server_requests::asked(shared, self, id, &method, params);
            }
            Parsed::Invalid { id, cause, detail } => {
                let why = dropped_invalid_line(cause, detail);
                let pending = id.as_i64().and_then(|id| self.pending().remove(&id));
                if let Some(p) = pending {
                    let _ = p.done.send(Err(UpstreamError::InvalidResponse(why)));
                }
            }
            Parsed::BadAnswer { .. } | Parsed::Dropped => dropped_line_without_id(),
        }
    }

    /// O4, O5, O6, O7, O1: the notifications of the upstream server.
    fn on_notification(&self, shared: &Shared, method: &str, params: Option<Value>) {
        match method {
            "notifications/progress" => {
                let Some(params) = params else { return };
                let token = params.get("progressToken").and_then(Value::as_i64);
                let pending = self.pending();
                let target = token.and_then(|t| pending.get(&t));
                if let Some(Pending {
                    slot: Some(slot),
                    token: Some(token),
                    ..
                }) = target
                {
                    shared.progress(slot, token, &params);
                }
            }
            // The server gives up one of its requests to VS Code: VS Code gets the
            // cancellation with the bridge's id, never with the server's.
            "notifications/cancelled" => {
                let asked = params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(|id| self.asked().remove(&key_of(id)));
                if let Some(bridge_id) = asked {
                    let reason = params
                        .as_ref()
                        .and_then(|p| p.get("reason"))
                        .and_then(Value::as_str)
                        .unwrap_or("the upstream server cancelled the request");
                    shared
                        .client_requests
                        .cancel(&shared.outbox, &bridge_id, reason);
                }
            }
            "notifications/message" => {
                let frame = params
                    .as_ref()
                    .and_then(|p| level::log_message_for_client(p, shared.log_level()));
                if let Some(frame) = frame {
                    shared.log_message(&frame);
                }
            }
            // List changes, resource updates, the end of a URL elicitation and everything
            // else pass as they came.
            _ => {
                shared.listen_event(&notification(method, params));
            }
        }
    }
}

/// A notification frame.
fn notification(method: &str, params: Option<Value>) -> Value {
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), "2.0".into());
    frame.insert("method".into(), method.into());
    if let Some(params) = params {
        frame.insert("params".into(), params);
    }
    Value::Object(frame)
}

/// L2: relays one admitted request of VS Code; its task answers it (R4, R5, R6, O10, the
/// -32042 rule), or gives it up upstream at a cancellation or after its time limit.
pub(crate) fn forward(shared: &Arc<Shared>, relay: &Arc<Relay>, slot: Slot, params: Option<Value>) {
    let Some((id, answer)) = relay.request(&slot.method, params, Some(slot.clone())) else {
        return shared.respond(&slot, Err(error_object(Cause::UpstreamExited, None)));
    };
    let timeout = match classify(&slot.method) {
        MethodClass::Forward(kind) => kind.timeout(),
        _ => LIST_TIMEOUT,
    };
    let shared = Arc::clone(shared);
    let relay = Arc::clone(relay);
    shared.clone().tasks.spawn(async move {
        tokio::select! {
            answer = answer => match answer {
                Ok(Ok(result)) => {
                    let mut response = complete(&slot.method, result);
                    if relay.remote && let Ok(result) = &mut response {
                        keep_data_icons(&slot.method, result);
                    }
                    shared.respond(&slot, response);
                }
                Ok(Err(error)) => shared.respond(&slot, Err(error_of(error))),
                // The upstream is gone: the stop answers every request in flight.
                Err(_) => {}
            },
            () = slot.token.cancelled() => {
                relay.give_up(id, slot.reason());
            }
            () = tokio::time::sleep(timeout) => {
                if relay.give_up(id, REASON_TIMEOUT) {
                    shared.respond(&slot, Err(timed_out(&slot, timeout)));
                }
            }
        }
    });
}
