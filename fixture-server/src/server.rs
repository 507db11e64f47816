//! The rmcp `ServerHandler` of the fixture: its identity and capabilities, and the dispatch of
//! each request to the module of its feature. One handler for both revisions: with
//! `--revision 2025-11-25` the few requests that differ go to [`crate::older`], everything
//! else is shared.
use std::borrow::Cow;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    DiscoverRequestMethod, DiscoverResult, ExtensionCapabilities, GetPromptRequestParams,
    GetPromptResponse, Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestMethod, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestMethod,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};

use crate::older::{self, Older};
use crate::state::State;
use crate::{cli, envelope, jitter, listen, prompts, resources, tools};

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
    /// `--revision 2025-11-25`: the session state of the older revision.
    older: Option<Arc<Older>>,
}

impl Fixture {
    /// A server of revision 2026-07-28.
    pub fn new(state: Arc<State>) -> Self {
        Self { state, older: None }
    }

    /// A server of revision 2025-11-25 (docs/fixture.md).
    pub fn older(state: Arc<State>) -> Self {
        Self {
            state,
            older: Some(Arc::new(Older::default())),
        }
    }
}

/// The capabilities: those of both revisions (logging, completions, the three lists with their
/// changes, resource subscriptions; [`older::capabilities`]) and the MCP Apps extension. The
/// bridge passes them to VS Code (R1), and opens its listen stream because of the list changes
/// (R2).
fn capabilities() -> ServerCapabilities {
    let mut capabilities = older::capabilities();
    let mut extensions = ExtensionCapabilities::new();
    extensions.insert(APPS_EXTENSION.into(), JsonObject::new());
    capabilities.extensions = Some(extensions);
    capabilities
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let config = match &self.older {
            None => ServerConfig::new(capabilities()),
            Some(_) => ServerConfig::new(older::capabilities())
                .with_protocol_version(ProtocolVersion::V_2025_11_25),
        };
        config
            .with_server_info(Implementation::new(NAME, cli::VERSION))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match &self.older {
            None => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
            Some(_) => Cow::Borrowed(older::REVISIONS),
        }
    }

    /// An older server does not know `server/discover`: -32601, the answer that the bridge's
    /// detection reads as "an older server".
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        match &self.older {
            None => Ok(DiscoverResult::from_server_info(
                self.supported_protocol_versions().into_owned(),
                self.get_info(),
            )),
            Some(_) => Err(McpError::method_not_found::<DiscoverRequestMethod>()),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        jitter::pause(jitter::Point::Answer).await;
        // `guarded` exists only with --oauth, where the HTTP layer checks its scope mcp:write.
        if self.state.options.oauth && request.name == crate::oauth::GUARDED {
            envelope::check(&context)?;
            return Ok(crate::json::text_result(crate::oauth::GUARDED_TEXT).into());
        }
        match &self.older {
            None => tools::call(&self.state, request, context).await,
            Some(older) => older::tools::call(older, &self.state, request, context).await,
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        jitter::pause(jitter::Point::Answer).await;
        envelope::check(&context)?;
        let mut list = match &self.older {
            None => tools::list(&self.state, cursor(&request))?,
            Some(_) => older::tools::list(&self.state, cursor(&request))?,
        };
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
        jitter::pause(jitter::Point::Answer).await;
        envelope::check(&context)?;
        let mut list = prompts::list(&self.state, cursor(&request))?;
        if self.older.is_some() {
            list.prompts
                .retain(|prompt| !older::ROUND_PROMPTS.contains(&prompt.name.as_str()));
        }
        Ok(list)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if self.older.is_some() && older::ROUND_PROMPTS.contains(&request.name.as_str()) {
            return Err(McpError::invalid_params(
                format!("Unknown prompt: {}", request.name),
                None,
            ));
        }
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
        jitter::pause(jitter::Point::Answer).await;
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

    /// `resources/subscribe` of a session of 2025-11-25 (the older revision): any URI, `touch`
    /// can update any. rmcp refuses it in a session of 2026-07-28 before this handler.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match &self.older {
            Some(older) => {
                older.subscribe(request.uri);
                Ok(())
            }
            None => Err(McpError::method_not_found::<SubscribeRequestMethod>()),
        }
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match &self.older {
            Some(older) => {
                older.unsubscribe(&request.uri);
                Ok(())
            }
            None => Err(McpError::method_not_found::<UnsubscribeRequestMethod>()),
        }
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
