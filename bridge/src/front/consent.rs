//! The front's side of the sign-in gate (M4, O1): before `notifications/initialized` the
//! browser (and, where VS Code declared URL elicitation, the early answer of S1 and the URL
//! elicitation once VS Code is initialized); after it a URL elicitation to VS Code (`elicitation/create` in URL mode with an
//! `elicitationId`, then `notifications/elicitation/complete` after the redirect), when VS Code
//! declared URL elicitation (C2). The port holds the connection weakly: the sign-in lives
//! longer than a connection.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::json;

use super::{Shared, State};
use crate::auth::consent::{Asked, Asking, Consent, Initialized, Route};
use crate::input::answers::ClientAnswer;
use crate::input::check::ClientCaps;
use crate::log::{self, Level};

pub(crate) struct FrontConsent {
    shared: Weak<Shared>,
}

impl FrontConsent {
    pub(crate) fn new(shared: &Arc<Shared>) -> Arc<FrontConsent> {
        Arc::new(FrontConsent {
            shared: Arc::downgrade(shared),
        })
    }
}

impl Consent for FrontConsent {
    fn route(&self) -> Route {
        let Some(shared) = self.shared.upgrade() else {
            return Route::NoConsent;
        };
        if !*shared.initialized.borrow() {
            return Route::Browser;
        }
        // S1: after the bridge's early answer, VS Code is initialized while the start (and
        // this sign-in) goes on.
        let url = match &*shared.state() {
            State::Ready { upstream, .. }
            | State::Initializing {
                upstream: Some(upstream),
                answered: true,
                ..
            } => ClientCaps::from_capabilities(upstream.capabilities()).url,
            _ => false,
        };
        if url { Route::Elicit } else { Route::NoConsent }
    }

    fn ask(&self, url: String, message: &'static str, limit: Duration) -> Option<Asking> {
        let shared = self.shared.upgrade()?;
        let elicitation_id = shared.elicitation_ids().next_id();
        let params = json!({
            "mode": "url",
            "message": message,
            "url": url,
            "elicitationId": elicitation_id,
        });
        let pending =
            shared
                .client_requests
                .send(&shared.outbox, "elicitation/create", Some(params));
        log::bridge(
            Level::Debug,
            &format!(
                "sent elicitation/create to the client as request \"{}\" for a sign-in",
                pending.id
            ),
        );
        let answer = Box::pin(async move {
            // A sign-in that ends without the answer (the request was cancelled, the redirect
            // came first, stdin ended) withdraws the question.
            // (An answered question has no entry any more: then the guard sends nothing.)
            let mut guard = Withdraw {
                shared: Arc::clone(&shared),
                id: pending.id.clone(),
                reason: "the sign-in ended",
            };
            let answer = tokio::time::timeout(limit, pending.answer).await;
            if answer.is_err() {
                guard.reason = "the sign-in did not complete in time";
            }
            drop(guard);
            match answer {
                Ok(Ok(ClientAnswer::Result(result)))
                    if result.get("action").and_then(|a| a.as_str()) == Some("accept") =>
                {
                    Asked::Accepted
                }
                _ => Asked::Declined,
            }
        });
        Some(Asking {
            elicitation_id,
            answer,
        })
    }

    fn at_start(&self) -> Option<Initialized> {
        let shared = self.shared.upgrade()?;
        // Off, nothing answers VS Code before the server: the browser alone, as before.
        shared.opts.answer_initialize_after?;
        match &*shared.state() {
            State::Initializing {
                upstream: Some(upstream),
                ..
            } if ClientCaps::from_capabilities(upstream.capabilities()).url => {}
            _ => return None,
        }
        // The wait holds no strong reference: the connection may end first.
        let mut initialized = shared.initialized.subscribe();
        Some(Box::pin(async move {
            if initialized.wait_for(|done| *done).await.is_err() {
                std::future::pending::<()>().await;
            }
        }))
    }

    fn answer_now(&self) {
        if let Some(shared) = self.shared.upgrade()
            && let State::Initializing { generation, .. } = &*shared.state()
        {
            super::early::answer_now(&shared, *generation);
        }
    }

    fn complete(&self, elicitation_id: &str) {
        if let Some(shared) = self.shared.upgrade() {
            shared.elicitation_complete(elicitation_id);
        }
    }
}

/// Withdraws an unanswered question of a sign-in when dropped: VS Code gets
/// `notifications/cancelled` for it (nothing when it was answered).
struct Withdraw {
    shared: Arc<Shared>,
    id: String,
    reason: &'static str,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        self.shared
            .client_requests
            .cancel(&self.shared.outbox, &self.id, self.reason);
    }
}
