//! The sign-in as the transport and the front see it (M4): the bearer of each request, the
//! answer to a 401 or 403, and what the front needs around it (the consent gate, the time
//! limit, the counters of begun and completed sign-ins). The transport and the front hold
//! this handle and never the session behind it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::challenge::Challenge;
use super::consent::Gate;
use super::outcome::SignInError;
use super::session::Session;

/// A handle to the sign-in of one URL; clones share it.
#[derive(Clone, Debug)]
pub struct TokenSource {
    session: Arc<Session>,
}

impl TokenSource {
    /// The handle of `session`.
    pub fn new(session: Arc<Session>) -> TokenSource {
        TokenSource { session }
    }

    /// The HTTP client of the sign-in; it serves the MCP requests too (it was made from the
    /// same options: its CAs are loaded once).
    pub fn http(&self) -> &reqwest::Client {
        self.session.http()
    }

    /// The access token for the next request; `None` before the first sign-in.
    pub async fn bearer(&self) -> Option<String> {
        self.session.bearer().await
    }

    /// The access token held now, without a refresh or a sign-in (the DELETE of an older
    /// server's session at the stop, L4).
    pub async fn current(&self) -> Option<String> {
        self.session.current().await
    }

    /// What to do with a 401 or 403 of a request that carried `sent` (its token, if any):
    /// refresh, sign in, or step up. Ok when the request may go once more. `interactive`:
    /// false for a request that must not start a sign-in (the listen stream).
    pub async fn answer(
        &self,
        status: u16,
        challenge: Option<Challenge>,
        sent: Option<String>,
        interactive: bool,
    ) -> Result<(), SignInError> {
        self.session
            .answer(status, challenge, sent, interactive)
            .await
    }

    /// The gate of the sign-ins: the front attaches its consent port here.
    pub fn gate(&self) -> &Gate {
        self.session.gate()
    }

    /// Changes after each completed sign-in (a listen stream refused with 401/403 opens again
    /// then).
    pub fn sign_ins(&self) -> watch::Receiver<u64> {
        self.session.sign_ins()
    }

    /// The sign-in time limit, and a receiver that changes when a sign-in begins
    /// (`server/discover` then waits `--discover-timeout` plus the limit).
    pub fn wait(&self) -> (Duration, watch::Receiver<u64>) {
        (self.session.timeout(), self.session.began())
    }
}
