//! What the HTTP mode checks before rmcp's Streamable HTTP service sees a request: the method
//! (POST only), the bearer token of `--bearer-env`, the statuses of `--listen-status`; and the
//! stderr line when a client closes a response stream before its end (the spec's cancellation
//! on Streamable HTTP: rmcp cancels the request, this module only reports it).
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};

use crate::discover_refusal::DiscoverError;
use crate::log;

/// The largest request body: the default `--max-response-bytes` of the bridge (64 MiB).
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// The challenge of a request without the bearer token: it names no authorization server, so
/// a client cannot sign in.
pub const CHALLENGE: &str = "Bearer realm=\"bridge-fixture\"";

/// The checks of the HTTP mode.
pub struct Gate {
    /// The token that `Authorization: Bearer <token>` must carry.
    pub bearer: Option<String>,
    /// `--header-sha256`: the header and the SHA-256 of the value that it must carry.
    pub header_sha256: Option<(String, String)>,
    /// The status of the first `subscriptions/listen` requests, and how many are left.
    pub listen_status: Option<(StatusCode, AtomicU32)>,
    /// `--revision 2025-11-25`: sessions, thus also GET and DELETE (`super::older`).
    pub older: bool,
    /// `--discover-error`: the 400 of every `server/discover`.
    pub discover_error: Option<DiscoverError>,
}

/// The middleware of `/mcp`: 405, 401, the statuses of `--listen-status`, then rmcp.
pub async fn check(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let session_method = gate.older && matches!(*request.method(), Method::GET | Method::DELETE);
    if request.method() != Method::POST && !session_method {
        return if gate.older {
            (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "GET, POST, DELETE")],
                "Method Not Allowed: the MCP endpoint accepts GET, POST and DELETE",
            )
                .into_response()
        } else {
            (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "POST")],
                "Method Not Allowed: the MCP endpoint accepts POST only",
            )
                .into_response()
        };
    }
    if let Some(token) = &gate.bearer
        && !authorized(request.headers(), token)
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, CHALLENGE)],
            "Unauthorized: this server needs a bearer token",
        )
            .into_response();
    }
    if let Some((name, hex)) = &gate.header_sha256
        && !request
            .headers()
            .get_all(name.as_str())
            .iter()
            .any(|value| crate::crypto::sha256_hex(value.as_bytes()) == *hex)
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, CHALLENGE)],
            "Unauthorized: this server needs the header of --header-sha256",
        )
            .into_response();
    }
    let request = match &gate.discover_error {
        Some(refusal) if request.method() == Method::POST => {
            match refuse_discover(request, refusal).await {
                Ok(request) => request,
                Err(response) => return response,
            }
        }
        _ => request,
    };
    let request = match &gate.listen_status {
        Some((status, left)) => match refuse_listen(request, *status, left).await {
            Ok(request) => request,
            Err(response) => return response,
        },
        None => request,
    };
    // The session rules are those of Streamable HTTP at /mcp, not of the 2024-11-05 routes.
    let streamable = request.uri().path() == super::PATH;
    let request = match *request.method() {
        Method::POST if gate.older && streamable => {
            match super::older::prepare(request, MAX_BODY_BYTES).await {
                Ok(request) => request,
                Err(response) => return response,
            }
        }
        Method::GET => super::older::resume_after_last_event(request),
        _ => request,
    };
    let method = request
        .headers()
        .get("mcp-method")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("a request")
        .to_string();
    // The acknowledgment of a listen stream, thus the list changes of Q7, has no order against
    // the answers of the other HTTP requests (docs/fixture.md, "Jitter").
    if method == "subscriptions/listen" {
        crate::jitter::pause(crate::jitter::Point::Listen).await;
    }
    let mut watch = Closing::new(method);
    let response = next.run(request).await;
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    if !streams {
        watch.done();
        return response;
    }
    let (parts, body) = response.into_parts();
    let body = Guarded {
        inner: body.into_data_stream(),
        watch,
    };
    Response::from_parts(parts, Body::from_stream(body))
}

/// `Authorization: Bearer <token>`, the scheme in any case.
fn authorized(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|value: &HeaderValue| value.to_str().ok())
        .filter_map(|value| value.split_once(' '))
        .any(|(scheme, value)| scheme.eq_ignore_ascii_case("bearer") && value == token)
}

/// Answers a `server/discover` request with the 400 of `--discover-error`.
async fn refuse_discover(request: Request, refusal: &DiscoverError) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let bytes: Bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response())?;
    let frame = serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_default();
    if frame["method"] == "server/discover" {
        log::info(
            "http",
            "refused server/discover with the HTTP status 400 (--discover-error)",
        );
        return Err(refusal.response(frame["id"].clone()));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Answers a `subscriptions/listen` request with `status` while `left` is above 0.
async fn refuse_listen(
    request: Request,
    status: StatusCode,
    left: &AtomicU32,
) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let bytes: Bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response())?;
    let listen = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .is_some_and(|body| body["method"] == "subscriptions/listen");
    if listen
        && left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    {
        log::info(
            "http",
            &format!(
                "answered subscriptions/listen with the HTTP status {status} (--listen-status)"
            ),
        );
        return Err((status, "refused by --listen-status").into_response());
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Writes a stderr line when the client goes away before its response ended.
struct Closing {
    method: String,
    open: bool,
}

impl Closing {
    fn new(method: String) -> Self {
        Self { method, open: true }
    }

    fn done(&mut self) {
        self.open = false;
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        if self.open {
            log::info(
                "http",
                &format!(
                    "the client closed the response stream of {} before its end: the request is cancelled",
                    self.method
                ),
            );
        }
    }
}

/// The body of an SSE response, with its [`Closing`].
struct Guarded<S> {
    inner: S,
    watch: Closing,
}

impl<S, E> Stream for Guarded<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.poll_next_unpin(cx);
        if let Poll::Ready(None) = next {
            self.watch.done();
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_token_with_any_case_of_the_scheme() {
        let mut headers = HeaderMap::new();
        assert!(!authorized(&headers, "t0k"));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bEaReR t0k"),
        );
        assert!(authorized(&headers, "t0k"));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer t0K"),
        );
        assert!(!authorized(&headers, "t0k"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic t0k"));
        assert!(!authorized(&headers, "t0k"));
    }
}
