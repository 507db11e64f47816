//! The gate of a sign-in (M4, O1): where the authorization URL may go, asked of the front
//! through [`Consent`] (this module never imports the front), and the 60 s cooldown after a
//! question that did not lead to a sign-in.
//!
//! Before `notifications/initialized` the browser opens (or, with `--no-browser`, only the
//! sign-in line is written); when VS Code declared URL elicitation, it also gets the URL
//! elicitation once it is initialized after the early answer of S1 (at once when the browser
//! did not open).
//! After it, the bridge never opens a browser on its own: VS Code
//! gets a URL elicitation with the authorization URL, when it declared URL elicitation.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::sync::lock;

/// How long a question that did not lead to a sign-in keeps the bridge from asking again.
pub const COOLDOWN: Duration = Duration::from_secs(60);

/// Where the authorization URL of a sign-in goes now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Before `notifications/initialized`: the browser with the one-time start URL.
    Browser,
    /// After it: a URL elicitation to VS Code.
    Elicit,
    /// After it, and VS Code did not declare URL elicitation: the sign-in fails at once.
    NoConsent,
}

/// The answer of VS Code to the URL elicitation of a sign-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    /// VS Code opened the URL.
    Accepted,
    /// Declined, cancelled, an error or no answer in time.
    Declined,
}

pub type AskFuture = Pin<Box<dyn Future<Output = Asked> + Send>>;

/// A URL elicitation that VS Code has received: its `elicitationId` (the redirect completes
/// it, also when the user opened the URL of the sign-in line before answering) and the wait
/// for the answer.
pub struct Asking {
    pub elicitation_id: String,
    pub answer: AskFuture,
}

/// The port that the front implements.
pub trait Consent: Send + Sync {
    fn route(&self) -> Route;
    /// Sends VS Code a URL elicitation with `url` and `message` now; its answer is awaited at
    /// most `limit`. `None` when the connection is gone.
    fn ask(&self, url: String, message: &'static str, limit: Duration) -> Option<Asking>;
    /// Tells VS Code that the URL step `elicitation_id` is complete.
    fn complete(&self, elicitation_id: &str);
    /// S1: a sign-in begins before VS Code is initialized. Where VS Code declared URL
    /// elicitation and the early answer is on, the future resolves once VS Code is initialized
    /// (after the early answer, or the server's own): the sign-in then asks VS Code too.
    /// `None`: the browser and the sign-in line alone, as before.
    fn at_start(&self) -> Option<Initialized>;
    /// S1: the browser did not open: the front answers `initialize` now rather than after
    /// `--answer-initialize-after`, so that VS Code can be asked sooner.
    fn answer_now(&self);
}

/// Resolves once VS Code sent `notifications/initialized` (never, when the connection ends
/// first).
pub type Initialized = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The text of the URL elicitation of a sign-in.
pub const QUESTION: &str = "The upstream server needs a new sign-in. Open the URL and sign in at the authorization server.";

/// The consent port of a connection (set by the front when it serves), and the cooldown.
#[derive(Default)]
pub struct Gate {
    port: Mutex<Option<Arc<dyn Consent>>>,
    cooldown_until: Mutex<Option<Instant>>,
}

impl Gate {
    pub fn attach(&self, port: Arc<dyn Consent>) {
        *lock(&self.port) = Some(port);
    }

    /// The port; without one (no front attached) only the browser route exists.
    pub fn port(&self) -> Option<Arc<dyn Consent>> {
        lock(&self.port).clone()
    }

    pub fn route(&self) -> Route {
        self.port().map_or(Route::Browser, |p| p.route())
    }

    /// True while a question of the last 60 s keeps the bridge from asking.
    pub fn cooling(&self) -> bool {
        lock(&self.cooldown_until).is_some_and(|until| Instant::now() < until)
    }

    /// A question that did not lead to a sign-in.
    pub fn start_cooldown(&self) {
        *lock(&self.cooldown_until) = Some(Instant::now() + COOLDOWN);
    }

    /// A sign-in completed: the next question may come at once.
    pub fn clear_cooldown(&self) {
        *lock(&self.cooldown_until) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Route);
    impl Consent for Fixed {
        fn route(&self) -> Route {
            self.0
        }
        fn ask(&self, _: String, _: &'static str, _: Duration) -> Option<Asking> {
            None
        }
        fn complete(&self, _: &str) {}
        fn at_start(&self) -> Option<Initialized> {
            None
        }
        fn answer_now(&self) {}
    }

    #[tokio::test(start_paused = true)]
    async fn m4_the_cooldown_lasts_60_s_and_a_sign_in_clears_it() {
        let gate = Gate::default();
        assert_eq!(gate.route(), Route::Browser, "no front: the browser");
        gate.attach(Arc::new(Fixed(Route::Elicit)));
        assert_eq!(gate.route(), Route::Elicit);
        assert!(!gate.cooling());
        gate.start_cooldown();
        assert!(gate.cooling());
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(gate.cooling());
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(!gate.cooling(), "over after 60 s");
        gate.start_cooldown();
        gate.clear_cooldown();
        assert!(!gate.cooling());
    }
}
