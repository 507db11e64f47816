//! One interactive sign-in (M4, M6): the loopback receiver listens first, the sign-in line
//! goes to stderr once, the authorization URL goes where the gate says (the browser through
//! the one-time start URL, or VS Code through a URL elicitation), and the code of the
//! redirect becomes tokens.

use std::io::Write;
use std::time::Duration;

use oauth2::CsrfToken;
use tokio::time::Instant;
use url::Url;

use super::consent::{AskFuture, Asked, Gate, Initialized, QUESTION, Route};
use super::failure::Failure;
use super::opener;
use super::outcome::{NoQuestion, SignInError};
use super::receiver::{Expect, IssuerCheck, Outcome, Receiver};
use super::tokens::{Grant, Tokens};
use crate::cli::url_rule::{Loopback, is_loopback};
use crate::log::{self, Level};

/// The prefix of the sign-in line; the line is not a log line of a scope, so that VS Code
/// users find the URL at the start of it in the Output channel.
pub const SIGN_IN_LINE: &str = "mcp-bridge-vscode: sign in at ";
/// The longest authorization URL that the bridge opens.
const MAX_URL: usize = 8192;

/// What one sign-in needs besides the grant.
pub struct Settings {
    pub redirect_port: u16,
    pub no_browser: bool,
    pub timeout: Duration,
    /// `SANDBOX_RUNTIME=1`: the sandbox of VS Code blocks the browser and the redirect port.
    pub sandbox: bool,
    /// The variables of `--header-env`, which the browser opener does not get.
    pub hidden_env: Vec<String>,
}

/// Runs one sign-in for `scopes` and returns its tokens.
pub async fn run(
    http: &reqwest::Client,
    grant: &Grant<'_>,
    scopes: &[String],
    gate: &Gate,
    settings: &Settings,
) -> Result<Tokens, SignInError> {
    let route = gate.route();
    if settings.sandbox {
        // The first sign-in (during initialize) names the need; a later one the refusal.
        let line = if route == Route::Browser {
            "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. Disable the sandbox for this server in the configuration of VS Code."
        } else {
            "The bridge runs in the sandbox of VS Code, thus it cannot start the sign-in. Disable the sandbox for this server in the configuration of VS Code."
        };
        log::bridge(Level::Warn, line);
        return Err(SignInError::Sandbox);
    }
    match route {
        Route::NoConsent => {
            log::bridge(
                Level::Info,
                "the client did not declare URL elicitation: a later sign-in fails, and a restart of the server signs in again",
            );
            return Err(SignInError::Reauthorization(NoQuestion::NoConsent));
        }
        Route::Elicit if gate.cooling() => {
            return Err(SignInError::Reauthorization(NoQuestion::Cooldown));
        }
        _ => {}
    }
    let authorization = grant.authorization(scopes).map_err(SignInError::Step)?;
    check_url(&authorization.url)?;
    let url = authorization.url.to_string();
    let receiver = Receiver::bind(settings.redirect_port).map_err(|e| {
        let port = settings.redirect_port;
        let in_use = e.kind() == std::io::ErrorKind::AddrInUse;
        let line = if in_use {
            format!(
                "Another program uses the redirect port {port}. Stop that program, or set a different port with --redirect-port."
            )
        } else {
            format!(
                "The bridge cannot listen on the redirect port {port}. Set a different port with --redirect-port."
            )
        };
        log::bridge(Level::Warn, &line);
        SignInError::RedirectPort { port, in_use }
    })?;
    sign_in_line(&url);
    let deadline = Instant::now() + settings.timeout;
    let browser = route == Route::Browser && !settings.no_browser;
    let start_token = browser.then(|| CsrfToken::new_random_len(32).secret().clone());
    let expect = Expect {
        state: authorization.state.secret().clone(),
        start: start_token.clone().map(|t| (t, url.clone())),
        issuer: IssuerCheck {
            issuer: grant.server.published_issuer.clone(),
            required: grant.server.iss_parameter_supported,
        },
    };
    let mut opener = start_token.map(|token| {
        let start = receiver.start_url(&token);
        let hidden = settings.hidden_env.clone();
        tokio::spawn(async move { opener::open(&start, &hidden).await })
    });
    let asking = match (route, gate.port()) {
        (Route::Elicit, Some(port)) => port.ask(url.clone(), QUESTION, settings.timeout),
        _ => None,
    };
    let mut elicited = asking.as_ref().map(|a| a.elicitation_id.clone());
    let mut ask: Option<AskFuture> = asking.map(|a| a.answer);
    // S1: a sign-in at the start reaches the user through VS Code too, once it is initialized
    // (a browser opener may not exist, and the sign-in line reaches only a log).
    let mut later = match (route, gate.port()) {
        (Route::Browser, Some(port)) => port.at_start(),
        _ => None,
    };
    let wait = receiver.wait(expect, deadline);
    tokio::pin!(wait);
    let mut accepted = false;
    let mut browser_failed = false;
    let outcome = loop {
        tokio::select! {
            outcome = &mut wait => break outcome,
            opened = opened(&mut opener), if opener.is_some() && later.is_some() => {
                opener = None;
                if !opened && let Some(port) = gate.port() {
                    port.answer_now();
                }
                browser_failed = !opened;
            }
            () = initialized(&mut later) => {
                later = None;
                let limit = deadline.saturating_duration_since(Instant::now());
                if let Some(asking) = gate.port().and_then(|port| port.ask(url.clone(), QUESTION, limit)) {
                    elicited = Some(asking.elicitation_id);
                    ask = Some(asking.answer);
                }
            }
            asked = asked(&mut ask) => {
                ask = None;
                accepted = asked == Asked::Accepted;
                if asked == Asked::Declined {
                    log::bridge(Level::Info, "The user declined the sign-in.");
                    gate.start_cooldown();
                    return Err(SignInError::Reauthorization(NoQuestion::Declined));
                }
            }
        }
    };
    let asked_user = route == Route::Elicit || elicited.is_some();
    let result = match outcome {
        Outcome::Code(code) => grant
            .exchange(http, code, authorization.verifier, scopes)
            .await
            .map_err(SignInError::Step),
        Outcome::WrongIssuer => {
            log::bridge(
                Level::Warn,
                "The answer of the sign-in did not name the authorization server of the upstream server (RFC 9207), thus the bridge did not use it.",
            );
            Err(SignInError::Step(Failure::WrongIssuer))
        }
        Outcome::Denied => Err(SignInError::Denied),
        Outcome::AuthorizationError(code) => Err(SignInError::AuthorizationError(code)),
        Outcome::StartReused => {
            log::bridge(
                Level::Warn,
                "The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. Another program on the host of the bridge possibly opened the URL. Restart the server to sign in again. When this occurs again on a host that other users share, use --no-browser.",
            );
            Err(SignInError::StartReused)
        }
        Outcome::TimedOut => {
            let browser_failed = match opener {
                Some(task) if task.is_finished() => !task.await.unwrap_or(true),
                _ => browser_failed,
            };
            log::bridge(
                Level::Warn,
                &format!(
                    "The sign-in did not complete in {} s.",
                    settings.timeout.as_secs()
                ),
            );
            Err(SignInError::TimedOut {
                limit: settings.timeout,
                browser_failed,
            })
        }
    };
    match &result {
        Ok(_) => gate.clear_cooldown(),
        Err(_) if asked_user => gate.start_cooldown(),
        Err(_) => {}
    }
    // VS Code hides the URL once the step is over: after an accept on every exit path (as
    // for the URL steps of the input rounds), and after a redirect that came before the answer
    // (the user opened the URL of the sign-in line).
    if (accepted || result.is_ok())
        && let (Some(id), Some(port)) = (elicited, gate.port())
    {
        port.complete(&id);
    }
    result
}

/// Whether the browser opener opened the start URL (a task that failed did not).
async fn opened(opener: &mut Option<tokio::task::JoinHandle<bool>>) -> bool {
    match opener.as_mut() {
        Some(task) => task.await.unwrap_or(false),
        None => std::future::pending().await,
    }
}

async fn initialized(later: &mut Option<Initialized>) {
    match later.as_mut() {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

async fn asked(ask: &mut Option<AskFuture>) -> Asked {
    match ask.as_mut() {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

/// The sign-in line, once per sign-in: one write on the locked stderr.
fn sign_in_line(url: &str) {
    let line = format!("{SIGN_IN_LINE}{url}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The authorization URL that the bridge hands on: https (http only to a loopback host, for
/// local servers), no fragment, no user information, a state, no parameter twice, and a
/// bounded length.
fn check_url(url: &Url) -> Result<(), SignInError> {
    // The loopback rule of the URL form and of the metadata (`localhost` included), so that a
    // local authorization server at http://localhost:<port> that discovery accepted is opened.
    let loopback = url
        .host()
        .is_some_and(|h| is_loopback(&h, Loopback::UrlForm));
    let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && loopback);
    let has_state = url
        .query_pairs()
        .any(|(k, v)| k == "state" && !v.is_empty());
    // The metadata's authorization endpoint may carry a query of its own: a preset
    // `redirect_uri`, `code_challenge` or any parameter that the bridge sets then occurs
    // twice, and a server that takes the first would send the code elsewhere or check
    // another challenge (RFC 6749 §3.1: a parameter must not occur more than once).
    let mut names: Vec<_> = url.query_pairs().map(|(k, _)| k).collect();
    let count = names.len();
    names.sort();
    names.dedup();
    let repeated = names.len() != count;
    if !scheme_ok
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
        || url.as_str().len() > MAX_URL
        || !has_state
        || repeated
    {
        log::bridge(
            Level::Warn,
            "the authorization URL is not valid, thus the bridge does not open it",
        );
        return Err(SignInError::InvalidUrl);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_checked_authorization_url_goes_out() {
        let ok = |s: &str| check_url(&Url::parse(s).expect("url")).is_ok();
        assert!(ok("https://as.example/authorize?state=abc&x=1"));
        assert!(ok("http://127.0.0.1:9/authorize?state=abc"));
        assert!(ok("http://localhost:9/authorize?state=abc"));
        assert!(ok("http://[::1]:9/authorize?state=abc"));
        assert!(!ok("http://localhost.example/authorize?state=abc"));
        assert!(
            !ok("http://as.example/authorize?state=abc"),
            "http elsewhere"
        );
        assert!(!ok("https://as.example/authorize"), "no state");
        assert!(!ok("https://as.example/authorize?state="), "empty state");
        assert!(!ok("https://as.example/authorize?state=a#frag"));
        assert!(!ok("https://u:p@as.example/authorize?state=a"));
        assert!(
            !ok("https://as.example/a?redirect_uri=http://x/&state=s&redirect_uri=http://y/"),
            "a preset redirect URI"
        );
        assert!(!ok(
            "https://as.example/a?code_challenge=x&state=s&code_challenge=y"
        ));
        assert!(
            ok("https://as.example/a?tenant=t&state=s"),
            "a query of its own"
        );
        let long = format!("https://as.example/a?state=s&x={}", "y".repeat(MAX_URL));
        assert!(!ok(&long));
    }
}
