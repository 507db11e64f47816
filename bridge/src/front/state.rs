//! What the tasks of one connection share: the state of the connection, the requests in
//! flight, the level of VS Code, the one writer, and the upstream client of each generation.

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::client_requests::ClientRequests;
use super::inflight::Inflight;
use super::{Options, dispatch, listener};
use crate::input::complete::ElicitationIds;
use crate::translate::level::LogLevel;
use crate::upstream::client::{ClientEvent, NotificationSink, UpstreamClient};
use crate::wire::writer::Outbox;

/// The connection states: before `initialize`, while the upstream answers `server/discover`,
/// ready (R2), and closing (after the end of stdin or the end of the upstream).
pub(crate) enum State {
    AwaitingInit,
    Initializing {
        generation: u64,
        upstream: Option<Arc<UpstreamClient>>,
        /// The id of VS Code's `initialize`, so that its cancellation reverts the state at once.
        id: serde_json::Value,
    },
    Ready {
        generation: u64,
        upstream: Arc<UpstreamClient>,
    },
    Closing,
}

/// What the tasks of a connection share.
pub(crate) struct Shared {
    pub(crate) opts: Options,
    pub(crate) outbox: Outbox,
    pub(crate) state: Mutex<State>,
    pub(crate) inflight: Inflight,
    /// 0 = no `logging/setLevel` yet, else the rank of the level + 1.
    pub(crate) level: AtomicU8,
    pub(crate) client_requests: ClientRequests,
    /// O1: the `elicitationId`s of URL steps, one counter per connection.
    pub(crate) elicitation_ids: Mutex<ElicitationIds>,
    pub(crate) tasks: TaskTracker,
    pub(crate) stoppers: TaskTracker,
    pub(crate) generation: AtomicU64,
    pub(crate) events: mpsc::UnboundedSender<(u64, ClientEvent)>,
    pub(crate) upstream_pid: Arc<AtomicU32>,
    /// M3: the listen stream and the subscriptions.
    pub(crate) listener: listener::Listener,
    /// Issue 15: arming the timers of an exchange costs no wake of the runtime.
    pub(crate) keeper: Arc<super::keep::Keeper>,
    /// VS Code sent `notifications/initialized`: a sign-in from now on asks VS Code (M4).
    pub(crate) initialized: std::sync::atomic::AtomicBool,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    /// The connection's counter of elicitation ids (held only while a round is planned).
    pub(crate) fn elicitation_ids(&self) -> MutexGuard<'_, ElicitationIds> {
        crate::sync::lock(&self.elicitation_ids)
    }

    /// The level that goes upstream with each new request (O5).
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        match self.level.load(Ordering::Relaxed) {
            0 => None,
            n => LogLevel::from_rank(n - 1),
        }
    }

    /// A channel of client events for the upstream of one generation.
    pub(crate) fn client_events(&self, generation: u64) -> mpsc::UnboundedSender<ClientEvent> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let events = self.events.clone();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                if events.send((generation, event)).is_err() {
                    break;
                }
            }
        });
        tx
    }

    /// M3: the notifications of the upstream of one generation, on its router, in the
    /// upstream's order (see [`super::listener`]). Holds the connection weakly: the upstream client
    /// must not keep the connection alive.
    pub(crate) fn notification_sink(self: &Arc<Self>, generation: u64) -> NotificationSink {
        let weak = Arc::downgrade(self);
        Arc::new(move |method, params| {
            if let Some(shared) = weak.upgrade() {
                dispatch::on_upstream_notification(&shared, generation, method, params);
            }
        })
    }

    /// Stops an upstream that no state holds any more, on a tracked task.
    pub(crate) fn retire(&self, client: Arc<UpstreamClient>) {
        self.stoppers.spawn(async move {
            client.shutdown().await;
        });
    }
}
