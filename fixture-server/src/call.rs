//! One call of a tool and how it ends: the types and the definition helpers that the fixture's
//! own tools (`tools/`) and the conformance tools (`conformance/tools.rs`) share.
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, InputResponses, JsonObject, Tool, ToolAnnotations};
use rmcp::service::RequestContext;
use serde_json::Value;

use crate::json::{ToolError, schema};
use crate::state::State;

/// How a tool call fails: a tool execution error that the model reads (`isError: true`), or a
/// protocol error (the JSON-RPC error of the request).
pub enum Fail {
    Tool(ToolError),
    Protocol(McpError),
}

impl From<McpError> for Fail {
    fn from(error: McpError) -> Self {
        Self::Protocol(error)
    }
}

impl From<ToolError> for Fail {
    fn from(error: ToolError) -> Self {
        Self::Tool(error)
    }
}

/// The outcome of one tool.
pub type Outcome = Result<CallToolResponse, Fail>;

/// One call of a tool, with what its rounds need.
pub struct Call<'a> {
    pub state: &'a State,
    pub arguments: Option<&'a JsonObject>,
    pub responses: Option<&'a InputResponses>,
    pub request_state: Option<&'a str>,
    pub context: &'a RequestContext<RoleServer>,
}

/// A tool definition; `read_only` gives `annotations.readOnlyHint: true` (the other tools have
/// no annotation, thus VS Code asks for an approval before each call).
pub fn tool(name: &str, description: &str, input: Value, read_only: bool) -> Tool {
    let tool = Tool::new(name.to_string(), description.to_string(), schema(input));
    if read_only {
        tool.with_annotations(ToolAnnotations::new().read_only(true))
    } else {
        tool
    }
}

/// The input schema of a tool without arguments.
pub fn no_input() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}
