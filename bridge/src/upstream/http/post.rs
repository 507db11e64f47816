//! The HTTP exchanges of the URL form, of every revision: the one POST
//! ([`PostContext::post`]: the standard `Accept` and `Content-Type`, the era's headers, the
//! body), the GET of an event stream, the bearer and the answer to a 401 or 403 (sign-in and
//! step-up), the error of a status, and the hand-over of each message to the client. The
//! answer is read in `sse.rs`. A 2026-07-28 exchange ([`PostContext::exchange`]) ends with
//! [`TransportEvent::Failed`] for its id: after the response it changes nothing (the request
//! is no longer in flight), without a response it fails the request with the cause.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use serde_json::Value;
use url::Url;

use super::HttpOptions;
use super::headers::ACCEPT;
use super::sse::{Answer, Cursor, Reading, content_type, read_bounded, seen, sse_events};
use crate::auth::TokenSource;
use crate::auth::challenge;
use crate::auth::outcome::SignInError;
use crate::log::{self, Level};
use crate::upstream::events::Events;
use crate::upstream::{TransportEvent, UpstreamError};
use crate::webclient::describe;
use crate::wire::reader::RawLine;
use crate::wire::writer::Room;

/// What every exchange of one transport shares.
pub(super) struct PostContext {
    pub client: reqwest::Client,
    pub opts: Arc<HttpOptions>,
    /// M4: the bearer of each request and the answer to a 401 or 403.
    pub tokens: Option<TokenSource>,
    pub events: Events,
    pub room: Room,
}

/// How [`PostContext::authorized_until`] ended.
pub(super) enum Sent {
    /// The response of any status but a 401 or 403 that the sign-in answered.
    Response(reqwest::Response),
    /// A new sign-in answered a 401 or 403: the request was not sent again.
    SignedIn,
}

impl Sent {
    /// The response; a request that a new sign-in ended (only where the caller asked for
    /// it) is a failure.
    pub fn response(self) -> Result<reqwest::Response, UpstreamError> {
        match self {
            Sent::Response(response) => Ok(response),
            Sent::SignedIn => Err(UpstreamError::TransportFailed(
                "a sign-in ended the request".into(),
            )),
        }
    }
}

/// The body of an error status is read up to this size (a JSON-RPC error, or a page).
const ERROR_BODY_BYTES: usize = 64 << 10;

impl PostContext {
    /// Runs the exchange of request `id` to its end. With a sign-in, the request carries the
    /// access token; a 401 or 403 is answered by the sign-in (refresh, sign-in or step-up)
    /// and the request goes once more, once (one step-up per request).
    pub async fn exchange(&self, id: i64, headers: HeaderMap, body: Bytes, may_sign_in: bool) {
        let error = match self.post_modern(&headers, body, may_sign_in).await {
            Ok(()) => UpstreamError::TransportFailed(
                "the response ended without a JSON-RPC response".into(),
            ),
            Err(error) => error,
        };
        let _ = self.events.send(TransportEvent::Failed { id, error });
    }

    /// M4: sends the request that `build` makes (given the bearer, if any) with the
    /// headers of `--header`, and answers a 401 or 403 by the sign-in once (refresh, sign-in
    /// or step-up); the response of any other status is the caller's. Every HTTP request of
    /// the URL form goes through here, of either revision (L4: the sign-in is per request).
    pub async fn authorized(
        &self,
        may_sign_in: bool,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, UpstreamError> {
        self.authorized_until(may_sign_in, None, build)
            .await?
            .response()
    }

    /// The count of completed sign-ins (0 without a sign-in).
    pub fn sign_ins(&self) -> u64 {
        self.tokens.as_ref().map_or(0, |t| *t.sign_ins().borrow())
    }

    /// [`PostContext::authorized`]; with `session_sign_ins` (the count of sign-ins when the
    /// older server's session was made, L4), a 401 or 403 answered by a new sign-in returns
    /// [`Sent::SignedIn`] instead of sending the request again: it carried the session of
    /// the earlier sign-in, which a new session replaces first.
    pub async fn authorized_until(
        &self,
        may_sign_in: bool,
        session_sign_ins: Option<u64>,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    ) -> Result<Sent, UpstreamError> {
        let tokens = self.tokens.as_ref();
        let mut answered = false;
        loop {
            let token: Option<String> = match tokens {
                Some(tokens) => tokens.bearer().await,
                None => None,
            };
            let response = self
                .with_headers(build(&self.client), token.as_deref())
                .send()
                .await
                .map_err(|e| UpstreamError::TransportFailed(describe(&e)))?;
            let status = response.status();
            let refused = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            let Some(tokens) = tokens.filter(|_| refused) else {
                return Ok(Sent::Response(response));
            };
            let status = status.as_u16();
            if answered {
                // Refused again right after a sign-in: the account lacks the access.
                return Err(if may_sign_in {
                    UpstreamError::SignIn(SignInError::Forbidden(status))
                } else {
                    UpstreamError::HttpStatus(status)
                });
            }
            let values = response.headers().get_all(WWW_AUTHENTICATE);
            let challenge = challenge::parse(values.iter().filter_map(|v| v.to_str().ok()));
            answered = true;
            match tokens.answer(status, challenge, token, may_sign_in).await {
                Ok(()) if session_sign_ins.is_some_and(|n| n != self.sign_ins()) => {
                    return Ok(Sent::SignedIn);
                }
                Ok(()) => continue,
                Err(SignInError::NeedsSignIn(status)) => {
                    return Err(UpstreamError::HttpStatus(status));
                }
                Err(e) => return Err(UpstreamError::SignIn(e)),
            }
        }
    }

    /// L4: sends the request that `build` makes with the access token held now (no refresh,
    /// no sign-in: see [`TokenSource::current`]) and the headers of `--header`; a 401 or 403
    /// is the caller's, as any status. For the DELETE of a session at the stop, whose bound a
    /// refresh or a sign-in would outlast.
    pub async fn with_current_token(
        &self,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, UpstreamError> {
        let token = match &self.tokens {
            Some(tokens) => tokens.current().await,
            None => None,
        };
        self.with_headers(build(&self.client), token.as_deref())
            .send()
            .await
            .map_err(|e| UpstreamError::TransportFailed(describe(&e)))
    }

    /// `request` with the bearer `token`, if any, and the headers of `--header`.
    fn with_headers(
        &self,
        mut request: reqwest::RequestBuilder,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in &self.opts.headers {
            // Checked at start; a header that does not convert is left out, never logged.
            if let (Ok(name), Ok(value)) = (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) {
                request = request.header(name, value);
            }
        }
        request
    }

    /// The one POST of the URL form, of every revision: `body` to `url` with the standard
    /// `Accept` and `Content-Type` and the era's `headers`, through the sign-in
    /// ([`PostContext::authorized_until`]). The status is the caller's.
    pub async fn post(
        &self,
        url: &Url,
        headers: &HeaderMap,
        body: &Bytes,
        may_sign_in: bool,
        session_sign_ins: Option<u64>,
    ) -> Result<Sent, UpstreamError> {
        self.authorized_until(may_sign_in, session_sign_ins, |client| {
            client
                .post(url.clone())
                .header(reqwest::header::ACCEPT, ACCEPT)
                .header(CONTENT_TYPE, "application/json")
                .headers(headers.clone())
                .body(body.clone())
        })
        .await
    }

    /// The GET of an event stream at `url` with the era's `headers`, after the event
    /// `last_id` (`Last-Event-ID`) when there is one.
    pub async fn get_events(
        &self,
        url: &Url,
        headers: &HeaderMap,
        last_id: Option<&str>,
        may_sign_in: bool,
    ) -> Result<reqwest::Response, UpstreamError> {
        self.authorized(may_sign_in, |client| {
            let request = client
                .get(url.clone())
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .headers(headers.clone());
            match last_id {
                Some(id) => request.header("last-event-id", id),
                None => request,
            }
        })
        .await
    }

    /// A 2026-07-28 request: its answer read to the end.
    async fn post_modern(
        &self,
        headers: &HeaderMap,
        body: Bytes,
        may_sign_in: bool,
    ) -> Result<(), UpstreamError> {
        let url = &self.opts.url;
        let sent = self.post(url, headers, &body, may_sign_in, None).await?;
        let response = self.success(sent.response()?).await?;
        let mut cursor = Cursor::default();
        let answer = self
            .read_answer(response, &Reading::ALL, &mut cursor)
            .await?;
        match answer {
            Answer::Ended(_, Some(error)) => Err(error),
            _ => Ok(()),
        }
    }

    /// `response` when its status is a success; else the error of its status
    /// ([`PostContext::error_status`]).
    pub async fn success(
        &self,
        response: reqwest::Response,
    ) -> Result<reqwest::Response, UpstreamError> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let kind = content_type(&response);
        Err(self.error_status(status, &kind, response).await)
    }

    /// The answer of a successful request: one JSON body, or an event stream whose events
    /// each are one message, read from `cursor` on (which follows its ids and `retry`).
    pub async fn read_answer(
        &self,
        response: reqwest::Response,
        reading: &Reading<'_>,
        cursor: &mut Cursor,
    ) -> Result<Answer, UpstreamError> {
        let max = self.opts.max_response_bytes;
        let kind = content_type(&response);
        if kind.starts_with("application/json") {
            let body = read_bounded(response, max).await?;
            return Ok(self.take(body, reading).await);
        }
        if !kind.starts_with("text/event-stream") {
            return Err(UpstreamError::InvalidResponse(format!(
                "HTTP status {} without a JSON body or an event stream",
                response.status().as_u16()
            )));
        }
        let mut events = sse_events(response.bytes_stream(), max);
        let mut messages = false;
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(error) => return Ok(Answer::Ended(messages, Some(error))),
            };
            cursor.follow(&event);
            if let Some(data) = event.data.filter(|d| !d.trim().is_empty()) {
                messages = true;
                if let answered @ Answer::Answered(_) = self.take(data.into_bytes(), reading).await
                {
                    return Ok(answered);
                }
            }
        }
        Ok(Answer::Ended(messages, None))
    }

    /// One message: to the client unless it is the answer to the bridge's own `initialize`.
    async fn take(&self, data: Vec<u8>, reading: &Reading<'_>) -> Answer {
        let seen = seen(&data, reading.id);
        if reading.deliver || !seen.answers {
            self.deliver(data).await;
        }
        match seen.answers {
            true => Answer::Answered(seen.revision),
            false => Answer::Ended(true, None),
        }
    }

    /// Hands one message to the client, after VS Code has read what waits for it.
    pub async fn deliver(&self, message: Vec<u8>) {
        self.room.wait().await;
        let _ = self
            .events
            .send(TransportEvent::Line(RawLine::Line(message)));
    }

    /// A status that is not a success: a JSON-RPC error in the body answers the request (with
    /// or without its id) together with the status (L1: the status of a refused
    /// `server/discover` tells an older server, whatever the error); else the status is the
    /// failure. 401 and 403 get a warning line,
    /// because only a token can answer them.
    pub async fn error_status(
        &self,
        status: StatusCode,
        content_type: &str,
        response: reqwest::Response,
    ) -> UpstreamError {
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            log::bridge(
                Level::Warn,
                &format!(
                    "the upstream server refused the request with the HTTP status {}: give its token with --header-env Authorization=<variable>",
                    status.as_u16()
                ),
            );
        }
        if content_type.starts_with("application/json")
            && let Ok(body) = read_bounded(response, ERROR_BODY_BYTES).await
            && let Ok(value) = serde_json::from_slice::<Value>(&body)
            && let Some(error) = value.get("error").filter(|e| e.is_object())
        {
            return UpstreamError::Refused {
                status: status.as_u16(),
                error: error.clone(),
            };
        }
        UpstreamError::HttpStatus(status.as_u16())
    }
}
