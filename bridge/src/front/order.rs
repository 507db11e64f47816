//! The one writer's ordering guarantees (docs/architecture.md principle 4). Every frame of the front reaches
//! VS Code through a function of this module, and each guarantee is kept here:
//!
//! 1. **One response per request, none for a cancelled one**: [`Shared::respond`] writes only
//!    when the slot of the request was still in flight and not cancelled.
//! 2. **Progress and `notifications/elicitation/complete` before the response** (O1, O4): the
//!    request task writes them before it calls [`Shared::respond`], and the writer keeps the
//!    order of its queue; progress of a request that is no longer live is dropped.
//! 3. **A list change before the result that follows it** (the quirk on list changes): the
//!    upstream client hands each notification to the front on its router, before it routes the
//!    next message; [`Shared::listen_event`] queues it at once. On stdio one ordered pipe
//!    carries both, so the upstream's order is kept. Over HTTP the result and the listen
//!    stream arrive on different connections: the order is the order of their arrival, and the
//!    contract gives none.
//! 4. **The answer of a subscription change before the first update of its stream** (O7), and
//!    **no event of an old stream after that answer**: the owner of the listen stream writes
//!    the answer at the stream's first acknowledgment, under the listener's lock, and
//!    [`Shared::listen_event`] writes an event only while its stream is the active one
//!    (checked under the same lock). This holds for both transports, because it depends only
//!    on the events of the one stream.
//! 5. **Log messages at VS Code's level or above** (O5): [`Shared::log_message`].

use serde_json::Value;

use super::Shared;
use super::inflight::Slot;
use super::request::progress_frame;
use crate::errors::error_frame;
use crate::input::complete::elicitation_complete;
use crate::wire::frames::{result_frame, result_line};
use crate::wire::lazy::Body;

fn response_frame(id: Value, response: Result<Value, Value>) -> Value {
    match response {
        Ok(result) => result_frame(id, result),
        Err(error) => error_frame(id, error),
    }
}

impl Shared {
    /// Guarantee 1: answers a request task only when the request was not cancelled and not
    /// answered yet.
    pub(crate) fn respond(&self, slot: &Slot, response: Result<Value, Value>) {
        if self.inflight.finish(slot) {
            self.outbox.send(&response_frame(slot.id.clone(), response));
        }
    }

    /// Guarantee 1 for a result that may pass through as received (a hot-path choice of bridge/README.md).
    pub(crate) fn respond_body(&self, slot: &Slot, response: Result<Body, Value>) {
        match response {
            Ok(Body::Value(result)) => self.respond(slot, Ok(result)),
            Ok(body) => {
                if self.inflight.finish(slot) {
                    self.outbox.send_frame(result_line(&slot.id, &body));
                }
            }
            Err(error) => self.respond(slot, Err(error)),
        }
    }

    /// An answer that the dispatch gives at once, without a request task (R2, C1, errors of
    /// the line).
    pub(crate) fn reply(&self, id: Value, response: Result<Value, Value>) {
        self.outbox.send(&response_frame(id, response));
    }

    /// Guarantee 2 (O4): progress of a live request, with VS Code's token.
    pub(crate) fn progress(&self, slot: &Slot, token: &Value, upstream: &Value) {
        if self.inflight.is_live(slot) {
            self.outbox.send(&progress_frame(token, upstream));
        }
    }

    /// Guarantee 2 (O1): the end of a URL step, before the response of its request.
    pub(crate) fn elicitation_complete(&self, elicitation_id: &str) {
        self.outbox.send(&elicitation_complete(elicitation_id));
    }

    /// Guarantees 3 and 4: an event of a listen stream; the caller holds the listener's lock
    /// and has checked that the stream is the active one.
    pub(crate) fn listen_event(&self, frame: &Value) {
        self.outbox.send(frame);
    }

    /// Guarantee 5 (O5): a log message that passed VS Code's level.
    pub(crate) fn log_message(&self, frame: &Value) {
        self.outbox.send(frame);
    }
}
