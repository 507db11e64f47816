//! L4: the HTTP+SSE transport of 2024-11-05, the fallback when the `initialize` POST gets 400,
//! 404 or 405: a GET of the URL opens the event stream of the session, whose first event
//! `endpoint` names where the frames go (on the URL's origin only); every answer and every
//! message of the server comes on that stream as an event `message`, and a POST gets only a
//! status (202).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::header::HeaderMap;
use serde_json::Value;
use url::Url;

use super::Inner;
use crate::log::{self, Level};
use crate::sync::lock;
use crate::upstream::UpstreamError;
use crate::upstream::http::sse::{content_type, sse_events};

/// How long the stream may take to name its endpoint.
const ENDPOINT_WAIT: Duration = Duration::from_secs(30);

/// The endpoint of an `endpoint` event, resolved against the URL; `None` for another origin
/// (the frames and their token go to the server's own origin only).
pub fn endpoint_of(url: &Url, data: &str) -> Option<Url> {
    let endpoint = url.join(data.trim()).ok()?;
    (endpoint.origin() == url.origin()).then_some(endpoint)
}

impl Inner {
    /// Opens the event stream, waits for its endpoint, and reads its messages on a task of
    /// its own (aborted at the stop).
    pub(super) async fn open_legacy(self: &Arc<Self>) -> Result<Url, UpstreamError> {
        let url = self.ctx.opts.url.clone();
        let headers = HeaderMap::new();
        let response = self.ctx.get_events(&url, &headers, None, true).await?;
        let status = response.status();
        if !status.is_success() {
            return Err(UpstreamError::HttpStatus(status.as_u16()));
        }
        if !content_type(&response).starts_with("text/event-stream") {
            return Err(UpstreamError::InvalidResponse(
                "the GET of the HTTP+SSE transport is not an event stream".into(),
            ));
        }
        let mut events = sse_events(response.bytes_stream(), self.ctx.opts.max_response_bytes);
        let endpoint = tokio::time::timeout(ENDPOINT_WAIT, async {
            while let Some(event) = events.next().await {
                let event = event?;
                if event.event.as_deref() == Some("endpoint") {
                    return Ok(event.data);
                }
            }
            Ok(None)
        })
        .await
        .map_err(|_| {
            UpstreamError::TransportFailed("the event stream named no endpoint".into())
        })??;
        let endpoint = endpoint
            .and_then(|data| endpoint_of(&url, &data))
            .ok_or_else(|| {
                UpstreamError::InvalidResponse(
                    "the endpoint event names no endpoint on the server's origin".into(),
                )
            })?;
        log::bridge(
            Level::Info,
            "the upstream server speaks the HTTP+SSE transport of 2024-11-05",
        );
        let inner = Arc::clone(self);
        let task = tokio::spawn(async move {
            while let Some(Ok(event)) = events.next().await {
                let message = matches!(event.event.as_deref(), None | Some("message"));
                if let Some(data) = event.data.filter(|d| message && !d.trim().is_empty()) {
                    inner.ctx.deliver(data.into_bytes()).await;
                }
            }
            *lock(&inner.endpoint) = None;
            log::bridge(
                Level::Warn,
                "the event stream of the upstream server (HTTP+SSE) ended: its requests fail until VS Code starts the server again",
            );
        });
        self.track(task.abort_handle());
        Ok(endpoint)
    }

    /// One frame to the endpoint; only its status comes back (the answer comes on the stream).
    pub(super) async fn legacy_post(&self, frame: &Value) -> Result<(), UpstreamError> {
        let Some(endpoint) = lock(&self.endpoint).clone() else {
            return Err(UpstreamError::TransportFailed(
                "the event stream of the HTTP+SSE transport has ended".into(),
            ));
        };
        let body = Bytes::from(serde_json::to_vec(frame).map_err(|e| {
            UpstreamError::InvalidResponse(format!("the frame does not serialize: {e}"))
        })?);
        let headers = HeaderMap::new();
        let sent = self
            .ctx
            .post(&endpoint, &headers, &body, true, None)
            .await?;
        self.ctx.success(sent.response()?).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::super::falls_back;
    use super::*;

    #[test]
    fn l4_the_fallback_statuses_are_400_404_405() {
        for status in [400, 404, 405] {
            assert!(falls_back(status), "{status}");
        }
        for status in [401, 403, 406, 415, 500, 200] {
            assert!(!falls_back(status), "{status}");
        }
    }

    #[test]
    fn l4_the_endpoint_stays_on_the_origin_of_the_url() {
        let url = Url::parse("https://127.0.0.1:8443/sse").expect("url");
        assert_eq!(
            endpoint_of(&url, "/messages?sessionId=abc").map(String::from),
            Some("https://127.0.0.1:8443/messages?sessionId=abc".to_owned())
        );
        assert_eq!(endpoint_of(&url, "https://evil.example/messages"), None);
        assert_eq!(endpoint_of(&url, "http://127.0.0.1:8443/messages"), None);
    }
}
