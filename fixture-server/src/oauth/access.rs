//! The access check of `/mcp` in the `--oauth` mode: the bearer token and its scopes, the
//! challenges of RFC 6750 §3 and RFC 9728 §5.1, and the tool `guarded` that needs `mcp:write`.

use super::*;

/// The middleware of `/mcp` (after the method check): a valid access token with `mcp:read`,
/// and `mcp:write` for a `tools/call` of `guarded`; else 401 or 403 with the challenge of
/// RFC 6750 §3 and RFC 9728 §5.1.
pub async fn guard(
    State(server): State<Arc<AuthServer>>,
    request: Request,
    next: Next,
) -> Response {
    let presented = bearer(request.headers());
    let path = request.uri().path().to_owned();
    let scopes = presented
        .as_deref()
        .and_then(|token| server.access(token, &path))
        .filter(|_| !server.overrides().refuse_access_tokens);
    let refusal = match &scopes {
        None => Some(unauthorized(&server, &path, presented.is_some())),
        Some(scopes) if !scopes.iter().any(|s| s == READ) => Some(forbidden(
            &server,
            &path,
            "The server needs the scope mcp:read",
            READ,
        )),
        Some(scopes) if guarded(request.headers()) && !scopes.iter().any(|s| s == WRITE) => {
            let scope = if server.config.step_up_scope_only {
                WRITE
            } else {
                "mcp:read mcp:write"
            };
            Some(forbidden(&server, &path, STEP_UP, scope))
        }
        Some(_) => None,
    };
    {
        let mut store = server.store();
        store.counters.mcp_requests += 1;
        if refusal.is_some() {
            store.counters.mcp_challenged += 1;
        }
        let session = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok());
        if let (None, Some(session), Some(scopes)) = (&refusal, session, &scopes) {
            store
                .counters
                .session_scopes
                .push(json!({"session": session, "scopes": scopes.join(" ")}));
        }
    }
    match refusal {
        Some(response) => response,
        None => next.run(request).await,
    }
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case).
fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|value: &HeaderValue| value.to_str().ok())
        .filter_map(|value| value.split_once(' '))
        .find(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().to_string())
}

/// A `tools/call` of `guarded`: rmcp checks these headers against the body (400 otherwise).
fn guarded(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if text("mcp-method") != Some("tools/call") {
        return false;
    }
    match text("mcp-name") {
        Some(name) => decoded_name(name).as_deref() == Some(GUARDED),
        None => false,
    }
}

/// The value of `Mcp-Name`, also in its `=?base64?…?=` form.
fn decoded_name(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_string()),
    }
}

/// 401: no token, or one that is not valid (unknown or expired).
fn unauthorized(server: &AuthServer, path: &str, presented: bool) -> Response {
    let challenge = if presented {
        format!(
            "Bearer error=\"invalid_token\", error_description=\"The access token is not valid or has expired\", {}scope=\"{READ}\"",
            server.prm_parameter(path)
        )
    } else {
        format!("Bearer {}scope=\"{READ}\"", server.prm_parameter(path))
    };
    let mut response = Response::new(Body::from(
        "Unauthorized: this server needs an OAuth access token (see WWW-Authenticate)",
    ));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// 403 `insufficient_scope` with the scopes that the request needs.
fn forbidden(server: &AuthServer, path: &str, description: &str, scope: &str) -> Response {
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", error_description=\"{description}\", {}scope=\"{scope}\"",
        server.prm_parameter(path)
    );
    let body = json!({"error": "insufficient_scope", "error_description": description});
    let mut response = json_response(StatusCode::FORBIDDEN, &body);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The definition of the tool `guarded` (only in the `--oauth` mode).
pub fn guarded_tool() -> rmcp::model::Tool {
    crate::call::tool(
        GUARDED,
        "Needs the OAuth scope mcp:write (the HTTP mode with --oauth only)",
        crate::call::no_input(),
        false,
    )
}

/// The result text of `guarded`.
pub const GUARDED_TEXT: &str = "guarded: the token has the scope mcp:write";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_name_of_a_guarded_call() {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-method", HeaderValue::from_static("tools/call"));
        headers.insert("mcp-name", HeaderValue::from_static("guarded"));
        assert!(guarded(&headers));
        headers.insert(
            "mcp-name",
            HeaderValue::from_static("=?base64?Z3VhcmRlZA==?="),
        );
        assert!(guarded(&headers));
        headers.insert("mcp-name", HeaderValue::from_static("add"));
        assert!(!guarded(&headers));
        headers.insert("mcp-method", HeaderValue::from_static("prompts/get"));
        headers.insert("mcp-name", HeaderValue::from_static("guarded"));
        assert!(!guarded(&headers));
    }
}
