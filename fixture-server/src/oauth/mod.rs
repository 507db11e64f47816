//! The fake authorization server of `--oauth`: `/mcp` needs an OAuth access token, and the
//! fixture is its own authorization server, so that a client's sign-in runs against a real
//! HTTPS process without a page to click (fixture-server/README.md, "The authorization server").
//!
//! - RFC 9728 protected resource metadata, RFC 6750 challenges (`insufficient_scope` for the
//!   tool `guarded` without `mcp:write`);
//! - RFC 8414 authorization server metadata (also at the OpenID discovery path);
//! - RFC 6749 authorization code and refresh token grants with PKCE S256 (RFC 7636), the
//!   `resource` parameter (RFC 8707), the `iss` parameter of the redirect (RFC 9207);
//! - RFC 7591 dynamic client registration, client ID metadata documents (the MCP
//!   authorization spec, "Client Registration"), two pre-registered clients; loopback redirect
//!   URIs match on any port (RFC 8252 §7.3).
//!
//! Tokens, codes and client secrets are opaque random strings kept in memory; a restart forgets
//! them all. Nothing here writes a token, a code, a verifier, a secret or a `state` to stderr.
mod access;
mod clients;
mod flow;
mod issued;
mod overrides;
mod tenants;

pub mod browse;

pub use access::{GUARDED_TEXT, guard, guarded_tool};

pub use tenants::TENANTS;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::cli::Options;
use crate::log;
use crate::sync::lock;

use clients::Client;

/// The scope of every MCP request.
pub const READ: &str = "mcp:read";
/// The scope of the tool `guarded`.
pub const WRITE: &str = "mcp:write";
/// The scopes of the authorization server, in this order.
pub const SCOPES: [&str; 2] = [READ, WRITE];
/// The name of the tool that needs `mcp:write`.
pub const GUARDED: &str = "guarded";
/// The text of the step-up error.
pub const STEP_UP: &str = "The tool needs the scope mcp:write";
/// The subject that the authorization server approves without a page.
pub const USER: &str = "fixture-user";
/// The path of the protected resource metadata of `/mcp` (RFC 9728 §3.1).
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// The path of the fixture's own client ID metadata document (`--cimd`).
pub const CIMD_PATH: &str = "/fixture/client.json";
/// How long an authorization code is valid.
const CODE_LIFETIME: Duration = Duration::from_secs(60);

/// The settings of the authorization server, from the command line.
#[derive(Debug, Clone)]
pub struct Config {
    pub deny: bool,
    pub registration: bool,
    pub serve_cimd: bool,
    pub accept_cimd: bool,
    pub token_lifetime: Duration,
    pub refresh_tokens: bool,
    /// The length of an access token, padded after its random part (`--access-token-bytes`).
    pub access_token_bytes: Option<usize>,
    /// The 403 of `guarded` asks for `mcp:write` alone.
    pub step_up_scope_only: bool,
    /// The `token_endpoint_auth_method` that every registration answer names (RFC 7591
    /// §3.2.1: the server's answer is what counts), with a `client_secret`.
    pub register_auth_method: Option<String>,
    /// The PEM of the CA that signs the documents of client ID metadata URLs, besides the
    /// roots of the system: the test CA.
    pub ca_pem: &'static str,
}

impl Config {
    pub fn of(options: &Options, ca_pem: &'static str) -> Self {
        Self {
            deny: options.deny,
            registration: !options.no_registration,
            serve_cimd: options.cimd,
            accept_cimd: !options.no_cimd,
            token_lifetime: Duration::from_secs(u64::from(options.token_lifetime())),
            refresh_tokens: !options.no_refresh_tokens,
            access_token_bytes: options.access_token_bytes.map(|n| n as usize),
            step_up_scope_only: options.step_up_scope_only,
            register_auth_method: options.register_auth_method.clone(),
            ca_pem,
        }
    }
}

/// A grant behind an access or refresh token, or an authorization code.
#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    scopes: Vec<String>,
    /// The `resource` of the authorization request (RFC 8707): the only MCP endpoint whose
    /// requests the access token serves.
    resource: String,
    /// The end of an access token or a code; None for a refresh token.
    expires: Option<Instant>,
}

/// An authorization code with what `/token` checks.
#[derive(Debug, Clone)]
struct Code {
    grant: Grant,
    redirect_uri: String,
    challenge: String,
}

/// What the authorization server keeps in memory.
#[derive(Default)]
struct Store {
    /// The clients of dynamic registration, by client ID.
    registered: HashMap<String, Client>,
    /// The documents of client ID metadata URLs, with the end of their cache time.
    documents: HashMap<String, (Client, Instant)>,
    codes: HashMap<String, Code>,
    access: HashMap<String, Grant>,
    refresh: HashMap<String, Grant>,
    /// The refresh tokens that were used (rotated away).
    used_refresh: HashSet<String>,
    counters: Counters,
}

/// The numbers of `GET /fixture/counters`.
#[derive(Default)]
struct Counters {
    /// Every dynamic registration, also those forgotten later.
    registrations: Vec<Value>,
    authorization_requests: u64,
    token_requests: HashMap<String, u64>,
    document_fetches: u64,
    mcp_requests: u64,
    mcp_challenged: u64,
    /// The `scope` parameter of each authorization request ("" when absent).
    authorization_scopes: Vec<String>,
    /// The `scope` of each token response.
    issued_scopes: Vec<String>,
    /// Refresh requests with a refresh token that had already been used.
    refresh_reused: u64,
    /// Each valid access token that came to an MCP endpoint of another resource than its own
    /// (a tenant's token at the other tenant): the path and the token's resource.
    foreign_tokens: Vec<Value>,
    /// Each accepted MCP request with an `Mcp-Session-Id` (an older server's session): the
    /// session and the scopes of its token, so that a test sees which sign-in used a session.
    session_scopes: Vec<Value>,
}

/// The authorization server and resource server of one process.
pub struct AuthServer {
    /// `https://<ip>:<port>`: the issuer and the origin of every endpoint.
    pub issuer: String,
    /// The MCP URL: the only valid `resource` (RFC 8707).
    pub resource: String,
    config: Config,
    store: Mutex<Store>,
    overrides: Mutex<overrides::Overrides>,
    http: reqwest::Client,
}

impl AuthServer {
    pub fn new(issuer: String, resource: String, config: Config) -> Result<Self, String> {
        let http = clients::document_client(config.ca_pem)?;
        Ok(Self {
            issuer,
            resource,
            config,
            store: Mutex::new(Store::default()),
            overrides: Mutex::default(),
            http,
        })
    }

    /// The `resource_metadata="…", ` of a challenge of the MCP endpoint at `path`; none
    /// without the metadata (the override `no_resource_metadata`).
    fn prm_parameter(&self, path: &str) -> String {
        if self.overrides().no_resource_metadata {
            String::new()
        } else {
            format!("resource_metadata=\"{}\", ", self.prm_url_of(path))
        }
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        lock(&self.store)
    }

    /// A new access token (and a refresh token unless `--no-refresh-tokens`): the JSON of a
    /// successful token response (RFC 6749 §5.1).
    fn issue(&self, client_id: &str, scopes: Vec<String>, resource: &str) -> Value {
        let lifetime = self.config.token_lifetime;
        let access = padded(token("bfx_at_"), self.config.access_token_bytes);
        let mut store = self.store();
        store.access.insert(
            access.clone(),
            Grant {
                client_id: client_id.to_string(),
                scopes: scopes.clone(),
                resource: resource.to_string(),
                expires: Some(Instant::now() + lifetime),
            },
        );
        store.counters.issued_scopes.push(scopes.join(" "));
        let mut body = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.overrides().expires_in.unwrap_or(lifetime.as_secs()),
            "scope": scopes.join(" "),
        });
        if self.config.refresh_tokens {
            let refresh = token("bfx_rt_");
            store.refresh.insert(
                refresh.clone(),
                Grant {
                    client_id: client_id.to_string(),
                    scopes,
                    resource: resource.to_string(),
                    expires: None,
                },
            );
            body["refresh_token"] = Value::String(refresh);
        }
        body
    }

    /// The scopes of a valid access token at the MCP endpoint at `path`: none for a token of
    /// another resource (counted in `foreign_tokens`).
    fn access(&self, token: &str, path: &str) -> Option<Vec<String>> {
        let resource = self.resource_at(path);
        let mut store = self.store();
        let grant = store.access.get(token)?.clone();
        if grant.expires.is_some_and(|end| end <= Instant::now()) {
            return None;
        }
        if grant.resource != resource {
            store
                .counters
                .foreign_tokens
                .push(json!({"path": path, "resource": grant.resource}));
            return None;
        }
        Some(grant.scopes)
    }
}

/// 32 random bytes in base64url without padding (43 characters) after `prefix`.
pub fn token(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    // The operating system's generator; a fake authorization server without it cannot run.
    getrandom::fill(&mut bytes).unwrap_or_else(|e| panic!("no random bytes: {e}"));
    let value = format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes));
    // The client ids of registrations (`dcr_`) are not secrets: they are in URLs by design.
    if let Some(kind) = prefix.strip_prefix("bfx_") {
        issued::report(kind.trim_end_matches('_'), &value);
    }
    value
}

/// `token` made `bytes` long with base64url characters after its random part (the stored
/// sign-in of a large token spans several keychain credentials on Windows).
fn padded(mut token: String, bytes: Option<usize>) -> String {
    let bytes = bytes.unwrap_or(0);
    while token.len() < bytes {
        token.push('A');
    }
    token
}

/// The routes of the authorization server, the metadata and the test endpoints (not `/mcp`).
pub fn routes(server: Arc<AuthServer>) -> Router {
    let mut router = Router::new()
        .route(PRM_PATH, get(protected_resource))
        .route(tenants::PRM_PREFIX, get(protected_resource));
    for tenant in TENANTS {
        router = router.route(
            &format!("{}{tenant}", tenants::PRM_PREFIX),
            get(protected_resource),
        );
    }
    router = router
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/.well-known/openid-configuration", get(metadata))
        .route("/authorize", get(flow::authorize))
        .route("/token", post(flow::token))
        .route("/fixture/forget-clients", post(forget_clients))
        .route("/fixture/counters", get(counters))
        .route("/fixture/overrides", post(overrides::set));
    if server.config.registration {
        router = router.route("/register", post(clients::register));
    }
    if server.config.serve_cimd {
        router = router.route(CIMD_PATH, get(clients::own_document));
    }
    router.with_state(server)
}

/// A JSON response with `Cache-Control: no-store` (RFC 6749 §5.1).
fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// An OAuth error JSON (RFC 6749 §5.2, RFC 7591 §3.2.2).
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    log::info("oauth", &format!("refused: {error}: {description}"));
    json_response(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

/// RFC 9728 §2: the metadata of the protected resource `/mcp` (also at the root), or of a
/// tenant.
async fn protected_resource(State(server): State<Arc<AuthServer>>, uri: Uri) -> Response {
    let path = tenants::served_by(uri.path());
    let overrides = server.overrides();
    if overrides.no_resource_metadata {
        let status = overrides
            .resource_metadata_status
            .and_then(|s| StatusCode::from_u16(s).ok())
            .unwrap_or(StatusCode::NOT_FOUND);
        return (status, "no protected resource metadata").into_response();
    }
    let servers = server
        .overrides()
        .authorization_servers
        .unwrap_or_else(|| vec![server.issuer.clone()]);
    json_response(
        StatusCode::OK,
        &json!({
            "resource": server.resource_at(path),
            "authorization_servers": servers,
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
            "resource_name": "bridge-fixture-server",
        }),
    )
}

/// RFC 8414 §2: the metadata of the authorization server.
async fn metadata(State(server): State<Arc<AuthServer>>) -> Response {
    let issuer = &server.issuer_name();
    let mut grants = vec!["authorization_code"];
    if server.config.refresh_tokens {
        grants.push("refresh_token");
    }
    let mut body = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "scopes_supported": SCOPES,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": grants,
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": server.config.accept_cimd,
    });
    if server.config.registration {
        body["registration_endpoint"] = Value::String(format!("{issuer}/register"));
    }
    let overrides = server.overrides();
    if let Some(endpoint) = overrides.authorization_endpoint {
        body["authorization_endpoint"] = Value::String(endpoint);
    }
    if overrides.no_iss {
        body["authorization_response_iss_parameter_supported"] = Value::Bool(false);
    }
    json_response(StatusCode::OK, &body)
}

/// `POST /fixture/forget-clients`: the clients of dynamic registration are gone (their
/// tokens stay valid until they expire, their refresh tokens get `invalid_client`).
async fn forget_clients(State(server): State<Arc<AuthServer>>) -> StatusCode {
    let forgotten = {
        let mut store = server.store();
        let count = store.registered.len();
        store.registered.clear();
        count
    };
    log::info(
        "oauth",
        &format!("forgot {forgotten} registered clients (/fixture/forget-clients)"),
    );
    StatusCode::NO_CONTENT
}

/// `GET /fixture/counters`.
async fn counters(State(server): State<Arc<AuthServer>>) -> Response {
    let store = server.store();
    let counters = &store.counters;
    let grant = |name: &str| counters.token_requests.get(name).copied().unwrap_or(0);
    let other: u64 = counters
        .token_requests
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "authorization_code" | "refresh_token"))
        .map(|(_, count)| count)
        .sum();
    let body = json!({
        "registrations": counters.registrations,
        "authorization_requests": counters.authorization_requests,
        "token_requests": {
            "authorization_code": grant("authorization_code"),
            "refresh_token": grant("refresh_token"),
            "other": other,
        },
        "client_metadata_fetches": counters.document_fetches,
        "mcp_requests": {
            "all": counters.mcp_requests,
            "challenged": counters.mcp_challenged,
        },
        "authorization_scopes": counters.authorization_scopes,
        "issued_scopes": counters.issued_scopes,
        "refresh_reused": counters.refresh_reused,
        "foreign_tokens": counters.foreign_tokens,
        "session_scopes": counters.session_scopes,
    });
    drop(store);
    json_response(StatusCode::OK, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_and_distinct() {
        let a = token("x_");
        assert_eq!(a.len(), 2 + 43);
        assert_ne!(a, token("x_"));
        let long = padded(token("bfx_at_"), Some(4000));
        assert_eq!(long.len(), 4000);
        assert_eq!(padded(a.clone(), None), a);
    }
}
