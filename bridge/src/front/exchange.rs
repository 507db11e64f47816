//! One upstream exchange of a client request: the request with its time limit, the "still
//! waiting" lines, progress with VS Code's own token (O4, C3), and the debug line of its
//! outcome. The request task ([`super::request`]), the input rounds ([`super::rounds`]) and
//! `initialize` use it.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;

use super::Shared;
use super::inflight::{REASON_TIMEOUT, Slot, log_outcome};
use crate::log::{self, Level};
use crate::upstream::client::{CallEvent, RequestOptions, UpstreamClient};
use crate::upstream::{UpstreamError, next_change};
use crate::wire::lazy::{Body, LazyObject};

/// The first "still waiting" line comes after 10 s, then one every 30 s.
pub const FIRST_NOTE: Duration = Duration::from_secs(10);
pub const NOTE_EVERY: Duration = Duration::from_secs(30);

/// How one upstream exchange ended: with the result as a value, or (`Exchange<Body>`, the
/// forwarded requests) with its members parsed on demand.
#[derive(Debug)]
pub enum Exchange<T = Value> {
    /// VS Code canceled the request, or stdin ended: no response.
    Cancelled,
    /// No response in the time limit; the upstream request was canceled.
    TimedOut,
    Done(Result<T, UpstreamError>),
}

/// One upstream request of a client request.
pub(crate) struct Upstream<'a> {
    pub client: &'a Arc<UpstreamClient>,
    pub method: &'a str,
    /// The params; members received raw go upstream as received. Borrowed on the first
    /// round of a forwarded request, whose task keeps VS Code's params for the rounds (R8).
    pub params: Cow<'a, LazyObject>,
    pub opts: &'a RequestOptions,
    /// VS Code's progress token (O4): the upstream's progress reaches VS Code with it.
    pub progress_token: Option<&'a Value>,
    pub timeout: Duration,
    /// The round of the client request (1 for the first), for the debug line.
    pub round: u32,
    /// M4: `server/discover` waits this much longer once a sign-in begins (the receiver
    /// changes then).
    pub extension: Option<(Duration, watch::Receiver<u64>)>,
}

/// [`exchange_body`] with the result as a value.
pub(crate) async fn exchange(shared: &Shared, slot: &Slot, request: Upstream<'_>) -> Exchange {
    match exchange_body(shared, slot, request).await {
        Exchange::Cancelled => Exchange::Cancelled,
        Exchange::TimedOut => Exchange::TimedOut,
        Exchange::Done(result) => Exchange::Done(result.map(Body::into_value)),
    }
}

/// Sends one upstream request of the client request of `slot`, forwards its progress while
/// the request is live, and waits at most its time limit.
pub(crate) async fn exchange_body(
    shared: &Shared,
    slot: &Slot,
    request: Upstream<'_>,
) -> Exchange<Body> {
    let Upstream {
        client: upstream,
        method,
        params,
        opts,
        progress_token,
        timeout,
        round,
        extension,
    } = request;
    let (extra, mut began) = match extension {
        Some((extra, began)) => (extra, Some(began)),
        None => (Duration::ZERO, None),
    };
    let started = Instant::now();
    let mut call = match upstream.request_with(method, &params, opts) {
        Ok(call) => call,
        Err(e) => return Exchange::Done(Err(e)),
    };
    let uid = call.id();
    let mut times = Times::new(started, timeout);
    // One timer for the limit and the "still waiting" lines, reset at each of its times.
    let timer = tokio::time::sleep_until(times.next());
    tokio::pin!(timer);
    let outcome = loop {
        tokio::select! {
            biased;
            _ = slot.token.cancelled() => {
                call.cancel(slot.reason());
                break Exchange::Cancelled;
            }
            event = call.next() => match event {
                CallEvent::Progress(p) => {
                    if let Some(token) = progress_token {
                        shared.progress(slot, token, &p);
                    }
                }
                CallEvent::Done(result) => break Exchange::Done(result),
            },
            _ = next_change(&mut began) => {
                // The time of the sign-in comes on top, once.
                began = None;
                times.deadline += extra;
                timer.as_mut().reset(times.next());
            }
            () = &mut timer => {
                if times.at_limit(method, slot) {
                    call.cancel(REASON_TIMEOUT);
                    break Exchange::TimedOut;
                }
                timer.as_mut().reset(times.next());
            }
        }
    };
    if log::enabled(Level::Debug) {
        let what = match &outcome {
            Exchange::Cancelled => "canceled".to_owned(),
            Exchange::TimedOut => TIMED_OUT.to_owned(),
            Exchange::Done(result) => result_text(result),
        };
        log_outcome(method, slot, uid, round, started, &what);
    }
    outcome
}

/// The times of one upstream exchange: its limit and its "still waiting" lines. One timer
/// serves both: each timer costs a registration in the timer wheel (a hot-path choice of
/// bridge/README.md).
struct Times {
    started: Instant,
    deadline: Instant,
    note_at: Instant,
}

impl Times {
    fn new(started: Instant, timeout: Duration) -> Times {
        Times {
            started,
            deadline: started + timeout,
            note_at: started + FIRST_NOTE,
        }
    }

    /// When the timer is due next.
    fn next(&self) -> Instant {
        self.deadline.min(self.note_at)
    }

    /// At [`Times::next`]: true at the limit, else the "still waiting" line of the upstream
    /// request `method` of the client request of `slot`.
    fn at_limit(&mut self, method: &str, slot: &Slot) -> bool {
        if Instant::now() >= self.deadline {
            return true;
        }
        log::bridge(
            Level::Info,
            &format!(
                "still waiting for the upstream server: {method} (request {}, {} s)",
                slot.id,
                self.started.elapsed().as_secs()
            ),
        );
        self.note_at += NOTE_EVERY;
        false
    }
}

/// The outcome of an exchange that timed out, for [`super::inflight::log_outcome`].
const TIMED_OUT: &str = "no response in time";

/// The outcome of an exchange that got its response, for [`super::inflight::log_outcome`].
fn result_text<T>(result: &Result<T, UpstreamError>) -> String {
    match result {
        Ok(_) => "response".to_owned(),
        Err(UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. }) => {
            format!("error {}", e.get("code").unwrap_or(&Value::Null))
        }
        Err(e) => format!("failed ({e})"),
    }
}
