//! The clients of the authorization server: the two pre-registered ones, those of dynamic
//! registration (RFC 7591), and those whose client ID is the https URL of a client ID metadata
//! document (the MCP authorization spec, "Client Registration"); and the match of a redirect
//! URI, where a loopback redirect URI matches on any port (RFC 8252 §7.3).
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use url::{Host, Url};

use super::{AuthServer, CIMD_PATH, json_response, oauth_error, token};
use crate::log;

/// The confidential pre-registered client (`client_secret_basic` or `client_secret_post`).
pub const CONFIDENTIAL: &str = "bridge-fixture-confidential";
/// The secret of [`CONFIDENTIAL`].
pub const CONFIDENTIAL_SECRET: &str = "bridge-fixture-secret-0123456789";
/// The public pre-registered client (`none`).
pub const PUBLIC: &str = "bridge-fixture-public";
/// The redirect URI of both pre-registered clients, and of the fixture's own document: any
/// port matches.
pub const LOOPBACK_CALLBACK: &str = "http://127.0.0.1/callback";
/// How long a client ID metadata document stays in the cache (unless `no-store`).
const DOCUMENT_CACHE: Duration = Duration::from_secs(60);
/// The largest client ID metadata document.
const DOCUMENT_BYTES: usize = 64 << 10;
/// The wait for a client ID metadata document.
const DOCUMENT_TIMEOUT: Duration = Duration::from_secs(5);

/// A client that the authorization server knows.
#[derive(Debug, Clone)]
pub struct Client {
    pub id: String,
    /// The secret of a confidential client; None for a public client (`none`).
    pub secret: Option<String>,
    /// The one `token_endpoint_auth_method` of a registered confidential client, as a real
    /// server keeps it; None: the pre-registered confidential client takes either.
    pub method: Option<String>,
    pub redirect_uris: Vec<String>,
}

impl Client {
    /// Whether `uri` is one of the redirect URIs, a loopback one on any port.
    pub fn allows_redirect(&self, uri: &str) -> bool {
        self.redirect_uris
            .iter()
            .any(|registered| redirect_matches(registered, uri))
    }
}

/// The client of `client_id`; the error is the description of `invalid_client`.
pub async fn lookup(server: &AuthServer, client_id: &str) -> Result<Client, String> {
    let pre = |secret: Option<&str>| Client {
        id: client_id.to_string(),
        secret: secret.map(str::to_string),
        method: None,
        redirect_uris: vec![LOOPBACK_CALLBACK.to_string()],
    };
    match client_id {
        CONFIDENTIAL => return Ok(pre(Some(CONFIDENTIAL_SECRET))),
        PUBLIC => return Ok(pre(None)),
        _ => {}
    }
    if let Some(client) = server.store().registered.get(client_id) {
        return Ok(client.clone());
    }
    if client_id.starts_with("https://") {
        if !server.config.accept_cimd {
            return Err(format!(
                "the client {client_id} is not known, and this server does not accept client ID metadata documents (--no-cimd)"
            ));
        }
        return document(server, client_id).await;
    }
    Err(format!("the client {client_id} is not known"))
}

/// The client of a client ID metadata document: from the cache, or fetched.
async fn document(server: &AuthServer, url: &str) -> Result<Client, String> {
    if let Some((client, end)) = server.store().documents.get(url)
        && *end > Instant::now()
    {
        return Ok(client.clone());
    }
    let parsed = Url::parse(url).map_err(|e| format!("the client ID {url} is not a URL: {e}"))?;
    if parsed.scheme() != "https"
        || parsed.fragment().is_some()
        || !parsed.username().is_empty()
        || parsed.password().is_some()
        || parsed.path() == "/"
    {
        return Err(format!(
            "the client ID {url} is not valid for a client ID metadata document (https, a path, no user, no fragment)"
        ));
    }
    server.store().counters.document_fetches += 1;
    let fail = |cause: String| format!("the client ID metadata document {url} {cause}");
    let response = server
        .http
        .get(url)
        .header(header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| fail(format!("cannot be fetched: {e}")))?;
    if response.status() != StatusCode::OK {
        return Err(fail(format!(
            "answered HTTP {}",
            response.status().as_u16()
        )));
    }
    let cache = !response
        .headers()
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("no-store") || value.contains("no-cache"));
    let bytes = response
        .bytes()
        .await
        .map_err(|e| fail(format!("cannot be read: {e}")))?;
    if bytes.len() > DOCUMENT_BYTES {
        return Err(fail(format!("has more than {DOCUMENT_BYTES} bytes")));
    }
    let document: Value =
        serde_json::from_slice(&bytes).map_err(|e| fail(format!("is not JSON: {e}")))?;
    let client = client_of_document(url, &document).map_err(fail)?;
    log::info(
        "oauth",
        &format!("fetched the client ID metadata document {url}"),
    );
    if cache {
        server.store().documents.insert(
            url.to_string(),
            (client.clone(), Instant::now() + DOCUMENT_CACHE),
        );
    }
    Ok(client)
}

/// The checks of a client ID metadata document; the error completes "the document `<url>` …".
fn client_of_document(url: &str, document: &Value) -> Result<Client, String> {
    if document["client_id"].as_str() != Some(url) {
        return Err("has a client_id that is not its URL".into());
    }
    if document["client_name"].as_str().is_none_or(str::is_empty) {
        return Err("has no client_name".into());
    }
    let redirect_uris = strings(&document["redirect_uris"])
        .filter(|uris| !uris.is_empty())
        .ok_or("has no redirect_uris")?;
    match document.get("token_endpoint_auth_method") {
        None => {}
        Some(Value::String(method)) if method == "none" => {}
        Some(_) => {
            return Err(
                "has a token_endpoint_auth_method other than none (this server accepts public clients only)"
                    .into(),
            );
        }
    }
    Ok(Client {
        id: url.to_string(),
        secret: None,
        method: None,
        redirect_uris,
    })
}

/// An array of strings.
fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|item| item.as_str().map(str::to_string))
        .collect()
}

/// The HTTP client that fetches client ID metadata documents: the roots of the system and the
/// test CA; no redirects, no proxy.
pub fn document_client(ca_pem: &str) -> Result<reqwest::Client, String> {
    let ca = reqwest::Certificate::from_pem(ca_pem.as_bytes())
        .map_err(|e| format!("the embedded test CA is not valid: {e}"))?;
    crate::crypto::install_provider();
    reqwest::Client::builder()
        .tls_certs_merge([ca])
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(DOCUMENT_TIMEOUT)
        .build()
        .map_err(|e| format!("cannot make the client for client ID metadata documents: {e}"))
}

/// A registered redirect URI matches the same string; a loopback one (`http` to
/// `127.0.0.0/8`, `[::1]` or `localhost`) matches any port of the same host, path and query.
pub fn redirect_matches(registered: &str, uri: &str) -> bool {
    if registered == uri {
        return true;
    }
    let (Ok(registered), Ok(uri)) = (Url::parse(registered), Url::parse(uri)) else {
        return false;
    };
    registered.scheme() == "http"
        && uri.scheme() == "http"
        && loopback(&registered)
        && registered.host() == uri.host()
        && registered.path() == uri.path()
        && registered.query() == uri.query()
        && uri.fragment().is_none()
        && uri.username().is_empty()
        && uri.password().is_none()
}

/// `http` or `https` URL on a loopback host.
pub fn loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// A redirect URI that a client may register: `https`, or `http` to a loopback host; no
/// fragment.
fn valid_redirect_uri(uri: &str) -> bool {
    match Url::parse(uri) {
        Ok(url) => {
            url.fragment().is_none()
                && (url.scheme() == "https" || (url.scheme() == "http" && loopback(&url)))
        }
        Err(_) => false,
    }
}

/// `POST /register` (RFC 7591 §3): the metadata comes back with `client_id` (and a
/// `client_secret` unless `token_endpoint_auth_method` is `none`).
pub async fn register(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "the registration needs a JSON body (Content-Type: application/json)",
        );
    }
    let mut metadata = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(metadata)) => metadata,
        _ => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                "the registration is not a JSON object",
            );
        }
    };
    if let Some(method) = &server.config.register_auth_method {
        metadata.insert("token_endpoint_auth_method".into(), json!(method));
    }
    let client = match client_of_metadata(&mut metadata) {
        Ok(client) => client,
        Err((error, description)) => {
            return oauth_error(StatusCode::BAD_REQUEST, error, &description);
        }
    };
    let issued_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    metadata.insert("client_id".into(), Value::String(client.id.clone()));
    metadata.insert("client_id_issued_at".into(), json!(issued_at));
    if let Some(secret) = &client.secret {
        metadata.insert("client_secret".into(), Value::String(secret.clone()));
        metadata.insert("client_secret_expires_at".into(), json!(0));
    }
    {
        let mut store = server.store();
        store.counters.registrations.push(json!({
            "client_id": client.id,
            "client_name": metadata.get("client_name").cloned().unwrap_or(Value::Null),
            "redirect_uris": client.redirect_uris,
        }));
        store.registered.insert(client.id.clone(), client.clone());
    }
    log::info(
        "oauth",
        &format!("registered the client {} (RFC 7591)", client.id),
    );
    json_response(StatusCode::CREATED, &Value::Object(metadata))
}

/// The client of a registration request, with the defaults of RFC 7591 §2 filled in.
fn client_of_metadata(metadata: &mut Map<String, Value>) -> Result<Client, (&'static str, String)> {
    let invalid = |text: &str| ("invalid_client_metadata", text.to_string());
    let redirect_uris = metadata
        .get("redirect_uris")
        .and_then(strings)
        .filter(|uris| !uris.is_empty())
        .ok_or_else(|| {
            (
                "invalid_redirect_uri",
                "redirect_uris must be a non-empty array of strings".to_string(),
            )
        })?;
    if let Some(bad) = redirect_uris.iter().find(|uri| !valid_redirect_uri(uri)) {
        return Err((
            "invalid_redirect_uri",
            format!(
                "the redirect URI {bad} is not valid (https, or http to a loopback host; no fragment)"
            ),
        ));
    }
    let method = match metadata.get("token_endpoint_auth_method") {
        None => "client_secret_basic".to_string(),
        Some(Value::String(method))
            if matches!(
                method.as_str(),
                "none" | "client_secret_basic" | "client_secret_post"
            ) =>
        {
            method.clone()
        }
        Some(_) => {
            return Err(invalid(
                "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post",
            ));
        }
    };
    let grants = match metadata.get("grant_types") {
        None => vec!["authorization_code".to_string()],
        Some(value) => strings(value).ok_or_else(|| invalid("grant_types must be strings"))?,
    };
    if grants
        .iter()
        .any(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token"))
    {
        return Err(invalid(
            "grant_types may have authorization_code and refresh_token only",
        ));
    }
    let responses = match metadata.get("response_types") {
        None => vec!["code".to_string()],
        Some(value) => strings(value).ok_or_else(|| invalid("response_types must be strings"))?,
    };
    if responses.iter().any(|r| r != "code") {
        return Err(invalid("response_types may have code only"));
    }
    metadata.insert("token_endpoint_auth_method".into(), json!(method));
    metadata.insert("grant_types".into(), json!(grants));
    metadata.insert("response_types".into(), json!(responses));
    let confidential = method != "none";
    Ok(Client {
        id: token("dcr_"),
        secret: confidential.then(|| token("bfx_secret_")),
        method: confidential.then_some(method),
        redirect_uris,
    })
}

/// `GET /fixture/client.json` with `--cimd`: the fixture's own client ID metadata document.
pub async fn own_document(State(server): State<Arc<AuthServer>>) -> Response {
    let body = json!({
        "client_id": format!("{}{CIMD_PATH}", server.issuer),
        "client_name": "bridge-fixture metadata client",
        "redirect_uris": [LOOPBACK_CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_redirect_uri_matches_on_any_port() {
        let registered = "http://127.0.0.1/callback";
        assert!(redirect_matches(
            registered,
            "http://127.0.0.1:41894/callback"
        ));
        assert!(redirect_matches(registered, "http://127.0.0.1/callback"));
        assert!(!redirect_matches(
            registered,
            "http://127.0.0.1:41894/other"
        ));
        assert!(!redirect_matches(
            registered,
            "http://127.0.0.2:41894/callback"
        ));
        assert!(!redirect_matches(
            registered,
            "https://127.0.0.1:41894/callback"
        ));
        assert!(!redirect_matches(
            registered,
            "http://localhost:41894/callback"
        ));
        assert!(!redirect_matches(
            registered,
            "http://127.0.0.1:1/callback?x=1"
        ));
        assert!(!redirect_matches(
            registered,
            "http://127.0.0.1:1/callback#x"
        ));
        let remote = "https://app.example/callback";
        assert!(redirect_matches(remote, "https://app.example/callback"));
        assert!(!redirect_matches(
            remote,
            "https://app.example:444/callback"
        ));
    }

    #[test]
    fn registration_fills_the_defaults_and_refuses_bad_metadata() {
        let mut metadata = json!({"redirect_uris": ["http://127.0.0.1:5/callback"]})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let client = client_of_metadata(&mut metadata).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(client.secret.is_some());
        assert_eq!(
            metadata["token_endpoint_auth_method"],
            "client_secret_basic"
        );
        let mut bad = json!({"redirect_uris": ["http://example.com/callback"]})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            client_of_metadata(&mut bad).err().map(|e| e.0),
            Some("invalid_redirect_uri")
        );
        let mut public = json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "none"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(
            client_of_metadata(&mut public)
                .unwrap_or_else(|e| panic!("{e:?}"))
                .secret
                .is_none()
        );
    }

    #[test]
    fn a_document_needs_its_own_url_and_a_public_client() {
        let url = "https://127.0.0.1:1/c.json";
        let good = json!({"client_id": url, "client_name": "c", "redirect_uris": ["http://127.0.0.1/callback"]});
        assert!(client_of_document(url, &good).is_ok());
        let other =
            json!({"client_id": "https://x/c.json", "client_name": "c", "redirect_uris": ["x"]});
        assert!(client_of_document(url, &other).is_err());
        let secret = json!({"client_id": url, "client_name": "c", "redirect_uris": ["x"], "token_endpoint_auth_method": "private_key_jwt"});
        assert!(client_of_document(url, &secret).is_err());
    }
}
