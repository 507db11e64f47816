//! The authorization endpoint (RFC 6749 §4.1.1, approved at once for the test user) and the
//! token endpoint (RFC 6749 §4.1.3 and §6) with PKCE S256 (RFC 7636) and the `resource`
//! parameter (RFC 8707).
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};
use url::Url;

use super::clients::{self, Client};
use super::{AuthServer, CODE_LIFETIME, Code, Grant, SCOPES, USER, oauth_error, token as random};
use crate::log;

/// The parameters of a query or a form body; a name that occurs twice is the error
/// (RFC 6749 §3.1, §3.2).
fn parameters(text: &[u8]) -> Result<HashMap<String, String>, String> {
    let mut parameters = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(text) {
        if parameters
            .insert(name.to_string(), value.to_string())
            .is_some()
        {
            return Err(format!("the parameter {name} occurs more than once"));
        }
    }
    Ok(parameters)
}

/// The scopes of a `scope` parameter, in the order of [`SCOPES`]; absent or empty: `mcp:read`.
fn scopes(text: Option<&str>) -> Result<Vec<String>, String> {
    let asked: Vec<&str> = text
        .unwrap_or("")
        .split(' ')
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(unknown) = asked.iter().find(|s| !SCOPES.contains(s)) {
        return Err(format!(
            "the scope {unknown} is not known (mcp:read, mcp:write)"
        ));
    }
    if asked.is_empty() {
        return Ok(vec![super::READ.to_string()]);
    }
    Ok(SCOPES
        .iter()
        .filter(|s| asked.contains(s))
        .map(|s| s.to_string())
        .collect())
}

/// A PKCE code challenge or verifier: `length` characters of RFC 7636's unreserved set.
fn pkce_text(text: &str, lengths: std::ops::RangeInclusive<usize>) -> bool {
    lengths.contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The S256 challenge of a verifier (RFC 7636 §4.2).
pub fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The error page of an authorization request whose redirect URI cannot be trusted: 400, no
/// redirect (RFC 6749 §4.1.2.1).
fn page(error: &str, description: &str) -> Response {
    log::info(
        "oauth",
        &format!("authorization refused with a page: {error}: {description}"),
    );
    (
        StatusCode::BAD_REQUEST,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        format!(
            "The authorization request is not valid ({error}): {description}.\n\
             The authorization server does not redirect, because it cannot trust the redirect URI.\n"
        ),
    )
        .into_response()
}

/// A 302 to the redirect URI with these parameters, and the `state` and `iss` (RFC 9207).
fn redirect(
    server: &AuthServer,
    redirect_uri: &str,
    state: Option<&String>,
    pairs: &[(&str, &str)],
) -> Response {
    let Ok(mut url) = Url::parse(redirect_uri) else {
        return page("invalid_request", "the redirect URI is not a URL");
    };
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name, value);
        }
        if let Some(state) = state {
            query.append_pair("state", state);
        }
        if !server.overrides().no_iss {
            query.append_pair("iss", &server.issuer_name());
        }
    }
    let Ok(location) = HeaderValue::from_str(url.as_str()) else {
        return page(
            "invalid_request",
            "the redirect URI is not valid in a header",
        );
    };
    let mut response = StatusCode::FOUND.into_response();
    response.headers_mut().insert(header::LOCATION, location);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /authorize`: checks the request and redirects at once with a code for the test user
/// (or `access_denied` with `--deny`).
pub async fn authorize(State(server): State<Arc<AuthServer>>, uri: Uri) -> Response {
    server.store().counters.authorization_requests += 1;
    let params = match parameters(uri.query().unwrap_or("").as_bytes()) {
        Ok(params) => params,
        Err(description) => return page("invalid_request", &description),
    };
    let Some(client_id) = params.get("client_id") else {
        return page("invalid_request", "client_id is missing");
    };
    let client = match clients::lookup(&server, client_id).await {
        Ok(client) => client,
        Err(description) => return page("invalid_client", &description),
    };
    let Some(redirect_uri) = params.get("redirect_uri") else {
        return page("invalid_request", "redirect_uri is missing");
    };
    if !client.allows_redirect(redirect_uri) {
        return page(
            "invalid_request",
            &format!(
                "the redirect URI {redirect_uri} is not registered for the client {client_id}"
            ),
        );
    }
    let state = params.get("state");
    if let Some(state) = state {
        super::issued::report("state", state);
    }
    let fail = |error: &str, description: &str| {
        log::info(
            "oauth",
            &format!("authorization refused: {error}: {description}"),
        );
        redirect(
            &server,
            redirect_uri,
            state,
            &[("error", error), ("error_description", description)],
        )
    };
    if params.get("response_type").map(String::as_str) != Some("code") {
        return fail("unsupported_response_type", "response_type must be code");
    }
    let Some(challenge) = params.get("code_challenge") else {
        return fail("invalid_request", "code_challenge is missing (PKCE S256)");
    };
    if params.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return fail("invalid_request", "code_challenge_method must be S256");
    }
    if !pkce_text(challenge, 43..=43) {
        return fail(
            "invalid_request",
            "code_challenge is not an S256 challenge (43 characters of base64url)",
        );
    }
    let resource = match params.get("resource") {
        None => return fail("invalid_target", "resource is missing (RFC 8707)"),
        Some(resource) if !server.accepted_resources().contains(resource) => {
            return fail(
                "invalid_target",
                "resource is not the MCP URL of this server",
            );
        }
        Some(resource) => resource.clone(),
    };
    server
        .store()
        .counters
        .authorization_scopes
        .push(params.get("scope").cloned().unwrap_or_default());
    let scopes = match scopes(params.get("scope").map(String::as_str)) {
        Ok(scopes) => scopes,
        Err(description) => return fail("invalid_scope", &description),
    };
    if server.config.deny {
        return fail("access_denied", "the test user denied the access (--deny)");
    }
    let code = random("bfx_code_");
    server.store().codes.insert(
        code.clone(),
        Code {
            grant: Grant {
                client_id: client.id.clone(),
                scopes: scopes.clone(),
                resource,
                expires: Some(Instant::now() + CODE_LIFETIME),
            },
            redirect_uri: redirect_uri.clone(),
            challenge: challenge.clone(),
        },
    );
    log::info(
        "oauth",
        &format!(
            "approved the access of {USER} for the client {} with the scope \"{}\"",
            client.id,
            scopes.join(" ")
        ),
    );
    redirect(&server, redirect_uri, state, &[("code", &code)])
}

/// How the client authenticated at the token endpoint.
struct Authenticated {
    client: Client,
}

/// `invalid_client`: 401, with `WWW-Authenticate: Basic` after an `Authorization` header
/// (RFC 6749 §5.2).
fn invalid_client(basic: bool, description: &str) -> Response {
    let mut response = oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", description);
    if basic {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"bridge-fixture\""),
        );
    }
    response
}

/// `client_secret_basic` (RFC 6749 §2.3.1: both parts form-encoded), `client_secret_post`,
/// or `none` with `client_id` only.
async fn authenticate(
    server: &AuthServer,
    headers: &HeaderMap,
    params: &HashMap<String, String>,
) -> Result<Authenticated, Response> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, value)| value.trim().to_string());
    let (client_id, secret) = match &basic {
        Some(encoded) => {
            let decoded = STANDARD
                .decode(encoded)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| invalid_client(true, "the Basic credentials are not base64"))?;
            let (id, secret) = decoded
                .split_once(':')
                .ok_or_else(|| invalid_client(true, "the Basic credentials have no colon"))?;
            let unescape = |text: &str| {
                url::form_urlencoded::parse(format!("x={text}").as_bytes())
                    .next()
                    .map(|(_, value)| value.to_string())
                    .unwrap_or_default()
            };
            if params.contains_key("client_secret") {
                return Err(oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "the client used two authentication methods",
                ));
            }
            let id = unescape(id);
            if params.get("client_id").is_some_and(|body| *body != id) {
                return Err(invalid_client(
                    true,
                    "the client_id of the body is not the one of the Basic credentials",
                ));
            }
            (id, Some(unescape(secret)))
        }
        None => {
            let Some(id) = params.get("client_id") else {
                return Err(invalid_client(false, "client_id is missing"));
            };
            (id.clone(), params.get("client_secret").cloned())
        }
    };
    let client = clients::lookup(server, &client_id)
        .await
        .map_err(|description| invalid_client(basic.is_some(), &description))?;
    match (&client.secret, &secret) {
        (Some(expected), Some(given)) if expected == given => {}
        (Some(_), Some(_)) => {
            return Err(invalid_client(
                basic.is_some(),
                "the client secret is not valid",
            ));
        }
        (Some(_), None) => {
            return Err(invalid_client(
                false,
                &format!(
                    "the client {client_id} is confidential and needs its secret (client_secret_basic or client_secret_post)"
                ),
            ));
        }
        (None, Some(_)) => {
            return Err(invalid_client(
                basic.is_some(),
                &format!("the client {client_id} is public (none) and has no secret"),
            ));
        }
        (None, None) => {}
    }
    let used = if basic.is_some() {
        "client_secret_basic"
    } else {
        "client_secret_post"
    };
    if let Some(method) = &client.method
        && method != used
    {
        return Err(invalid_client(
            basic.is_some(),
            &format!("the client {client_id} is registered with {method}, not {used}"),
        ));
    }
    Ok(Authenticated { client })
}

/// `POST /token`.
pub async fn token(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let params = if form {
        parameters(&body)
    } else {
        Err("the token request needs a form body (application/x-www-form-urlencoded)".into())
    };
    let grant_type = params
        .as_ref()
        .ok()
        .and_then(|p| p.get("grant_type").cloned())
        .unwrap_or_else(|| "missing".to_string());
    *server
        .store()
        .counters
        .token_requests
        .entry(grant_type.clone())
        .or_insert(0) += 1;
    let params = match params {
        Ok(params) => params,
        Err(description) => {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", &description);
        }
    };
    match grant_type.as_str() {
        "authorization_code" | "refresh_token" => {}
        "missing" => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "grant_type is missing",
            );
        }
        other => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("the grant type {other} is not supported"),
            );
        }
    }
    let client = match authenticate(&server, &headers, &params).await {
        Ok(authenticated) => authenticated.client,
        Err(response) => return response,
    };
    if let Some(resource) = params.get("resource")
        && !server.accepted_resources().contains(resource)
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            "resource is not the MCP URL of this server",
        );
    }
    let outcome = if grant_type == "authorization_code" {
        exchange(&server, &client, &params)
    } else {
        refresh(&server, &client, &params)
    };
    match outcome {
        Ok(body) => super::json_response(StatusCode::OK, &body),
        Err((error, description)) => oauth_error(StatusCode::BAD_REQUEST, error, &description),
    }
}

type Refusal = (&'static str, String);

/// The authorization code grant: the code once, its client, its redirect URI, its verifier.
fn exchange(
    server: &AuthServer,
    client: &Client,
    params: &HashMap<String, String>,
) -> Result<serde_json::Value, Refusal> {
    let grant = |text: &str| ("invalid_grant", text.to_string());
    let code = params
        .get("code")
        .ok_or(("invalid_request", "code is missing".to_string()))?;
    let verifier = params.get("code_verifier").ok_or((
        "invalid_request",
        "code_verifier is missing (PKCE)".to_string(),
    ))?;
    super::issued::report("verifier", verifier);
    // A code is used once, also when this request fails.
    let entry = server
        .store()
        .codes
        .remove(code)
        .ok_or_else(|| grant("the code is not valid (unknown, used or expired)"))?;
    if entry.grant.expires.is_some_and(|end| end <= Instant::now()) {
        return Err(grant("the code has expired"));
    }
    if entry.grant.client_id != client.id {
        return Err(grant("the code was issued to another client"));
    }
    if params.get("redirect_uri") != Some(&entry.redirect_uri) {
        return Err(grant(
            "redirect_uri is not the one of the authorization request",
        ));
    }
    if !pkce_text(verifier, 43..=128) || challenge_of(verifier) != entry.challenge {
        return Err(grant("the code_verifier does not match the code_challenge"));
    }
    log::info(
        "oauth",
        &format!(
            "issued tokens to the client {} (authorization_code)",
            client.id
        ),
    );
    // RFC 8707 §2.2: the tokens are for the resource of the authorization request; a token
    // request that names another one is refused.
    if params
        .get("resource")
        .is_some_and(|r| *r != entry.grant.resource)
    {
        return Err((
            "invalid_target",
            "resource is not the one of the authorization request".into(),
        ));
    }
    Ok(server.issue(&client.id, entry.grant.scopes, &entry.grant.resource))
}

/// The refresh token grant: the refresh token rotates (the old one is no longer valid); a
/// `scope` may narrow the grant.
fn refresh(
    server: &AuthServer,
    client: &Client,
    params: &HashMap<String, String>,
) -> Result<serde_json::Value, Refusal> {
    if !server.config.refresh_tokens {
        return Err((
            "unsupported_grant_type",
            "this server issues no refresh tokens (--no-refresh-tokens)".into(),
        ));
    }
    let token = params
        .get("refresh_token")
        .ok_or(("invalid_request", "refresh_token is missing".to_string()))?;
    let unknown = || {
        (
            "invalid_grant",
            "the refresh token is not valid (unknown or used)".to_string(),
        )
    };
    let entry = {
        let mut store = server.store();
        let entry = store.refresh.get(token).cloned();
        if entry.is_none() && store.used_refresh.contains(token) {
            store.counters.refresh_reused += 1;
        }
        entry.ok_or_else(unknown)?
    };
    if entry.client_id != client.id {
        return Err((
            "invalid_grant",
            "the refresh token was issued to another client".into(),
        ));
    }
    if params.get("resource").is_some_and(|r| *r != entry.resource) {
        return Err((
            "invalid_target",
            "resource is not the one of the refresh token".into(),
        ));
    }
    let scopes = match params.get("scope") {
        None => entry.scopes.clone(),
        Some(text) => {
            let asked = scopes(Some(text)).map_err(|d| ("invalid_scope", d))?;
            if asked.iter().any(|s| !entry.scopes.contains(s)) {
                return Err((
                    "invalid_scope",
                    "the scope is larger than the one of the grant".into(),
                ));
            }
            asked
        }
    };
    // The refresh token rotates: a second use of the same token is refused.
    {
        let mut store = server.store();
        store.refresh.remove(token).ok_or_else(unknown)?;
        store.used_refresh.insert(token.clone());
    }
    log::info(
        "oauth",
        &format!("issued tokens to the client {} (refresh_token)", client.id),
    );
    Ok(server.issue(&client.id, scopes, &entry.resource))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_of_rfc_7636_appendix_b() {
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn reads_scopes_and_parameters() {
        assert_eq!(scopes(None), Ok(vec!["mcp:read".to_string()]));
        assert_eq!(
            scopes(Some("mcp:write mcp:read")),
            Ok(vec!["mcp:read".to_string(), "mcp:write".to_string()])
        );
        assert!(scopes(Some("mcp:read admin")).is_err());
        assert!(parameters(b"a=1&b=2").is_ok());
        assert!(parameters(b"a=1&a=2").is_err());
    }
}
