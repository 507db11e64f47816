//! The rmcp `ServerHandler` of the fixture: its identity and capabilities, and the dispatch of
//! each request to the module of its feature.
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    ExtensionCapabilities, GetPromptRequestParams, GetPromptResponse, Implementation, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, PromptsCapability, ReadResourceRequestParams, ReadResourceResponse,
    ResourcesCapability, ServerCapabilities, ServerConfig, SubscriptionFilter, ToolsCapability,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};

use crate::state::State;
use crate::{cli, envelope, listen, prompts, resources, tools};

/// The name of the server, in `serverInfo`.
pub const NAME: &str = "bridge-fixture-server";
/// The instructions of the server (O10: VS Code keeps them).
pub const INSTRUCTIONS: &str = "The upstream server of the mcp-bridge-vscode tests.";
/// The MCP Apps extension (O11).
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The fixture server of one session.
#[derive(Clone)]
pub struct Fixture {
    state: Arc<State>,
}

impl Fixture {
    pub fn new(state: Arc<State>) -> Self {
        Self { state }
    }
}

/// The capabilities: logging, completions, the three lists with their changes, resource
/// subscriptions and the MCP Apps extension. The bridge passes them to VS Code (R1), and opens
/// its listen stream because of the list changes (R2).
fn capabilities() -> ServerCapabilities {
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
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(APPS_EXTENSION.into(), JsonObject::new());
    capabilities.extensions = Some(extensions);
    capabilities
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(capabilities())
            .with_server_info(Implementation::new(NAME, cli::VERSION))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // `guarded` exists only with --oauth, where the HTTP layer checks its scope mcp:write.
        if self.state.options.oauth && request.name == crate::oauth::GUARDED {
            envelope::check(&context)?;
            return Ok(crate::json::text_result(crate::oauth::GUARDED_TEXT).into());
        }
        tools::call(&self.state, request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        envelope::check(&context)?;
        let mut list = tools::list(&self.state, cursor(&request))?;
        if self.state.options.oauth && list.next_cursor.is_none() {
            list.tools.push(crate::oauth::guarded_tool());
        }
        Ok(list)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        envelope::check(&context)?;
        prompts::list(&self.state, cursor(&request))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        prompts::get(&self.state, request, &context)
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        prompts::complete(&context)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        envelope::check(&context)?;
        resources::list(&self.state, cursor(&request))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        envelope::check(&context)?;
        resources::templates(&self.state, cursor(&request))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&self.state, &request, &context)
    }

    /// `logging/setLevel` of a session that began with `initialize`; revision 2026-07-28 has
    /// the level in the `_meta` of each request instead.
    #[expect(
        deprecated,
        reason = "logging/setLevel exists only for sessions of 2025-11-25"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state.set_legacy_level(request.level);
        Ok(())
    }

    /// Every requested kind of notification is accepted (rmcp keeps only those that the
    /// capabilities declare), also resource subscriptions of any URI: `touch` can update any.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.state.listeners.accepted();
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let state = &self.state;
        listen::listen(&state.listeners, &state.lifecycle.stopping, context).await;
        Ok(())
    }
}

fn cursor(request: &Option<PaginatedRequestParams>) -> Option<&str> {
    request.as_ref().and_then(|r| r.cursor.as_deref())
}
