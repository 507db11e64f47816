//! R1, R2: the task of `initialize`: connect to the upstream server, ask `server/discover`, and
//! answer with the 2025-11-25 result. A failure returns the connection to the state before
//! `initialize`, so that a new `initialize` can succeed.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::exchange::{Exchange, Upstream, exchange};
use super::inflight::Slot;
use super::older::{self, Initialized, Older};
use super::{Shared, State};
use crate::auth::TokenSource;
use crate::auth::error_object::sign_in_error;
use crate::cli::UpstreamRevision;
use crate::errors::{self, Cause, error_object, format_limit};
use crate::listen::replay::Declared;
use crate::log::{self, Level, Scope};
use crate::translate::icons::keep_data_icons;
use crate::translate::initialize::{InitializeParams, initialize_result, upstream_capabilities};
use crate::translate::older::{Refusal, named_revisions, refusal};
use crate::translate::shape::{ResultKind, result_kind};
use crate::upstream::client::{RequestOptions, UpstreamClient};
use crate::upstream::connect::{ConnectOptions, connect};
use crate::upstream::dialect::Dialect;
use crate::upstream::envelope::{Envelope, PROTOCOL_VERSION};
use crate::upstream::{Ended, UpstreamError};
use crate::wire::lazy::LazyObject;

/// The task of `initialize` of generation `generation`.
pub(crate) async fn run_initialize(
    shared: Arc<Shared>,
    slot: Slot,
    generation: u64,
    init: InitializeParams,
) {
    log::bridge(
        Level::Info,
        &format!("initialize from {}", init.client_label()),
    );

    // L1: every connection starts as one of 2026-07-28.
    *crate::sync::lock(&shared.older) = None;
    let options = ConnectOptions {
        max_line_bytes: shared.opts.max_line_bytes,
        grace: shared.opts.shutdown_grace,
        pid: Arc::clone(&shared.upstream_pid),
    };
    let connection = match connect(&shared.opts.upstream, &options, shared.outbox.room()) {
        Ok(connection) => connection,
        Err(e) => {
            log::bridge(Level::Warn, &e.line);
            shared.revert_unattached(generation);
            shared.respond(&slot, Err(error_object(e.cause, None)));
            return;
        }
    };
    let envelope = Envelope {
        client_info: init.client_info.clone(),
        capabilities: upstream_capabilities(&init.capabilities),
    };
    let events = shared.client_events(generation);
    let client = UpstreamClient::start(
        connection.transport,
        connection.events,
        envelope,
        shared.opts.max_line_bytes,
        events,
        shared.incoming_sink(generation),
    );
    if !shared.attach(generation, &client) {
        // Stdin ended while the command started.
        shared.retire(client);
        return;
    }
    // S1: the early answer, when the start outlasts --answer-initialize-after.
    let _timer = super::early::arm(&shared, &slot, generation);

    // L1: a command, a pipe and a URL (L4) can carry an older server.
    let revision = shared.opts.upstream_revision;
    if revision == UpstreamRevision::Older {
        return older_initialize(shared, slot, generation, init, client).await;
    }
    let opts = RequestOptions {
        log_level: shared.log_level(),
        ..Default::default()
    };
    let timeout = shared.opts.discover_timeout;
    let discover = |round| Upstream {
        client: &client,
        method: "server/discover",
        params: Cow::Owned(LazyObject::new()),
        opts: &opts,
        progress_token: None,
        timeout,
        round,
        // M4: a sign-in that begins during server/discover adds its own time limit.
        extension: shared.opts.sign_in.as_ref().map(TokenSource::wait),
    };
    let mut outcome = exchange(&shared, &slot, discover(1)).await;
    // The versioning rule of 2026-07-28: a server that names the bridge's revision among its
    // supported ones after -32022 gets the request once more.
    if let Exchange::Done(Err(e)) = &outcome
        && e.rpc().is_some_and(retry_with_our_version)
    {
        outcome = exchange(&shared, &slot, discover(2)).await;
    }
    match refused(&outcome) {
        Some((Refusal::Older, answer)) if revision == UpstreamRevision::Auto => {
            log::bridge(
                Level::Info,
                &format!(
                    "the upstream server answered server/discover with {answer}: it is a server of an older revision"
                ),
            );
            return older_initialize(shared, slot, generation, init, client).await;
        }
        Some((Refusal::NoneSpoken(supported), _)) => {
            let detail = format!(
                "the upstream server supports none of the revisions of the bridge; it names {}",
                named_revisions(&supported)
            );
            return discover_failed(&shared, generation, client, &slot, None, &detail);
        }
        _ => {}
    }
    let (upstream_error, detail) = match outcome {
        Exchange::Cancelled => {
            // VS Code canceled initialize, or stdin ended (then the stop sequence owns the
            // upstream).
            return shared.fail(generation, client, &slot, None);
        }
        Exchange::TimedOut => (None, format!("no response in {}", format_limit(timeout))),
        Exchange::Done(Err(UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. })) => {
            let detail = format!(
                "the upstream server answered with the error {}",
                e.get("code").unwrap_or(&Value::Null)
            );
            (Some(e), detail)
        }
        Exchange::Done(Err(UpstreamError::SignIn(e))) => {
            log::bridge(
                Level::Warn,
                &format!("server/discover failed: the sign-in failed ({e})"),
            );
            return shared.fail(generation, client, &slot, Some(sign_in_error(&e)));
        }
        Exchange::Done(Err(UpstreamError::HttpStatus(status))) => (
            None,
            format!("the upstream server sent no JSON-RPC response (HTTP status {status})"),
        ),
        Exchange::Done(Err(UpstreamError::Closed)) => {
            // The command stopped before its discover result: the Output channel gets its
            // exit status first (the line of mcp_stdio of docs/stderr.md); the next initialize can
            // start it again.
            exit_line(&client, shared.opts.shutdown_grace).await;
            (None, UpstreamError::Closed.to_string())
        }
        Exchange::Done(Err(e)) => (None, e.to_string()),
        Exchange::Done(Ok(raw)) if result_kind(&raw) == ResultKind::Complete && raw.is_object() => {
            let mut result = initialize_result(&raw, &shared.opts.fallback);
            if shared.opts.upstream.is_remote() {
                keep_data_icons("initialize", &mut result);
            }
            shared
                .listener
                .declare(Declared::from_initialize_result(&result));
            return shared.started(generation, &client, &slot, result);
        }
        Exchange::Done(Ok(_)) => (None, "the result is not valid".to_owned()),
    };
    discover_failed(
        &shared,
        generation,
        client,
        &slot,
        upstream_error.as_ref(),
        &detail,
    );
}

/// R2: `server/discover` failed: the warning line, and VS Code's `initialize` gets
/// `discover_failed` (or, after the early answer, every request does: S1).
fn discover_failed(
    shared: &Shared,
    generation: u64,
    client: Arc<UpstreamClient>,
    slot: &Slot,
    upstream_error: Option<&Value>,
    detail: &str,
) {
    log::bridge(Level::Warn, &format!("server/discover failed: {detail}"));
    let error = errors::discover_failed(upstream_error, detail);
    shared.fail(generation, client, slot, Some(error));
}

/// L1: the `initialize` of an older server: from here on the connection speaks the older
/// dialect (its requests, the server's requests to VS Code, L2, L3).
async fn older_initialize(
    shared: Arc<Shared>,
    slot: Slot,
    generation: u64,
    init: InitializeParams,
    client: Arc<UpstreamClient>,
) {
    client.set_dialect(Dialect::Older);
    // Before the request: the server may ask VS Code before its result.
    *crate::sync::lock(&shared.older) = Some((generation, Older::new(&init)));
    match older::initialize(&shared, &slot, &init, &client).await {
        Initialized::Ready(result) => shared.started(generation, &client, &slot, result),
        Initialized::Failed(error) => shared.fail(generation, client, &slot, Some(error)),
        Initialized::Cancelled => shared.fail(generation, client, &slot, None),
    }
}

/// Writes `stdio server exited (exit code <n>); no restart is left` when the upstream
/// process ends within `bound` (it closed its output; a process that runs on is stopped
/// later, by the retire of its connection, without this line).
async fn exit_line(client: &UpstreamClient, bound: std::time::Duration) {
    let mut end = client.transport().end_watch();
    let ended = tokio::time::timeout(bound.min(std::time::Duration::from_secs(1)), async {
        loop {
            if let Some(ended) = *end.borrow_and_update() {
                return Some(ended);
            }
            if end.changed().await.is_err() {
                return None;
            }
        }
    })
    .await;
    if let Ok(Some(Ended { exit: Some(status) })) = ended {
        log::write(Scope::McpStdio, Level::Warn, &status.stdio_line());
    }
}

/// L1, L4: what a refused `server/discover` says of the server ([`refusal`]), and the answer
/// as the log line names it: `the error <code>` or `the HTTP status <status>`. A time-out or
/// any other failure is no answer.
fn refused(outcome: &Exchange) -> Option<(Refusal, String)> {
    let Exchange::Done(Err(error)) = outcome else {
        return None;
    };
    let status = match error {
        UpstreamError::HttpStatus(status) | UpstreamError::Refused { status, .. } => Some(*status),
        _ => None,
    };
    let rpc = error.rpc();
    let found = refusal(status, rpc, PROTOCOL_VERSION)?;
    // At a URL the status tells an older server, unless the error is a -32022 that names an
    // older revision.
    let code = rpc.and_then(|e| e.get("code"));
    let answer = match (status, code) {
        (Some(status), code) if code.is_none_or(|c| c != -32022) => {
            format!("the HTTP status {status}")
        }
        (_, Some(code)) => format!("the error {code}"),
        (_, None) => "an error".to_owned(),
    };
    Some((found, answer))
}

/// An `UnsupportedProtocolVersionError` (-32022) whose `data.supported` lists the revision of
/// the bridge.
fn retry_with_our_version(error: &Value) -> bool {
    error.get("code").and_then(Value::as_i64) == Some(-32022)
        && error
            .get("data")
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|s| s.as_str() == Some(PROTOCOL_VERSION)))
}

impl Shared {
    /// Puts the upstream of an initialize in progress into the state (so that the end of
    /// stdin stops it). False when the state moved on.
    fn attach(&self, generation: u64, client: &Arc<UpstreamClient>) -> bool {
        let mut state = self.state();
        match &mut *state {
            State::Initializing {
                generation: g,
                upstream,
                ..
            } if *g == generation => {
                *upstream = Some(Arc::clone(client));
                true
            }
            _ => false,
        }
    }

    /// A cancelled `initialize`: back to the state before it at once, so that an `initialize`
    /// right behind the cancellation is served (not refused as a second one), and its upstream
    /// is stopped here. Its task then finds the state moved on and answers nothing.
    pub(crate) fn initialize_cancelled(&self, id: &Value) {
        let upstream = {
            let mut state = self.state();
            match &mut *state {
                // S1: an `initialize` that the bridge answered itself is no longer VS Code's
                // to cancel.
                State::Initializing {
                    id: init,
                    upstream,
                    answered: false,
                    ..
                } if init == id => {
                    let upstream = upstream.take();
                    *state = State::AwaitingInit;
                    upstream
                }
                _ => return,
            }
        };
        if let Some(client) = upstream {
            self.retire(client);
        }
    }

    /// R2: ends the start of `generation` under the lock of the state: `next` makes the
    /// state after it from whether the bridge answered `initialize` itself (S1). Returns that
    /// flag, and whether VS Code sent `notifications/initialized` (read under the same lock:
    /// see its dispatch); `None` when the state moved on (stdin ended, or a cancellation).
    /// Every end wakes the requests that wait for the start.
    fn end_start(&self, generation: u64, next: impl FnOnce(bool) -> State) -> Option<(bool, bool)> {
        let ended = {
            let mut state = self.state();
            match &*state {
                State::Initializing {
                    generation: g,
                    answered,
                    ..
                } if *g == generation => {
                    let answered = *answered;
                    *state = next(answered);
                    Some((answered, *self.initialized.borrow()))
                }
                _ => None,
            }
        };
        self.start_changes.send_replace(());
        ended
    }

    /// R2: the state after a successful discover (or an older server's `initialize`), and
    /// VS Code's answer: the result, or after the early answer (S1) what the server says
    /// otherwise and the list changes. Nothing when stdin ended meanwhile.
    fn started(
        self: &Arc<Self>,
        generation: u64,
        client: &Arc<UpstreamClient>,
        slot: &Slot,
        result: Value,
    ) {
        let ready = |_| State::Ready {
            generation,
            upstream: Arc::clone(client),
        };
        match self.end_start(generation, ready) {
            Some((false, _)) => {
                log::bridge(Level::Info, "the upstream server is ready");
                self.respond(slot, Ok(result));
            }
            Some((true, initialized)) => {
                super::early::caught_up(self, &result, client, initialized)
            }
            None => {}
        }
    }

    /// R2: back to the state before `initialize` when the upstream never started (nothing
    /// was attached, no early answer was armed).
    fn revert_unattached(&self, generation: u64) {
        self.end_start(generation, |_| State::AwaitingInit);
    }

    /// R2: the start failed (or was cancelled, `error` `None`): back to the state before
    /// `initialize`, the upstream stopped, and VS Code's `initialize` gets `error`. After the
    /// early answer (S1) the connection stays failed instead: every request gets `error`.
    /// Nothing but the answer when the state moved on (the stop sequence owns the upstream).
    fn fail(
        &self,
        generation: u64,
        client: Arc<UpstreamClient>,
        slot: &Slot,
        error: Option<Value>,
    ) {
        let failed = |answered| match answered {
            true => State::Failed {
                error: error
                    .clone()
                    .unwrap_or_else(|| error_object(Cause::UpstreamExited, None)),
            },
            false => State::AwaitingInit,
        };
        if self.end_start(generation, failed).is_some() {
            let mut older = crate::sync::lock(&self.older);
            if older.as_ref().is_some_and(|(g, _)| *g == generation) {
                *older = None;
            }
            drop(older);
            self.retire(client);
        }
        if let Some(error) = error {
            self.respond(slot, Err(error));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_32022_that_lists_our_revision_is_tried_again_once() {
        let listed =
            json!({"code":-32022,"message":"m","data":{"supported":["2025-11-25","2026-07-28"]}});
        assert!(retry_with_our_version(&listed));
        let other = json!({"code":-32022,"message":"m","data":{"supported":["2025-11-25"]}});
        assert!(!retry_with_our_version(&other));
        assert!(!retry_with_our_version(
            &json!({"code":-32601,"message":"m"})
        ));
        assert!(!retry_with_our_version(
            &json!({"code":-32022,"message":"m"})
        ));
    }
}
