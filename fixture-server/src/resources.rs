//! The resources (O9, O11): the text `file:///fixture/notes.txt` and the view of the MCP App
//! tool `show`, `ui://fixture/view`.
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceTemplate,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::envelope;
use crate::json::typed;
use crate::paging;
use crate::state::State;

/// The URI of the text resource.
pub const NOTES_URI: &str = "file:///fixture/notes.txt";
/// The URI of the view of `show` (MCP Apps).
pub const VIEW_URI: &str = "ui://fixture/view";
/// The MIME type of an MCP App view.
const APP_MIME: &str = "text/html;profile=mcp-app";

/// (uri, name, description, mime type, text)
const RESOURCES: [(&str, &str, &str, &str, &str); 2] = [
    (
        NOTES_URI,
        "notes",
        "The notes of the fixture",
        "text/plain",
        "The notes of the fixture.",
    ),
    (
        VIEW_URI,
        "view",
        "The view of the tool show",
        APP_MIME,
        "<p>The view of the fixture.</p>",
    ),
];

/// `resources/list`, one page.
pub fn list(state: &State, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
    let mut values: Vec<Value> = RESOURCES
        .iter()
        .map(|(uri, name, description, mime, _)| {
            json!({"uri": uri, "name": name, "description": description, "mimeType": mime})
        })
        .collect();
    if state.options.conformance {
        values.extend(crate::conformance::resources::definitions());
    }
    let mut resources = Vec::new();
    for value in values {
        resources.push(typed::<Resource>("a resource", value)?);
    }
    let (resources, next) = paging::page(resources, cursor)?;
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = next;
    Ok(result)
}

/// `resources/templates/list`: the fixture has no templates of its own; `--conformance` adds
/// the template of the conformance suite.
pub fn templates(
    state: &State,
    cursor: Option<&str>,
) -> Result<ListResourceTemplatesResult, McpError> {
    let mut templates = Vec::new();
    if state.options.conformance {
        for value in crate::conformance::resources::templates() {
            templates.push(typed::<ResourceTemplate>("a resource template", value)?);
        }
    }
    let (templates, next) = paging::page(templates, cursor)?;
    let mut result = ListResourceTemplatesResult::with_all_items(templates);
    result.next_cursor = next;
    Ok(result)
}

/// `resources/read`; an unknown URI is -32602 with the URI in `data` (resources page of the
/// specification).
pub fn read(
    state: &State,
    params: &ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, McpError> {
    envelope::check(context)?;
    let conformance = state
        .options
        .conformance
        .then(|| crate::conformance::resources::read(&params.uri))
        .flatten();
    if let Some(content) = conformance {
        let contents = json!({"resultType": "complete", "contents": [content]});
        return Ok(typed::<ReadResourceResult>("a resource result", contents)?.into());
    }
    let Some((uri, _, _, mime, text)) = RESOURCES.iter().find(|r| r.0 == params.uri) else {
        return Err(McpError::invalid_params(
            "Resource not found",
            Some(json!({"uri": params.uri})),
        ));
    };
    let contents: Value = json!({"resultType": "complete", "contents": [{"uri": uri, "mimeType": mime, "text": text}]});
    Ok(typed::<ReadResourceResult>("a resource result", contents)?.into())
}
