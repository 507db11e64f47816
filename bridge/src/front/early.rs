//! S1: a slow start within the client's budget. The Copilot harness gives `initialize` 60 s
//! and does not start a server again in the session after that; servers started through
//! `npx`, `uvx` or Docker often take longer. When the upstream server has not answered by
//! `--answer-initialize-after` (`server/discover`, or an older server's `initialize`), the
//! bridge answers VS Code's `initialize` itself and the start goes on behind it, bounded by
//! `--discover-timeout` as before.
//!
//! Nothing stale or foreign is served: the early answer declares the lists with list changes
//! and nothing else that a server would have to back; until the server is ready every list is
//! empty and every other request waits for the start (its cancellation still ends it). Then
//! VS Code gets one list change per list that the server has, and a warning line names what
//! the server's own answer would have said otherwise (its instructions, a capability, its
//! name). A start that fails after the early answer leaves the connection failed: every
//! request gets the start's error.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::AbortHandle;

use super::inflight::Slot;
use super::{Shared, State, listener, older};
use crate::errors::{Cause, error_object, format_limit};
use crate::log::{self, Level};
use crate::upstream::client::UpstreamClient;

/// The capabilities of the early answer: the three lists, each with its list changes (the
/// bridge sends one when the server is ready), and nothing that needs the server to exist.
fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": true},
        "prompts": {"listChanged": true},
        "resources": {"listChanged": true},
    })
}

/// The lists of the early answer and the notification of each list's change.
pub(super) const LISTS: [(&str, &str, &str); 4] = [
    ("tools/list", "tools", "notifications/tools/list_changed"),
    (
        "prompts/list",
        "prompts",
        "notifications/prompts/list_changed",
    ),
    (
        "resources/list",
        "resources",
        "notifications/resources/list_changed",
    ),
    (
        "resources/templates/list",
        "resourceTemplates",
        "notifications/resources/list_changed",
    ),
];

/// The early `initialize` result: revision 2025-11-25, the lists, and the server information
/// that the bridge gives a server that sends none (R1's fallback).
fn early_result(shared: &Shared) -> Value {
    let fallback = &shared.opts.fallback;
    json!({
        "protocolVersion": crate::translate::initialize::REPLY_PROTOCOL_VERSION,
        "capabilities": capabilities(),
        "serverInfo": {"name": fallback.name, "version": fallback.version},
    })
}

/// Aborts the timer of the early answer when the start ends first.
pub(super) struct Timer(Option<AbortHandle>);

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// S1: arms the early answer of the `initialize` of `slot` (generation `generation`).
pub(super) fn arm(shared: &Arc<Shared>, slot: &Slot, generation: u64) -> Timer {
    let Some(after) = shared.opts.answer_initialize_after else {
        return Timer(None);
    };
    let (shared, slot) = (Arc::clone(shared), slot.clone());
    let task = tokio::spawn(async move {
        let mut now = shared.answer_now.subscribe();
        let why = tokio::select! {
            () = tokio::time::sleep(after) => Why::Slow(after),
            Ok(_) = now.wait_for(|g| *g == generation) => Why::SignIn,
        };
        answer(&shared, &slot, generation, why);
    });
    Timer(Some(task.abort_handle()))
}

/// Why the bridge answers `initialize` itself.
enum Why {
    /// The start outlasted `--answer-initialize-after`.
    Slow(Duration),
    /// A sign-in began at the start, VS Code declared URL elicitation, and the browser did
    /// not open: the sign-in asks VS Code once it is initialized.
    SignIn,
}

/// S1: a sign-in at the start of `generation` whose browser did not open asks for the early
/// answer now.
pub(super) fn answer_now(shared: &Shared, generation: u64) {
    shared.answer_now.send_replace(generation);
}

/// The early answer, when the start of `generation` still runs and nothing answered it yet.
/// It is written under the lock of the state, so that nothing of the ready server (its list
/// changes) can come before it.
fn answer(shared: &Shared, slot: &Slot, generation: u64, why: Why) {
    let mut state = shared.state();
    let State::Initializing {
        generation: g,
        answered,
        ..
    } = &mut *state
    else {
        return;
    };
    if *g != generation || *answered {
        return;
    }
    *answered = true;
    let line = match why {
        Why::Slow(after) => format!(
            "the upstream server is still starting after {}: the bridge answered initialize itself; the server's lists follow with a list change when it is ready",
            format_limit(after)
        ),
        Why::SignIn => "the upstream server needs a sign-in and the browser did not open: the bridge answered initialize itself and asks VS Code to open the sign-in once it is initialized; the server's lists follow with a list change when it is ready".to_owned(),
    };
    log::bridge(Level::Info, &line);
    shared.respond(slot, Ok(early_result(shared)));
}

/// Where the start is, for a request that waits for it.
pub(super) enum Phase {
    Starting,
    Ready,
    Failed(Value),
}

pub(super) fn phase(shared: &Shared) -> Phase {
    match &*shared.state() {
        State::Initializing { .. } => Phase::Starting,
        State::Ready { .. } => Phase::Ready,
        State::Failed { error } => Phase::Failed(error.clone()),
        State::AwaitingInit | State::Closing => {
            Phase::Failed(error_object(Cause::UpstreamExited, None))
        }
    }
}

/// S1: the server is ready after the early answer: what its own answer says otherwise gets a
/// warning line, VS Code gets a list change for each list the server has (from the gap
/// replay of the listen stream where Q7 gives one), and a `notifications/initialized` that
/// VS Code sent meanwhile takes effect now.
pub(super) fn caught_up(
    shared: &Arc<Shared>,
    result: &Value,
    upstream: &Arc<UpstreamClient>,
    initialized: bool,
) {
    log::bridge(
        Level::Info,
        "the upstream server is ready after the bridge's early answer to initialize",
    );
    let differences = differences(&early_result(shared), result);
    if !differences.is_empty() {
        log::bridge(
            Level::Warn,
            &format!(
                "the upstream server's answer to initialize differs from the bridge's early answer ({}): VS Code keeps the early answer until it starts the server again",
                differences.join("; ")
            ),
        );
    }
    let caps = result.get("capabilities");
    // A server of 2026-07-28 that declares a list's changes gets the gap replay of its first
    // listen stream (Q7), one list change per such list: those are not sent twice.
    let modern = shared.older().is_none();
    let replayed = |cap: &str| {
        modern
            && caps
                .and_then(|c| c.get(cap))
                .and_then(|c| c.get("listChanged"))
                .and_then(Value::as_bool)
                .unwrap_or(false)
    };
    let mut sent = Vec::new();
    for (_, key, notification) in LISTS {
        let cap = if key == "resourceTemplates" {
            "resources"
        } else {
            key
        };
        if caps.and_then(|c| c.get(cap)).is_some()
            && !replayed(cap)
            && !sent.contains(&notification)
        {
            shared
                .outbox
                .send(&json!({"jsonrpc": "2.0", "method": notification}));
            sent.push(notification);
        }
    }
    if initialized {
        match shared.older() {
            Some(older) => {
                older::notify(shared, &older, upstream, "notifications/initialized", None)
            }
            None => listener::start(shared, Arc::clone(upstream)),
        }
    }
}

/// What the server's `initialize` result says that the early answer did not: a capability
/// it lacks or adds, its instructions, its name.
fn differences(early: &Value, real: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let keys = |v: &Value| -> Vec<String> {
        v.get("capabilities")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let (early_caps, real_caps) = (keys(early), keys(real));
    let missing: Vec<&str> = early_caps
        .iter()
        .filter(|k| !real_caps.contains(k))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        out.push(format!("it has no {}", missing.join(", ")));
    }
    let added: Vec<&str> = real_caps
        .iter()
        .filter(|k| !early_caps.contains(k))
        .map(String::as_str)
        .collect();
    if !added.is_empty() {
        out.push(format!("it also declares {}", added.join(", ")));
    }
    if real.get("instructions").is_some_and(Value::is_string) {
        out.push("it has instructions".to_owned());
    }
    if early.pointer("/serverInfo/name") != real.pointer("/serverInfo/name") {
        out.push("its name is another".to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s1_the_differences_name_missing_and_added_capabilities_instructions_and_name() {
        let early = json!({"capabilities": capabilities(), "serverInfo": {"name": "srv"}});
        let same = json!({"capabilities": capabilities(), "serverInfo": {"name": "srv"}});
        assert!(differences(&early, &same).is_empty());
        let other = json!({
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "real"},
            "instructions": "read me",
        });
        assert_eq!(
            differences(&early, &other),
            vec![
                "it has no prompts, resources".to_owned(),
                "it also declares logging".to_owned(),
                "it has instructions".to_owned(),
                "its name is another".to_owned(),
            ]
        );
    }
}
