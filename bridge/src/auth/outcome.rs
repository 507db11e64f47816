//! Why a sign-in did not give a token, as the requests of VS Code see it: each kind maps to
//! one cause of the error table (README "Error causes"), and its text names no URL, no token,
//! no code and no secret.

use std::time::Duration;

use super::failure::Failure;

/// The reason of a URL elicitation that did not lead to a sign-in (`data.detail` of
/// `reauthorization_required`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoQuestion {
    /// The user declined or cancelled the URL elicitation, or the client answered with an error.
    Declined,
    /// A question of the last 60 s did not lead to a sign-in.
    Cooldown,
    /// The client did not declare URL elicitation (C2).
    NoConsent,
}

impl NoQuestion {
    pub fn word(self) -> &'static str {
        match self {
            NoQuestion::Declined => "declined",
            NoQuestion::Cooldown => "cooldown",
            NoQuestion::NoConsent => "no_consent",
        }
    }
}

/// A sign-in that did not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    #[error("the sign-in did not complete in {} s", .limit.as_secs())]
    TimedOut {
        limit: Duration,
        /// The browser opener failed, so nobody saw the start URL.
        browser_failed: bool,
    },
    #[error("the client did not open the URL of the sign-in ({})", .0.word())]
    Reauthorization(NoQuestion),
    #[error("{0}")]
    Step(Failure),
    #[error("the bridge cannot listen on the redirect port {port}")]
    RedirectPort { port: u16, in_use: bool },
    #[error("the authorization URL is not valid")]
    InvalidUrl,
    #[error("the authorization server refused the access")]
    Denied,
    #[error("the authorization server sent the error {0} for the sign-in")]
    AuthorizationError(String),
    #[error("the upstream server refused the access after the sign-in (HTTP status {0})")]
    Forbidden(u16),
    #[error("the bridge runs in the sandbox of VS Code")]
    Sandbox,
    #[error("the start URL of the sign-in received a second request")]
    StartReused,
    /// A request that cannot start a sign-in (the listen stream) found no usable token.
    #[error("no usable token (HTTP status {0})")]
    NeedsSignIn(u16),
}
