//! M3 (R2, O6, O7, the quirks about order): the I/O of the listen stream. The rules are pure in
//! [`crate::listen`]; here one owner task per connection opens, replaces and reopens the
//! `subscriptions/listen` streams, and the router of the upstream client hands every event to
//! [`on_event`] before it reads the next line.
//!
//! Order (docs/architecture.md principle 4): [`on_event`] runs on the router and queues its frames on the one
//! writer under the lock of the listener. A response of a later line is routed only after
//! that, so a list change written before a call result reaches VS Code before that result;
//! the `{}` of a subscription change and the first events of its stream are queued under the
//! same lock, so the response precedes the first update and no event of an older stream
//! follows it.
//!
//! The owner task (streams, replacements, the backoff and the stream-end decisions) is in
//! [`owner`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::inflight::Slot;
use crate::listen::filter::{self, Event};
use crate::listen::replay::{Declared, Subscriptions, gap_replay};
use crate::listen::stream::{AckOutcome, Generations, Stream};
use crate::log::{self, Level};
use crate::upstream::client::UpstreamClient;

mod owner;

/// A change of the subscriptions, queued for the owner task (one change at a time).
pub(crate) struct Command {
    pub slot: Slot,
    pub uri: String,
    pub subscribe: bool,
}

/// The listener of one connection.
#[derive(Default)]
pub(crate) struct Listener {
    state: Mutex<State>,
    /// Fired at the end of input or when the upstream stops: the owner cancels its streams.
    pub(crate) stop: CancellationToken,
}

#[derive(Default)]
struct State {
    declared: Declared,
    subs: Subscriptions,
    gens: Generations,
    /// The open streams by the id of their upstream request (= their subscription id).
    streams: HashMap<i64, Entry>,
    /// The queue of the owner task, once it runs.
    commands: Option<mpsc::UnboundedSender<Command>>,
    /// The owner learns here that the stream of a subscription change became active.
    activated: Option<mpsc::UnboundedSender<i64>>,
}

struct Entry {
    stream: Stream,
    acked_at: Option<Instant>,
    /// The stream of a subscription change: the request to answer and the set to commit at
    /// its first acknowledgment.
    change: Option<(Slot, Vec<String>)>,
}

impl Listener {
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    /// R2: what the initialize result declares (set when the connection becomes ready).
    pub(crate) fn declare(&self, declared: Declared) {
        self.lock().declared = declared;
    }

    /// O7: no stream without upstream support for subscriptions (→ -32601).
    pub(crate) fn supports_subscriptions(&self) -> bool {
        self.lock().declared.resources_subscribe
    }
}

/// R2: `notifications/initialized` on a ready connection starts the owner task once, when the
/// initialize result declares a list change or `resources.subscribe`.
pub(crate) fn start(shared: &Arc<Shared>, upstream: Arc<UpstreamClient>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (atx, arx) = mpsc::unbounded_channel();
    {
        let mut state = shared.listener.lock();
        if state.commands.is_some() || !state.declared.listens() {
            return;
        }
        state.commands = Some(tx);
        state.activated = Some(atx);
    }
    shared
        .tasks
        .spawn(owner::run(Arc::clone(shared), upstream, rx, arx));
}

/// O7: queues a subscription change; false when no owner runs (no stream was ever started).
pub(crate) fn queue(shared: &Shared, command: Command) -> Result<(), Box<Command>> {
    let state = shared.listener.lock();
    match &state.commands {
        Some(tx) => tx.send(command).map_err(|e| Box::new(e.0)),
        None => Err(Box::new(command)),
    }
}

/// O6, O7: one event of a listen stream (on the router, in the upstream's order). `uid` is
/// the subscription id of the event.
pub(crate) fn on_event(shared: &Shared, uid: i64, message: &Value) {
    let mut state = shared.listener.lock();
    let State {
        declared,
        subs,
        gens,
        streams,
        activated,
        ..
    } = &mut *state;
    let Some(entry) = streams.get_mut(&uid) else {
        log::bridge(
            Level::Debug,
            &format!("dropped an event of the listen stream {uid}, which is no longer open"),
        );
        return;
    };
    match filter::classify(message) {
        Event::Acknowledged { .. } => {
            if entry.acked_at.is_none() {
                entry.acked_at = Some(Instant::now());
            }
            match gens.acknowledged(&mut entry.stream) {
                AckOutcome::Activated {
                    replay,
                    answer_subscription,
                } => {
                    if answer_subscription && let Some((slot, set)) = entry.change.take() {
                        subs.commit(set);
                        shared.respond(&slot, Ok(json!({})));
                        if let Some(tx) = activated.as_ref() {
                            let _ = tx.send(uid);
                        }
                    }
                    if replay {
                        send_replay(shared, declared, subs);
                    }
                }
                AckOutcome::Replay => send_replay(shared, declared, subs),
                AckOutcome::Stale => {}
            }
        }
        Event::Forward(frame) if gens.is_active(&entry.stream) => {
            shared.listen_event(&frame);
        }
        Event::Forward(_) | Event::Drop => {
            let method = message.get("method").and_then(Value::as_str).unwrap_or("");
            log::bridge(
                Level::Debug,
                &format!("dropped the event {method} of the listen stream {uid}"),
            );
        }
    }
}

/// The quirk "VS Code lists at the same time as notifications/initialized": the gap replay.
fn send_replay(shared: &Shared, declared: &Declared, subs: &Subscriptions) {
    for frame in gap_replay(declared, subs.uris()) {
        shared.listen_event(&frame);
    }
}
