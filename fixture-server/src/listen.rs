//! `subscriptions/listen` (O6, O7): the streams of list changes and resource updates.
//!
//! rmcp writes the acknowledgment before it calls [`listen`], and adds the subscription id to
//! each notification of a [`SubscriptionSink`]. The fixture keeps the sink of every open stream,
//! so that a tool writes its list change or update to every stream itself, and waits until the
//! line is written, before it returns its result. rmcp's `Peer::send_notification` completes
//! only after the transport wrote the frame, thus on stdio the list change of `toggle` is always
//! before the result of `toggle` (the quirk of the quirk Q6 of docs/rules.md).
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::service::{SubscriptionContext, SubscriptionSink};
use tokio_util::sync::CancellationToken;

use crate::jitter;
use crate::sync::lock;

/// The longest wait of a tool for a listen stream whose acknowledgment is written but which
/// rmcp did not hand to [`listen`] yet.
const PENDING_WAIT: Duration = Duration::from_secs(1);

/// The open listen streams.
pub struct Listeners {
    next: AtomicU64,
    sinks: Mutex<HashMap<u64, SubscriptionSink>>,
    /// Streams that are accepted (their acknowledgment can be written already) but not yet in
    /// `sinks`. A client that saw the acknowledgment can call `toggle` at once, and the list
    /// change must reach that stream.
    pending: tokio::sync::watch::Sender<usize>,
}

impl Default for Listeners {
    fn default() -> Self {
        Self {
            next: AtomicU64::new(1),
            sinks: Mutex::new(HashMap::new()),
            pending: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl Listeners {
    /// A stream was accepted; rmcp writes its acknowledgment next and then calls [`listen`].
    pub fn accepted(&self) {
        self.pending.send_modify(|n| *n += 1);
    }

    fn add(&self, sink: SubscriptionSink) -> u64 {
        let key = self.next.fetch_add(1, Ordering::SeqCst);
        lock(&self.sinks).insert(key, sink);
        self.pending.send_modify(|n| *n = n.saturating_sub(1));
        key
    }

    fn remove(&self, key: u64) {
        lock(&self.sinks).remove(&key);
    }

    /// The sinks of all open streams, once each accepted stream is open (bounded wait).
    async fn sinks(&self) -> Vec<SubscriptionSink> {
        let mut pending = self.pending.subscribe();
        let _ = tokio::time::timeout(PENDING_WAIT, pending.wait_for(|n| *n == 0)).await;
        lock(&self.sinks).values().cloned().collect()
    }

    /// `notifications/tools/list_changed` on each stream that asked for it; returns when the
    /// lines are written.
    pub async fn tools_changed(&self) {
        for sink in self.sinks().await {
            jitter::pause(jitter::Point::Changes).await;
            // A stream that did not ask for tool changes refuses the notification: no line.
            let _ = sink.notify_tool_list_changed().await;
        }
    }

    /// `notifications/prompts/list_changed` on each stream that asked for it.
    pub async fn prompts_changed(&self) {
        for sink in self.sinks().await {
            jitter::pause(jitter::Point::Changes).await;
            let _ = sink.notify_prompt_list_changed().await;
        }
    }

    /// `notifications/resources/updated` on each stream that subscribed to `uri`.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        let mut sent = 0;
        for sink in self.sinks().await {
            jitter::pause(jitter::Point::Changes).await;
            if sink.notify_resource_updated(uri).await.is_ok() {
                sent += 1;
            }
        }
        sent
    }
}

/// Runs one listen stream until the client cancels it or the session stops. At the end of
/// stdin and after `shutdown`, the stream ends with its result (graceful closure): rmcp writes
/// the `SubscriptionsListenResult` when this returns (`stopping` is the session's
/// `Lifecycle::stopping`). After a cancellation of the client, rmcp
/// writes nothing.
pub async fn listen(
    listeners: &Listeners,
    stopping: &CancellationToken,
    context: SubscriptionContext,
) {
    let key = listeners.add(context.sink().clone());
    tokio::select! {
        () = context.cancelled() => {}
        () = stopping.cancelled() => {}
    }
    listeners.remove(key);
}
