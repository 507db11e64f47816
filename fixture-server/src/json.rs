//! Small helpers between wire JSON and the typed model of rmcp.
//!
//! The fixture writes its tools, prompts, resources and input requests as the JSON of the
//! specification (exact texts that the tests read), and lets rmcp's model carry them. A value
//! that rmcp's model refuses is an internal error of the fixture, never a panic.
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The members of a JSON object; another value gives an empty object.
pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A schema object for rmcp's tool model.
pub fn schema(value: Value) -> Arc<JsonObject> {
    Arc::new(object(value))
}

/// Reads wire JSON into a type of rmcp's model.
pub fn typed<T: DeserializeOwned>(what: &str, value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|error| {
        McpError::internal_error(
            format!("the fixture built {what} that rmcp refuses: {error}"),
            None,
        )
    })
}

/// A complete tool result with one text block.
pub fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// The text of a tool execution error (`isError: true`): the model can read it.
pub struct ToolError(pub String);

/// A tool execution error with this text.
pub fn tool_error(text: impl Into<String>) -> ToolError {
    ToolError(text.into())
}

impl ToolError {
    /// The tool result of the error.
    pub fn into_result(self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.0)])
    }
}

/// Reads the arguments of a tool into `T`; a mismatch is a tool execution error.
pub fn arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<&JsonObject>,
) -> Result<T, ToolError> {
    let value = Value::Object(arguments.cloned().unwrap_or_default());
    serde_json::from_value(value)
        .map_err(|error| tool_error(format!("the arguments of {tool} are not valid: {error}")))
}
