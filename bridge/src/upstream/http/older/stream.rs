//! L4: the GET stream of Streamable HTTP, on which an older server sends its requests and
//! notifications outside any request (a 405 means the server has none), and the resumption
//! of a broken event stream with `Last-Event-ID`: the GET stream reopens after the last event
//! that came, and a POST's stream that broke before its response is read on from there.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::StatusCode;

use super::session::Reading;
use super::{Inner, RESUME_WAIT, retry_of};
use crate::log::{self, Level};
use crate::sync::lock;
use crate::upstream::UpstreamError;
use crate::upstream::http::post::{content_type, sse_events};

/// L4: how often in a row a stream is opened again when the reads before brought no message.
/// An event with an id and no data is no message: a server that answers each reconnect with
/// an id alone and closes would else be read on forever.
const RESUME_ATTEMPTS: u32 = 3;

/// How one GET of the stream ended.
enum Opened {
    /// A 405: the server has no stream.
    NoStream,
    /// A 404: the session is gone (the next POST makes a new one).
    SessionGone,
    /// The stream ended or broke; true when a message came (an event with data).
    Ended { messages: bool },
}

impl Inner {
    /// Opens the GET stream of the session (again): the one before it ends.
    pub(super) fn open_listen_stream(self: &Arc<Self>) {
        if self.stopped.load(Ordering::Relaxed) || lock(&self.endpoint).is_some() {
            return;
        }
        let inner = Arc::clone(self);
        let task = tokio::spawn(async move { inner.listen_loop().await });
        if let Some(old) = lock(&self.listen).replace(task.abort_handle()) {
            old.abort();
        }
    }

    /// L4: the GET stream until the server has none, the session is gone, or it ended
    /// [`RESUME_ATTEMPTS`] times in a row without a message; each reopening waits the server's
    /// `retry`, at least [`super::RESUME_WAIT_MIN`].
    async fn listen_loop(&self) {
        let mut last_id: Option<String> = None;
        let mut retry = RESUME_WAIT;
        let mut failures = 0;
        loop {
            match self.listen_once(&mut last_id, &mut retry).await {
                Ok(Opened::NoStream) => {
                    log::bridge(
                        Level::Debug,
                        "the upstream server has no GET stream (HTTP status 405)",
                    );
                    return;
                }
                Ok(Opened::SessionGone) => return,
                Ok(Opened::Ended { messages: true }) => failures = 0,
                Ok(Opened::Ended { messages: false }) | Err(_) => failures += 1,
            }
            if failures >= RESUME_ATTEMPTS {
                log::bridge(
                    Level::Warn,
                    "the GET stream of the upstream server broke: its requests and notifications outside a request are lost until the next session",
                );
                return;
            }
            tokio::time::sleep(retry).await;
        }
    }

    /// One GET of the stream, from after `last_id`.
    async fn listen_once(
        &self,
        last_id: &mut Option<String>,
        retry: &mut Duration,
    ) -> Result<Opened, UpstreamError> {
        let response = self.get_stream(last_id.as_deref()).await?;
        match response.status() {
            StatusCode::METHOD_NOT_ALLOWED => return Ok(Opened::NoStream),
            StatusCode::NOT_FOUND => return Ok(Opened::SessionGone),
            status if !status.is_success() => {
                return Err(UpstreamError::HttpStatus(status.as_u16()));
            }
            _ => {}
        }
        if !content_type(&response).starts_with("text/event-stream") {
            return Ok(Opened::NoStream);
        }
        let reading = Reading {
            id: None,
            deliver: true,
        };
        let mut events = sse_events(response.bytes_stream(), self.ctx.opts.max_response_bytes);
        let mut any = false;
        while let Some(Ok(event)) = events.next().await {
            if let Some(id) = event.id {
                *last_id = Some(id);
            }
            if let Some(ms) = event.retry {
                *retry = retry_of(ms);
            }
            if let Some(data) = event.data.filter(|d| !d.trim().is_empty()) {
                any = true;
                self.take_message(data.into_bytes(), &reading).await;
            }
        }
        Ok(Opened::Ended { messages: any })
    }

    /// A GET of the stream with the headers of the session, and `Last-Event-ID`.
    async fn get_stream(&self, last_id: Option<&str>) -> Result<reqwest::Response, UpstreamError> {
        let headers = self.session_headers();
        let url = self.ctx.opts.url.clone();
        self.ctx
            .authorized(false, |client| {
                let mut request = client
                    .get(url.clone())
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .headers(headers.clone());
                if let Some(id) = last_id {
                    request = request.header("last-event-id", id);
                }
                request
            })
            .await
    }

    /// L4: a POST's stream broke or closed (`why`) before the response to `reading.id`: with
    /// an event id, a GET with `Last-Event-ID` reads on from there after the server's `retry`
    /// (between [`super::RESUME_WAIT_MIN`] and [`super::RESUME_WAIT_MAX`]), as often as each
    /// read brings a message, and up to [`RESUME_ATTEMPTS`] times in a row without one (an
    /// event id alone is no message): then the request fails, with a warning line. Without an
    /// id the request fails with the cause.
    pub(super) async fn resume(
        &self,
        mut last_id: Option<String>,
        mut retry: Duration,
        reading: &Reading<'_>,
        why: String,
    ) -> Result<bool, UpstreamError> {
        let broken = || UpstreamError::TransportFailed(why.clone());
        let mut idle = 0;
        while idle < RESUME_ATTEMPTS {
            let Some(from) = last_id.clone() else {
                return Err(broken());
            };
            log::bridge(
                Level::Debug,
                "the event stream of a request ended before its response: the bridge resumes it with Last-Event-ID",
            );
            tokio::time::sleep(retry).await;
            let response = self.get_stream(Some(&from)).await?;
            if !response.status().is_success()
                || !content_type(&response).starts_with("text/event-stream")
            {
                return Err(broken());
            }
            let mut events = sse_events(response.bytes_stream(), self.ctx.opts.max_response_bytes);
            let mut progressed = false;
            while let Some(event) = events.next().await {
                let Ok(event) = event else { break };
                if event.id.is_some() {
                    last_id = event.id.clone();
                }
                if let Some(ms) = event.retry {
                    retry = retry_of(ms);
                }
                if let Some(data) = event.data.filter(|d| !d.trim().is_empty()) {
                    progressed = true;
                    if self.take_message(data.into_bytes(), reading).await {
                        return Ok(true);
                    }
                }
            }
            idle = if progressed { 0 } else { idle + 1 };
        }
        let why = format!(
            "the event stream of the request was resumed {RESUME_ATTEMPTS} times without a message"
        );
        log::bridge(
            Level::Warn,
            &format!("{why}: the bridge gives the request up"),
        );
        Err(UpstreamError::TransportFailed(why))
    }
}
