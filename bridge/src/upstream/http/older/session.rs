//! L4: Streamable HTTP of 2025-03-26 to 2025-11-25 as the client: every frame is one POST
//! with `Mcp-Session-Id` (from the `initialize` answer on) and `MCP-Protocol-Version` (the
//! revision of the `initialize` result, after it); a request's answer is one JSON body or an
//! event stream. A 404 to a POST with a session is an expired session: the bridge makes a new
//! one once (VS Code's `initialize` again, then `notifications/initialized`) and sends the
//! frame once more on it: the server never saw it, since it knew no such session.

use std::sync::Arc;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::Inner;
use crate::log::{self, Level};
use crate::sync::lock;
use crate::upstream::UpstreamError;
use crate::upstream::http::headers::VERSION_HEADER;
use crate::upstream::http::post::Sent;
use crate::upstream::http::sse::{Answer, Cursor, Reading};

/// What [`Inner::post_once`] returns in place of a status when a new sign-in answered the
/// POST's 401 or 403: the POST carried the session of the earlier sign-in and was not sent
/// again (L4; [`Inner::post_frame`] makes a new session first).
const SIGNED_IN_ANEW: StatusCode = StatusCode::UNAUTHORIZED;

/// Why the bridge makes a new session.
#[derive(Clone, Copy)]
enum Renewal {
    /// The server answered 404: it ended the session.
    Expired,
    /// A sign-in completed after the session was made (L4): the session of the earlier
    /// sign-in is not used again.
    SignedIn,
}

/// The header of the session id.
const SESSION_HEADER: &str = "mcp-session-id";

impl Inner {
    /// The headers of a POST, GET or DELETE on the session.
    pub(super) fn session_headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(id) = lock(&self.session_id).as_deref()
            && let Ok(value) = id.parse()
        {
            headers.insert(SESSION_HEADER, value);
        }
        if let Some(revision) = lock(&self.revision).as_deref()
            && let Ok(value) = revision.parse()
        {
            headers.insert(VERSION_HEADER, value);
        }
        headers
    }

    /// One POST of `frame` with the headers of the session; the answer is read (and, with
    /// `reading.deliver`, handed to the client). Returns the answer's status and whether the
    /// response to `reading.id` came.
    async fn post_once(
        &self,
        frame: &Value,
        reading: &Reading<'_>,
    ) -> Result<(StatusCode, bool), UpstreamError> {
        let body = Bytes::from(serde_json::to_vec(frame).map_err(|e| {
            UpstreamError::InvalidResponse(format!("the frame does not serialize: {e}"))
        })?);
        let headers = self.session_headers();
        let initialize = frame.get("method").and_then(Value::as_str) == Some("initialize");
        let session_sign_ins = (!initialize && headers.contains_key(SESSION_HEADER))
            .then(|| *lock(&self.session_sign_ins));
        let url = &self.ctx.opts.url;
        let sent = self.ctx.post(url, &headers, &body, true, session_sign_ins);
        let response = match sent.await? {
            Sent::Response(response) => response,
            Sent::SignedIn => return Ok((SIGNED_IN_ANEW, false)),
        };
        let status = response.status();
        if initialize && super::falls_back(status.as_u16()) {
            // Whatever the body says: the transport of 2024-11-05 decides.
            return Err(UpstreamError::HttpStatus(status.as_u16()));
        }
        if status == StatusCode::NOT_FOUND && lock(&self.session_id).is_some() {
            return Ok((status, false));
        }
        let response = self.ctx.success(response).await?;
        if let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            *lock(&self.session_id) = Some(id.to_owned());
        }
        if status == StatusCode::ACCEPTED || response.content_length() == Some(0) {
            return Ok((status, false));
        }
        let answered = self.read_answer(response, reading).await?;
        Ok((status, answered))
    }

    /// The answer of a successful POST: a JSON body, or an event stream that, broken before
    /// the response, resumes with `Last-Event-ID` ([`Inner::resume`]).
    async fn read_answer(
        &self,
        response: reqwest::Response,
        reading: &Reading<'_>,
    ) -> Result<bool, UpstreamError> {
        let mut cursor = Cursor::default();
        let why = match self.ctx.read_answer(response, reading, &mut cursor).await? {
            Answer::Answered(revision) => {
                self.keep_revision(revision);
                return Ok(true);
            }
            Answer::Ended(_, Some(UpstreamError::TransportFailed(why))) => why,
            Answer::Ended(_, Some(error)) => return Err(error),
            // L4: a server may close the connection before the response (the polling of
            // 2025-11-25); with an event id the stream is read on. A request without a
            // response (a notification's stream) has no id to wait for.
            Answer::Ended(..) if reading.id.is_some() && cursor.last_id.is_some() => {
                "the event stream ended before the response".to_owned()
            }
            Answer::Ended(..) => return Ok(false),
        };
        self.resume(cursor, reading, why).await
    }

    /// The revision of an `initialize` result becomes the `MCP-Protocol-Version` header.
    pub(super) fn keep_revision(&self, revision: Option<String>) {
        if let Some(revision) = revision {
            *lock(&self.revision) = Some(revision);
        }
    }

    /// VS Code's `initialize` on a new session; `Ok(true)` when its response came. With
    /// `fallback`, a 400, 404 or 405 is returned as the status for the HTTP+SSE transport.
    pub(super) async fn post_initialize(
        &self,
        frame: &Value,
        deliver: bool,
    ) -> Result<bool, UpstreamError> {
        *lock(&self.session_id) = None;
        *lock(&self.revision) = None;
        let id = frame.get("id").cloned();
        let reading = Reading {
            id: id.as_ref(),
            deliver,
        };
        let (status, answered) = self.post_once(frame, &reading).await?;
        *lock(&self.session_sign_ins) = self.ctx.sign_ins();
        if status == StatusCode::ACCEPTED {
            return Err(UpstreamError::InvalidResponse(
                "the upstream server answered initialize with 202 and no response".into(),
            ));
        }
        Ok(answered)
    }

    /// L4: a sign-in completed after the session was made: its `Mcp-Session-Id` is not sent
    /// again (the server may bind a session to the account that made it).
    pub(super) fn signed_in_since_session(&self) -> bool {
        self.ctx.tokens.is_some() && *lock(&self.session_sign_ins) != self.ctx.sign_ins()
    }

    /// A frame on the session: a request (`id`) or a notification or response (`None`).
    /// Returns whether the response came. A 404 makes a new session once, and the frame goes
    /// once more on it; so does a sign-in that completed after the session was made (L4),
    /// before the frame goes, or when it answered the frame's 401 or 403.
    pub(super) async fn post_frame(
        self: &Arc<Self>,
        frame: &Value,
        id: Option<i64>,
    ) -> Result<bool, UpstreamError> {
        let id = id.map(Value::from);
        let reading = Reading {
            id: id.as_ref(),
            deliver: true,
        };
        let mut renewed = false;
        loop {
            let session = lock(&self.session_id).clone();
            if !renewed && session.is_some() && self.signed_in_since_session() {
                self.new_session(session, Renewal::SignedIn).await?;
                renewed = true;
                continue;
            }
            let (status, answered) = self.post_once(frame, &reading).await?;
            let renewal = match status {
                StatusCode::NOT_FOUND => Renewal::Expired,
                SIGNED_IN_ANEW => Renewal::SignedIn,
                _ => return Ok(answered),
            };
            if renewed {
                return Err(UpstreamError::TransportFailed(match renewal {
                    Renewal::Expired => {
                        "the upstream server ended the new session at once (HTTP status 404)".into()
                    }
                    Renewal::SignedIn => "the new session needed another sign-in at once".into(),
                }));
            }
            self.new_session(session, renewal).await?;
            renewed = true;
        }
    }

    /// L4: the session `expired` is gone (a 404) or of an earlier sign-in: VS Code's
    /// `initialize` goes again with an id of its own (its answer is not VS Code's), then
    /// `notifications/initialized`, and the GET stream opens on the new session. A frame that
    /// met the same 404 while this ran finds a session that is not `expired` and only goes
    /// again.
    async fn new_session(
        self: &Arc<Self>,
        expired: Option<String>,
        why: Renewal,
    ) -> Result<(), UpstreamError> {
        let mut count = self.reinit.lock().await;
        if *lock(&self.session_id) != expired {
            return Ok(());
        }
        let Some(mut init) = lock(&self.init).clone() else {
            return Err(UpstreamError::HttpStatus(404));
        };
        *count += 1;
        match why {
            Renewal::Expired => log::bridge(
                Level::Warn,
                "the upstream server ended the session (HTTP status 404): the bridge initializes a new one",
            ),
            Renewal::SignedIn => log::bridge(
                Level::Info,
                "a new sign-in: the bridge initializes a new session of the upstream server (the session of the earlier sign-in is not used again)",
            ),
        }
        init["id"] = Value::from(format!("bridge-reinit-{count}"));
        if !self.post_initialize(&init, false).await? {
            return Err(UpstreamError::TransportFailed(
                "the new session got no initialize result".into(),
            ));
        }
        let initialized = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/initialized",
        });
        self.post_once(&initialized, &Reading::ALL).await?;
        self.open_listen_stream();
        Ok(())
    }

    /// L4: DELETE of the session at the stop, with the token held now: no refresh and no
    /// sign-in starts from it (the stop's bound would cut them off). A failure, a 401 among
    /// them, is a debug line (the server's idle time-out ends the session then).
    pub(super) async fn delete(&self, session: &str) {
        let url = self.ctx.opts.url.clone();
        let revision = lock(&self.revision).clone();
        let result = self
            .ctx
            .with_current_token(|client| {
                let mut request = client.delete(url.clone()).header(SESSION_HEADER, session);
                if let Some(revision) = &revision {
                    request = request.header(VERSION_HEADER, revision);
                }
                request
            })
            .await;
        let what = match result {
            Ok(response) => format!("HTTP status {}", response.status().as_u16()),
            Err(error) => error.to_string(),
        };
        log::bridge(
            Level::Debug,
            &format!("DELETE of the upstream session: {what}"),
        );
    }
}
