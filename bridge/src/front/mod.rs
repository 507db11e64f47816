//! The 2025-11-25 face for VS Code, in front of an upstream server of any revision: the
//! connection states, the dispatch of each line, and the two ways to stop (the end of stdin,
//! and the exit of the upstream server). It never names a transport.
//!
//! The dispatch reads stdin and never waits for a request: each request has its own cancel
//! token and runs on its own task (docs/architecture.md principle 5), so that cancellations,
//! answers to the bridge's requests and the end of input are always read.
//!
//! The files:
//! - this one: [`serve`], the reader and the two ways to stop; [`Options`] (with the sign-in
//!   whose gate the front's consent port attaches to) and [`Shared`], what the tasks share
//!   (the face of the folder that its files use);
//! - [`dispatch`]: the dispatch of each line of VS Code and of each message of the upstream
//!   server that belongs to no request (the front's `IncomingSink`);
//! - [`order`]: the one writer's ordering guarantees, each stated and kept there;
//! - [`inflight`]: one cancel token and one place per request; no response after a cancel;
//! - [`initialize`]: connect, `server/discover`, the `initialize` result (R1), or the turn
//!   to an older server (L1); [`early`] (S1): the bridge's own answer to `initialize` when the
//!   start outlasts `--answer-initialize-after`, and the requests until the server is ready;
//! - [`request`] and [`exchange`]: the forward task of each request (of every revision) and
//!   its round loop; one upstream exchange with its time limit and "still waiting" lines;
//! - [`rounds`]: the input rounds (M2); [`client_requests`]: the `b-N` requests to VS Code,
//!   the routing of their answers, their cancellation; [`consent`]: the sign-in's consent
//!   port (a URL elicitation after `notifications/initialized`);
//! - [`older`] (L1-L3): what faces VS Code for an older upstream server: its `initialize`,
//!   its notifications and VS Code's (its `mod.rs`), and the server's requests to VS Code
//!   through the checks of the input rounds (`server_requests.rs`). Its requests go through
//!   the same client and the same [`exchange`] as those of a server of 2026-07-28;
//! - [`listener`] (M3): one owner task per connection for the listen streams;
//! - [`stop`]: the stop at the end of stdin, and the stop after the upstream ended.

pub mod client_requests;
mod consent;
mod dispatch;
mod early;
pub mod exchange;
pub mod inflight;
pub mod initialize;
pub(crate) mod listener;
#[cfg(test)]
mod lossless_tests;
mod older;
mod order;
pub mod request;
pub mod rounds;
#[cfg(test)]
mod scripted_peers;
mod stop;

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use self::client_requests::ClientRequests;
use self::inflight::Inflight;
use crate::auth::TokenSource;
use crate::cli::UpstreamRevision;
use crate::input::complete::ElicitationIds;
use crate::translate::initialize::ServerInfoFallback;
use crate::translate::level::LogLevel;
use crate::upstream::Ended;
use crate::upstream::client::{ClientEvent, IncomingSink, UpstreamClient};
use crate::upstream::connect::Target;
use crate::wire::parse;
use crate::wire::reader::{LineReader, RawLine};
use crate::wire::writer::{Outbox, spawn_writer};

/// The options of [`serve`].
#[derive(Clone, Debug)]
pub struct Options {
    /// The upstream server: a command or a URL.
    pub upstream: Target,
    /// R1: the server information when the upstream server sends none that is valid.
    pub fallback: ServerInfoFallback,
    /// How long `initialize` waits for the answer to `server/discover` (`--discover-timeout`).
    pub discover_timeout: Duration,
    /// S1: when the bridge answers `initialize` itself while the upstream server still starts
    /// (`--answer-initialize-after`); `None`: never.
    pub answer_initialize_after: Option<Duration>,
    /// L1: the revision of the upstream server (`--upstream-revision`).
    pub upstream_revision: UpstreamRevision,
    /// The longest line on either side (`--max-line-bytes`).
    pub max_line_bytes: usize,
    /// The requests of VS Code in flight at once (-32603 above it).
    pub max_in_flight: usize,
    /// The `shutdown_grace` of the stop sequence (R7, docs/exit-codes.md).
    pub shutdown_grace: Duration,
    /// M4: the sign-in of an upstream at a URL (the same one that its transport asks): the
    /// front attaches its consent port to its gate and reads its time limit and counters.
    /// `None` without a sign-in.
    pub sign_in: Option<TokenSource>,
    /// The error of `initialize` when the upstream must not start (a secret of the bridge is
    /// missing or bound elsewhere, docs/secrets.md): `initialize` gets it, nothing connects,
    /// and [`serve`] ends with [`Outcome::Refused`]. `None` for every other start.
    pub refusal: Option<serde_json::Value>,
}

/// The connection states: before `initialize`, while the upstream answers `server/discover`,
/// ready (R2), and closing (after the end of stdin or the end of the upstream).
pub(crate) enum State {
    AwaitingInit,
    Initializing {
        generation: u64,
        upstream: Option<Arc<UpstreamClient>>,
        /// The id of VS Code's `initialize`, so that its cancellation reverts the state at once.
        id: serde_json::Value,
        /// S1: the bridge answered `initialize` itself; the start goes on behind it.
        answered: bool,
    },
    Ready {
        generation: u64,
        upstream: Arc<UpstreamClient>,
    },
    /// S1: the start failed after the bridge's early answer: every request gets `error`.
    Failed {
        error: serde_json::Value,
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
    /// VS Code sent `notifications/initialized`: a sign-in from now on asks VS Code (M4); a
    /// sign-in that began before waits for it (S1).
    pub(crate) initialized: tokio::sync::watch::Sender<bool>,
    /// S1: the generation whose `initialize` a sign-in at the start asks to answer now.
    pub(crate) answer_now: tokio::sync::watch::Sender<u64>,
    /// L1–L3: the state of an older upstream server, from its `initialize` on (with the
    /// generation of that `initialize`); `None` while the upstream is of 2026-07-28.
    pub(crate) older: Mutex<Option<(u64, Arc<older::Older>)>>,
    /// S1: a value is sent at each end of a start (ready, failed, reverted, closing), for the
    /// requests that wait for the start after the early answer.
    pub(crate) start_changes: tokio::sync::watch::Sender<()>,
    /// `initialize` got the refusal of [`Options::refusal`]: the dispatch ends.
    pub(crate) refused: tokio::sync::Notify,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    /// L1: the state of the older upstream server of the connection, if it is one.
    pub(crate) fn older(&self) -> Option<Arc<older::Older>> {
        crate::sync::lock(&self.older)
            .as_ref()
            .map(|(_, older)| Arc::clone(older))
    }

    /// L1: the state of the older upstream server of `generation`.
    pub(crate) fn older_of(&self, generation: u64) -> Option<Arc<older::Older>> {
        crate::sync::lock(&self.older)
            .as_ref()
            .filter(|(g, _)| *g == generation)
            .map(|(_, older)| Arc::clone(older))
    }

    /// The upstream client of `generation` while the state holds it.
    pub(crate) fn upstream_of(&self, generation: u64) -> Option<Arc<UpstreamClient>> {
        match &*self.state() {
            State::Initializing {
                generation: g,
                upstream: Some(upstream),
                ..
            }
            | State::Ready {
                generation: g,
                upstream,
            } if *g == generation => Some(Arc::clone(upstream)),
            _ => None,
        }
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

    /// M3, L3: the notifications and requests of the upstream of one generation, on its
    /// router, in the upstream's order (see [`listener`]). Holds the connection weakly: the
    /// upstream client must not keep the connection alive.
    pub(crate) fn incoming_sink(self: &Arc<Self>, generation: u64) -> IncomingSink {
        let weak = Arc::downgrade(self);
        Arc::new(move |incoming| {
            if let Some(shared) = weak.upgrade() {
                dispatch::on_incoming(&shared, generation, incoming);
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

/// How [`serve`] ended; the executable maps it to its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Stdin ended and the bridge stopped (exit 0).
    Eof,
    /// The upstream server stopped while stdin was open (exit 1). Only a connection of a
    /// command or a pipe ends this way; an upstream at a URL never stops the bridge.
    UpstreamExited(Ended),
    /// `initialize` got the error of [`Options::refusal`], and no upstream started
    /// (docs/exit-codes.md).
    Refused,
}

/// Hooks of the executable.
#[derive(Default)]
pub struct Hooks {
    /// Called once at the end of stdin, before the bounded stop (the watchdog starts here).
    pub on_eof: Option<Box<dyn FnOnce() + Send>>,
    /// The process (group) id of the current upstream command, for the watchdog.
    pub upstream_pid: Arc<AtomicU32>,
}

/// Serves one VS Code connection on `input`/`output` until stdin ends or the upstream stops.
pub async fn serve<R, W>(opts: Options, input: R, output: W, mut hooks: Hooks) -> Outcome
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outbox, writer) = spawn_writer(output);
    let (events_tx, events) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        inflight: Inflight::new(opts.max_in_flight),
        opts,
        outbox: outbox.clone(),
        state: Mutex::new(State::AwaitingInit),
        level: AtomicU8::new(0),
        client_requests: ClientRequests::default(),
        elicitation_ids: Mutex::new(ElicitationIds::new()),
        tasks: TaskTracker::new(),
        stoppers: TaskTracker::new(),
        generation: AtomicU64::new(0),
        events: events_tx,
        upstream_pid: Arc::clone(&hooks.upstream_pid),
        listener: listener::Listener::default(),
        initialized: tokio::sync::watch::Sender::new(false),
        answer_now: tokio::sync::watch::Sender::new(0),
        older: Mutex::new(None),
        start_changes: tokio::sync::watch::Sender::new(()),
        refused: tokio::sync::Notify::new(),
    });
    if let Some(sign_in) = &shared.opts.sign_in {
        sign_in.gate().attach(consent::FrontConsent::new(&shared));
    }
    let lines = LineReader::new(input, shared.opts.max_line_bytes);
    // The dispatch runs as a task of its own, not as the future that the caller blocks on: on
    // the current-thread runtime each wake of that future writes the runtime's eventfd and
    // costs an extra epoll_wait, once per line of VS Code (a hot-path choice of bridge/README.md).
    let outcome = match tokio::spawn(dispatch_loop(Arc::clone(&shared), lines, events)).await {
        Ok(outcome) => outcome,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // The runtime is shutting down: nothing more is read.
        Err(_) => Outcome::Eof,
    };
    match outcome {
        Outcome::Eof => {
            if let Some(on_eof) = hooks.on_eof.take() {
                on_eof();
            }
            stop::stop_at_eof(&shared).await;
        }
        Outcome::UpstreamExited(exit) => stop::stop_after_upstream_exit(&shared, exit).await,
        // Nothing started: only the error of `initialize` is left to write.
        Outcome::Refused => {}
    }
    outbox.close();
    // VS Code may not read stdout any more; the writer gets a bounded time to flush.
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    outcome
}

/// Reads the lines of VS Code and the events of the upstream clients until stdin ends or the
/// upstream of the ready state is gone.
async fn dispatch_loop<R: AsyncRead + Unpin>(
    shared: Arc<Shared>,
    mut lines: LineReader<R>,
    mut events: mpsc::UnboundedReceiver<(u64, ClientEvent)>,
) -> Outcome {
    loop {
        // Stdin is read here, without a task of its own (a hot-path choice of bridge/README.md: one hand-off less per
        // line). The reader is cancel-safe: when an event of the upstream comes while a long
        // line waits for its next bytes, the part read so far stays in the reader.
        tokio::select! {
            line = lines.next() => match line.unwrap_or(RawLine::Eof) {
                RawLine::Line(bytes) => dispatch::on_line(&shared, bytes),
                RawLine::TooLong { head, tail } => {
                    dispatch::on_parsed(&shared, parse::too_long(&head, &tail, shared.opts.max_line_bytes));
                }
                RawLine::Eof => return Outcome::Eof,
            },
            () = shared.refused.notified() => return Outcome::Refused,
            Some((generation, event)) = events.recv() => {
                if let Some(exit) = dispatch::on_client_event(&shared, generation, event) {
                    return Outcome::UpstreamExited(exit);
                }
            }
        }
    }
}

#[cfg(test)]
mod schema_conformance_tests;
#[cfg(test)]
mod timeout_tests;
#[cfg(test)]
mod watchdog_tests;
#[cfg(test)]
mod watchdog_windows_tests;
