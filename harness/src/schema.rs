//! Schema checks of frames: each frame is validated against the definition of its own message
//! in the official `schema.json` of its revision (for example `CallToolRequest` or
//! `ListToolsResult`), never against a union such as `Result`, which accepts almost anything.
//!
//! The schemas are read at run time from the specification folder (docs/harness.md), never
//! copied into the project.
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value};

/// The two revisions the project speaks.
pub const LEGACY: &str = "2025-11-25";
/// The revision of the upstream servers.
pub const MODERN: &str = "2026-07-28";

/// One revision's `schema.json`, with validators compiled on first use.
pub struct SchemaSet {
    revision: String,
    root: Value,
    /// method → definition name of its request or notification.
    by_method: HashMap<String, String>,
    compiled: Mutex<HashMap<String, std::sync::Arc<jsonschema::Validator>>>,
}

/// Which side of an exchange a frame belongs to, needed to name the definition of a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A request or a notification: the definition comes from its method.
    Message,
    /// A response to a request of this method.
    ResponseTo(&'a str),
}

impl SchemaSet {
    /// Reads `<spec_dir>/<revision>/schema/schema.json`.
    pub fn load(spec_dir: &Path, revision: &str) -> Result<Self, String> {
        let path = spec_dir.join(revision).join("schema").join("schema.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let root: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        let mut by_method = HashMap::new();
        if let Some(defs) = root.get("$defs").and_then(Value::as_object) {
            for (name, def) in defs {
                let Some(method) = def
                    .pointer("/properties/method/const")
                    .and_then(Value::as_str)
                else {
                    continue;
                };
                // Unions such as `ClientNotification` also pin a method; keep the message's own.
                if name.ends_with("Request") || name.ends_with("Notification") {
                    let own = !name.starts_with("Client") && !name.starts_with("Server");
                    if own || !by_method.contains_key(method) {
                        by_method.insert(method.to_string(), name.clone());
                    }
                }
            }
        }
        Ok(Self {
            revision: revision.to_string(),
            root,
            by_method,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// The revision of this set.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The definition of the request or notification of `method`, if the revision has one.
    pub fn message_definition(&self, method: &str) -> Option<&str> {
        self.by_method.get(method).map(String::as_str)
    }

    /// The definition of the result of a request of `method`. `result` decides between the
    /// complete result and `InputRequiredResult` (2026-07-28).
    pub fn result_definition(&self, method: &str, result: &Value) -> Option<String> {
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            return self
                .has("InputRequiredResult")
                .then(|| "InputRequiredResult".into());
        }
        let empty = matches!(
            method,
            "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe"
        );
        if empty {
            return self.has("EmptyResult").then(|| "EmptyResult".into());
        }
        let request = self.message_definition(method)?;
        let name = format!("{}Result", request.strip_suffix("Request")?);
        self.has(&name).then_some(name)
    }

    fn has(&self, name: &str) -> bool {
        self.root.pointer(&format!("/$defs/{name}")).is_some()
    }

    /// Validates a whole frame: the JSON-RPC envelope and the message definition. Returns the
    /// list of problems (empty when valid), or an error when no definition applies.
    pub fn check_frame(&self, frame: &Value, kind: Frame<'_>) -> Result<Vec<String>, String> {
        let mut problems = Vec::new();
        match kind {
            Frame::Message => {
                let method = frame
                    .get("method")
                    .and_then(Value::as_str)
                    .ok_or("the frame has no method")?;
                let def = self
                    .message_definition(method)
                    .ok_or_else(|| format!("revision {} has no message {method}", self.revision))?;
                problems.extend(self.validate(def, frame)?);
            }
            Frame::ResponseTo(method) => {
                if frame.get("error").is_some() {
                    problems.extend(self.validate("JSONRPCErrorResponse", frame)?);
                } else {
                    problems.extend(self.validate("JSONRPCResultResponse", frame)?);
                    let result = frame.get("result").cloned().unwrap_or(Value::Null);
                    let def = self.result_definition(method, &result).ok_or_else(|| {
                        format!("revision {} has no result of {method}", self.revision)
                    })?;
                    problems.extend(self.validate(&def, &result)?);
                }
            }
        }
        Ok(problems)
    }

    /// Validates `value` against the definition `name`; returns the problems found.
    pub fn validate(&self, name: &str, value: &Value) -> Result<Vec<String>, String> {
        let validator = self.validator(name)?;
        Ok(validator
            .iter_errors(value)
            .map(|e| format!("{name}: {e} at '{}'", e.instance_path()))
            .collect())
    }

    fn validator(&self, name: &str) -> Result<std::sync::Arc<jsonschema::Validator>, String> {
        let mut compiled = self
            .compiled
            .lock()
            .map_err(|_| "the schema cache is poisoned".to_string())?;
        if let Some(v) = compiled.get(name) {
            return Ok(v.clone());
        }
        if !self.has(name) {
            return Err(format!(
                "revision {} has no definition {name}",
                self.revision
            ));
        }
        let mut schema = Map::new();
        if let Some(root) = self.root.as_object() {
            for (k, v) in root {
                if k.starts_with('$') {
                    schema.insert(k.clone(), v.clone());
                }
            }
        }
        schema.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
        let validator = jsonschema::validator_for(&Value::Object(schema))
            .map_err(|e| format!("definition {name} does not compile: {e}"))?;
        let validator = std::sync::Arc::new(validator);
        compiled.insert(name.to_string(), validator.clone());
        Ok(validator)
    }
}

/// The specification folder next to the project (docs/harness.md: beside the workspace root,
/// or `MCP_SPEC_DIR` as in ci/test.sh), if present. Tests use it to find the schemas by path.
pub fn default_spec_dir() -> Option<std::path::PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = match std::env::var_os("MCP_SPEC_DIR") {
        Some(d) => here.parent()?.join(d),
        None => here.parent()?.parent()?.join("shared").join("spec"),
    };
    dir.join(MODERN)
        .join("schema")
        .join("schema.json")
        .is_file()
        .then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sets() -> Option<(SchemaSet, SchemaSet)> {
        let Some(dir) = default_spec_dir() else {
            crate::skip::skip("harness schema tests: no specification folder (MCP_SPEC_DIR)");
            return None;
        };
        Some((
            SchemaSet::load(&dir, LEGACY).expect("legacy schema"),
            SchemaSet::load(&dir, MODERN).expect("modern schema"),
        ))
    }

    #[test]
    fn names_definitions_by_method() {
        let Some((legacy, modern)) = sets() else {
            return;
        };
        assert_eq!(
            legacy.message_definition("initialize"),
            Some("InitializeRequest")
        );
        assert_eq!(
            modern.message_definition("server/discover"),
            Some("DiscoverRequest")
        );
        assert_eq!(
            modern.message_definition("notifications/cancelled"),
            Some("CancelledNotification")
        );
        assert_eq!(
            modern
                .result_definition("tools/list", &json!({}))
                .as_deref(),
            Some("ListToolsResult")
        );
        assert_eq!(
            modern
                .result_definition("tools/call", &json!({"resultType": "input_required"}))
                .as_deref(),
            Some("InputRequiredResult")
        );
        assert_eq!(
            legacy.result_definition("ping", &json!({})).as_deref(),
            Some("EmptyResult")
        );
    }

    #[test]
    fn rejects_a_frame_that_breaks_its_definition() {
        let Some((legacy, _)) = sets() else {
            return;
        };
        let good = json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}});
        assert!(
            legacy
                .check_frame(&good, Frame::ResponseTo("tools/list"))
                .unwrap()
                .is_empty()
        );
        let bad =
            json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"inputSchema":{"type":"object"}}]}});
        assert!(
            !legacy
                .check_frame(&bad, Frame::ResponseTo("tools/list"))
                .unwrap()
                .is_empty()
        );
    }
}
