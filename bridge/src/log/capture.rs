//! The bridge's log lines of the test that runs on this thread (an in-process bridge on the
//! test's current-thread runtime), for the unit tests that read the lines of a bridge.
//!
//! One global subscriber serves the whole test binary. A thread-local one
//! (`tracing::subscriber::set_default`) loses lines when tests run side by side: a test on
//! a thread without a subscriber that meets one of the bridge's log callsites first makes
//! tracing cache that nobody wants it.

use std::sync::{Mutex, MutexGuard, Once};
use std::thread::{self, ThreadId};

use super::LineLayer;
use tracing_subscriber::layer::SubscriberExt;

/// The text of each thread that collects its lines.
static LINES: Mutex<Vec<(ThreadId, String)>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

fn lines() -> MutexGuard<'static, Vec<(ThreadId, String)>> {
    LINES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The lines of this thread from [`capture`] on.
pub struct Captured(ThreadId);

/// Starts to collect the lines of this thread.
pub fn capture() -> Captured {
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::registry().with(LineLayer::with_sink(|line| {
            let me = thread::current().id();
            if let Some((_, text)) = lines().iter_mut().find(|(id, _)| *id == me) {
                text.push_str(&String::from_utf8_lossy(line));
            }
        }));
        // Only this helper installs a subscriber in the tests.
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
    let me = thread::current().id();
    let mut all = lines();
    all.retain(|(id, _)| *id != me);
    all.push((me, String::new()));
    Captured(me)
}

impl Captured {
    /// The lines collected so far, each with its newline.
    pub fn text(&self) -> String {
        lines()
            .iter()
            .find(|(id, _)| *id == self.0)
            .map(|(_, text)| text.clone())
            .unwrap_or_default()
    }
}
