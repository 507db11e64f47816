//! `--revision 2025-11-25`: the fixture as a stateful server of revision 2025-11-25, the era
//! of most MCP servers in use (docs/fixture.md). The bridge meets it behind its detection of an
//! older upstream: `server/discover` gets -32601, and the session starts with `initialize`.
//!
//! The fixture's one `ServerHandler` (`crate::server`) serves both revisions; this module has
//! what differs: the revisions with an `initialize` handshake, the capabilities without
//! extensions, the session's resource subscriptions, and the tools ([`tools`]) whose input
//! requests are server-initiated requests (`elicitation/create` in form and URL mode,
//! `sampling/createMessage`, `roots/list`, `ping`) sent through rmcp's `Peer` while the call
//! waits, whose list changes and resource updates are session notifications. rmcp runs the
//! lifecycle (`initialize`, `notifications/initialized`, cancellation).
pub mod tools;

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::{
    JsonObject, PromptsCapability, ProtocolVersion, ResourcesCapability, ServerCapabilities,
    ToolsCapability,
};

use crate::sync::lock;

/// The revisions that the older fixture speaks: those with an `initialize` handshake. It
/// answers `initialize` with the client's revision when it is one of these.
pub const REVISIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// The prompts of the 2026-07-28 fixture that need an input round, which this revision has
/// not: the fixture's own, and the conformance prompt of a 2026-07-28 scenario.
pub const ROUND_PROMPTS: &[&str] = &["ask_name", "test_input_required_result_prompt"];

/// The state of a session of revision 2025-11-25 beyond the shared `State`.
#[derive(Default)]
pub struct Older {
    /// The URIs of `resources/subscribe` (the session's own subscriptions).
    subscribed: Mutex<HashSet<String>>,
}

impl Older {
    pub fn subscribe(&self, uri: String) {
        lock(&self.subscribed).insert(uri);
    }

    pub fn unsubscribe(&self, uri: &str) {
        lock(&self.subscribed).remove(uri);
    }

    pub fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscribed).contains(uri)
    }
}

/// The capabilities of revision 2025-11-25, which 2026-07-28 shares (it adds the MCP Apps
/// extension, `crate::server`): logging, completions, the three lists with their changes, and
/// resource subscriptions.
pub fn capabilities() -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::default();
    capabilities.logging = Some(JsonObject::new());
    capabilities.completions = Some(JsonObject::new());
    let mut prompts = PromptsCapability::default();
    prompts.list_changed = Some(true);
    capabilities.prompts = Some(prompts);
    let mut resources = ResourcesCapability::default();
    resources.subscribe = Some(true);
    resources.list_changed = Some(true);
    capabilities.resources = Some(resources);
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(true);
    capabilities.tools = Some(tools);
    capabilities
}
