//! The fake authorization server of `--oauth`: real processes, real TLS with the test CA of
//! `certs/`, the requests that a client of the MCP authorization spec sends (RFC 9728, RFC
//! 8414, RFC 7591, RFC 6749 with PKCE S256 and RFC 8707), and the test browser `--browse`.
#![allow(clippy::unwrap_used, reason = "tests")]

mod http_support;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http_support::{HttpFixture, cert, client, json_body, post, request};
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::{BIN, text};
use url::Url;

const CONFIDENTIAL: &str = "bridge-fixture-confidential";
const SECRET: &str = "bridge-fixture-secret-0123456789";
const PUBLIC: &str = "bridge-fixture-public";
const REDIRECT: &str = "http://127.0.0.1:41894/callback";
const VERIFIER: &str = "the-code-verifier-of-the-tests-is-long-enough-0123456789";

/// A fixture with `--oauth`, its origin and two clients (one follows no redirect).
struct Auth {
    fixture: HttpFixture,
    origin: String,
    http: reqwest::Client,
    no_redirect: reqwest::Client,
}

impl Auth {
    fn start(args: &[&str]) -> Self {
        let mut all = vec!["--oauth"];
        all.extend_from_slice(args);
        let fixture = HttpFixture::start(&all);
        let origin = fixture.url.strip_suffix("/mcp").unwrap().to_string();
        mcp_bridge_vscode::install_crypto_provider();
        let pem = std::fs::read(cert("ca.crt")).unwrap();
        let no_redirect = reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .unwrap();
        Self {
            fixture,
            origin,
            http: client("ca.crt"),
            no_redirect,
        }
    }

    fn url(&self) -> &str {
        &self.fixture.url
    }

    async fn get_json(&self, path: &str) -> Value {
        let response = self
            .http
            .get(format!("{}{path}", self.origin))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        json_body(response).await
    }

    async fn counters(&self) -> Value {
        self.get_json("/fixture/counters").await
    }

    /// `POST /register` with this metadata.
    async fn register(&self, metadata: Value) -> reqwest::Response {
        self.http
            .post(format!("{}/register", self.origin))
            .json(&metadata)
            .send()
            .await
            .unwrap()
    }

    /// The authorization URL with PKCE S256 of [`VERIFIER`], the resource and a state; `extra`
    /// replaces or adds parameters (an empty value removes one).
    fn authorization_url(&self, client_id: &str, scope: &str, extra: &[(&str, &str)]) -> String {
        let mut params = vec![
            ("response_type", "code".to_string()),
            ("client_id", client_id.to_string()),
            ("redirect_uri", REDIRECT.to_string()),
            ("scope", scope.to_string()),
            ("state", "state-1".to_string()),
            ("code_challenge", challenge(VERIFIER)),
            ("code_challenge_method", "S256".to_string()),
            ("resource", self.url().to_string()),
        ];
        for (name, value) in extra {
            params.retain(|(n, _)| n != name);
            if !value.is_empty() {
                params.push((name, value.to_string()));
            }
        }
        let mut url = Url::parse(&format!("{}/authorize", self.origin)).unwrap();
        url.query_pairs_mut().extend_pairs(params);
        url.to_string()
    }

    /// GET the authorization URL; the response (a redirect or an error page).
    async fn authorize(&self, url: &str) -> reqwest::Response {
        self.no_redirect.get(url).send().await.unwrap()
    }

    /// The query of the redirect of an authorization request.
    async fn redirected(&self, url: &str) -> Vec<(String, String)> {
        let response = self.authorize(url).await;
        assert_eq!(response.status(), StatusCode::FOUND);
        let location = response.headers()[LOCATION].to_str().unwrap();
        let location = Url::parse(location).unwrap();
        assert_eq!(
            format!(
                "{}://{}{}",
                location.scheme(),
                location.authority(),
                location.path()
            ),
            REDIRECT
        );
        location.query_pairs().into_owned().collect()
    }

    /// The code of a successful authorization request (its state and iss checked).
    async fn code(&self, client_id: &str, scope: &str) -> String {
        let url = self.authorization_url(client_id, scope, &[]);
        let query = self.redirected(&url).await;
        assert_eq!(param(&query, "state"), Some("state-1"));
        assert_eq!(param(&query, "iss"), Some(self.origin.as_str()));
        param(&query, "code").unwrap().to_string()
    }

    /// `POST /token` with a form body and, for a secret, `client_secret_basic`.
    async fn token(&self, form: &[(&str, &str)], basic: Option<(&str, &str)>) -> reqwest::Response {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut builder = self
            .http
            .post(format!("{}/token", self.origin))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if let Some((id, secret)) = basic {
            builder = builder.basic_auth(id, Some(secret));
        }
        builder.send().await.unwrap()
    }

    /// The code exchange of a public client.
    async fn exchange(&self, client_id: &str, code: &str) -> reqwest::Response {
        let resource = self.url().to_string();
        self.token(
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
                ("client_id", client_id),
                ("resource", &resource),
            ],
            None,
        )
        .await
    }

    /// A full sign-in of a public client: the token response.
    async fn sign_in(&self, client_id: &str, scope: &str) -> Value {
        let code = self.code(client_id, scope).await;
        let response = self.exchange(client_id, &code).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
        json_body(response).await
    }

    /// A `tools/call` with this access token.
    async fn call(&self, token: Option<&str>, tool: &str, arguments: Value) -> reqwest::Response {
        let body = request(
            1,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        let mut builder = post(&self.http, self.url(), &body);
        if let Some(token) = token {
            builder = builder.bearer_auth(token);
        }
        builder.send().await.unwrap()
    }

    /// `add` gives 5 with this token.
    async fn adds(&self, token: &str) {
        let response = self.call(Some(token), "add", json!({"a": 2, "b": 3})).await;
        assert_eq!(response.status(), 200);
        assert_eq!(text(&json_body(response).await["result"]), "5");
    }

    fn prm(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.origin)
    }
}

fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn param<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

fn challenge_header(response: &reqwest::Response) -> String {
    response.headers()[WWW_AUTHENTICATE]
        .to_str()
        .unwrap()
        .to_string()
}

async fn oauth_error(response: reqwest::Response, status: u16, error: &str) -> Value {
    assert_eq!(response.status(), status);
    let body = json_body(response).await;
    assert_eq!(body["error"], error, "{body}");
    assert!(body["error_description"].is_string(), "{body}");
    body
}

#[tokio::test]
async fn the_discovery_chain_goes_from_the_401_to_the_metadata() {
    let auth = Auth::start(&[]);
    let response = auth.call(None, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        challenge_header(&response),
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"mcp:read\"",
            auth.prm()
        )
    );

    let prm = auth
        .get_json("/.well-known/oauth-protected-resource/mcp")
        .await;
    assert_eq!(prm["resource"], auth.url());
    assert_eq!(prm["authorization_servers"], json!([auth.origin]));
    assert_eq!(prm["scopes_supported"], json!(["mcp:read", "mcp:write"]));

    let metadata = auth
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    let origin = &auth.origin;
    assert_eq!(metadata["issuer"], *origin);
    assert!(origin.starts_with("https://127.0.0.1:"));
    assert_eq!(
        metadata["authorization_endpoint"],
        format!("{origin}/authorize")
    );
    assert_eq!(metadata["token_endpoint"], format!("{origin}/token"));
    assert_eq!(
        metadata["registration_endpoint"],
        format!("{origin}/register")
    );
    assert_eq!(
        metadata["code_challenge_methods_supported"],
        json!(["S256"])
    );
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    assert_eq!(
        metadata["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(metadata["response_types_supported"], json!(["code"]));
    assert_eq!(
        metadata["token_endpoint_auth_methods_supported"],
        json!(["client_secret_basic", "client_secret_post", "none"])
    );
    let openid = auth.get_json("/.well-known/openid-configuration").await;
    assert_eq!(openid, metadata);

    let counters = auth.counters().await;
    assert_eq!(counters["mcp_requests"], json!({"all": 1, "challenged": 1}));
    assert_eq!(counters["registrations"], json!([]));
}

#[tokio::test]
async fn registration_authorization_and_token_give_an_mcp_call() {
    let auth = Auth::start(&[]);
    let response = auth
        .register(json!({
            "client_name": "the test client",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        }))
        .await;
    assert_eq!(response.status(), 201);
    let registered = json_body(response).await;
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    assert!(registered.get("client_secret").is_none(), "{registered}");
    assert_eq!(registered["client_name"], "the test client");
    assert_eq!(registered["redirect_uris"], json!([REDIRECT]));
    assert_eq!(registered["application_type"], "native");

    let tokens = auth.sign_in(&client_id, "mcp:read").await;
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 900);
    assert_eq!(tokens["scope"], "mcp:read");
    assert!(tokens["refresh_token"].is_string());
    auth.adds(tokens["access_token"].as_str().unwrap()).await;

    let response = auth
        .call(Some("not-a-token"), "add", json!({"a": 1, "b": 1}))
        .await;
    assert_eq!(response.status(), 401);
    assert!(
        challenge_header(&response).starts_with("Bearer error=\"invalid_token\""),
        "{}",
        challenge_header(&response)
    );

    let counters = auth.counters().await;
    assert_eq!(
        counters["registrations"],
        json!([{"client_id": client_id, "client_name": "the test client", "redirect_uris": [REDIRECT]}])
    );
    assert_eq!(counters["token_requests"]["authorization_code"], 1);
    assert_eq!(counters["token_requests"]["refresh_token"], 0);
    assert_eq!(counters["authorization_requests"], 1);
    assert_eq!(counters["mcp_requests"], json!({"all": 2, "challenged": 1}));

    // A confidential registration gets a secret; a bad redirect URI is refused.
    let confidential = json_body(
        auth.register(json!({"client_name": "c", "redirect_uris": ["http://127.0.0.1/callback"]}))
            .await,
    )
    .await;
    assert!(confidential["client_secret"].is_string());
    assert_eq!(
        confidential["token_endpoint_auth_method"],
        "client_secret_basic"
    );
    let bad = auth
        .register(json!({"redirect_uris": ["http://example.com/callback"]}))
        .await;
    oauth_error(bad, 400, "invalid_redirect_uri").await;
}

#[tokio::test]
async fn the_verifier_the_resource_and_the_redirect_uri_are_checked() {
    let auth = Auth::start(&[]);

    // A wrong verifier: invalid_grant, and the code is gone.
    let code = auth.code(PUBLIC, "mcp:read").await;
    let resource = auth.url().to_string();
    let wrong = "another-verifier-that-is-long-enough-0123456789-abcdef";
    let response = auth
        .token(
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", wrong),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_grant").await;
    oauth_error(auth.exchange(PUBLIC, &code).await, 400, "invalid_grant").await;

    // The resource of the token request.
    let code = auth.code(PUBLIC, "mcp:read").await;
    let response = auth
        .token(
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
                ("client_id", PUBLIC),
                ("resource", "https://elsewhere.example/mcp"),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_target").await;
    // A code of another redirect URI.
    let code = auth.code(PUBLIC, "mcp:read").await;
    let response = auth
        .token(
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "http://127.0.0.1:41895/callback"),
                ("code_verifier", VERIFIER),
                ("client_id", PUBLIC),
                ("resource", &resource),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_grant").await;

    // Errors in the redirect, with the state.
    for (extra, error) in [
        (
            vec![("resource", "https://elsewhere.example/mcp")],
            "invalid_target",
        ),
        (vec![("resource", "")], "invalid_target"),
        (vec![("code_challenge", "")], "invalid_request"),
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("scope", "mcp:admin")], "invalid_scope"),
        (
            vec![("response_type", "token")],
            "unsupported_response_type",
        ),
    ] {
        let url = auth.authorization_url(PUBLIC, "mcp:read", &extra);
        let query = auth.redirected(&url).await;
        assert_eq!(param(&query, "error"), Some(error), "{extra:?}");
        assert_eq!(param(&query, "state"), Some("state-1"));
        assert!(param(&query, "code").is_none());
    }

    // An error page without a redirect where the redirect URI cannot be trusted.
    for (client_id, extra) in [
        ("unknown-client", vec![]),
        (
            PUBLIC,
            vec![("redirect_uri", "http://127.0.0.1:41894/other")],
        ),
        (
            PUBLIC,
            vec![("redirect_uri", "https://evil.example/callback")],
        ),
        (PUBLIC, vec![("redirect_uri", "")]),
    ] {
        let url = auth.authorization_url(client_id, "mcp:read", &extra);
        let response = auth.authorize(&url).await;
        assert_eq!(response.status(), 400, "{client_id} {extra:?}");
        assert!(response.headers().get(LOCATION).is_none());
        assert!(response.text().await.unwrap().contains("not valid"));
    }
}

#[tokio::test]
async fn refresh_tokens_rotate_and_keep_the_scope() {
    let auth = Auth::start(&[]);
    let tokens = auth.sign_in(PUBLIC, "mcp:read mcp:write").await;
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", PUBLIC),
                ("scope", "mcp:read"),
            ],
            None,
        )
        .await;
    assert_eq!(response.status(), 200);
    let renewed = json_body(response).await;
    assert_eq!(renewed["scope"], "mcp:read");
    assert_ne!(renewed["access_token"], tokens["access_token"]);
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"]);
    auth.adds(renewed["access_token"].as_str().unwrap()).await;

    // The old refresh token is gone; a larger scope is refused.
    let again = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    oauth_error(again, 400, "invalid_grant").await;
    let larger = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", renewed["refresh_token"].as_str().unwrap()),
                ("client_id", PUBLIC),
                ("scope", "mcp:read mcp:write"),
            ],
            None,
        )
        .await;
    oauth_error(larger, 400, "invalid_scope").await;
    let counters = auth.counters().await;
    assert_eq!(counters["token_requests"]["refresh_token"], 3);
}

#[tokio::test]
async fn a_short_token_lifetime_expires_and_the_refresh_renews() {
    let auth = Auth::start(&["--token-lifetime", "1"]);
    let tokens = auth.sign_in(PUBLIC, "").await;
    assert_eq!(tokens["expires_in"], 1);
    assert_eq!(tokens["scope"], "mcp:read");
    let access = tokens["access_token"].as_str().unwrap();
    // The token expires after 1 s: poll until the server refuses it (a time event, no order
    // of processes to wait for).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let response = auth
            .call(Some(access), "add", json!({"a": 2, "b": 3}))
            .await;
        if response.status() == 401 {
            assert!(challenge_header(&response).contains("error=\"invalid_token\""));
            break;
        }
        assert_eq!(response.status(), 200);
        assert!(Instant::now() < deadline, "the token did not expire");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    assert_eq!(response.status(), 200);
    let renewed = json_body(response).await;
    assert_eq!(renewed["expires_in"], 1);
    assert!(renewed["access_token"].is_string());
}

#[tokio::test]
async fn the_tool_guarded_needs_a_step_up_to_mcp_write() {
    let auth = Auth::start(&[]);
    let read = auth.sign_in(PUBLIC, "mcp:read").await;
    let read = read["access_token"].as_str().unwrap();
    let list = request(1, "tools/list", json!({}));
    let response = post(&auth.http, auth.url(), &list)
        .bearer_auth(read)
        .send()
        .await
        .unwrap();
    let tools = json_body(response).await;
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "guarded")
    );

    let response = auth.call(Some(read), "guarded", json!({})).await;
    assert_eq!(response.status(), 403);
    assert_eq!(
        challenge_header(&response),
        format!(
            "Bearer error=\"insufficient_scope\", error_description=\"The tool needs the scope mcp:write\", resource_metadata=\"{}\", scope=\"mcp:read mcp:write\"",
            auth.prm()
        )
    );
    assert_eq!(
        json_body(response).await,
        json!({"error": "insufficient_scope", "error_description": "The tool needs the scope mcp:write"})
    );
    auth.adds(read).await;

    let write = auth.sign_in(PUBLIC, "mcp:read mcp:write").await;
    assert_eq!(write["scope"], "mcp:read mcp:write");
    let response = auth
        .call(write["access_token"].as_str(), "guarded", json!({}))
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        text(&json_body(response).await["result"]),
        "guarded: the token has the scope mcp:write"
    );
    let counters = auth.counters().await;
    assert_eq!(counters["mcp_requests"], json!({"all": 4, "challenged": 1}));
}

#[tokio::test]
async fn each_pre_registered_client_signs_in() {
    let auth = Auth::start(&["--no-registration"]);
    let metadata = auth
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    assert!(
        metadata.get("registration_endpoint").is_none(),
        "{metadata}"
    );
    let response = auth.register(json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(response.status(), 404);

    // The public client, on another port of its loopback redirect URI.
    let tokens = auth.sign_in(PUBLIC, "mcp:read").await;
    auth.adds(tokens["access_token"].as_str().unwrap()).await;

    // The confidential client with client_secret_basic.
    let resource = auth.url().to_string();
    let code = auth.code(CONFIDENTIAL, "mcp:read").await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("resource", resource.as_str()),
    ];
    let response = auth.token(&form, Some((CONFIDENTIAL, SECRET))).await;
    assert_eq!(response.status(), 200);
    let tokens = json_body(response).await;
    auth.adds(tokens["access_token"].as_str().unwrap()).await;
    let refresh = tokens["refresh_token"].as_str().unwrap();

    // Without its secret, or with a wrong one: invalid_client (401).
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("client_id", CONFIDENTIAL),
            ],
            None,
        )
        .await;
    oauth_error(response, 401, "invalid_client").await;
    let response = auth
        .token(
            &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
            Some((CONFIDENTIAL, "wrong-secret")),
        )
        .await;
    assert_eq!(
        response.headers()[WWW_AUTHENTICATE],
        "Basic realm=\"bridge-fixture\""
    );
    oauth_error(response, 401, "invalid_client").await;
    // client_secret_post works too.
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh),
                ("client_id", CONFIDENTIAL),
                ("client_secret", SECRET),
            ],
            None,
        )
        .await;
    assert_eq!(response.status(), 200);
    // A refresh token of one client is not for another one.
    let renewed = json_body(response).await;
    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", renewed["refresh_token"].as_str().unwrap()),
                ("client_id", PUBLIC),
            ],
            None,
        )
        .await;
    oauth_error(response, 400, "invalid_grant").await;
    // Not a form: invalid_request.
    let response = auth
        .http
        .post(format!("{}/token", auth.origin))
        .json(&json!({"grant_type": "refresh_token"}))
        .send()
        .await
        .unwrap();
    oauth_error(response, 400, "invalid_request").await;
}

#[tokio::test]
async fn a_client_id_metadata_document_needs_no_registration() {
    let auth = Auth::start(&["--cimd"]);
    let document_url = format!("{}/fixture/client.json", auth.origin);
    let response = auth.http.get(&document_url).send().await.unwrap();
    assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
    let document = json_body(response).await;
    assert_eq!(
        document,
        json!({
            "client_id": document_url,
            "client_name": "bridge-fixture metadata client",
            "redirect_uris": ["http://127.0.0.1/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        })
    );
    let tokens = auth.sign_in(&document_url, "mcp:read").await;
    auth.adds(tokens["access_token"].as_str().unwrap()).await;

    // A document whose client_id is not its URL: an error page.
    let url = auth.authorization_url(&format!("{}/fixture/other.json", auth.origin), "", &[]);
    assert_eq!(auth.authorize(&url).await.status(), 400);

    let counters = auth.counters().await;
    assert_eq!(counters["registrations"], json!([]));
    assert!(counters["client_metadata_fetches"].as_u64().unwrap() >= 2);
}

#[tokio::test]
async fn no_cimd_refuses_a_client_id_url() {
    let auth = Auth::start(&["--no-cimd"]);
    let metadata = auth
        .get_json("/.well-known/oauth-authorization-server")
        .await;
    assert_eq!(metadata["client_id_metadata_document_supported"], false);
    let url = auth.authorization_url("https://127.0.0.1:1/client.json", "", &[]);
    assert_eq!(auth.authorize(&url).await.status(), 400);
    assert_eq!(auth.counters().await["client_metadata_fetches"], 0);
}

#[tokio::test]
async fn deny_answers_access_denied_with_the_state() {
    let auth = Auth::start(&["--deny"]);
    let url = auth.authorization_url(PUBLIC, "mcp:read", &[]);
    let query = auth.redirected(&url).await;
    assert_eq!(param(&query, "error"), Some("access_denied"));
    assert_eq!(param(&query, "state"), Some("state-1"));
    assert!(param(&query, "code").is_none());
}

#[tokio::test]
async fn forgotten_clients_get_invalid_client() {
    let auth = Auth::start(&[]);
    let registered = json_body(
        auth.register(json!({
            "client_name": "forgettable",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        }))
        .await,
    )
    .await;
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    let tokens = auth.sign_in(&client_id, "mcp:read").await;
    let response = auth
        .http
        .post(format!("{}/fixture/forget-clients", auth.origin))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);

    let response = auth
        .token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", &client_id),
            ],
            None,
        )
        .await;
    oauth_error(response, 401, "invalid_client").await;
    let url = auth.authorization_url(&client_id, "mcp:read", &[]);
    let response = auth.authorize(&url).await;
    assert_eq!(response.status(), 400);
    assert!(response.headers().get(LOCATION).is_none());
    // Its access token stays valid until it expires; the counters keep the registration.
    auth.adds(tokens["access_token"].as_str().unwrap()).await;
    let counters = auth.counters().await;
    assert_eq!(counters["registrations"][0]["client_name"], "forgettable");
}

/// A redirect receiver on `listener`: with `start` it answers the first request with a 303 to
/// `start` (as the start URL of a sign-in does), then one request with 200; the request lines
/// come back through the handle.
fn receiver(listener: TcpListener, start: Option<String>) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut lines = Vec::new();
        let rounds = if start.is_some() { 2 } else { 1 };
        for round in 0..rounds {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                if header == "\r\n" || header.is_empty() {
                    break;
                }
            }
            lines.push(line.trim_end().to_string());
            let answer = match (&start, round) {
                (Some(location), 0) => format!(
                    "HTTP/1.1 303 See Other\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                ),
                _ => "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n".to_string(),
            };
            stream.write_all(answer.as_bytes()).unwrap();
        }
        lines
    })
}

/// Runs `--browse <url>` with the test CA: the exit code and stdout.
fn browse(url: &str) -> (i32, String) {
    let ca = cert("ca.crt");
    let output = Command::new(BIN)
        .args(["--browse", url, "--ca-file", ca.to_str().unwrap()])
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// A listener on a free loopback port, its port and the redirect URI on it.
fn loopback() -> (TcpListener, u16, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port, format!("http://127.0.0.1:{port}/callback"))
}

#[test]
fn browse_follows_the_start_url_to_the_redirect_receiver() {
    let auth = Auth::start(&[]);
    let (listener, port, redirect) = loopback();
    let authorization = auth.authorization_url(PUBLIC, "mcp:read", &[("redirect_uri", &redirect)]);
    let thread = receiver(listener, Some(authorization));
    let (code, stdout) = browse(&format!("http://127.0.0.1:{port}/start/abc"));
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.starts_with(&format!(
            "200 {redirect}?code=HIDDEN&state=HIDDEN&iss=https"
        )),
        "{stdout}"
    );
    let lines = thread.join().unwrap();
    assert_eq!(lines[0], "GET /start/abc HTTP/1.1");
    assert!(
        lines[1].starts_with("GET /callback?code=bfx_code_"),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("&state=state-1&iss=https"),
        "{}",
        lines[1]
    );
}

#[test]
fn browse_delivers_access_denied_and_fails_on_an_error_page() {
    let denying = Auth::start(&["--deny"]);
    let (listener, _, redirect) = loopback();
    let url = denying.authorization_url(PUBLIC, "mcp:read", &[("redirect_uri", &redirect)]);
    let thread = receiver(listener, None);
    let (code, stdout) = browse(&url);
    assert_eq!(code, 0, "{stdout}");
    let lines = thread.join().unwrap();
    assert!(
        lines[0].starts_with("GET /callback?error=access_denied&"),
        "{}",
        lines[0]
    );

    let auth = Auth::start(&[]);
    let url = auth.authorization_url("unknown-client", "mcp:read", &[]);
    let (code, stdout) = browse(&url);
    assert_eq!(code, 1);
    assert!(stdout.starts_with("400 https://127.0.0.1:"), "{stdout}");
    // http only to a loopback host.
    let (code, _) = browse("http://example.com/");
    assert_eq!(code, 1);
}
