//! M3: the owner task of the listen streams of one connection: the
//! first stream after `notifications/initialized`, its replacements after a loss (with the
//! backoff and the log lines of docs/stderr.md), and the streams of the subscription changes
//! (one at a time). It ends at the stop token (end of input, upstream gone).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::{Command, Entry};
use crate::errors::{self, Cause, error_object, format_limit};
use crate::front::Shared;
use crate::front::inflight::Slot;
use crate::listen::backoff::{self, Backoff, Next, StreamEnd, on_stream_end, reason};
use crate::listen::replay::{Change, listen_params, needs_stream};
use crate::listen::stream::Purpose;
use crate::log::{self, Level};
use crate::upstream::UpstreamError;
use crate::upstream::client::{Call, CallEvent, RequestOptions, UpstreamClient};
use crate::wire::lazy::Body;

/// The acknowledgment of a new stream must come within this time (the limit of lists).
pub const ACK_TIMEOUT: Duration = Duration::from_secs(120);

/// One stream in flight.
struct Live {
    uid: i64,
    call: Call,
    opened: Instant,
}

/// How a stream's request ended.
type Ending = Result<Value, UpstreamError>;

async fn ended(live: &mut Option<Live>) -> Ending {
    let Some(live) = live.as_mut() else {
        return std::future::pending().await;
    };
    loop {
        if let CallEvent::Done(result) = live.call.next().await {
            return result.map(Body::into_value);
        }
    }
}

fn log_line(line: &backoff::LogLine) {
    let level = match line.level {
        backoff::Level::Info => Level::Info,
        backoff::Level::Warning => Level::Warn,
    };
    log::bridge(level, &line.text);
}

/// A stream that could not be sent, and the change that it was for.
type OpenFailure = Box<(UpstreamError, Option<(Slot, Vec<String>)>)>;

/// Opens a stream: the entry is in the map before the frame goes out (under the lock that
/// [`super::on_event`] takes), so that no acknowledgment can come before its entry.
fn open(
    shared: &Shared,
    upstream: &Arc<UpstreamClient>,
    purpose: Purpose,
    change: Option<(Slot, Vec<String>)>,
) -> Result<Live, OpenFailure> {
    let mut state = shared.listener.lock();
    let uris = match &change {
        Some((_, set)) => set.clone(),
        None => state.subs.uris().to_vec(),
    };
    let params = match listen_params(&state.declared, &uris) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let opts = RequestOptions {
        log_level: shared.log_level(),
        stream: true,
        ..Default::default()
    };
    let call = match upstream.request("subscriptions/listen", params, &opts) {
        Ok(call) => call,
        Err(e) => return Err(Box::new((e, change))),
    };
    let stream = state.gens.open(purpose);
    let uid = call.id();
    state.streams.insert(
        uid,
        Entry {
            stream,
            acked_at: None,
            change,
        },
    );
    Ok(Live {
        uid,
        call,
        opened: Instant::now(),
    })
}

/// Removes the entry of a stream; returns how long it lived after its acknowledgment, and
/// the request of a change that its stream never answered.
fn forget(shared: &Shared, uid: i64) -> (Option<Duration>, Option<(Slot, Vec<String>)>) {
    let mut state = shared.listener.lock();
    match state.streams.remove(&uid) {
        Some(entry) => (entry.acked_at.map(|t| t.elapsed()), entry.change),
        None => (None, None),
    }
}

fn acknowledged(shared: &Shared, uid: i64) -> bool {
    shared
        .listener
        .lock()
        .streams
        .get(&uid)
        .is_some_and(|e| e.stream.acknowledged_once())
}

/// The stream end of a finished listen request.
fn stream_end(ending: &Ending) -> StreamEnd {
    match ending {
        Ok(_) | Err(UpstreamError::Ended) => StreamEnd::Result,
        // An error without a code or a message is a broken response, not a refusal.
        Err(UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. })
            if !errors::is_valid_error(e) =>
        {
            StreamEnd::Lost(
                UpstreamError::InvalidResponse("the error has no code or no message".into())
                    .to_string(),
            )
        }
        Err(UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. }) => {
            StreamEnd::Refused {
                code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            }
        }
        // The URL form: the status decides between a new stream and none.
        Err(UpstreamError::HttpStatus(status)) => StreamEnd::HttpStatus {
            status: *status,
            sign_in: false,
        },
        Err(e) => StreamEnd::Lost(e.to_string()),
    }
}

/// O7: the error of a subscription change whose stream failed before its acknowledgment.
fn change_error(ending: &Ending) -> Value {
    const DETAIL: &str = "subscriptions/listen";
    match ending {
        Err(UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. }) => {
            errors::upstream_error(e.clone())
        }
        Err(UpstreamError::Closed) => error_object(Cause::UpstreamExited, Some(DETAIL)),
        Err(UpstreamError::Ended) => error_object(Cause::TaskCancelled, Some(DETAIL)),
        Err(UpstreamError::TransportFailed(_)) => {
            error_object(Cause::TransportFailed, Some(DETAIL))
        }
        Err(UpstreamError::SignIn(e)) => crate::auth::error_object::sign_in_error(e),
        Ok(_) | Err(UpstreamError::InvalidResponse(_) | UpstreamError::HttpStatus(_)) => {
            error_object(Cause::InvalidResponse, Some(DETAIL))
        }
    }
}

fn change_failure_text(ending: &Ending) -> String {
    match ending {
        Ok(_) => "the upstream server ended the stream before its acknowledgment".to_owned(),
        Err(e) => e.to_string(),
    }
}

/// The owner task: the first stream, its replacements after a loss, and the streams of the
/// subscription changes, until the stop token fires or the upstream is gone.
pub(super) async fn run(
    shared: Arc<Shared>,
    upstream: Arc<UpstreamClient>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    mut activated: mpsc::UnboundedReceiver<i64>,
) {
    let mut owner = Owner {
        shared: Arc::clone(&shared),
        upstream,
        current: None,
        pending: None,
        retry_at: None,
        backoff: Backoff::new(),
        sign_ins: None,
        after_sign_in: false,
    };
    owner.sign_ins = shared.opts.sign_in.as_ref().map(|s| s.sign_ins());
    owner.open_current(Purpose::Start, true);
    let stop = shared.listener.stop.clone();
    loop {
        let ack_deadline = owner.ack_deadline();
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            Some(uid) = activated.recv() => owner.promote(uid),
            ending = ended(&mut owner.pending) => owner.pending_ended(ending),
            ending = ended(&mut owner.current) => owner.current_ended(ending),
            _ = sleep_until(ack_deadline) => owner.ack_timed_out(),
            _ = sleep_until(owner.retry_at), if owner.pending.is_none() => {
                owner.retry_at = None;
                owner.open_current(Purpose::AfterLoss, false);
            }
            Some(command) = commands.recv(), if owner.pending.is_none() => owner.change(command),
            _ = crate::upstream::next_change(&mut owner.sign_ins), if owner.after_sign_in => {
                owner.after_sign_in = false;
                log_line(&backoff::sign_in_completed());
                owner.open_current(Purpose::AfterLoss, false);
            }
        }
        if owner.upstream.is_closed() && owner.current.is_none() && owner.pending.is_none() {
            break;
        }
    }
    owner.cancel_all(reason::CLIENT_CLOSED);
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

struct Owner {
    shared: Arc<Shared>,
    upstream: Arc<UpstreamClient>,
    current: Option<Live>,
    pending: Option<Live>,
    retry_at: Option<Instant>,
    backoff: Backoff,
    /// M4: the count of completed sign-ins of the URL form.
    sign_ins: Option<watch::Receiver<u64>>,
    /// The stream was refused with 401/403: the next sign-in opens it again.
    after_sign_in: bool,
}

impl Owner {
    fn open_current(&mut self, purpose: Purpose, first: bool) {
        match open(&self.shared, &self.upstream, purpose, None) {
            Ok(live) => self.current = Some(live),
            Err(f) if first => log_line(&backoff::cannot_start(&f.0.to_string())),
            Err(f) => self.decide(&StreamEnd::Lost(f.0.to_string()), None),
        }
    }

    /// The earliest time at which a stream without acknowledgment has waited too long.
    fn ack_deadline(&self) -> Option<Instant> {
        [&self.current, &self.pending]
            .into_iter()
            .flatten()
            .filter(|l| !acknowledged(&self.shared, l.uid))
            .map(|l| l.opened + ACK_TIMEOUT)
            .min()
    }

    fn ack_timed_out(&mut self) {
        let now = Instant::now();
        let late = |l: &Option<Live>, shared: &Shared| {
            l.as_ref()
                .is_some_and(|l| l.opened + ACK_TIMEOUT <= now && !acknowledged(shared, l.uid))
        };
        let what = format!("no acknowledgment in {}", format_limit(ACK_TIMEOUT));
        if late(&self.pending, &self.shared)
            && let Some(live) = self.pending.take()
        {
            live.call.cancel(reason::REPLACED);
            let (_, change) = forget(&self.shared, live.uid);
            log_line(&backoff::subscription_change_failed(&what));
            if let Some((slot, _)) = change {
                let detail = format!("subscriptions/listen: {what}");
                self.shared
                    .respond(&slot, Err(error_object(Cause::Timeout, Some(&detail))));
            }
        }
        if late(&self.current, &self.shared)
            && let Some(live) = self.current.take()
        {
            live.call.cancel(reason::REPLACED);
            forget(&self.shared, live.uid);
            self.decide(&StreamEnd::Lost(what), None);
        }
    }

    /// The stream of a subscription change became active: the old stream goes.
    fn promote(&mut self, uid: i64) {
        if self.pending.as_ref().is_none_or(|l| l.uid != uid) {
            return;
        }
        if let Some(old) = self.current.take() {
            forget(&self.shared, old.uid);
            old.call.cancel(reason::REPLACED);
        }
        self.current = self.pending.take();
        self.retry_at = None;
    }

    fn pending_ended(&mut self, ending: Ending) {
        let Some(live) = self.pending.as_ref() else {
            return;
        };
        let uid = live.uid;
        if acknowledged(&self.shared, uid) {
            // Acknowledged and ended before the owner saw the activation.
            self.promote(uid);
            return self.current_ended(ending);
        }
        self.pending = None;
        let (_, change) = forget(&self.shared, uid);
        log_line(&backoff::subscription_change_failed(&change_failure_text(
            &ending,
        )));
        if let Some((slot, _)) = change {
            self.shared.respond(&slot, Err(change_error(&ending)));
        }
    }

    fn current_ended(&mut self, ending: Ending) {
        let Some(live) = self.current.take() else {
            return;
        };
        let (lived, _) = forget(&self.shared, live.uid);
        let mut end = stream_end(&ending);
        if let StreamEnd::HttpStatus { sign_in, .. } = &mut end {
            *sign_in = self.sign_ins.is_some();
        }
        self.decide(&end, lived);
    }

    /// The decision after the end of the current stream, with its log line.
    fn decide(&mut self, end: &StreamEnd, lived: Option<Duration>) {
        let decision = on_stream_end(end, self.upstream.is_closed(), lived, &mut self.backoff);
        if let Some(line) = &decision.log {
            log_line(line);
        }
        self.retry_at = match decision.next {
            Next::RetryAfter(wait) => Some(Instant::now() + wait),
            // A refusal stops the list changes until the next subscription change.
            Next::AfterSignIn | Next::Stop => None,
        };
        if decision.next == Next::AfterSignIn
            && let Some(rx) = &mut self.sign_ins
        {
            // Only a sign-in after this refusal counts.
            rx.mark_unchanged();
            self.after_sign_in = true;
        }
    }

    /// O7: one subscription change.
    fn change(&mut self, command: Command) {
        let Command {
            slot,
            uri,
            subscribe,
        } = command;
        let (change, declared) = {
            let state = self.shared.listener.lock();
            let change = if subscribe {
                state.subs.subscribe(&uri)
            } else {
                state.subs.unsubscribe(&uri)
            };
            (change, state.declared)
        };
        let set = match change {
            Change::Unchanged => return self.shared.respond(&slot, Ok(json!({}))),
            Change::NewSet(set) => set,
        };
        if !needs_stream(&declared, &set) {
            // The last URI went and no list is declared: no stream at all.
            {
                let mut state = self.shared.listener.lock();
                state.gens.retire_all();
                state.subs.commit(set);
                self.shared.respond(&slot, Ok(json!({})));
            }
            if let Some(old) = self.current.take() {
                forget(&self.shared, old.uid);
                old.call.cancel(reason::REPLACED);
            }
            self.retry_at = None;
            return;
        }
        let change = Some((slot, set));
        match open(
            &self.shared,
            &self.upstream,
            Purpose::SubscriptionChange,
            change,
        ) {
            Ok(live) => self.pending = Some(live),
            Err(failure) => {
                let (e, change) = *failure;
                log_line(&backoff::subscription_change_failed(&e.to_string()));
                let ending = Err(e);
                if let Some((slot, _)) = change {
                    self.shared.respond(&slot, Err(change_error(&ending)));
                }
            }
        }
    }

    fn cancel_all(&mut self, why: &str) {
        for live in [self.pending.take(), self.current.take()]
            .into_iter()
            .flatten()
        {
            forget(&self.shared, live.uid);
            live.call.cancel(why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m3_stream_ends_map_to_the_decisions_of_the_backoff() {
        assert_eq!(stream_end(&Ok(json!({}))), StreamEnd::Result);
        assert_eq!(stream_end(&Err(UpstreamError::Ended)), StreamEnd::Result);
        assert_eq!(
            stream_end(&Err(UpstreamError::Rpc(
                json!({"code":-32603,"message":"Subscription limit reached"})
            ))),
            StreamEnd::Refused {
                code: -32603,
                message: "Subscription limit reached".into()
            }
        );
        // A broken error object is a lost stream (retried), not a refusal.
        assert!(matches!(
            stream_end(&Err(UpstreamError::Rpc(json!({"message":"no code"})))),
            StreamEnd::Lost(_)
        ));
        assert_eq!(
            stream_end(&Err(UpstreamError::Closed)),
            StreamEnd::Lost("the upstream server closed its output".into())
        );
    }

    #[test]
    fn o7_a_failed_change_gives_the_upstream_error_or_a_cause_of_the_table() {
        let up = json!({"code":-32602,"message":"Unknown resource","data":{"uri":"file:///b"}});
        assert_eq!(change_error(&Err(UpstreamError::Rpc(up.clone()))), up);
        let e = change_error(&Ok(json!({"resultType":"complete"})));
        assert_eq!(
            e["data"],
            json!({"cause":"invalid_response","detail":"subscriptions/listen"})
        );
        assert_eq!(
            change_error(&Err(UpstreamError::Closed))["data"]["cause"],
            "upstream_exited"
        );
        assert_eq!(
            change_failure_text(&Ok(json!({}))),
            "the upstream server ended the stream before its acknowledgment"
        );
    }
}
