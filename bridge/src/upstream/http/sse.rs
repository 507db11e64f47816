//! The parts of the answer of every HTTP request of the URL form, of every revision (read by
//! `PostContext::read_answer` of `post.rs`): one JSON body or an event stream whose events
//! each are one message, read with a [`Cursor`] (the last event id and the server's `retry`) so that a broken stream can be read
//! on with `Last-Event-ID`, and the pacing of such reconnects ([`Pacing`], L4). What differs by
//! revision is the caller's: a 2026-07-28 POST reads its stream to the end; an older server's
//! POST stops at its response and resumes its stream, and its GET stream reopens
//! (`older/stream.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt, TryStreamExt};
use reqwest::header::CONTENT_TYPE;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::upstream::UpstreamError;
use crate::webclient::{BodyError, describe, read_body};

/// The wait before a stream is read on when the server gave no `retry`.
const RESUME_WAIT: Duration = Duration::from_millis(500);
/// L4: the shortest wait before a stream is opened again, whatever the server's `retry` asks:
/// a hostile or broken server that sends `retry: 0` and closes each stream at once would else
/// have the bridge reconnect in a tight loop.
const RESUME_WAIT_MIN: Duration = Duration::from_millis(250);
/// The longest wait that a `retry` of the server can ask for.
const RESUME_WAIT_MAX: Duration = Duration::from_secs(5);
/// L4: how often in a row a stream is opened again when the reads before brought no message.
/// An event with an id and no data is no message: a server that answers each reconnect with
/// an id alone and closes would else be read on forever.
pub const RESUME_ATTEMPTS: u32 = 3;

/// L4: the wait that a `retry` of `ms` milliseconds asks for, between [`RESUME_WAIT_MIN`] and
/// [`RESUME_WAIT_MAX`].
fn retry_of(ms: u64) -> Duration {
    Duration::from_millis(ms).clamp(RESUME_WAIT_MIN, RESUME_WAIT_MAX)
}

/// Where a stream stands: the id of its last event and the wait that its server asks for
/// before a reconnect ([`RESUME_WAIT`] when it asks for none).
#[derive(Default)]
pub struct Cursor {
    pub last_id: Option<String>,
    retry: Option<Duration>,
}

impl Cursor {
    /// The stream goes on after `event`: its id, and the wait that its `retry` asks for.
    pub fn follow(&mut self, event: &sse_stream::Sse) {
        if event.id.is_some() {
            self.last_id.clone_from(&event.id);
        }
        if let Some(ms) = event.retry {
            self.retry = Some(retry_of(ms));
        }
    }
}

/// L4: the pacing of the reconnects of one stream: each waits the server's `retry` (at least
/// [`RESUME_WAIT_MIN`]), and after [`RESUME_ATTEMPTS`] reads in a row without a message the
/// caller gives the stream up.
#[derive(Default)]
pub struct Pacing {
    idle: u32,
}

impl Pacing {
    /// One read of the stream ended; `messages`: it brought at least one message.
    pub fn ended(&mut self, messages: bool) {
        self.idle = if messages { 0 } else { self.idle + 1 };
    }

    /// Waits before the next reconnect; false (at once) when the stream is to be given up.
    pub async fn wait(&self, cursor: &Cursor) -> bool {
        if self.idle >= RESUME_ATTEMPTS {
            return false;
        }
        tokio::time::sleep(cursor.retry.unwrap_or(RESUME_WAIT)).await;
        true
    }
}

/// How the answer of one request is read.
pub struct Reading<'a> {
    /// The id of the request whose response ends the reading (an older server's; `None`
    /// reads to the end).
    pub id: Option<&'a Value>,
    /// False for the bridge's own `initialize` of a new session: its answer is the
    /// transport's, not the client's.
    pub deliver: bool,
}

impl Reading<'static> {
    /// Every message to the client, to the end of the body or stream.
    pub const ALL: Reading<'static> = Reading {
        id: None,
        deliver: true,
    };
}

/// How the reading of one answer ended.
pub enum Answer {
    /// The response to the reading's id came, with the `protocolVersion` of its result.
    Answered(Option<String>),
    /// The body or stream ended without it: true when any message came, and the cause when
    /// the stream broke or an event was over the limit.
    Ended(bool, Option<UpstreamError>),
}

/// The parts of a message that the transport reads: whether it answers a request, and the
/// revision of an `initialize` result.
#[derive(Deserialize)]
struct Head {
    id: Option<Value>,
    method: Option<IgnoredAny>,
    result: Option<ResultHead>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ResultHead {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

/// What one message says to the transport.
pub struct Seen {
    /// It is the response to the request of `id`.
    pub answers: bool,
    /// The `protocolVersion` of its result.
    pub revision: Option<String>,
}

/// Reads the head of one message (`id`: the request whose response it may be).
pub fn seen(data: &[u8], id: Option<&Value>) -> Seen {
    let Ok(head) = serde_json::from_slice::<Head>(data) else {
        return Seen {
            answers: false,
            revision: None,
        };
    };
    let response = head.method.is_none() && (head.result.is_some() || head.error.is_some());
    let answers = response && id.is_some() && head.id.as_ref() == id;
    Seen {
        answers,
        revision: head.result.and_then(|r| r.protocol_version),
    }
}

/// The lower-cased `Content-Type` of a response ("" without one).
pub fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.to_ascii_lowercase())
        .unwrap_or_default()
}

/// The events of an SSE body, each at most `max` bytes of data; a comment (keep-alive) is an
/// event without data. The parser holds at most one event: the bytes since the last event are
/// bounded, so that an event without an end cannot grow the memory of the bridge.
pub fn sse_events<S>(
    bytes: S,
    max: usize,
) -> impl Stream<Item = Result<sse_stream::Sse, UpstreamError>> + Unpin
where
    S: Stream<Item = reqwest::Result<Bytes>> + Send + Unpin + 'static,
{
    let pending = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&pending);
    let limit = max.saturating_mul(2).saturating_add(64 << 10);
    let guarded = bytes
        .map_err(|e| std::io::Error::other(describe(&e)))
        .and_then(move |chunk: Bytes| {
            let seen = counted.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len();
            async move {
                if seen > limit {
                    Err(std::io::Error::other("event too long"))
                } else {
                    Ok(chunk)
                }
            }
        });
    sse_stream::SseByteStream::new(Box::pin(guarded)).map(move |event| {
        pending.store(0, Ordering::Relaxed);
        let event = event.map_err(|e| match e {
            sse_stream::Error::Body(inner) if inner.to_string() == "event too long" => {
                too_long(max)
            }
            other => UpstreamError::TransportFailed(format!(
                "the event stream broke: {}",
                describe(&other)
            )),
        })?;
        if event.data.as_ref().is_some_and(|d| d.len() > max) {
            return Err(too_long(max));
        }
        Ok(event)
    })
}

fn too_long(max: usize) -> UpstreamError {
    UpstreamError::InvalidResponse(format!(
        "a message of the upstream server is longer than --max-response-bytes ({max})"
    ))
}

/// The body, at most `max` bytes.
pub async fn read_bounded(
    response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, UpstreamError> {
    read_body(response, max).await.map_err(|e| match e {
        BodyError::TooLong => too_long(max),
        BodyError::Broken(why) => UpstreamError::TransportFailed(why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn l4_only_a_response_with_the_id_answers_and_its_revision_is_read() {
        let id = json!(3);
        let result = br#"{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2025-06-18"}}"#;
        let s = seen(result, Some(&id));
        assert!(s.answers);
        assert_eq!(s.revision.as_deref(), Some("2025-06-18"));
        let error = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m"}}"#;
        assert!(seen(error, Some(&id)).answers);
        let other = br#"{"jsonrpc":"2.0","id":4,"result":{}}"#;
        assert!(!seen(other, Some(&id)).answers);
        let request = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
        assert!(!seen(request, Some(&id)).answers);
        assert!(!seen(b"not json", Some(&id)).answers);
        assert!(!seen(result, None).answers);
    }
}
