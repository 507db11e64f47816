//! L4: the GET stream of Streamable HTTP, on which an older server sends its requests and
//! notifications outside any request (a 405 means the server has none), and the resumption
//! of a broken event stream with `Last-Event-ID`: the GET stream reopens after the last event
//! that came, and a POST's stream that broke before its response is read on from there. The
//! reading of each stream and the pacing of the reconnects are those of every revision
//! (`http/sse.rs`); what is the era's here is what ends a stream for good.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use reqwest::StatusCode;

use super::Inner;
use crate::log::{self, Level};
use crate::sync::lock;
use crate::upstream::UpstreamError;
use crate::upstream::http::sse::{Answer, Cursor, Pacing, RESUME_ATTEMPTS, Reading, content_type};

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

    /// L4: the GET stream until the server has none, the session is gone, or the pacing
    /// gives it up ([`RESUME_ATTEMPTS`] reads in a row without a message).
    async fn listen_loop(&self) {
        let mut cursor = Cursor::default();
        let mut pacing = Pacing::default();
        loop {
            match self.listen_once(&mut cursor).await {
                Ok(Opened::NoStream) => {
                    log::bridge(
                        Level::Debug,
                        "the upstream server has no GET stream (HTTP status 405)",
                    );
                    return;
                }
                Ok(Opened::SessionGone) => return,
                Ok(Opened::Ended { messages }) => pacing.ended(messages),
                Err(_) => pacing.ended(false),
            }
            if !pacing.wait(&cursor).await {
                log::bridge(
                    Level::Warn,
                    "the GET stream of the upstream server broke: its requests and notifications outside a request are lost until the next session",
                );
                return;
            }
        }
    }

    /// One GET of the stream, from after the cursor's last event.
    async fn listen_once(&self, cursor: &mut Cursor) -> Result<Opened, UpstreamError> {
        let response = self.get_stream(cursor.last_id.as_deref()).await?;
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
        let messages = match self
            .ctx
            .read_answer(response, &Reading::ALL, cursor)
            .await?
        {
            Answer::Answered(_) => true,
            Answer::Ended(messages, _) => messages,
        };
        Ok(Opened::Ended { messages })
    }

    /// A GET of the stream with the headers of the session, and `Last-Event-ID`.
    async fn get_stream(&self, last_id: Option<&str>) -> Result<reqwest::Response, UpstreamError> {
        let headers = self.session_headers();
        let url = &self.ctx.opts.url;
        self.ctx.get_events(url, &headers, last_id, false).await
    }

    /// L4: a POST's stream broke or closed (`why`) before the response to `reading.id`: with
    /// an event id, a GET with `Last-Event-ID` reads on from there, paced as every stream
    /// ([`Pacing`]): then the request fails, with a warning line. Without an id the request
    /// fails with the cause.
    pub(super) async fn resume(
        &self,
        mut cursor: Cursor,
        reading: &Reading<'_>,
        why: String,
    ) -> Result<bool, UpstreamError> {
        let broken = || UpstreamError::TransportFailed(why.clone());
        if cursor.last_id.is_none() {
            return Err(broken());
        }
        let mut pacing = Pacing::default();
        while pacing.wait(&cursor).await {
            log::bridge(
                Level::Debug,
                "the event stream of a request ended before its response: the bridge resumes it with Last-Event-ID",
            );
            let response = self.get_stream(cursor.last_id.as_deref()).await?;
            if !response.status().is_success()
                || !content_type(&response).starts_with("text/event-stream")
            {
                return Err(broken());
            }
            match self.ctx.read_answer(response, reading, &mut cursor).await? {
                Answer::Answered(revision) => {
                    self.keep_revision(revision);
                    return Ok(true);
                }
                Answer::Ended(messages, _) => pacing.ended(messages),
            }
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
