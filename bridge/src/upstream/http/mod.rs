//! Streamable HTTP 2026-07-28 as the client (M4, the URL form): every request is one POST
//! with the `_meta` envelope and the standard headers; the answer is one JSON body or an SSE
//! stream whose events (progress, log messages, the response; the events of a listen stream)
//! reach the client as the same [`TransportEvent::Line`]s as on stdio.
//!
//! An upstream at a URL never ends the connection: a failure fails its request alone
//! ([`TransportEvent::Failed`]), and the next request tries again. Cancellation closes the
//! response stream of the request; no `notifications/cancelled` goes out (the transport's
//! rule). Results and the listen stream arrive on different connections, so the order of a
//! list change and a result is the order of their arrival (the contract's quirk on list
//! changes gives no order for a URL).

pub mod body;
mod client;
pub mod headers;
pub mod params;
mod post;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::AbortHandle;

pub use self::body::{BodyError, read_body};
pub use self::client::{
    HttpOptions, build_client, describe, install_crypto_provider, load_ca_file,
};
use self::params::{ParamHeader, call_headers, param_headers};
use super::events::Events;
use super::{Ended, Transport, TransportEvent};
use crate::log::{self, Level};
use crate::sync::lock;
use crate::wire::writer::Room;

/// A connection to an upstream server at a URL.
pub struct HttpTransport {
    shared: Arc<post::PostContext>,
    /// The POST of each request in flight; aborting it closes its response stream.
    inflight: Arc<Mutex<HashMap<i64, AbortHandle>>>,
    /// The `x-mcp-header` parameters of each listed tool that has any.
    param_headers: Mutex<HashMap<String, Vec<ParamHeader>>>,
    end_tx: watch::Sender<Option<Ended>>,
}

impl HttpTransport {
    /// Makes the transport; fails only when the HTTP client cannot be made (an invalid proxy
    /// variable, for example). No connection is opened before the first request.
    pub fn new(
        opts: Arc<HttpOptions>,
        events: Events,
        room: Room,
    ) -> Result<Arc<HttpTransport>, String> {
        // With a sign-in, its client serves the MCP requests too: it was made from the same
        // options, and its CAs are loaded once.
        let client = match &opts.sign_in {
            Some(session) => session.http().clone(),
            None => build_client(&opts)?,
        };
        let (end_tx, _) = watch::channel(None);
        Ok(Arc::new(HttpTransport {
            shared: Arc::new(post::PostContext {
                client,
                opts,
                events,
                room,
            }),
            inflight: Arc::new(Mutex::new(HashMap::new())),
            param_headers: Mutex::new(HashMap::new()),
            end_tx,
        }))
    }
}

impl Transport for HttpTransport {
    fn send_request(&self, id: i64, method: &str, frame: &Value) -> bool {
        if self.end_tx.borrow().is_some() {
            return false;
        }
        let body = match serde_json::to_vec(frame) {
            Ok(body) => body,
            Err(_) => return false,
        };
        let mut headers = headers::standard_headers(method, frame);
        if method == "tools/call" {
            let params = frame.get("params");
            let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
            if let Some(specs) = tool.and_then(|t| lock(&self.param_headers).get(t).cloned()) {
                headers.extend(call_headers(
                    &specs,
                    params.and_then(|p| p.get("arguments")),
                ));
            }
        }
        let shared = Arc::clone(&self.shared);
        let inflight = Arc::clone(&self.inflight);
        // The listen stream never starts a sign-in: it has no request of VS Code to ask for.
        let may_sign_in = method != "subscriptions/listen";
        // The entry goes in before the task can remove it: the task waits for the lock.
        let mut map = lock(&self.inflight);
        let task = tokio::spawn(async move {
            shared
                .exchange(id, headers, Bytes::from(body), may_sign_in)
                .await;
            lock(&inflight).remove(&id);
        });
        map.insert(id, task.abort_handle());
        true
    }

    fn cancel(&self, id: i64, _frame: &Value) {
        if let Some(task) = lock(&self.inflight).remove(&id) {
            task.abort();
        }
    }

    fn stop(&self) {
        for (_, task) in lock(&self.inflight).drain() {
            task.abort();
        }
        let ended = Ended { exit: None };
        if self.end_tx.send_replace(Some(ended)).is_none() {
            // The router of the client ends with the connection.
            let _ = self.shared.events.send(TransportEvent::Ended(ended));
        }
    }

    fn end_watch(&self) -> watch::Receiver<Option<Ended>> {
        self.end_tx.subscribe()
    }

    fn is_remote(&self) -> bool {
        true
    }

    fn sign_ins(&self) -> Option<watch::Receiver<u64>> {
        self.shared.opts.sign_in.as_ref().map(|s| s.sign_ins())
    }

    fn sign_in_wait(&self) -> Option<(std::time::Duration, watch::Receiver<u64>)> {
        let session = self.shared.opts.sign_in.as_ref()?;
        Some((session.timeout(), session.began()))
    }

    /// The transport's rule on `x-mcp-header`: a tool whose annotation breaks a constraint
    /// is left out of the list, with a warning line; the others are remembered for their
    /// calls.
    fn tools_listed(&self, result: &mut Value) {
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        let mut known = lock(&self.param_headers);
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            let Some(schema) = tool.get("inputSchema") else {
                return true;
            };
            match param_headers(schema) {
                Ok(specs) if specs.is_empty() => {
                    known.remove(name);
                    true
                }
                Ok(specs) => {
                    known.insert(name.to_owned(), specs);
                    true
                }
                Err(why) => {
                    known.remove(name);
                    log::bridge(
                        Level::Warn,
                        &format!("tool '{name}': left out of tools/list: {why}"),
                    );
                    false
                }
            }
        });
    }
}
