//! `consumer`: a small rmcp server with the tools `greet` and `add` that embeds the bridge:
//! VS Code's `initialize` gets the bridge in this process, every client of revision 2026-07-28
//! gets rmcp's own stdio serving. The VS Code entry is this executable, with no args.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolsCapability,
};
use mcp_bridge_vscode::embed::{self, Options, Served};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

#[derive(Clone)]
struct Consumer;

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let schema: Map<String, Value> = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    Tool::new(name.to_owned(), description.to_owned(), schema)
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

impl ServerHandler for Consumer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(ToolsCapability::default());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("consumer", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool(
                "greet",
                "Greets a name",
                json!({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}),
            ),
            tool(
                "add",
                "Adds two integers",
                json!({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "greet" => {
                let name = args.get("name").and_then(Value::as_str).unwrap_or("you");
                Ok(text(format!("Hello, {name}.")))
            }
            "add" => {
                let a = args.get("a").and_then(Value::as_i64).unwrap_or(0);
                let b = args.get("b").and_then(Value::as_i64).unwrap_or(0);
                Ok(text(a.saturating_add(b).to_string()))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // The bridge's stderr lines (`mcp-bridge-vscode: bridge: ...`) in VS Code's Output channel.
    mcp_bridge_vscode::install_log();
    match embed::serve_stdio(Consumer, Options::default(), embed::stdio()).await {
        Ok(Served::Nothing) => {
            eprintln!("consumer: the input ended before a request");
            std::process::ExitCode::SUCCESS
        }
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("consumer: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
