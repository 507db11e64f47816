//! The authorization code grant with PKCE S256 and the refresh grant (OAuth 2.1), with the
//! `resource` parameter of RFC 8707 on the authorization and the token requests, through the
//! `oauth2` crate over the bridge's own HTTP client.

use std::time::{Duration, SystemTime};

use oauth2::basic::{BasicClient, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, CsrfToken, HttpRequest, HttpResponse,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope,
    TokenResponse, TokenUrl,
};
use url::Url;

use super::failure::{Failure, sanitize};
use super::metadata::Server;
use super::registration::{Registration, TokenAuth};
use crate::webclient::{BodyError, describe, read_body};

/// A token answer is read up to this size.
const MAX_ANSWER: usize = 64 << 10;

/// The tokens of one sign-in. `Debug` of the oauth2 secret types shows no value.
#[derive(Clone, Debug)]
pub struct Tokens {
    pub access: oauth2::AccessToken,
    pub refresh: Option<RefreshToken>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes granted (as the server said, else as asked).
    pub scopes: Vec<String>,
}

impl Tokens {
    /// A token is usable when it does not expire within `margin` (docs/sign-in.md: one minute).
    #[cfg(test)]
    pub fn usable(&self, now: SystemTime, margin: Duration) -> bool {
        valid_beyond(self.expires_at, now, margin)
    }
}

/// The one expiry rule of the tokens, fresh or stored: valid beyond `now + margin`, and a
/// token without an expiry always.
pub fn valid_beyond(expires_at: Option<SystemTime>, now: SystemTime, margin: Duration) -> bool {
    expires_at.is_none_or(|at| at > now + margin)
}

/// One authorization request: the URL for the browser, and what the redirect must match.
pub struct Authorization {
    pub url: Url,
    pub state: CsrfToken,
    pub verifier: PkceCodeVerifier,
}

/// What the grants of one server and client share.
pub struct Grant<'a> {
    pub server: &'a Server,
    pub registration: &'a Registration,
    pub redirect_uri: &'a str,
    /// The resource indicator of RFC 8707 (the `resource` of the protected resource metadata).
    pub resource: &'a str,
}

type Client = oauth2::Client<
    oauth2::basic::BasicErrorResponse,
    BasicTokenResponse,
    oauth2::basic::BasicTokenIntrospectionResponse,
    oauth2::StandardRevocableToken,
    oauth2::basic::BasicRevocationErrorResponse,
    oauth2::EndpointSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
>;

impl Grant<'_> {
    fn client(&self) -> Result<Client, Failure> {
        let redirect = RedirectUrl::new(self.redirect_uri.to_owned())
            .map_err(|_| Failure::Discovery("the redirect URI is not valid".into()))?;
        let mut client = BasicClient::new(ClientId::new(self.registration.client_id.clone()))
            .set_auth_uri(AuthUrl::from_url(
                self.server.authorization_endpoint.clone(),
            ))
            .set_token_uri(TokenUrl::from_url(self.server.token_endpoint.clone()))
            .set_redirect_uri(redirect);
        client = match &self.registration.auth {
            TokenAuth::Basic(secret) => client
                .set_client_secret(secret.clone())
                .set_auth_type(secret_auth_type(self.server, self.registration)),
            TokenAuth::None => client.set_auth_type(AuthType::RequestBody),
        };
        Ok(client)
    }

    /// The authorization URL with PKCE S256, a fresh `state`, the scopes and the resource.
    pub fn authorization(&self, scopes: &[String]) -> Result<Authorization, Failure> {
        let client = self.client()?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(CsrfToken::new_random)
            .set_pkce_challenge(challenge)
            .add_extra_param("resource", self.resource);
        for scope in scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state) = request.url();
        Ok(Authorization {
            url,
            state,
            verifier,
        })
    }

    /// The code of the redirect for tokens.
    pub async fn exchange(
        &self,
        http: &reqwest::Client,
        code: String,
        verifier: PkceCodeVerifier,
        asked: &[String],
    ) -> Result<Tokens, Failure> {
        let client = self.client()?;
        let send = sender(http);
        let answer = client
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", self.resource)
            .request_async(&send)
            .await
            .map_err(refused)?;
        Ok(tokens_of(&answer, asked, None))
    }

    /// New tokens for a refresh token; a server that sends no new refresh token keeps the old
    /// one valid.
    pub async fn refresh(
        &self,
        http: &reqwest::Client,
        refresh: &RefreshToken,
        asked: &[String],
    ) -> Result<Tokens, Failure> {
        let client = self.client()?;
        let send = sender(http);
        let answer = client
            .exchange_refresh_token(refresh)
            .add_extra_param("resource", self.resource)
            .request_async(&send)
            .await
            .map_err(refused)?;
        Ok(tokens_of(&answer, asked, Some(refresh)))
    }
}

fn tokens_of(answer: &BasicTokenResponse, asked: &[String], old: Option<&RefreshToken>) -> Tokens {
    let scopes = answer
        .scopes()
        .map(|s| s.iter().map(|s| s.to_string()).collect())
        .unwrap_or_else(|| asked.to_vec());
    Tokens {
        access: answer.access_token().clone(),
        refresh: answer.refresh_token().cloned().or_else(|| old.cloned()),
        // A lifetime beyond what the clock can hold (a server's `expires_in` is any u64) is
        // no expiry, not a panic.
        expires_at: answer
            .expires_in()
            .and_then(|d| SystemTime::now().checked_add(d)),
        scopes,
    }
}

/// A failure of the token endpoint: its OAuth error code (sanitized), or what broke.
fn refused<E: std::error::Error>(
    error: RequestTokenError<E, oauth2::basic::BasicErrorResponse>,
) -> Failure {
    match error {
        RequestTokenError::ServerResponse(answer) => {
            Failure::TokenRefused(sanitize(answer.error().as_ref()))
        }
        RequestTokenError::Request(e) => Failure::Transport(e.to_string()),
        RequestTokenError::Parse(_, _) => {
            Failure::TokenRefused("the answer is not a token response".into())
        }
        RequestTokenError::Other(_) => Failure::TokenRefused("the answer is not valid".into()),
    }
}

/// The error of the bridge's HTTP client under the `oauth2` crate; its text names no URL.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpError(String);

/// The HTTP client of the `oauth2` crate: each request's future owns a handle of the client,
/// so that the grant can run on a spawned task.
fn sender(
    http: &reqwest::Client,
) -> impl Fn(
    HttpRequest,
) -> std::pin::Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send>>
+ Send
+ Sync {
    let http = http.clone();
    move |request| {
        let http = http.clone();
        Box::pin(async move { send(&http, request).await })
    }
}

/// One request of the `oauth2` crate on the bridge's reqwest client (its proxies, its CAs).
async fn send(http: &reqwest::Client, request: HttpRequest) -> Result<HttpResponse, HttpError> {
    let (parts, body) = request.into_parts();
    let url = Url::parse(&parts.uri.to_string()).map_err(|e| HttpError(e.to_string()))?;
    let response = http
        .request(parts.method, url)
        .headers(parts.headers)
        .body(body)
        .send()
        .await
        .map_err(|e| HttpError(describe(&e)))?;
    let mut builder = http::Response::builder().status(response.status());
    if let Some(headers) = builder.headers_mut() {
        headers.extend(response.headers().clone());
    }
    let bytes = read_body(response, MAX_ANSWER).await.map_err(|e| match e {
        BodyError::TooLong => HttpError("the answer is too long".into()),
        BodyError::Broken(why) => HttpError(why),
    })?;
    builder.body(bytes).map_err(|e| HttpError(e.to_string()))
}

/// How a client secret goes to the token endpoint: the method of the registration answer when
/// it names one of the two (RFC 7591 §3.2.1: a server that registered one method refuses the
/// other, even when its metadata lists both); else `client_secret_basic` (the default of RFC
/// 8414 when the metadata names no method), or `client_secret_post` when the authorization
/// server supports only that.
fn secret_auth_type(server: &Server, registration: &Registration) -> AuthType {
    match registration.method.as_deref() {
        Some("client_secret_post") => return AuthType::RequestBody,
        Some("client_secret_basic") => return AuthType::BasicAuth,
        _ => {}
    }
    let methods = &server.token_endpoint_auth_methods;
    let named = |m: &str| methods.iter().any(|x| x == m);
    if !named("client_secret_basic") && named("client_secret_post") {
        AuthType::RequestBody
    } else {
        AuthType::BasicAuth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server::example()
    }

    #[test]
    fn a_secret_goes_by_basic_unless_the_server_supports_only_post() {
        let with = |methods: &[&str]| Server {
            token_endpoint_auth_methods: methods.iter().map(|m| (*m).to_owned()).collect(),
            ..server()
        };
        let unnamed = registration(None);
        let basic =
            |m: &[&str]| matches!(secret_auth_type(&with(m), &unnamed), AuthType::BasicAuth);
        assert!(basic(&[]), "RFC 8414's default");
        assert!(basic(&["client_secret_basic"]));
        assert!(basic(&["client_secret_post", "client_secret_basic"]));
        assert!(basic(&["none"]));
        assert!(!basic(&["client_secret_post"]));
        assert!(!basic(&["none", "client_secret_post"]));
    }

    fn registration(method: Option<&str>) -> Registration {
        Registration {
            client_id: "c1".into(),
            auth: TokenAuth::Basic(oauth2::ClientSecret::new("s".into())),
            dynamic: true,
            method: method.map(str::to_owned),
        }
    }

    #[test]
    fn a_secret_goes_by_the_method_that_the_registration_answer_names() {
        let both = Server {
            token_endpoint_auth_methods: vec![
                "client_secret_basic".into(),
                "client_secret_post".into(),
            ],
            ..server()
        };
        let post = registration(Some("client_secret_post"));
        assert!(matches!(
            secret_auth_type(&both, &post),
            AuthType::RequestBody
        ));
        let only_post = Server {
            token_endpoint_auth_methods: vec!["client_secret_post".into()],
            ..server()
        };
        let basic = registration(Some("client_secret_basic"));
        assert!(matches!(
            secret_auth_type(&only_post, &basic),
            AuthType::BasicAuth
        ));
    }

    #[test]
    fn the_authorization_url_has_pkce_s256_a_state_the_scopes_and_the_resource() {
        let registration = Registration {
            client_id: "c1".into(),
            auth: TokenAuth::None,
            dynamic: true,
            method: None,
        };
        let server = server();
        let grant = Grant {
            server: &server,
            registration: &registration,
            redirect_uri: "http://127.0.0.1:41894/callback",
            resource: "https://mcp.example.com/mcp",
        };
        let scopes = vec!["mcp:read".to_owned(), "mcp:write".to_owned()];
        let a = grant.authorization(&scopes).expect("url");
        let q: std::collections::HashMap<String, String> =
            a.url.query_pairs().into_owned().collect();
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], "c1");
        assert_eq!(q["redirect_uri"], "http://127.0.0.1:41894/callback");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["scope"], "mcp:read mcp:write");
        assert_eq!(q["resource"], "https://mcp.example.com/mcp");
        assert_eq!(&q["state"], a.state.secret());
        assert!(a.state.secret().len() >= 16);
        let b = grant.authorization(&scopes).expect("url");
        assert_ne!(
            a.state.secret(),
            b.state.secret(),
            "a fresh state each time"
        );
        assert_ne!(a.verifier.secret(), b.verifier.secret());
    }

    #[test]
    fn a_token_is_usable_until_a_minute_before_it_expires() {
        let now = SystemTime::now();
        let tokens = |expires_at| Tokens {
            access: oauth2::AccessToken::new("a".into()),
            refresh: None,
            expires_at,
            scopes: vec![],
        };
        let margin = Duration::from_secs(60);
        assert!(tokens(None).usable(now, margin));
        assert!(tokens(Some(now + Duration::from_secs(61))).usable(now, margin));
        assert!(!tokens(Some(now + Duration::from_secs(59))).usable(now, margin));
        assert!(
            !format!("{:?}", tokens(None)).contains("\"a\""),
            "Debug never shows a token"
        );
    }
}
