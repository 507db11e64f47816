//! The Copilot runtime's start of a stdio server, a setting by runtime version: how long it
//! waits for the answer to its `server/discover`, what it does with that answer, and how long
//! it gives `initialize` (docs/harness.md, "The Copilot probe"). The frames themselves are the
//! profile's (`crate::profile`); this is the timing and the choice around them.
//!
//! The window and the budget can be scaled down for tests (`HARNESS_COPILOT_WINDOW_MS`,
//! `HARNESS_INITIALIZE_BUDGET_MS`, or the options of `harness check`), so that no test waits
//! 10 or 60 s.
use std::time::Duration;

use serde_json::Value;

use crate::profile::{AfterDiscover, COPILOT_DISCOVER_WAIT, copilot_after_discover};

/// The runtime versions whose behaviour is known (measured or reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Version {
    /// Runtime 1.0.79–1.0.82: about 0.6 s for the discover answer; -32602 aborts the start;
    /// `initialize` follows any other answer, a discover result too.
    #[value(name = "1.0.82")]
    V1_0_82,
    /// Runtime 1.0.102 (measured with the real CLI; VS Code 1.146 bundles 1.0.108): 9.8 s for
    /// the discover answer; a discover result in time takes the 2026-07-28 path; an error
    /// (-32601, -32602, -32022, any other) or no answer in time sends `initialize` on the same
    /// connection.
    #[value(name = "1.0.102")]
    V1_0_102,
}

impl Version {
    pub fn name(self) -> &'static str {
        match self {
            Version::V1_0_82 => "1.0.82",
            Version::V1_0_102 => "1.0.102",
        }
    }
}

/// How long runtime 1.0.102 waits for the discover answer.
pub const WINDOW_1_0_102: Duration = Duration::from_millis(9800);
/// The runtime's budget for `initialize`: at its end it records a failure and does not start
/// that server again in the session.
pub const INITIALIZE_BUDGET: Duration = Duration::from_secs(60);
/// The variables that scale the window and the budget down (milliseconds).
pub const WINDOW_ENV: &str = "HARNESS_COPILOT_WINDOW_MS";
pub const BUDGET_ENV: &str = "HARNESS_INITIALIZE_BUDGET_MS";

/// One runtime: its version, its discover window and its `initialize` budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    pub version: Version,
    pub window: Duration,
    pub budget: Duration,
}

impl Default for Runtime {
    /// Runtime 1.0.102 as measured, scaled by the environment where it says so.
    fn default() -> Self {
        Self::of(Version::V1_0_102).scaled(env_ms(WINDOW_ENV), env_ms(BUDGET_ENV))
    }
}

fn env_ms(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

impl Runtime {
    /// The version's own timing.
    pub fn of(version: Version) -> Self {
        let window = match version {
            Version::V1_0_82 => COPILOT_DISCOVER_WAIT,
            Version::V1_0_102 => WINDOW_1_0_102,
        };
        Self {
            version,
            window,
            budget: INITIALIZE_BUDGET,
        }
    }

    /// The same runtime with a window and a budget in milliseconds where given (tests).
    pub fn scaled(mut self, window_ms: Option<u64>, budget_ms: Option<u64>) -> Self {
        if let Some(ms) = window_ms {
            self.window = Duration::from_millis(ms);
        }
        if let Some(ms) = budget_ms {
            self.budget = Duration::from_millis(ms);
        }
        self
    }

    /// The runtime's step after `answer` (the whole response frame; `None` when none came
    /// within [`Runtime::window`]).
    pub fn after_discover(&self, answer: Option<&Value>) -> AfterDiscover {
        match self.version {
            Version::V1_0_82 => copilot_after_discover(answer),
            Version::V1_0_102 => {
                let modern = answer
                    .and_then(|a| a.pointer("/result/supportedVersions"))
                    .and_then(Value::as_array)
                    .is_some_and(|v| v.iter().any(|x| x == "2026-07-28"));
                if modern {
                    AfterDiscover::Modern
                } else {
                    AfterDiscover::Initialize
                }
            }
        }
    }
}

/// The `_meta` envelope that the runtime puts on each request of the 2026-07-28 path.
pub fn envelope() -> serde_json::Map<String, Value> {
    let v = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "copilot-cli", "version": "1.0.102"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
    });
    v.as_object().cloned().unwrap_or_default()
}

/// A request of the runtime on the 2026-07-28 path: the profile's key order and progress token
/// (`crate::profile::request`), and [`envelope`] on `_meta` (the protocol version, the client's
/// info and capabilities that the revision wants on every request, since it has no
/// `initialize`).
pub fn modern_request(id: i64, method: &str, params: serde_json::Map<String, Value>) -> Value {
    let mut frame = crate::profile::request(crate::format::Profile::Copilot, id, method, params);
    if let Some(meta) = frame
        .pointer_mut("/params/_meta")
        .and_then(Value::as_object_mut)
    {
        for (k, v) in envelope() {
            meta.entry(k).or_insert(v);
        }
    }
    frame
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn err(code: i64) -> Value {
        json!({"jsonrpc":"2.0","id":0,"error":{"code":code,"message":"m"}})
    }

    #[test]
    fn runtime_1_0_102_takes_initialize_after_every_refusal_and_the_modern_path_after_a_result() {
        let r = Runtime::of(Version::V1_0_102);
        assert_eq!(r.window, Duration::from_millis(9800));
        assert_eq!(r.budget, Duration::from_secs(60));
        for code in [-32601, -32602, -32022, -32000] {
            assert_eq!(
                r.after_discover(Some(&err(code))),
                AfterDiscover::Initialize
            );
        }
        assert_eq!(r.after_discover(None), AfterDiscover::Initialize);
        let ok = json!({"jsonrpc":"2.0","id":0,"result":{"supportedVersions":["2026-07-28"]}});
        assert_eq!(r.after_discover(Some(&ok)), AfterDiscover::Modern);
    }

    #[test]
    fn a_request_of_the_2026_07_28_path_carries_the_envelope_in_the_copilot_key_order() {
        let f = modern_request(3, "tools/list", serde_json::Map::new());
        let text = f.to_string();
        assert!(
            text.starts_with(r#"{"method":"tools/list","params":{"_meta":{"progressToken":0,"#)
        );
        assert!(text.ends_with(r#""jsonrpc":"2.0","id":3}"#));
        let meta = &f["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "copilot-cli"
        );
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"]["url"].is_object()
        );
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"]
                .get("roots")
                .is_none()
        );
    }

    #[test]
    fn runtime_1_0_82_aborts_on_invalid_params_and_scales_by_milliseconds() {
        let r = Runtime::of(Version::V1_0_82).scaled(Some(300), Some(1000));
        assert_eq!(r.after_discover(Some(&err(-32602))), AfterDiscover::Abort);
        assert_eq!(r.window, Duration::from_millis(300));
        assert_eq!(r.budget, Duration::from_millis(1000));
    }
}
