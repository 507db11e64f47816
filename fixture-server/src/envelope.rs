//! The per-request `_meta` envelope of revision 2026-07-28.
//!
//! rmcp refuses a request without `io.modelcontextprotocol/protocolVersion` and
//! `io.modelcontextprotocol/clientCapabilities` (-32602) once the session uses the inline
//! lifecycle. This module reads the rest: the log level of the request (O5) and the client
//! capabilities that decide which input requests the fixture may send (C2, O1 to O3).
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::ErrorCode;
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::state::State;

const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The log levels from the lowest to the highest (RFC 5424 order).
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The code of `MissingRequiredClientCapabilityError`.
pub const MISSING_CAPABILITY: i32 = -32021;

/// Refuses a request whose `_meta` has a log level that is not a level (-32602, as the
/// logging page of the specification asks).
pub fn check(context: &RequestContext<RoleServer>) -> Result<(), McpError> {
    match context.meta.0.get(LOG_LEVEL) {
        None => Ok(()),
        Some(Value::String(level)) if LEVELS.contains(&level.as_str()) => Ok(()),
        Some(other) => Err(McpError::invalid_params(
            format!("the log level {other} of the request is not a log level"),
            None,
        )),
    }
}

/// The position in [`LEVELS`] of the lowest level that the client wants for this request (O5).
/// Without a level in `_meta`, a request of revision 2026-07-28 gets no log message; a session
/// that began with `initialize` uses the level of `logging/setLevel`.
pub fn log_level(state: &State, context: &RequestContext<RoleServer>) -> Option<usize> {
    let level = match context.meta.0.get(LOG_LEVEL) {
        Some(Value::String(level)) => Some(level.clone()),
        Some(_) => None,
        None if context.meta.protocol_version().is_none() => state
            .legacy_level()
            .and_then(|level| serde_json::to_value(level).ok())
            .and_then(|value| value.as_str().map(str::to_string)),
        None => None,
    }?;
    LEVELS.iter().position(|known| *known == level)
}

/// The client capabilities of one request, as JSON.
pub struct Capabilities(Value);

impl Capabilities {
    /// The capabilities in `_meta`; in a session that began with `initialize`, those of
    /// `initialize`.
    pub fn of(context: &RequestContext<RoleServer>) -> Self {
        if let Some(value) = context.meta.0.get(CLIENT_CAPABILITIES) {
            return Self(value.clone());
        }
        let legacy = context
            .peer
            .peer_info()
            .and_then(|info| serde_json::to_value(&info.capabilities).ok());
        Self(legacy.unwrap_or(Value::Null))
    }

    fn has(&self, pointer: &str) -> bool {
        self.0.pointer(pointer).is_some_and(|v| !v.is_null())
    }

    /// Form elicitation: `elicitation.form`, or an `elicitation` object without any mode (the
    /// specification reads an empty `elicitation` as form mode).
    pub fn form(&self) -> bool {
        self.has("/elicitation/form")
            || (self.has("/elicitation")
                && !self.has("/elicitation/url")
                && !self.has("/elicitation/form"))
    }

    /// URL elicitation: `elicitation.url`.
    pub fn url(&self) -> bool {
        self.has("/elicitation/url")
    }

    /// Sampling: `sampling`.
    pub fn sampling(&self) -> bool {
        self.has("/sampling")
    }

    /// Sampling with tools: `sampling.tools`.
    pub fn sampling_tools(&self) -> bool {
        self.has("/sampling/tools")
    }

    /// Roots: `roots`.
    pub fn roots(&self) -> bool {
        self.has("/roots")
    }
}

/// The error -32021 of a capability that the client did not declare (C2: VS Code's Copilot
/// harness declares no roots, and the bridge forwards this error).
pub fn missing(what: &str, required: Value) -> McpError {
    McpError::new(
        ErrorCode(MISSING_CAPABILITY),
        format!("Missing required client capability: {what}"),
        Some(json!({ "requiredCapabilities": required })),
    )
}

/// Requires form elicitation.
pub fn need_form(caps: &Capabilities) -> Result<(), McpError> {
    if caps.form() {
        Ok(())
    } else {
        Err(missing(
            "elicitation.form",
            json!({"elicitation": {"form": {}}}),
        ))
    }
}

/// Requires URL elicitation.
pub fn need_url(caps: &Capabilities) -> Result<(), McpError> {
    if caps.url() {
        Ok(())
    } else {
        Err(missing(
            "elicitation.url",
            json!({"elicitation": {"url": {}}}),
        ))
    }
}

/// Requires sampling.
pub fn need_sampling(caps: &Capabilities) -> Result<(), McpError> {
    if caps.sampling() {
        Ok(())
    } else {
        Err(missing("sampling", json!({"sampling": {}})))
    }
}

/// Requires sampling with tools (O2: VS Code never declares it).
pub fn need_sampling_tools(caps: &Capabilities) -> Result<(), McpError> {
    if caps.sampling_tools() {
        Ok(())
    } else {
        Err(missing(
            "sampling.tools",
            json!({"sampling": {"tools": {}}}),
        ))
    }
}

/// Requires roots.
pub fn need_roots(caps: &Capabilities) -> Result<(), McpError> {
    if caps.roots() {
        Ok(())
    } else {
        Err(missing("roots", json!({"roots": {}})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_modes_of_elicitation() {
        let caps = Capabilities(json!({"elicitation": {}}));
        assert!(caps.form() && !caps.url());
        let caps = Capabilities(json!({"elicitation": {"url": {}}}));
        assert!(!caps.form() && caps.url());
        let caps = Capabilities(json!({"elicitation": {"form": {}, "url": {}}}));
        assert!(caps.form() && caps.url());
        let caps = Capabilities(json!({"sampling": {}}));
        assert!(caps.sampling() && !caps.sampling_tools() && !caps.roots() && !caps.form());
    }
}
