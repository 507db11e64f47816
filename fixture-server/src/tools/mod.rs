//! The tools of the fixture: their definitions (names, inputs and annotations of
//! fixture-server/README.md, on which the tests and the manual checks rely) and the dispatch of `tools/call`.
mod basic;
mod input;
mod lists;
mod logging;
mod process;

pub use input::profile_schema;
pub use lists::switch;

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ListToolsResult, Tool};
use rmcp::service::RequestContext;

use crate::call::{Call, Fail, no_input, tool};
use crate::envelope;
use crate::paging;
use crate::state::State;

/// The description of the generated tools `tool_<i>`.
const GENERATED: &str = "A generated tool for the tests of the list pages";

/// All tools of the list at this moment, in a fixed order.
pub fn definitions(state: &State) -> Vec<Tool> {
    let mut tools = Vec::new();
    tools.extend(basic::definitions());
    tools.extend(process::definitions());
    tools.extend(input::definitions());
    tools.extend(lists::definitions(state));
    tools.extend(logging::definitions());
    tools.push(basic::show_definition());
    if state.options.conformance {
        tools.extend(crate::conformance::tools::definitions());
    }
    for i in 0..state.options.many_tools {
        tools.push(tool(&format!("tool_{i}"), GENERATED, no_input(), true));
    }
    tools
}

/// `tools/list`, one page.
pub fn list(state: &State, cursor: Option<&str>) -> Result<ListToolsResult, McpError> {
    page(definitions(state), cursor)
}

/// One page of a tool list (also the older revision's list, `crate::older::tools`).
pub fn page(tools: Vec<Tool>, cursor: Option<&str>) -> Result<ListToolsResult, McpError> {
    let (tools, next) = paging::page(tools, cursor)?;
    let mut result = ListToolsResult::with_all_items(tools);
    result.next_cursor = next;
    Ok(result)
}

/// `tools/call`.
pub async fn call(
    state: &State,
    params: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    envelope::check(&context)?;
    let call = Call {
        state,
        arguments: params.arguments.as_ref(),
        responses: params.input_responses.as_ref(),
        request_state: params.request_state.as_deref(),
        context: &context,
    };
    let outcome = match params.name.as_ref() {
        "echo" => basic::echo(&call),
        "add" => basic::add(&call),
        "slow" => basic::slow(&call).await,
        "progress" => basic::progress(&call).await,
        "bare_array" => basic::bare_array(&call),
        "structured" => basic::structured(&call),
        "show" => Ok(crate::json::text_result("shown").into()),
        "crash" => process::crash(&call),
        "shutdown" => process::shutdown(&call),
        "ask_form" => input::ask_form(&call),
        "ask_url" => input::ask_url(&call),
        "ask_url_twice" => input::ask_url_twice(&call),
        "ask_bad_url" => input::ask_bad_url(&call),
        "sample" => input::sample(&call),
        "sample_tools" => input::sample_tools(&call),
        "list_roots" => input::list_roots(&call),
        "multi" => input::multi(&call),
        "many_inputs" => input::many_inputs(&call),
        "toggle" => lists::toggle(&call).await,
        "toggled" if state.tool_enabled() => Ok(crate::json::text_result("toggled").into()),
        "touch" => lists::touch(&call).await,
        "log" => logging::log(&call).await,
        name if generated(state, name) => Ok(crate::json::text_result(name).into()),
        name if state.options.conformance => {
            match crate::conformance::tools::call(name, &call).await {
                Some(outcome) => outcome,
                None => Err(unknown(name)),
            }
        }
        name => Err(unknown(name)),
    };
    match outcome {
        Ok(response) => Ok(response),
        Err(Fail::Tool(error)) => Ok(error.into_result().into()),
        Err(Fail::Protocol(error)) => Err(error),
    }
}

fn unknown(name: &str) -> Fail {
    Fail::Protocol(McpError::invalid_params(
        format!("Unknown tool: {name}"),
        None,
    ))
}

/// Whether `name` is one of the tools of `--many-tools`.
fn generated(state: &State, name: &str) -> bool {
    name.strip_prefix("tool_")
        .filter(|n| !n.starts_with('0') || *n == "0")
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n < state.options.many_tools)
}
