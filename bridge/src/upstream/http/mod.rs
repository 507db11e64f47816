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

mod client;
pub mod headers;
mod post;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

pub use self::client::{CaError, HttpOptions, build_client, load_ca_file};
use super::{Ended, Transport, TransportEvent};
use crate::wire::writer::Room;

/// A connection to an upstream server at a URL.
pub struct HttpTransport {
    shared: Arc<post::PostContext>,
    /// The POST of each request in flight; aborting it closes its response stream.
    inflight: Arc<Mutex<HashMap<i64, AbortHandle>>>,
    end_tx: watch::Sender<Option<Ended>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each change of the map is one call, so a panic elsewhere cannot leave it half-changed.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl HttpTransport {
    /// Makes the transport; fails only when the HTTP client cannot be made (an invalid proxy
    /// variable, for example). No connection is opened before the first request.
    pub fn new(
        opts: Arc<HttpOptions>,
        events: mpsc::UnboundedSender<TransportEvent>,
        room: Room,
    ) -> Result<Arc<HttpTransport>, String> {
        let client = build_client(&opts)?;
        let (end_tx, _) = watch::channel(None);
        Ok(Arc::new(HttpTransport {
            shared: Arc::new(post::PostContext {
                client,
                opts,
                events,
                room,
            }),
            inflight: Arc::new(Mutex::new(HashMap::new())),
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
        let headers = headers::standard_headers(method, frame);
        let shared = Arc::clone(&self.shared);
        let inflight = Arc::clone(&self.inflight);
        // The entry goes in before the task can remove it: the task waits for the lock.
        let mut map = lock(&self.inflight);
        let task = tokio::spawn(async move {
            shared.exchange(id, headers, body).await;
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
}
