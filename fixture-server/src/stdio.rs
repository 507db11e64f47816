//! The stdio transport: rmcp's line transport on stdin and stdout, with the end of stdin made
//! bounded and lossless (R7), and the misbehaving mode `--close-stdout`.
use std::collections::HashSet;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientNotification, ClientRequest, DiscoverRequestMethod, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{QuitReason, RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{Stdin, Stdout};

use crate::cli::Options;
use crate::revision::Revision;
use crate::server::Fixture;
use crate::state::{Lifecycle, State};
use crate::{dual, log};

/// How long `--close-stdout` keeps running.
const MISBEHAVE_FOR: Duration = Duration::from_secs(120);

/// Serves one session on stdio until stdin ends, as a server of `revision`.
pub async fn serve(options: Options, revision: Revision) -> Result<(), String> {
    if options.close_stdout {
        return misbehave().await;
    }
    let state = Arc::new(State::new(options));
    let lifecycle = state.lifecycle.clone();
    // The older revision does not know `server/discover` (-32601); --discover-error refuses it.
    let older_refusal = || {
        state.options.discover_error.as_ref().map_or_else(
            || serde_json::to_value(McpError::method_not_found::<DiscoverRequestMethod>()).ok(),
            |refusal| refusal.error(),
        )
    };
    let refusal = match (&state.options.discover_error, revision) {
        (Some(refusal), _) => refusal.error(),
        (None, Revision::Older) => older_refusal(),
        (None, _) => None,
    };
    let mut transport = Stdio::new(lifecycle.clone(), refusal);
    let older = match revision {
        Revision::Modern => false,
        Revision::Older => true,
        // The first request decides which handler serves the connection, and what the
        // transport refuses from then on.
        Revision::Dual => {
            let lock = dual::lock(transport.first_request().await);
            transport.refuse_discover = (lock == dual::Lock::Older).then(older_refusal).flatten();
            transport.refuse_initialize = lock == dual::Lock::Modern;
            lock == dual::Lock::Older
        }
    };
    if older {
        run(Fixture::older(state), transport, &lifecycle).await
    } else {
        run(Fixture::new(state), transport, &lifecycle).await
    }
}

/// Runs one handler's session on the transport until stdin ends.
async fn run<S: ServerHandler>(
    handler: S,
    transport: Stdio,
    lifecycle: &Lifecycle,
) -> Result<(), String> {
    let in_flight = Arc::clone(&transport.in_flight);
    let running = match handler.serve(transport).await {
        Ok(running) => running,
        // The end of stdin before the first request that starts a session.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(format!("the session did not start: {error}")),
    };
    tokio::select! {
        quit = running.waiting() => match quit {
            Ok(QuitReason::Closed | QuitReason::Cancelled) => Ok(()),
            Ok(reason) => Err(format!("the session stopped: {reason:?}")),
            Err(error) => Err(format!("the session failed: {error}")),
        },
        () = answered_after_end(lifecycle, &in_flight) => Ok(()),
    }
}

/// How long rmcp gets to finish by itself once stdin ended and every response is written.
const DRAIN_WAIT: Duration = Duration::from_millis(250);

/// Completes once stdin ended, every request has its response written (or was cancelled), and
/// rmcp had [`DRAIN_WAIT`] to stop. rmcp's own drain can wait 5 s for a handler whose stream
/// the client cancelled while its acknowledgment was being written (rmcp no longer completes
/// notifications after the end of its input); nothing is owed to the client then, so the
/// fixture exits instead of waiting (R7: exit 0 quickly at the end of stdin).
async fn answered_after_end(
    lifecycle: &Lifecycle,
    in_flight: &tokio::sync::watch::Sender<HashSet<RequestId>>,
) {
    lifecycle.input_closed.cancelled().await;
    let mut watch = in_flight.subscribe();
    let _ = tokio::time::timeout(END_WAIT, watch.wait_for(HashSet::is_empty)).await;
    tokio::time::sleep(DRAIN_WAIT).await;
}

/// The longest request line: the default `--max-line-bytes` of the bridge (64 MiB), so that the
/// bridge and its benchmark can pass a 16 MiB payload with room to spare (rmcp's default is
/// 16 MiB; a longer line is dropped by rmcp with a log line).
const MAX_LINE_BYTES: usize = 64 << 20;

/// How long the end of stdin waits for the requests in flight before rmcp sees it.
const END_WAIT: Duration = Duration::from_secs(2);

/// rmcp's line transport on stdin and stdout, with the bookkeeping of the requests in flight.
///
/// rmcp's service loop stops at the end of its input, and from then on it no longer completes
/// `Peer::send_notification`: a handler that awaits a notification (the acknowledgment of a
/// listen stream that just opened, a progress notification, a list change) then waits until
/// rmcp's drain limit of 5 s, and its response is lost. Thus at the end of stdin this transport
/// first ends the listen streams and the work in flight ([`Lifecycle::input_ended`]), waits
/// until each request in flight has its response written or was cancelled (at most
/// [`END_WAIT`]), and only then tells rmcp that the input ended (R7: exit 0 in a bounded time).
struct Stdio {
    inner: AsyncRwTransport<RoleServer, Stdin, Stdout>,
    lifecycle: Lifecycle,
    in_flight: Arc<tokio::sync::watch::Sender<HashSet<RequestId>>>,
    end_deadline: Option<Instant>,
    /// Whether a request other than `server/discover` or `ping` came: rmcp's session runs.
    started: bool,
    /// The error that answers `server/discover`, if the server refuses it: the older revision
    /// does not know the method, and `--discover-error` refuses it as it says.
    refuse_discover: Option<Value>,
    /// `--revision dual` locked to 2026-07-28: `initialize` gets -32022 (`crate::dual`).
    refuse_initialize: bool,
    /// The first request, read before the handler was chosen (`--revision dual`).
    first: Option<RxJsonRpcMessage<RoleServer>>,
}

impl Stdio {
    fn new(lifecycle: Lifecycle, refuse_discover: Option<Value>) -> Self {
        Self {
            inner: AsyncRwTransport::new_server(tokio::io::stdin(), tokio::io::stdout())
                .with_max_line_length(MAX_LINE_BYTES),
            lifecycle,
            in_flight: Arc::new(tokio::sync::watch::Sender::new(HashSet::new())),
            end_deadline: None,
            started: false,
            refuse_discover,
            refuse_initialize: false,
            first: None,
        }
    }

    /// Reads up to the first request and keeps it for [`Transport::receive`]; messages before
    /// it are ignored, as `receive` ignores them. `None` when stdin ends first.
    async fn first_request(&mut self) -> Option<&RxJsonRpcMessage<RoleServer>> {
        while self.first.is_none() {
            match self.inner.receive().await? {
                message @ JsonRpcMessage::Request(_) => self.first = Some(message),
                _ => log::info("stdio", "ignored a message before the first request"),
            }
        }
        self.first.as_ref()
    }

    /// The next message: the one kept by [`Stdio::first_request`], then stdin's.
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        match self.first.take() {
            Some(message) => Some(message),
            None => self.inner.receive().await,
        }
    }

    fn note_received(&self, message: &RxJsonRpcMessage<RoleServer>) {
        match message {
            JsonRpcMessage::Request(request) => {
                let id = request.id.clone();
                self.in_flight.send_modify(|set| {
                    set.insert(id);
                });
            }
            // A cancelled request gets no response (rmcp drops it).
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.send_modify(|set| {
                        set.remove(id);
                    });
                }
            }
            _ => {}
        }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let in_flight = self.in_flight.clone();
        let send = self.inner.send(item);
        async move {
            let outcome = send.await;
            if let Some(id) = answered {
                in_flight.send_modify(|set| {
                    set.remove(&id);
                });
            }
            outcome
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        while let Some(message) = self.next_message().await {
            if self.refuse_initialize
                && let Some(answer) = dual::refuse_initialize(&message)
            {
                if let Err(error) = self.inner.send(answer).await {
                    log::warning("stdio", &format!("cannot answer initialize: {error}"));
                }
                continue;
            }
            match &message {
                // rmcp would answer -32022 (unsupported version) before any handler sees it;
                // a server of 2025-11-25 answers -32601, the answer of the bridge's detection,
                // and --discover-error its own error.
                JsonRpcMessage::Request(request)
                    if self.refuse_discover.is_some()
                        && matches!(request.request, ClientRequest::DiscoverRequest(_)) =>
                {
                    let error = self
                        .refuse_discover
                        .clone()
                        .and_then(|e| serde_json::from_value::<McpError>(e).ok())
                        .unwrap_or_else(McpError::method_not_found::<DiscoverRequestMethod>);
                    let answer = ServerJsonRpcMessage::error(error, Some(request.id.clone()));
                    if let Err(error) = self.inner.send(answer).await {
                        log::warning("stdio", &format!("cannot answer server/discover: {error}"));
                    }
                    continue;
                }
                JsonRpcMessage::Request(request) => {
                    let probe = matches!(
                        request.request,
                        ClientRequest::DiscoverRequest(_) | ClientRequest::PingRequest(_)
                    );
                    self.started |= !probe;
                }
                // rmcp 3.11 ends the whole connection when a message other than a request
                // comes before its session starts; such a message has nothing to act on yet.
                _ if !self.started => {
                    log::info("stdio", "ignored a message before the first request");
                    continue;
                }
                _ => {}
            }
            self.note_received(&message);
            return Some(message);
        }
        // rmcp can drop this future while it waits (it polls it in a select): the deadline
        // stays, so the whole wait is bounded.
        let deadline = *self
            .end_deadline
            .get_or_insert_with(|| Instant::now() + END_WAIT);
        self.lifecycle.input_ended();
        let mut in_flight = self.in_flight.subscribe();
        let idle = in_flight.wait_for(HashSet::is_empty);
        if tokio::time::timeout_at(deadline.into(), idle)
            .await
            .is_err()
        {
            let left = self.in_flight.borrow().len();
            log::warning(
                "stdio",
                &format!("the end of stdin came with {left} requests without a response"),
            );
        }
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// `--close-stdout`: a server that closes stdout at once and then runs without reading stdin,
/// so that a test can see the bridge stop a child process that does not exit by itself.
async fn misbehave() -> Result<(), String> {
    close_stdout()?;
    log::warning(
        "stdio",
        "closed stdout; running 120 s without reading stdin",
    );
    tokio::time::sleep(MISBEHAVE_FOR).await;
    Ok(())
}

/// Closes the pipe of stdout: file descriptor 1 becomes `/dev/null` (dup2 closes the pipe in
/// the same step, and the standard library keeps a valid descriptor 1).
#[cfg(unix)]
fn close_stdout() -> Result<(), String> {
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(|error| format!("cannot open /dev/null: {error}"))?;
    rustix::stdio::dup2_stdout(&null).map_err(|error| format!("cannot close stdout: {error}"))
}

#[cfg(not(unix))]
fn close_stdout() -> Result<(), String> {
    Err("--close-stdout works only on POSIX systems".into())
}
