//! The two ways a connection stops: the end of stdin (R7, "The stop sequence of VS Code"),
//! and the end of the upstream connection ("When the upstream server stops").

use std::sync::Arc;
use std::time::Duration;

use super::inflight::{REASON_CLIENT_CLOSED, REASON_UPSTREAM_STOPPED};
use super::{Shared, State};
use crate::errors::{Cause, error_object};
use crate::log::{self, Level, Scope};
use crate::upstream::Ended;

/// R7 and "The stop sequence of VS Code": cancel every request without a response, stop the
/// upstream (close its stdin; a termination signal after shutdown_grace; a kill after one
/// more grace), all within 2 × grace + 2 s.
pub(super) async fn stop_at_eof(shared: &Shared) {
    let upstream = {
        let mut state = shared.state();
        let upstream = match &*state {
            State::Ready { upstream, .. }
            | State::Initializing {
                upstream: Some(upstream),
                ..
            } => Some(Arc::clone(upstream)),
            _ => None,
        };
        *state = State::Closing;
        upstream
    };
    shared.start_changes.send_replace(());
    // The owner of the listen stream cancels its streams upstream (R7: within the bound).
    shared.listener.stop.cancel();
    shared.inflight.cancel_all(REASON_CLIENT_CLOSED);
    // The tasks only queue their cancellations upstream; then stdin of the upstream closes
    // after those frames.
    shared.tasks.close();
    let _ = tokio::time::timeout(Duration::from_secs(1), shared.tasks.wait()).await;
    let bound = shared.opts.shutdown_grace * 2 + Duration::from_secs(1);
    if let Some(upstream) = upstream {
        let _ = tokio::time::timeout(bound, upstream.shutdown()).await;
    }
    shared.stoppers.close();
    let _ = tokio::time::timeout(bound, shared.stoppers.wait()).await;
}

/// "When the upstream server stops": the error line, -32603 `upstream_exited` to every
/// request in flight, then the caller exits with code 1. The tasks stop first (bounded), so
/// that what they owe VS Code before a response comes before it (M2: `notifications/cancelled`
/// for their `b-` requests and `notifications/elicitation/complete` for accepted URLs).
pub(super) async fn stop_after_upstream_exit(shared: &Shared, exit: Ended) {
    *shared.state() = State::Closing;
    shared.start_changes.send_replace(());
    shared.listener.stop.cancel();
    if let Some(status) = exit.exit {
        log::write(Scope::McpStdio, Level::Warn, &status.stdio_line());
    }
    log::bridge(Level::Err, &format!("the upstream server {exit}"));
    let slots = shared.inflight.take_all(REASON_UPSTREAM_STOPPED);
    for slot in &slots {
        slot.token.cancel();
    }
    shared.tasks.close();
    let _ = tokio::time::timeout(shared.opts.shutdown_grace, shared.tasks.wait()).await;
    for slot in slots {
        shared.reply(
            slot.id.clone(),
            Err(error_object(Cause::UpstreamExited, None)),
        );
    }
    shared.stoppers.close();
    let _ = tokio::time::timeout(shared.opts.shutdown_grace, shared.stoppers.wait()).await;
}
