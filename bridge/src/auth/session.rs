//! The sign-in state of one upstream URL for the life of the process: the stored sign-in, the
//! metadata and the client found for it, the gate, and the count of completed sign-ins (a
//! listen stream refused with 401/403 opens again after the next one).
//!
//! The HTTP transport asks [`Session::bearer`] before each request and [`Session::answer`]
//! after a 401 or 403. One lock keeps the state: a request that arrives during a sign-in waits
//! for it and then uses its token, so that concurrent refusals lead to one sign-in.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use oauth2::{AccessToken, RefreshToken};
use tokio::sync::{Mutex, watch};
use url::Url;

use super::challenge::Challenge;
use super::consent::Gate;
use super::failure::Failure;
use super::flow::{self, Settings};
use super::metadata::{self, Resource, Server};
use super::outcome::SignInError;
use super::registration::{ClientChoice, Registration, TokenAuth, register};
use super::store::{Record, TokenStore};
use super::tokens::{Grant, Tokens, valid_beyond};
use crate::log::{self, Level};

/// A token that expires within this margin is not used (docs/sign-in.md: one minute).
pub const MARGIN: Duration = Duration::from_secs(60);

/// What the session is made of.
pub struct SessionOptions {
    pub mcp: Url,
    pub settings: Settings,
    pub choice: ClientChoice,
    /// The key of the stored sign-in ([`super::identity::storage_key`]).
    pub key: String,
    pub store: Arc<dyn TokenStore>,
}

/// The metadata and the client of the bridge at the authorization server.
struct Found {
    resource: Resource,
    server: Server,
    registration: Registration,
}

impl Found {
    fn grant<'a>(&'a self, redirect_uri: &'a str) -> Grant<'a> {
        Grant {
            server: &self.server,
            registration: &self.registration,
            redirect_uri,
            resource: &self.resource.resource,
        }
    }
}

#[derive(Default)]
struct Inner {
    record: Option<Record>,
    found: Option<Found>,
}

impl Inner {
    fn usable(&self) -> Option<&Record> {
        self.record.as_ref().filter(|r| usable(r))
    }
}

fn usable(record: &Record) -> bool {
    valid_beyond(record.expiry(), SystemTime::now(), MARGIN)
}

/// The sign-in of one upstream URL.
pub struct Session {
    http: reqwest::Client,
    opts: SessionOptions,
    inner: Mutex<Inner>,
    gate: Gate,
    answered: watch::Sender<u64>,
    /// Changes when an interactive sign-in begins.
    began: watch::Sender<u64>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// Reads the stored sign-in (at start, before the runtime serves requests).
    pub fn new(http: reqwest::Client, opts: SessionOptions) -> Session {
        let record = match opts.store.load(&opts.key) {
            Ok(record) => record,
            Err(e) => {
                log::bridge(
                    Level::Warn,
                    &format!("the stored sign-in cannot be read: {e}"),
                );
                None
            }
        };
        // A stored sign-in is used only for the resource it was obtained for: at the start,
        // before any metadata, that resource must be one the rule can give this URL.
        let record =
            record.filter(|r| for_this_resource(r, &super::discovery::resources_of(&opts.mcp)));
        Session {
            http,
            opts,
            inner: Mutex::new(Inner {
                record,
                found: None,
            }),
            gate: Gate::default(),
            answered: watch::channel(0).0,
            began: watch::channel(0).0,
        }
    }

    /// The HTTP client of the sign-in (the CAs and proxies of the URL form).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The gate of the sign-ins (the front attaches its consent port here).
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The sign-in time limit (`--sign-in-timeout`).
    pub fn timeout(&self) -> Duration {
        self.opts.settings.timeout
    }

    /// Changes when an interactive sign-in begins (`server/discover` then waits longer).
    pub fn began(&self) -> watch::Receiver<u64> {
        self.began.subscribe()
    }

    /// Changes after each completed sign-in.
    pub fn sign_ins(&self) -> watch::Receiver<u64> {
        self.answered.subscribe()
    }

    /// The access token for the next request: the stored one, refreshed when it expires
    /// within the margin and a refresh token exists. `None` before the first sign-in.
    pub async fn bearer(&self) -> Option<String> {
        let mut inner = self.inner.lock().await;
        if let Some(record) = inner.usable() {
            return Some(record.access_token.clone());
        }
        if inner.record.as_ref()?.refresh_token.is_some() {
            let _ = self.refresh(&mut inner, &Challenge::default()).await;
        }
        // Without a new token, the old one serves until it expires (a server with short
        // tokens and no refresh would else need a sign-in for each request).
        inner
            .record
            .as_ref()
            .filter(|r| r.expiry().is_none_or(|at| at > SystemTime::now()))
            .map(|r| r.access_token.clone())
    }

    /// The access token held now, as it is: no refresh and no sign-in starts from here, even
    /// when it expires within the margin (L4: the DELETE of a session at the stop, which must
    /// stay within its bound). `None` without a token, or with one whose expiry has passed.
    pub async fn current(&self) -> Option<String> {
        let inner = self.inner.lock().await;
        inner
            .record
            .as_ref()
            .filter(|r| r.expiry().is_none_or(|at| at > SystemTime::now()))
            .map(|r| r.access_token.clone())
    }

    /// Answers a 401 or 403 of a request that carried `sent` (its token, if any): refresh,
    /// sign in, or step up (403 `insufficient_scope`: the union of the scopes). Ok when the
    /// request may go once more. `interactive`: false for a request that must not start a
    /// sign-in (the listen stream), which only refreshes.
    pub async fn answer(
        &self,
        status: u16,
        challenge: Option<Challenge>,
        sent: Option<String>,
        interactive: bool,
    ) -> Result<(), SignInError> {
        let mut inner = self.inner.lock().await;
        let challenge = challenge.unwrap_or_default();
        let current = inner.record.as_ref().map(|r| r.access_token.as_str());
        if current != sent.as_deref() && inner.usable().is_some() {
            // Another request signed in while this one waited.
            return Ok(());
        }
        let step_up = status == 403;
        if step_up && !challenge.is_insufficient_scope() {
            return Err(SignInError::Forbidden(status));
        }
        if !step_up && sent.is_some() {
            // A token was refused: the protected resource metadata may name another
            // authorization server now (SEP-2352), so discovery runs again. A client of that
            // server must not go to another one; the stored client is reused only at the
            // issuer that registered it (find_for).
            inner.found = None;
        }
        let can_refresh = inner
            .record
            .as_ref()
            .is_some_and(|r| r.refresh_token.is_some());
        if !step_up && can_refresh && self.refresh(&mut inner, &challenge).await.is_ok() {
            return Ok(());
        }
        if !interactive {
            return Err(SignInError::NeedsSignIn(status));
        }
        // Discovery before the scopes: without a scope in the challenge, a first sign-in asks
        // for the `scopes_supported` of the protected resource metadata, which only discovery
        // knows (the MCP specification's scope selection).
        self.find(&mut inner, &challenge)
            .await
            .map_err(SignInError::Step)?;
        let scopes = scopes_for(&inner, &challenge, step_up);
        let Some(found) = inner.found.as_ref() else {
            return Err(SignInError::Step(Failure::RegistrationUnavailable));
        };
        let redirect = super::identity::redirect_uri(self.opts.settings.redirect_port);
        let grant = found.grant(&redirect);
        self.began.send_modify(|n| *n += 1);
        let tokens =
            flow::run(&self.http, &grant, &scopes, &self.gate, &self.opts.settings).await?;
        let record = record_of(found, tokens);
        self.keep(&mut inner, record).await;
        self.answered.send_modify(|n| *n += 1);
        Ok(())
    }

    /// The refresh grant with the stored refresh token; the new tokens are saved.
    async fn refresh(&self, inner: &mut Inner, challenge: &Challenge) -> Result<(), Failure> {
        let Some(record) = inner.record.clone() else {
            return Err(Failure::TokenRefused("no refresh token".into()));
        };
        let Some(refresh) = record.refresh_token.clone() else {
            return Err(Failure::TokenRefused("no refresh token".into()));
        };
        if inner.found.is_none() {
            self.find_for(inner, challenge, Some(&record)).await?;
        }
        if inner.record.is_none() {
            // Discovery found another resource: this refresh token is not for it.
            return Err(Failure::TokenRefused("another resource".into()));
        }
        let Some(found) = inner.found.as_ref() else {
            return Err(Failure::RegistrationUnavailable);
        };
        if found.server.issuer.as_str() != record.issuer {
            // A refresh token goes only to the issuer that issued it (docs/sign-in.md, "Bound
            // to the issuer"): the metadata names another authorization server now, so the
            // next sign-in is there, and this refresh token is of no use any more.
            log::bridge(
                Level::Info,
                "the protected resource metadata names another authorization server than the one of the stored sign-in: the bridge signs in anew",
            );
            if let Some(record) = &mut inner.record {
                record.refresh_token = None;
            }
            return Err(Failure::TokenRefused("another authorization server".into()));
        }
        let redirect = super::identity::redirect_uri(self.opts.settings.redirect_port);
        let grant = found.grant(&redirect);
        let tokens = grant
            .refresh(&self.http, &RefreshToken::new(refresh), &record.scopes)
            .await;
        match tokens {
            Ok(tokens) => {
                let record = record_of(found, tokens);
                self.keep(inner, record).await;
                log::bridge(Level::Debug, "refreshed the access token");
                Ok(())
            }
            Err(e) => {
                log::bridge(
                    Level::Info,
                    &format!("the refresh of the token failed: {e}"),
                );
                if e == Failure::TokenRefused("invalid_client".into()) {
                    // The authorization server forgot the client: the next sign-in registers
                    // again, and the refresh token of the old client is of no use.
                    inner.found = None;
                    if let Some(record) = &mut inner.record {
                        record.refresh_token = None;
                        record.client_id.clear();
                    }
                }
                Err(e)
            }
        }
    }

    async fn find(&self, inner: &mut Inner, challenge: &Challenge) -> Result<(), Failure> {
        if inner.found.is_some() {
            return Ok(());
        }
        let record = inner.record.clone();
        self.find_for(inner, challenge, record.as_ref()).await
    }

    /// The metadata of the resource and its authorization server, and the client: the stored
    /// client when the stored sign-in is for the same authorization server, else a new
    /// registration.
    async fn find_for(
        &self,
        inner: &mut Inner,
        challenge: &Challenge,
        stored: Option<&Record>,
    ) -> Result<(), Failure> {
        let resource = match metadata::resource(&self.http, &self.opts.mcp, challenge).await? {
            Some(resource) => resource,
            None => {
                log::bridge(
                    Level::Info,
                    "the upstream server has no protected resource metadata: the bridge asks for the authorization server metadata at its origin (revision 2025-03-26)",
                );
                metadata::resource_at_origin(&self.opts.mcp)
            }
        };
        // The tokens of a stored sign-in go only to the resource of the accepted metadata
        // (RFC 8707): for another one, the next sign-in replaces them.
        if let Some(record) = &inner.record
            && !for_this_resource(record, std::slice::from_ref(&resource.resource))
        {
            inner.record = None;
        }
        let Some(issuer) = resource.authorization_servers.first().cloned() else {
            return Err(Failure::Discovery(
                "the protected resource metadata names no authorization server".into(),
            ));
        };
        let server = metadata::server(&self.http, &issuer).await?;
        let redirect = super::identity::redirect_uri(self.opts.settings.redirect_port);
        let reused = stored
            .filter(|r| {
                r.issuer == server.issuer.as_str()
                    && !r.client_id.is_empty()
                    && self.opts.choice.client_id.is_none()
            })
            .map(stored_client);
        let registration = match reused {
            Some(registration) => registration,
            None => register(&self.http, &server, &self.opts.choice, &redirect).await?,
        };
        inner.found = Some(Found {
            resource,
            server,
            registration,
        });
        Ok(())
    }

    /// Keeps a new record in memory and in the store (a failed save is a warning: the tokens
    /// still serve this process).
    async fn keep(&self, inner: &mut Inner, record: Record) {
        let store = Arc::clone(&self.opts.store);
        let key = self.opts.key.clone();
        let saved = record.clone();
        let outcome = tokio::task::spawn_blocking(move || store.save(&key, &saved)).await;
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => log::bridge(Level::Warn, &format!("the sign-in was not stored: {e}")),
            Err(_) => log::bridge(Level::Warn, "the sign-in was not stored"),
        }
        inner.record = Some(record);
    }
}

/// Whether `record` was obtained for one of `resources`; a line says when it was not.
fn for_this_resource(record: &Record, resources: &[String]) -> bool {
    let fits = resources.contains(&record.resource);
    if !fits {
        let resource: String = record.resource.chars().take(256).collect();
        log::bridge(
            Level::Info,
            &format!(
                "the stored sign-in is for the resource {resource:?}, not for the upstream server: the bridge signs in anew"
            ),
        );
    }
    fits
}

/// The scopes of a sign-in: the challenge's; for a step-up, their union with the granted
/// ones.
fn scopes_for(inner: &Inner, challenge: &Challenge, step_up: bool) -> Vec<String> {
    let mut scopes: Vec<String> = Vec::new();
    if step_up && let Some(record) = &inner.record {
        scopes.extend(record.scopes.iter().cloned());
    }
    let asked = challenge
        .scope
        .as_deref()
        .map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .or_else(|| {
            inner
                .found
                .as_ref()
                .map(|f| f.resource.scopes_supported.clone())
        })
        .unwrap_or_default();
    for scope in asked {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    scopes
}

/// The client of a stored sign-in.
fn stored_client(record: &Record) -> Registration {
    Registration {
        client_id: record.client_id.clone(),
        auth: match &record.registered_secret {
            Some(secret) => TokenAuth::Basic(oauth2::ClientSecret::new(secret.clone())),
            None => TokenAuth::None,
        },
        dynamic: record.registered_secret.is_some(),
        method: record.registered_method.clone(),
    }
}

fn record_of(found: &Found, tokens: Tokens) -> Record {
    let secret = match (&found.registration.auth, found.registration.dynamic) {
        (TokenAuth::Basic(secret), true) => Some(secret.secret().clone()),
        _ => None,
    };
    Record {
        issuer: found.server.issuer.to_string(),
        resource: found.resource.resource.clone(),
        client_id: found.registration.client_id.clone(),
        registered_secret: secret,
        registered_method: found
            .registration
            .dynamic
            .then(|| found.registration.method.clone())
            .flatten(),
        access_token: AccessToken::secret(&tokens.access).clone(),
        refresh_token: tokens.refresh.map(|r| r.secret().clone()),
        expires_at: tokens.expires_at.map(Record::seconds),
        scopes: tokens.scopes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(scopes: &[&str]) -> Record {
        Record {
            issuer: "https://as.example/".into(),
            resource: "https://mcp.example/mcp".into(),
            client_id: "c".into(),
            registered_secret: None,
            registered_method: None,
            access_token: "t".into(),
            refresh_token: None,
            expires_at: None,
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn m4_step_up_asks_for_the_union_of_the_granted_and_the_challenged_scopes() {
        let inner = Inner {
            record: Some(record(&["mcp:read"])),
            found: None,
        };
        let challenge = Challenge {
            scope: Some("mcp:write mcp:read".into()),
            error: Some("insufficient_scope".into()),
            ..Default::default()
        };
        assert_eq!(
            scopes_for(&inner, &challenge, true),
            vec!["mcp:read", "mcp:write"]
        );
        assert_eq!(
            scopes_for(&inner, &challenge, false),
            vec!["mcp:write", "mcp:read"],
            "a first sign-in asks for the challenge's scopes"
        );
    }

    #[test]
    fn without_a_scope_in_the_challenge_the_metadata_scopes_are_asked() {
        let u = |s: &str| url::Url::parse(s).expect("url");
        let inner = Inner {
            record: None,
            found: Some(Found {
                resource: Resource {
                    resource: "https://mcp.example/mcp".into(),
                    authorization_servers: vec![u("https://as.example")],
                    scopes_supported: vec!["mcp:read".into(), "mcp:write".into()],
                },
                server: crate::auth::metadata::parse_server(
                    &serde_json::json!({"issuer":"https://as.example",
                        "authorization_endpoint":"https://as.example/a",
                        "token_endpoint":"https://as.example/t",
                        "code_challenge_methods_supported":["S256"]}),
                    &u("https://as.example"),
                )
                .expect("server"),
                registration: Registration {
                    client_id: "c".into(),
                    auth: TokenAuth::None,
                    dynamic: false,
                    method: None,
                },
            }),
        };
        assert_eq!(
            scopes_for(&inner, &Challenge::default(), false),
            vec!["mcp:read", "mcp:write"]
        );
    }

    #[test]
    fn m4_a_token_within_a_minute_of_its_expiry_is_not_usable() {
        let mut r = record(&[]);
        assert!(usable(&r), "no expiry");
        r.expires_at = Some(Record::seconds(SystemTime::now() + Duration::from_secs(30)));
        assert!(!usable(&r));
        r.expires_at = Some(Record::seconds(
            SystemTime::now() + Duration::from_secs(120),
        ));
        assert!(usable(&r));
    }
}
