//! L1–L3: what the front does for an upstream server of revision 2025-11-25 or older
//! (docs/older-servers.md). The upstream client, its requests, time limits, progress and
//! cancellation are those of every revision (the connection speaks the older dialect,
//! [`crate::upstream::dialect`]); here are only the rules that face VS Code:
//!
//! - [`Older`]: the state of the connection (the input kinds that VS Code declared, the
//!   server's requests to VS Code in flight, whether VS Code's level went upstream);
//! - [`initialize`]: the handshake of the older server, VS Code's `initialize` as it came;
//! - the notifications of the server ([`on_notification`]) and of VS Code ([`notify`]);
//! - [`server_requests`]: the server's requests to VS Code (L3).

mod server_requests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};

pub(super) use self::server_requests::asked;
use super::Shared;
use super::exchange::{Exchange, Upstream, exchange};
use super::inflight::{Slot, key_of};
use super::request::{error_of, timed_out};
use crate::auth::TokenSource;
use crate::errors::{Cause, error_object};
use crate::input::asked::Asked;
use crate::input::check::ClientCaps;
use crate::log::{self, Level};
use crate::translate::forward::LIST_TIMEOUT;
use crate::translate::icons::keep_data_icons;
use crate::translate::initialize::InitializeParams;
use crate::translate::level;
use crate::translate::older::accepted_revision;
use crate::upstream::UpstreamError;
use crate::upstream::client::{CallEvent, RequestOptions, UpstreamClient};
use crate::wire::lazy::{LazyObject, Member};

/// L2, L3: the front's state of an older upstream server, for one generation.
pub(crate) struct Older {
    /// The input kinds that VS Code declared (C2, O1, O2, O3).
    caps: ClientCaps,
    /// L3, O1: the upstream server's requests to VS Code that wait for an answer (the key of
    /// the server's id → the bridge's `b-` id, for a cancellation of the server), and the URL
    /// elicitations that it opened.
    asked: Mutex<Asked>,
    /// VS Code's `logging/setLevel` went upstream (else the level of one that the front
    /// answered before the result goes upstream after `notifications/initialized`, O5).
    level_sent: AtomicBool,
}

impl Older {
    pub(crate) fn new(init: &InitializeParams) -> Arc<Older> {
        Arc::new(Older {
            caps: ClientCaps::from_capabilities(&init.capabilities),
            asked: Mutex::new(Asked::new()),
            level_sent: AtomicBool::new(false),
        })
    }

    fn asked(&self) -> MutexGuard<'_, Asked> {
        crate::sync::lock(&self.asked)
    }

    /// O5: VS Code's `logging/setLevel` goes upstream (the older server keeps its own level).
    pub(crate) fn level_sent(&self) {
        self.level_sent.store(true, Ordering::Relaxed);
    }
}

/// How the `initialize` of an older server ended.
pub(crate) enum Initialized {
    /// The result for VS Code.
    Ready(Value),
    /// The error for VS Code, after its warning line.
    Failed(Value),
    /// VS Code cancelled `initialize`, or stdin ended.
    Cancelled,
}

/// L1: VS Code's `initialize` upstream, as VS Code sent it, within `--discover-timeout` (and
/// the time of a sign-in on top, M4), with the "still waiting" lines of every exchange.
pub(crate) async fn initialize(
    shared: &Shared,
    slot: &Slot,
    init: &InitializeParams,
    client: &Arc<UpstreamClient>,
) -> Initialized {
    let failed = |detail: String, error: Value| {
        log::bridge(
            Level::Warn,
            &format!("initialize of the older upstream server failed: {detail}"),
        );
        Initialized::Failed(error)
    };
    let params = match &init.raw {
        Value::Object(map) => LazyObject::from(map.clone()),
        _ => LazyObject::new(),
    };
    let timeout = shared.opts.discover_timeout;
    let request = Upstream {
        client,
        method: "initialize",
        params: std::borrow::Cow::Owned(params),
        opts: &RequestOptions::default(),
        progress_token: None,
        timeout,
        round: 1,
        // M4: a sign-in that begins during initialize adds its own time limit.
        extension: shared.opts.sign_in.as_ref().map(TokenSource::wait),
    };
    let mut result = match exchange(shared, slot, request).await {
        Exchange::Cancelled => return Initialized::Cancelled,
        Exchange::TimedOut => {
            return failed(
                format!("no response in {}", crate::errors::format_limit(timeout)),
                timed_out(slot, timeout),
            );
        }
        Exchange::Done(Ok(result)) => result,
        Exchange::Done(Err(UpstreamError::Closed)) => {
            return failed(
                "the upstream server closed its output".to_owned(),
                error_object(Cause::UpstreamExited, None),
            );
        }
        Exchange::Done(Err(error)) => {
            let detail = match error.rpc() {
                Some(e) => format!(
                    "the upstream server answered with the error {}",
                    e.get("code").unwrap_or(&Value::Null)
                ),
                None => error.to_string(),
            };
            return failed(detail, error_of(error));
        }
    };
    let Some(revision) = accepted_revision(&result).map(str::to_owned) else {
        let named = result
            .get("protocolVersion")
            .cloned()
            .unwrap_or(Value::Null);
        return failed(
            format!("the upstream server answered with the revision {named}"),
            error_object(
                Cause::InvalidResponse,
                Some(&format!(
                    "initialize: the revision {named} is not one that the bridge relays"
                )),
            ),
        );
    };
    // R1: the bridge declares no tasks to VS Code (it relays no task results).
    if let Some(caps) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    {
        caps.remove("tasks");
    }
    if shared.opts.upstream.is_remote() {
        keep_data_icons("initialize", &mut result);
    }
    log::bridge(
        Level::Info,
        &format!("the upstream server speaks revision {revision}: the bridge relays it"),
    );
    Initialized::Ready(result)
}

/// L2: a notification of VS Code goes upstream (but `notifications/cancelled`, which the
/// dispatch maps to the bridge's id); after `notifications/initialized`, the level that the
/// front answered before it (O5).
pub(crate) fn notify(
    shared: &Arc<Shared>,
    older: &Older,
    client: &Arc<UpstreamClient>,
    method: &str,
    params: Option<&Value>,
) {
    client.send_message(&notification(method, params.cloned()));
    if method != "notifications/initialized" || older.level_sent.load(Ordering::Relaxed) {
        return;
    }
    let Some(level) = shared.log_level() else {
        return;
    };
    let mut params = LazyObject::new();
    params.insert("level", Member::Value(Value::from(level.as_str())));
    let Ok(mut call) = client.request("logging/setLevel", params, &RequestOptions::default())
    else {
        return;
    };
    // Its answer is the bridge's and goes nowhere; the call lives until it, its limit or the
    // end of the connection. Not a tracked task: the stop does not wait for it.
    tokio::spawn(async move {
        let answered = tokio::time::timeout(LIST_TIMEOUT, async {
            while let CallEvent::Progress(_) = call.next().await {}
        })
        .await;
        if answered.is_err() {
            call.cancel(super::inflight::REASON_TIMEOUT);
        }
    });
}

/// O4, O5, O6, O7, L3: a notification of an older server, on its router (its progress went
/// to its request already).
pub(crate) fn on_notification(
    shared: &Shared,
    older: &Older,
    method: String,
    params: Option<Value>,
) {
    match method.as_str() {
        // The server gives up one of its requests to VS Code: VS Code gets the cancellation
        // with the bridge's id, never with the server's.
        "notifications/cancelled" => {
            let asked = params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(|id| older.asked().remove(&key_of(id)));
            if let Some(bridge_id) = asked {
                let reason = params
                    .as_ref()
                    .and_then(|p| p.get("reason"))
                    .and_then(Value::as_str)
                    .unwrap_or("the upstream server cancelled the request");
                shared
                    .client_requests
                    .cancel(&shared.outbox, &bridge_id, reason);
            }
        }
        "notifications/message" => {
            let frame = params
                .as_ref()
                .and_then(|p| level::log_message_for_client(p, shared.log_level()));
            if let Some(frame) = frame {
                shared.log_message(&frame);
            }
        }
        // O1: the end of a URL elicitation only for one that the server opened and that is
        // still open; never for one of the bridge's own (the sign-in prompt).
        "notifications/elicitation/complete" => {
            let opened = params
                .as_ref()
                .and_then(|p| p.get("elicitationId"))
                .and_then(Value::as_str)
                .is_some_and(|id| older.asked().complete(id));
            if opened {
                shared.listen_event(&notification(&method, params));
            } else {
                log::bridge(
                    Level::Debug,
                    "dropped the notification notifications/elicitation/complete of the upstream server: no elicitation of its own with that id is open",
                );
            }
        }
        // List changes, resource updates and everything else pass as they came.
        _ => shared.listen_event(&notification(&method, params)),
    }
}

/// A notification frame.
fn notification(method: &str, params: Option<Value>) -> Value {
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), "2.0".into());
    frame.insert("method".into(), method.into());
    if let Some(params) = params {
        frame.insert("params".into(), params);
    }
    Value::Object(frame)
}
