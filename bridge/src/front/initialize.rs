//! R1, R2: the task of `initialize`: start the upstream command, ask `server/discover`, and
//! answer with the 2025-11-25 result. A failure returns the connection to the state before
//! `initialize`, so that a new `initialize` can succeed.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::inflight::Slot;
use super::request::{Exchange, exchange};
use super::{Shared, State};
use crate::listen::replay::Declared;
use crate::log::{self, Level};
use crate::translate::errors::{self, Cause, error_object, format_limit};
use crate::translate::initialize::{InitializeParams, initialize_result, upstream_capabilities};
use crate::translate::shape::{ResultKind, result_kind};
use crate::upstream::client::{RequestOptions, UpstreamClient};
use crate::upstream::envelope::Envelope;
use crate::upstream::stdio::StdioTransport;
use crate::upstream::{Transport, UpstreamError};

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

    let (transport_tx, transport_rx) = mpsc::unbounded_channel();
    let target = &shared.opts.upstream;
    let transport = match StdioTransport::spawn(
        &target.command,
        &target.args,
        shared.opts.max_line_bytes,
        shared.opts.shutdown_grace,
        transport_tx,
        shared.outbox.room(),
    ) {
        Ok(t) => t,
        Err(e) => {
            log::bridge(
                Level::Warn,
                &format!("cannot start the upstream command: {e}"),
            );
            shared.revert(generation);
            shared.respond(&slot, Err(error_object(Cause::SpawnFailed, None)));
            return;
        }
    };
    if let Some(pid) = transport.process_id() {
        shared.upstream_pid.store(pid, Ordering::SeqCst);
    }
    let envelope = Envelope {
        client_info: init.client_info.clone(),
        capabilities: upstream_capabilities(&init.capabilities),
    };
    let events = shared.client_events(generation);
    let client = UpstreamClient::start(
        transport,
        transport_rx,
        envelope,
        shared.opts.max_line_bytes,
        events,
        shared.notification_sink(generation),
    );
    if !shared.attach(generation, &client) {
        // Stdin ended while the command started.
        shared.retire(client);
        return;
    }

    let opts = RequestOptions {
        log_level: shared.log_level(),
        ..Default::default()
    };
    let timeout = shared.opts.discover_timeout;
    let outcome = exchange(
        &shared,
        &slot,
        &client,
        "server/discover",
        Map::new(),
        &opts,
        None,
        timeout,
        1,
    )
    .await;
    let failure = match outcome {
        Exchange::Cancelled => {
            // VS Code canceled initialize, or stdin ended (then the stop sequence owns the
            // upstream).
            if shared.revert(generation) {
                shared.retire(client);
            }
            return;
        }
        Exchange::TimedOut => (None, format!("no response in {}", format_limit(timeout))),
        Exchange::Done(Err(UpstreamError::Rpc(e))) => {
            let detail = format!(
                "the upstream server answered with the error {}",
                e.get("code").unwrap_or(&Value::Null)
            );
            (Some(e), detail)
        }
        Exchange::Done(Err(e)) => (None, e.to_string()),
        Exchange::Done(Ok(raw)) if result_kind(&raw) == ResultKind::Complete && raw.is_object() => {
            let result = initialize_result(&raw, &shared.opts.fallback);
            shared
                .listener
                .declare(Declared::from_initialize_result(&result));
            if shared.ready(generation, &client) {
                log::bridge(Level::Info, "the upstream server is ready");
                shared.respond(&slot, Ok(result));
            }
            return;
        }
        Exchange::Done(Ok(_)) => (None, "the result is not valid".to_owned()),
    };
    let (upstream_error, detail) = failure;
    log::bridge(Level::Warn, &format!("server/discover failed: {detail}"));
    if shared.revert(generation) {
        shared.retire(client);
    }
    shared.respond(
        &slot,
        Err(errors::discover_failed(upstream_error.as_ref(), &detail)),
    );
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
            } if *g == generation => {
                *upstream = Some(Arc::clone(client));
                true
            }
            _ => false,
        }
    }

    /// R2: the state after a successful discover. False when stdin ended meanwhile.
    fn ready(&self, generation: u64, client: &Arc<UpstreamClient>) -> bool {
        let mut state = self.state();
        match &*state {
            State::Initializing { generation: g, .. } if *g == generation => {
                *state = State::Ready {
                    generation,
                    upstream: Arc::clone(client),
                };
                true
            }
            _ => false,
        }
    }

    /// R2: back to the state before `initialize`. False when the state moved on (the stop
    /// sequence then owns the upstream).
    fn revert(&self, generation: u64) -> bool {
        let mut state = self.state();
        match &*state {
            State::Initializing { generation: g, .. } if *g == generation => {
                *state = State::AwaitingInit;
                true
            }
            _ => false,
        }
    }
}
