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

/// The connection-wide counter of elicitation ids: `elicitation-1`, `elicitation-2`, …
/// (2025-11-25 requires an `elicitationId` in URL mode; 2026-07-28 has none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ElicitationIds {
    issued: u64,
}

impl ElicitationIds {
    pub fn new() -> Self {
        ElicitationIds::default()
    }

    /// O1: the next elicitation id.
    pub fn next_id(&mut self) -> String {
        self.issued = self.issued.saturating_add(1);
        format!("elicitation-{}", self.issued)
    }
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

    #[test]
    fn o1_elicitation_ids_are_connection_wide() {
        let mut ids = ElicitationIds::new();
        assert_eq!(ids.next_id(), "elicitation-1");
        assert_eq!(ids.next_id(), "elicitation-2");
    }

    #[test]
    fn o1_complete_after_the_step_when_the_next_result_no_longer_asks() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        let s = steps.step_for("https://a/", &mut ids);
        assert_eq!(s.elicitation_id, "elicitation-1");
        steps.mark_accepted("elicitation-1");
        assert_eq!(steps.observe(&json!({"content": []})), ["elicitation-1"]);
        // Once only.
        assert!(steps.observe(&json!({"content": []})).is_empty());
        assert!(steps.finish().is_empty());
        // The URL asked again after its completion gets a new step and id.
        assert_eq!(
            steps.step_for("https://a/", &mut ids).elicitation_id,
            "elicitation-2"
        );
    }

    #[test]
    fn o1_a_url_asked_again_keeps_its_step_and_id() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        steps.step_for("https://a/", &mut ids);
        steps.mark_accepted("elicitation-1");
        assert!(steps.observe(&asks(&["https://a/"])).is_empty());
        let again = steps.step_for("https://a/", &mut ids);
        assert_eq!(again.elicitation_id, "elicitation-1");
        assert!(again.accepted);
        // Another URL in the next result: the first one completes.
        assert_eq!(steps.observe(&asks(&["https://b/"])), ["elicitation-1"]);
    }

    #[test]
    fn o1_declined_steps_never_complete() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        steps.step_for("https://a/", &mut ids);
        assert!(steps.observe(&json!({"content": []})).is_empty());
        assert!(steps.finish().is_empty());
        // A declined step is still open: asked again, it keeps its id.
        assert_eq!(
            steps.step_for("https://a/", &mut ids).elicitation_id,
            "elicitation-1"
        );
    }

    #[test]
    fn o1_complete_on_every_exit_path_without_a_result() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        steps.step_for("https://a/", &mut ids);
        steps.step_for("https://b/", &mut ids);
        steps.step_for("https://c/", &mut ids);
        steps.mark_accepted("elicitation-1");
        steps.mark_accepted("elicitation-3");
        assert_eq!(steps.finish(), ["elicitation-1", "elicitation-3"]);
        assert!(steps.finish().is_empty());
    }

    #[test]
    fn o1_only_the_accepted_url_completes_in_a_mixed_round() {
        let mut ids = ElicitationIds::new();
        let mut steps = UrlSteps::new();
        for u in ["https://a/", "http://localhost/", "http://[::1]/"] {
            steps.step_for(u, &mut ids);
        }
        steps.mark_accepted("elicitation-2");
        assert_eq!(
            steps.observe(&json!({"resultType": "complete"})),
            ["elicitation-2"]
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
