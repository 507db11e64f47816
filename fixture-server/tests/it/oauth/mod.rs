//! The fake authorization server of `--oauth`: real processes, real TLS with the test CA of
//! `certs/`, the requests that a client of the MCP authorization spec sends (RFC 9728, RFC
//! 8414, RFC 7591, RFC 6749 with PKCE S256 and RFC 8707), and the test browser `--browse`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::http_support::{HttpFixture, cert, client, json_body, post, request};
use crate::support::{BIN, text};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION, WWW_AUTHENTICATE};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use url::Url;

mod browse;
mod clients;
mod discovery;
mod tokens;

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
        crate::http_support::install_crypto_provider();
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
