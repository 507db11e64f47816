//! A forwarded request without a task of its own while it waits (a hot-path choice of bridge/README.md): the dispatch
//! sends it upstream, and the router of the upstream client finishes it when its response
//! comes, on the task that read the response. A result that passes through goes to VS Code
//! from there; anything else (an input round of R8, a result that a rule walks whole) gets
//! the request task of [`super::request`] then, which goes on from that response.
//!
//! docs/architecture.md principle 5 still holds: the dispatch never waits, and each request keeps its own
//! cancel token and its place in the table of requests in flight ([`super::inflight`]). What
//! a task did while waiting is done here without one:
//! - a cancellation gives the upstream request up at once ([`super::inflight`]: the
//!   `notifications/cancelled` is queued as a task would queue it);
//! - progress goes to VS Code from the router, in the upstream's order (O4);
//! - the limit and the "still waiting" lines: at the connection's first tick after the
//!   start ([`super::keep`]), a task takes the exchange's times, exactly as an exchange of a
//!   task arms its timer then. Most requests end long before.
//!
//! Only a transport of lines takes this path (a command); HTTP requests keep their task.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::Instrument;

use super::Shared;
use super::exchange::{Exchange, TIMED_OUT, Times, result_text};
use super::inflight::log_outcome;
use super::inflight::{InlineExchange, REASON_TIMEOUT, Slot};
use super::keep::TICK;
use super::request::{self, Outbound, error_of, pass_through, timed_out};
use crate::log::{self, Level};
use crate::translate::forward::ForwardKind;
use crate::upstream::UpstreamError;
use crate::upstream::client::{Completion, UpstreamClient};
use crate::wire::lazy::{Body, LazyObject};

/// True when a forwarded request of `kind` to `upstream` may take this path.
pub(super) fn applies(kind: ForwardKind, upstream: &UpstreamClient) -> bool {
    // An exchange whose limit is within a tick arms its own timer at once (super::keep).
    kind.timeout_for_round(0) > TICK && upstream.transport().line_link().is_some()
}

/// Sends the first round of the request of `slot` upstream; the router finishes it.
pub(super) fn start(
    shared: &Arc<Shared>,
    slot: Slot,
    kind: ForwardKind,
    params: Option<LazyObject>,
    upstream: &Arc<UpstreamClient>,
) {
    let out = Outbound::new(shared, params);
    let uid = upstream.reserve_id();
    let started = Instant::now();
    shared.keeper.touch();
    // Before the request goes out, so that a cancellation can always give it up.
    let _ = slot.inline.set(InlineExchange {
        client: Arc::downgrade(upstream),
        uid,
        started,
        timeout: kind.timeout_for_round(0),
        watched: Default::default(),
        ended: Notify::new(),
    });
    let line = upstream.request_line(uid, &slot.method, &out.params, &out.opts);
    let call = Box::new(InlineCall {
        shared: Arc::downgrade(shared),
        slot,
        kind,
        out,
    });
    upstream.send_inline(uid, line, call);
}

/// The request while its first upstream round is in flight (its upstream id, start and
/// client are in `slot.inline`). It holds the connection weakly: the client's table holds it.
struct InlineCall {
    shared: Weak<Shared>,
    slot: Slot,
    kind: ForwardKind,
    out: Outbound,
}

impl Completion for InlineCall {
    fn progress(&self, params: Value) {
        if let (Some(token), Some(shared)) = (&self.out.progress_token, self.shared.upgrade()) {
            shared.progress(&self.slot, token, &params);
        }
    }

    fn done(self: Box<Self>, uid: i64, result: Result<Body, UpstreamError>) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        if log::enabled(Level::Debug)
            && let Some(inline) = self.slot.inline.get()
        {
            let what = result_text(&result);
            log_outcome(&self.slot.method, &self.slot, uid, 1, inline.started, &what);
        }
        let response = match result {
            Ok(Body::Object(object)) => match pass_through(&self.slot.method, object) {
                Ok(shaped) => Ok(Body::Object(shaped)),
                // A rule walks the whole result: the request task's full path.
                Err(object) => {
                    return self.resume(shared, Body::Value(Value::Object(object.into_map())));
                }
            },
            Ok(body) => return self.resume(shared, body),
            // The first round carried no `requestState`, so no error needs the rounds.
            Err(error) => Err(error_of(error)),
        };
        shared.respond_body(&self.slot, response);
        self.ended();
    }
}

impl InlineCall {
    /// The request task goes on from the response of the first round.
    fn resume(self, shared: Arc<Shared>, body: Body) {
        self.ended();
        let InlineCall {
            slot, kind, out, ..
        } = self;
        let upstream = slot.inline.get().and_then(|inline| inline.client.upgrade());
        let Some(upstream) = upstream else {
            return shared.respond(&slot, Err(error_of(UpstreamError::Closed)));
        };
        let span = log::request_span(&slot.id);
        let first = Some(Exchange::Done(Ok(body)));
        let task = Box::pin(request::forward_rounds(
            Arc::clone(&shared),
            slot,
            kind,
            out,
            upstream,
            first,
        ));
        shared.tasks.spawn(task.instrument(span));
    }

    /// The exchange ended: the task that keeps its times ends too, and a later tick starts
    /// none (a request task that goes on from here keeps its own times).
    fn ended(&self) {
        if let Some(inline) = self.slot.inline.get()
            && inline.watched.swap(true, Ordering::AcqRel)
        {
            inline.ended.notify_one();
        }
    }
}

/// At each tick of the connection ([`super::keep`]): a task keeps the times of each inline
/// exchange that has none yet.
pub(super) fn on_tick(shared: &Arc<Shared>) {
    for slot in shared.inflight.unwatched_inline() {
        shared.tasks.spawn(keep_times(Arc::clone(shared), slot));
    }
}

/// The limit and the "still waiting" lines of an inline exchange, until it ends.
async fn keep_times(shared: Arc<Shared>, slot: Slot) {
    let Some(inline) = slot.inline.get() else {
        return;
    };
    let mut times = Times::new(inline.started, inline.timeout);
    loop {
        tokio::select! {
            biased;
            () = inline.ended.notified() => return,
            () = slot.token.cancelled() => return,
            () = tokio::time::sleep_until(times.next()) => {
                if times.at_limit(&slot.method, &slot) {
                    break;
                }
            }
        }
    }
    // The limit: unless the response came first, the request is given up upstream.
    if inline.give_up(&slot, REASON_TIMEOUT, TIMED_OUT) {
        shared.respond(&slot, Err(timed_out(&slot, inline.timeout)));
    }
}
