//! The URL steps of one original request and `notifications/elicitation/complete` (O1), as a
//! pure state machine.
//!
//! A URL step exists per distinct URL per original request. Its `elicitationId` comes from a
//! connection-wide counter. When the user accepted a step, the client gets
//! `notifications/elicitation/complete` once: when a later upstream result (complete or
//! input-required) no longer asks for the URL, or when the request ends without a result
//! (error, round limit, cancellation, upstream loss) — always before the response of the
//! original request, and also after a cancellation, so that VS Code can hide the URL.

use serde_json::{Value, json};

use super::parse::is_input_required;

/// O1: the bridge's own elicitation ids (2025-11-25 requires an `elicitationId` in URL mode;
/// 2026-07-28 has none): `elicitation-<16 hex digits>-<n>`, a random part drawn for each id
/// and a connection-wide counter. No upstream server can guess one (an older server's
/// `notifications/elicitation/complete` of a bridge's id, such as the sign-in prompt's, L3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElicitationIds {
    issued: u64,
}

impl ElicitationIds {
    pub fn new() -> Self {
        ElicitationIds::default()
    }

    /// O1: the next elicitation id, unique on the connection and unpredictable.
    pub fn next_id(&mut self) -> String {
        self.issued = self.issued.saturating_add(1);
        format!(
            "elicitation-{:016x}-{}",
            random_part(self.issued),
            self.issued
        )
    }
}

/// The random part of an elicitation id: 64 bits of the system's random source. Should the
/// source fail, a hash of `n` under a key that the standard library draws from the same source
/// at its start (SipHash, a keyed pseudo-random function): still unknown to the server.
fn random_part(n: u64) -> u64 {
    getrandom::u64().unwrap_or_else(|_| {
        use std::hash::BuildHasher;
        std::collections::hash_map::RandomState::new().hash_one(n)
    })
}

/// One URL step of an original request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlStep {
    pub url: String,
    pub elicitation_id: String,
    pub accepted: bool,
    pub completed: bool,
}

/// The URL steps of one original request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlSteps {
    steps: Vec<UrlStep>,
}

impl UrlSteps {
    pub fn new() -> Self {
        UrlSteps::default()
    }

    #[cfg(test)]
    pub fn steps(&self) -> &[UrlStep] {
        &self.steps
    }

    /// The step of a URL that did not complete yet, if any.
    pub fn open_step(&self, url: &str) -> Option<&UrlStep> {
        self.steps.iter().find(|s| s.url == url && !s.completed)
    }

    /// The open step of a URL (a URL asked again while not completed keeps its step and
    /// id), or a new step with a new id (also for a URL whose step completed).
    pub fn step_for(&mut self, url: &str, ids: &mut ElicitationIds) -> UrlStep {
        if let Some(step) = self.open_step(url) {
            return step.clone();
        }
        let step = UrlStep {
            url: url.to_owned(),
            elicitation_id: ids.next_id(),
            accepted: false,
            completed: false,
        };
        self.steps.push(step.clone());
        step
    }

    /// The client accepted the step with this elicitation id.
    pub fn mark_accepted(&mut self, elicitation_id: &str) {
        if let Some(step) = self
            .steps
            .iter_mut()
            .find(|s| s.elicitation_id == elicitation_id && !s.completed)
        {
            step.accepted = true;
        }
    }

    /// A new upstream result arrived (call this BEFORE deciding on it).
    /// Returns the elicitation ids that complete now: accepted steps whose URL the result does
    /// not ask for again. Each id completes once.
    pub fn observe(&mut self, upstream_result: &Value) -> Vec<String> {
        let asked = asked_urls(upstream_result);
        self.complete_where(|s| !asked.iter().any(|u| *u == s.url))
    }

    /// The request ends (any exit path: result, error, round limit,
    /// cancellation, upstream loss). Returns the accepted steps that did not complete yet.
    pub fn finish(&mut self) -> Vec<String> {
        self.complete_where(|_| true)
    }

    fn complete_where(&mut self, pred: impl Fn(&UrlStep) -> bool) -> Vec<String> {
        let mut done = Vec::new();
        for step in &mut self.steps {
            if step.accepted && !step.completed && pred(step) {
                step.completed = true;
                done.push(step.elicitation_id.clone());
            }
        }
        done
    }
}

/// The URLs of the URL elicitations that an upstream result asks for (none for a complete
/// result). Lenient: the result is read before its checks.
pub fn asked_urls(upstream_result: &Value) -> Vec<&str> {
    if !is_input_required(upstream_result) {
        return Vec::new();
    }
    upstream_result
        .get("inputRequests")
        .and_then(Value::as_object)
        .map(|reqs| {
            reqs.values()
                .filter(|r| r.get("method").and_then(Value::as_str) == Some("elicitation/create"))
                .filter_map(|r| r.get("params"))
                .filter(|p| p.get("mode").and_then(Value::as_str) == Some("url"))
                .filter_map(|p| p.get("url").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// O1: the notification frame `notifications/elicitation/complete`.
pub fn elicitation_complete(elicitation_id: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": elicitation_id}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asks(urls: &[&str]) -> Value {
        let reqs: serde_json::Map<String, Value> = urls
            .iter()
            .enumerate()
            .map(|(i, u)| {
                (
                    format!("k{i}"),
                    json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": u}}),
                )
            })
            .collect();
        json!({"resultType": "input_required", "inputRequests": reqs})
    }

    /// The counter of an id of the form `elicitation-<16 hex digits>-<n>`.
    fn counter_of(id: &str) -> Option<u64> {
        let rest = id.strip_prefix("elicitation-")?;
        let (random, n) = rest.split_once('-')?;
        let hex = random.len() == 16 && random.chars().all(|c| c.is_ascii_hexdigit());
        hex.then(|| n.parse().ok()).flatten()
    }

    #[test]
    fn o1_elicitation_ids_are_connection_wide() {
        let mut ids = ElicitationIds::new();
        assert_eq!(counter_of(&ids.next_id()), Some(1));
        assert_eq!(counter_of(&ids.next_id()), Some(2));
    }

    #[test]
    fn o1_l3_elicitation_ids_carry_a_random_part() {
        // Two connections (or two ids) never share the id that a server could guess: the
        // random parts differ (64 bits each: equal by chance once in 2^64).
        let first = ElicitationIds::new().next_id();
        let other = ElicitationIds::new().next_id();
        assert_eq!(counter_of(&first), Some(1));
        assert_eq!(counter_of(&other), Some(1));
        assert_ne!(first, other);
        assert_ne!(first, "elicitation-1");
        let mut ids = ElicitationIds::new();
        let a = ids.next_id();
        let b = ids.next_id();
        assert_ne!(a[..28], b[..28], "{a} {b}");
    }

    #[test]
    fn o1_complete_after_the_step_when_the_next_result_no_longer_asks() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let s = steps.step_for("https://a/", &mut ids);
        let first = s.elicitation_id;
        assert_eq!(counter_of(&first), Some(1));
        steps.mark_accepted(&first);
        assert_eq!(
            steps.observe(&json!({"content": []})),
            std::slice::from_ref(&first)
        );
        // Once only.
        assert!(steps.observe(&json!({"content": []})).is_empty());
        assert!(steps.finish().is_empty());
        // The URL asked again after its completion gets a new step and id.
        let again = steps.step_for("https://a/", &mut ids).elicitation_id;
        assert_eq!(counter_of(&again), Some(2));
        assert_ne!(again, first);
    }

    #[test]
    fn o1_a_url_asked_again_keeps_its_step_and_id() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let first = steps.step_for("https://a/", &mut ids).elicitation_id;
        steps.mark_accepted(&first);
        assert!(steps.observe(&asks(&["https://a/"])).is_empty());
        let again = steps.step_for("https://a/", &mut ids);
        assert_eq!(again.elicitation_id, first);
        assert!(again.accepted);
        // Another URL in the next result: the first one completes.
        assert_eq!(steps.observe(&asks(&["https://b/"])), [first]);
    }

    #[test]
    fn o1_declined_steps_never_complete() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let first = steps.step_for("https://a/", &mut ids).elicitation_id;
        assert!(steps.observe(&json!({"content": []})).is_empty());
        assert!(steps.finish().is_empty());
        // A declined step is still open: asked again, it keeps its id.
        assert_eq!(steps.step_for("https://a/", &mut ids).elicitation_id, first);
    }

    #[test]
    fn o1_complete_on_every_exit_path_without_a_result() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let a = steps.step_for("https://a/", &mut ids).elicitation_id;
        steps.step_for("https://b/", &mut ids);
        let c = steps.step_for("https://c/", &mut ids).elicitation_id;
        steps.mark_accepted(&a);
        steps.mark_accepted(&c);
        assert_eq!(steps.finish(), [a, c]);
        assert!(steps.finish().is_empty());
    }

    #[test]
    fn o1_only_the_accepted_url_completes_in_a_mixed_round() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let ids: Vec<String> = ["https://a/", "http://localhost/", "http://[::1]/"]
            .iter()
            .map(|u| steps.step_for(u, &mut ids).elicitation_id)
            .collect();
        steps.mark_accepted(&ids[1]);
        assert_eq!(
            steps.observe(&json!({"resultType": "complete"})),
            [ids[1].clone()]
        );
    }

    #[test]
    fn o1_asked_urls_is_lenient() {
        assert!(
            asked_urls(&json!({"resultType": "input_required", "inputRequests": []})).is_empty()
        );
        assert!(asked_urls(&json!({"resultType": "input_required"})).is_empty());
        assert!(asked_urls(&json!({"inputRequests": {"a": {"method": "elicitation/create", "params": {"mode": "url", "url": "u"}}}})).is_empty());
        assert_eq!(asked_urls(&asks(&["u"])), ["u"]);
        assert!(asked_urls(&json!({"resultType": "input_required", "inputRequests": {"a": {"method": "elicitation/create", "params": {"mode": "form", "url": "u"}}}})).is_empty());
    }

    #[test]
    fn o1_complete_notification_frame() {
        assert_eq!(
            elicitation_complete("elicitation-7").to_string(),
            r#"{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"elicitation-7"}}"#
        );
    }
}
