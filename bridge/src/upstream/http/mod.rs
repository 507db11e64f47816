//! The URL form (M4) as the client, of every revision: one [`HttpTransport`] whose frames go
//! by their dialect. A 2026-07-28 request is one POST with the `_meta` envelope and the
//! standard headers, on a task of its own; an older server's frames go through its dispatcher
//! (`older/`, L4). Either way the POST, the sign-in and the reading of the answer are one
//! implementation (`post.rs`, `sse.rs`): one JSON body or an SSE stream whose events
//! (progress, log messages, the response; the events of a listen stream) reach the client as
//! the same [`TransportEvent::Line`]s as on stdio.
//!
//! An upstream at a URL never ends the connection: a failure fails its request alone
//! ([`TransportEvent::Failed`]), and the next request tries again. Cancellation closes the
//! response stream of the request (`inflight.rs`, either revision); to a 2026-07-28 server no
//! `notifications/cancelled` goes out (the transport's rule), an older server gets it (L2). Results and the listen stream arrive on different connections, so the order of a
//! list change and a result is the order of their arrival (the quirk on list changes in
//! docs/rules.md gives no order for a URL).

pub mod headers;
mod inflight;
mod older;
pub mod params;
mod post;
mod sse;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use reqwest::Certificate;
use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::sync::watch;
use url::Url;

use self::inflight::Inflight;

use self::params::{ParamHeader, call_headers, param_headers};
use super::dialect::Dialect;
use super::envelope::RequestFrame;
use super::events::Events;
use super::{Ended, Outgoing, Transport, TransportEvent};
use crate::auth::TokenSource;
use crate::log::{self, Level};
use crate::sync::lock;
use crate::webclient::{ClientError, ClientOptions, build_client};
use crate::wire::writer::Room;

/// The options of an upstream at a URL.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub url: Url,
    /// The headers of `--header` and `--header-env`, checked and resolved at start. Their
    /// values never reach a log line.
    pub headers: Vec<(String, String)>,
    /// `--max-response-bytes`: the limit of one JSON body and of one SSE event.
    pub max_response_bytes: usize,
    /// The certificates of `--ca-file`, read at start.
    pub extra_roots: Vec<Certificate>,
}

impl HttpOptions {
    /// What the HTTP client of this upstream (and of its sign-in) is made from.
    pub fn client_options(&self) -> ClientOptions {
        ClientOptions {
            extra_roots: self.extra_roots.clone(),
        }
    }
}

/// A connection to an upstream server at a URL.
pub struct HttpTransport {
    shared: Arc<post::PostContext>,
    /// The task of each request in flight, of either revision; aborting it closes its
    /// response stream.
    inflight: Inflight,
    /// The `x-mcp-header` parameters of each listed tool that has any.
    param_headers: Mutex<HashMap<String, Vec<ParamHeader>>>,
    end_tx: watch::Sender<Option<Ended>>,
    /// L4: the session of a server of an older revision (unused otherwise).
    older: Arc<older::OlderLink>,
    /// L4: a request of the older dialect went out: the connection is an older server's.
    speaks_older: AtomicBool,
}

impl HttpTransport {
    /// Makes the transport; fails only when the HTTP client cannot be made (an invalid proxy
    /// variable, for example). No connection is opened before the first request. `tokens`:
    /// the sign-in that gives each request its bearer and answers 401 and 403 (M4); `None`
    /// with a static `Authorization` header.
    pub fn new(
        opts: Arc<HttpOptions>,
        tokens: Option<TokenSource>,
        events: Events,
        room: Room,
    ) -> Result<Arc<HttpTransport>, ClientError> {
        // With a sign-in, its client serves the MCP requests too: it was made from the same
        // options, and its CAs are loaded once.
        let client = match &tokens {
            Some(tokens) => tokens.http().clone(),
            None => build_client(&opts.client_options())?,
        };
        let (end_tx, _) = watch::channel(None);
        let shared = Arc::new(post::PostContext {
            client,
            opts,
            tokens,
            events,
            room,
        });
        let inflight = Inflight::default();
        Ok(Arc::new(HttpTransport {
            older: Arc::new(older::OlderLink::new(Arc::clone(&shared), inflight.clone())),
            shared,
            inflight,
            param_headers: Mutex::new(HashMap::new()),
            end_tx,
            speaks_older: AtomicBool::new(false),
        }))
    }

    /// L4: a frame of an older server goes through its session (one dispatcher, in order).
    fn send_older(&self, frame: &Value) -> bool {
        self.speaks_older.store(true, Ordering::Relaxed);
        self.older.send(frame)
    }

    /// A request of 2026-07-28: one POST on a task of its own.
    fn post(&self, frame: &RequestFrame) -> bool {
        let (id, method) = (frame.id, frame.method);
        let frame = &frame.to_value();
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
        let headers: HeaderMap = (headers.iter())
            .filter_map(|(name, value)| Some((name.parse().ok()?, value.parse().ok()?)))
            .collect();
        let shared = Arc::clone(&self.shared);
        // The listen stream never starts a sign-in: it has no request of VS Code to ask for.
        let may_sign_in = method != "subscriptions/listen";
        self.inflight.spawn(id, async move {
            shared
                .exchange(id, headers, Bytes::from(body), may_sign_in)
                .await;
        });
        true
    }
}

impl Transport for HttpTransport {
    fn send(&self, frame: Outgoing<'_>) -> bool {
        if self.end_tx.borrow().is_some() {
            return false;
        }
        match frame {
            Outgoing::Request(request) if request.dialect == Dialect::Modern => self.post(request),
            Outgoing::Request(request) => self.send_older(&request.to_value()),
            Outgoing::Message(message) => self.send_older(message),
        }
    }

    /// The request's task ends, and with it its POST or its resumed event stream; an older
    /// server also gets `frame` (`notifications/cancelled`), even for a request that already
    /// ended, as on stdio. A 2026-07-28 server hears of it by the closed stream alone.
    fn cancel(&self, id: i64, frame: &Value) {
        self.inflight.cancel(id);
        if self.speaks_older.load(Ordering::Relaxed) {
            self.older.send(frame);
        }
    }

    fn stop(&self) {
        self.inflight.abort_all();
        let ended = Ended { exit: None };
        let end_tx = self.end_tx.clone();
        let events = self.shared.events.clone();
        let end = move || {
            if end_tx.send_replace(Some(ended)).is_none() {
                // The router of the client ends with the connection.
                let _ = events.send(TransportEvent::Ended(ended));
            }
        };
        // L4: the session of an older server is deleted first, within its bound.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let older = Arc::clone(&self.older);
                runtime.spawn(async move {
                    older.close().await;
                    end();
                });
            }
            Err(_) => end(),
        }
    }

    fn end_watch(&self) -> watch::Receiver<Option<Ended>> {
        self.end_tx.subscribe()
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
