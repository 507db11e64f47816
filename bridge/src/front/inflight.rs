//! docs/architecture.md principle 5: one cancel token and one task per request of VS Code,
//! with a limit of requests in flight. The table is also the gate of the responses: a request
//! that was canceled never gets a response, and each request gets at most one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::log::{self, Level};

/// The requests in flight of one connection (docs/rules.md, "Other rules"; 64 leaves room
/// for VS Code, which rarely has more than a few).
pub const MAX_IN_FLIGHT: usize = 64;

/// Why the bridge canceled a request (sent upstream as the reason).
pub const REASON_CLIENT_CANCELED: &str = "the client canceled the request";
pub const REASON_CLIENT_CLOSED: &str = "the client closed the connection";
pub const REASON_UPSTREAM_STOPPED: &str = "the upstream server stopped";
pub const REASON_TIMEOUT: &str = "no answer in time";

/// The handle of a request task; the table and the task share one, so a clone allocates
/// nothing.
#[derive(Clone, Debug)]
pub struct Slot(Arc<SlotData>);

/// What a [`Slot`] holds.
#[derive(Debug)]
pub struct SlotData {
    key: IdKey,
    pub id: Value,
    pub method: String,
    pub token: CancellationToken,
    reason: OnceLock<&'static str>,
}

impl std::ops::Deref for Slot {
    type Target = SlotData;

    fn deref(&self) -> &SlotData {
        &self.0
    }
}

impl Slot {
    /// The reason of the cancellation (for `notifications/cancelled` upstream).
    pub fn reason(&self) -> &'static str {
        self.reason.get().copied().unwrap_or(REASON_CLIENT_CANCELED)
    }

    /// Cancels the request's task; the task gives its upstream request up.
    fn cancel(&self, reason: &'static str) {
        let _ = self.reason.set(reason);
        self.token.cancel();
    }
}

/// Why a request was not admitted.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// At the limit: -32603 `too_many_requests` at once.
    Full,
    /// A request with the same id is in flight.
    DuplicateId,
}

/// The slots by the key of their id.
type Slots = HashMap<IdKey, Slot, foldhash::fast::RandomState>;

/// The key of an id in the table (docs/architecture.md principle 5): an integer id, the kind
/// VS Code sends, is its value, so admitting a request allocates no key (a hot-path choice of
/// bridge/README.md: two allocations fewer per request); any other id is its JSON text, as
/// [`key_of`]. `1` and `"1"` differ, and so do `1` and `1.0` (a float is never an integer
/// here).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum IdKey {
    Unsigned(u64),
    Negative(i64),
    Text(Box<str>),
}

impl IdKey {
    fn of(id: &Value) -> IdKey {
        let Value::Number(n) = id else {
            return IdKey::text(id);
        };
        match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => IdKey::Unsigned(u),
            (None, Some(i)) => IdKey::Negative(i),
            _ => IdKey::text(id),
        }
    }

    fn text(id: &Value) -> IdKey {
        IdKey::Text(key_of(id).into_boxed_str())
    }
}

/// The table of requests in flight.
pub struct Inflight {
    /// foldhash: two lookups per request, and SipHash's protection is not needed for at
    /// most [`MAX_IN_FLIGHT`] keys (a hot-path choice of bridge/README.md).
    slots: Mutex<Slots>,
    limit: usize,
}

/// The key of an id: its JSON text, so that `1` and `"1"` differ.
pub fn key_of(id: &Value) -> String {
    id.to_string()
}

impl Inflight {
    pub fn new(limit: usize) -> Self {
        Inflight {
            slots: Mutex::new(HashMap::default()),
            limit,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slots> {
        crate::sync::lock(&self.slots)
    }

    /// Admits a request, or refuses it at the limit.
    pub fn admit(&self, id: &Value, method: &str) -> Result<Slot, Refused> {
        let key = IdKey::of(id);
        let mut slots = self.lock();
        if slots.contains_key(&key) {
            return Err(Refused::DuplicateId);
        }
        if slots.len() >= self.limit {
            return Err(Refused::Full);
        }
        let slot = Slot(Arc::new(SlotData {
            key: key.clone(),
            id: id.clone(),
            method: method.to_owned(),
            token: CancellationToken::new(),
            reason: OnceLock::new(),
        }));
        slots.insert(key, slot.clone());
        Ok(slot)
    }

    /// Ends a request that is about to respond: true when it may respond (it was not
    /// canceled and has not responded yet).
    pub fn finish(&self, slot: &Slot) -> bool {
        self.lock().remove(&slot.key).is_some()
    }

    /// True while the request may still write (its progress, for example).
    pub fn is_live(&self, slot: &Slot) -> bool {
        self.lock().contains_key(&slot.key)
    }

    /// Cancels one request: it gets no response. False when no such request is in flight.
    pub fn cancel(&self, id: &Value, reason: &'static str) -> bool {
        let slot = self.lock().remove(&IdKey::of(id));
        let Some(slot) = slot else {
            return false;
        };
        slot.cancel(reason);
        true
    }

    /// Cancels every request (end of stdin): none gets a response.
    pub fn cancel_all(&self, reason: &'static str) {
        for slot in self.take_all(reason) {
            slot.cancel(reason);
        }
    }

    /// Removes every request with its reason and returns them, so that the caller answers
    /// each one itself (the upstream stopped) and then cancels its task.
    pub fn take_all(&self, reason: &'static str) -> Vec<Slot> {
        let slots: Vec<Slot> = self.lock().drain().map(|(_, s)| s).collect();
        for slot in &slots {
            let _ = slot.reason.set(reason);
        }
        slots
    }

    /// The number of requests in flight.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no request is in flight.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The debug line of the end of the upstream request `uid` (`method`); the caller checks
/// that the level is on.
pub(crate) fn log_outcome(
    method: &str,
    slot: &Slot,
    uid: i64,
    round: u32,
    started: Instant,
    what: &str,
) {
    log::bridge(
        Level::Debug,
        &format!(
            "upstream request {uid} ({method}, round {round} of client request {}): {what} after {} ms",
            slot.id,
            started.elapsed().as_millis()
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limit_and_duplicates() {
        let t = Inflight::new(2);
        let a = t.admit(&json!(1), "tools/call").expect("a");
        assert_eq!(t.admit(&json!(1), "x").err(), Some(Refused::DuplicateId));
        let _b = t.admit(&json!("1"), "x").expect("string id differs");
        assert_eq!(t.admit(&json!(3), "x").err(), Some(Refused::Full));
        assert!(t.finish(&a));
        assert!(t.admit(&json!(3), "x").is_ok());
    }

    #[test]
    fn ids_of_different_json_text_are_different_requests() {
        let t = Inflight::new(8);
        let ids = [
            json!(1),
            json!("1"),
            json!(1.0),
            json!(-1),
            json!("-1"),
            json!(u64::MAX),
        ];
        let slots: Vec<Slot> = ids
            .iter()
            .map(|id| t.admit(id, "x").expect("a distinct id"))
            .collect();
        for id in &ids {
            assert_eq!(t.admit(id, "x").err(), Some(Refused::DuplicateId), "{id}");
        }
        for (id, slot) in ids.iter().zip(&slots) {
            assert!(t.cancel(id, REASON_CLIENT_CANCELED), "{id}");
            assert!(slot.token.is_cancelled(), "{id}");
        }
        assert!(t.is_empty());
    }

    #[test]
    fn a_canceled_request_never_responds_and_responds_once() {
        let t = Inflight::new(4);
        let a = t.admit(&json!(7), "tools/call").expect("a");
        assert!(t.is_live(&a));
        assert!(t.cancel(&json!(7), REASON_CLIENT_CANCELED));
        assert!(a.token.is_cancelled());
        assert_eq!(a.reason(), REASON_CLIENT_CANCELED);
        assert!(!t.finish(&a));
        assert!(
            !t.cancel(&json!(7), REASON_CLIENT_CANCELED),
            "a second cancel finds nothing"
        );
        let b = t.admit(&json!(8), "x").expect("b");
        assert!(t.finish(&b));
        assert!(!t.finish(&b), "one response only");
        assert!(
            !t.cancel(&json!(8), REASON_CLIENT_CANCELED),
            "a cancel after the response is ignored"
        );
    }

    #[test]
    fn cancel_all_keeps_the_reason() {
        let t = Inflight::new(4);
        let a = t.admit(&json!(1), "x").expect("a");
        let b = t.admit(&json!(2), "y").expect("b");
        t.cancel_all(REASON_CLIENT_CLOSED);
        assert!(t.is_empty());
        for s in [a, b] {
            assert!(s.token.is_cancelled());
            assert_eq!(s.reason(), REASON_CLIENT_CLOSED);
        }
    }
}
