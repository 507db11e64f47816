//! The tools of revision 2025-11-25 that differ from the 2026-07-28 fixture: the input
//! requests are server-initiated requests sent while the call waits (O1 to O3 of the older
//! era), the list changes and resource updates are session notifications written before the
//! result (Q6 of docs/rules.md), and two tools exist only here: `ping_client` (a `ping` from
//! the server) and `url_required` (the error -32042 with a URL, Q5). Every other tool is the
//! 2026-07-28 fixture's own ([`crate::tools::call`]).
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, JsonObject, ListToolsResult,
    ServerNotification, ServerRequest, Tool,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::Older;
use crate::call::{Fail, Outcome, no_input, tool};
use crate::conformance::forms as conformance;
use crate::envelope::{Capabilities, need_form, need_roots, need_sampling, need_url};
use crate::json::{arguments, text_result, tool_error, typed};
use crate::mrtr;
use crate::state::State;

/// The tools of the 2026-07-28 fixture that exist only as input rounds of that revision.
const ROUND_TOOLS: &[&str] = &["ask_url_twice", "multi", "many_inputs"];
/// The conformance tools (`--conformance`) of 2026-07-28 scenarios only: input rounds, and the
/// list changes that go to listen streams. The 2025-11-25 scenarios call none of them.
const ROUND_CONFORMANCE: &[&str] = &[
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
];

/// Whether the 2026-07-28 tool `name` has no counterpart in this revision.
fn round_only(name: &str) -> bool {
    ROUND_TOOLS.contains(&name)
        || ROUND_CONFORMANCE.contains(&name)
        || name.starts_with("test_input_required_result_")
}
/// The URL of `ask_url` and `url_required`.
const AUTH_URL: &str = "https://example.com/auth";
/// The URL of `ask_bad_url`: a `file:` URL that the bridge must never show.
const BAD_URL: &str = "file://localhost/etc/passwd";
/// The code of `URLElicitationRequiredError` (revision 2025-11-25).
pub const URL_REQUIRED: i32 = -32042;

/// The tool list: the 2026-07-28 fixture's without its round-only tools, then `ping_client`
/// and `url_required`.
pub fn definitions(state: &State) -> Vec<Tool> {
    let mut tools: Vec<Tool> = crate::tools::definitions(state)
        .into_iter()
        .filter(|tool| !round_only(&tool.name))
        .collect();
    let at = tools
        .iter()
        .position(|tool| tool.name == "show")
        .map_or(tools.len(), |i| i + 1);
    let own = [
        tool(
            "ping_client",
            "Sends a ping to the client, and gives the answer",
            no_input(),
            true,
        ),
        tool(
            "url_required",
            "Fails with the error -32042 that asks the user to open a URL",
            no_input(),
            false,
        ),
    ];
    tools.splice(at..at, own);
    tools
}

/// `tools/list`, one page.
pub fn list(state: &State, cursor: Option<&str>) -> Result<ListToolsResult, McpError> {
    crate::tools::page(definitions(state), cursor)
}

/// `tools/call`: the tools of this revision, or the 2026-07-28 fixture's own.
pub async fn call(
    older: &Older,
    state: &State,
    params: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let ask = Ask {
        state,
        context: &context,
    };
    let asked = match state.options.conformance {
        true => {
            ask.conformance(&params.name, params.arguments.as_ref())
                .await
        }
        false => None,
    };
    let outcome = match (asked, params.name.as_ref()) {
        (Some(outcome), _) => outcome,
        (None, "ask_form") => ask.form().await,
        (None, "ask_url") => ask.url("auth", "Sign in to continue.", AUTH_URL).await,
        (None, "ask_bad_url") => ask.url("file", "Open the file.", BAD_URL).await,
        (None, "sample") => ask.sample(false).await,
        (None, "sample_tools") => ask.sample(true).await,
        (None, "list_roots") => ask.roots().await,
        (None, "ping_client") => ask.ping().await,
        (None, "url_required") => Err(Fail::Protocol(url_required())),
        (None, "toggle") => toggle(state, &context, params.arguments.as_ref()).await,
        (None, "touch") => touch(older, &context, params.arguments.as_ref()).await,
        (None, name) if round_only(name) => Err(Fail::Protocol(McpError::invalid_params(
            format!("Unknown tool: {name}"),
            None,
        ))),
        _ => return crate::tools::call(state, params, context).await,
    };
    match outcome {
        Ok(response) => Ok(response),
        Err(Fail::Tool(error)) => Ok(error.into_result().into()),
        Err(Fail::Protocol(error)) => Err(error),
    }
}

/// The server-initiated requests of one call.
struct Ask<'a> {
    state: &'a State,
    context: &'a RequestContext<RoleServer>,
}

impl Ask<'_> {
    /// Sends one request (`{"method", "params"}` as wire JSON) to the client and gives its
    /// result as JSON. The wait ends with the client's answer, a cancellation of the call, or
    /// the end of stdin (R7: no unbounded wait). An error of the client is a tool error that
    /// names it.
    async fn request(&self, what: &str, request: Value) -> Result<Value, Fail> {
        let request: ServerRequest = typed("a request to the client", request)?;
        let sent = self.context.peer.send_request(request);
        let result = tokio::select! {
            result = sent => result,
            () = self.context.ct.cancelled() => return Err(stopped("the client cancelled the request")),
            () = self.state.lifecycle.input_closed.cancelled() => return Err(stopped("the input ended")),
        };
        match result {
            Ok(result) => serde_json::to_value(result).map_err(|error| {
                Fail::Protocol(McpError::internal_error(
                    format!("cannot read the answer to {what}: {error}"),
                    None,
                ))
            }),
            Err(error) => Err(tool_error(format!("{what}: the client answered {error}")).into()),
        }
    }

    /// Whether the client declared the capability (in `initialize`); a tool error otherwise,
    /// which the model can read.
    fn need(&self, check: fn(&Capabilities) -> Result<(), McpError>) -> Result<(), Fail> {
        check(&Capabilities::of(self.context))
            .map_err(|error| Fail::Tool(tool_error(error.message.to_string())))
    }

    async fn form(&self) -> Outcome {
        self.need(need_form)?;
        let request = mrtr::form("Tell us about you.", crate::tools::profile_schema());
        let answer = self.request("elicitation/create", request).await?;
        let answer = mrtr::elicited("profile", &answer)?;
        let text = if answer.action == "accept" {
            format!(
                "accept {}",
                Value::Object(answer.content.unwrap_or_default())
            )
        } else {
            answer.action
        };
        Ok(text_result(format!("form: {text}")).into())
    }

    /// A URL elicitation with the id `fixture-<key>`; after `accept`, the server sends
    /// `notifications/elicitation/complete` before the result, as a server does once the user
    /// finished at the URL.
    async fn url(&self, key: &str, message: &str, url: &str) -> Outcome {
        self.need(need_url)?;
        let answer = self
            .request("elicitation/create", mrtr::url(key, message, url))
            .await?;
        let answer = mrtr::elicited(key, &answer)?;
        if answer.action == "accept" {
            let complete = json!({
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": format!("fixture-{key}")}
            });
            let notification: ServerNotification = typed("a notification", complete)?;
            self.context
                .peer
                .send_notification(notification)
                .await
                .map_err(|error| stopped(&format!("cannot send the completion: {error}")))?;
        }
        Ok(text_result(format!("url: {}", answer.action)).into())
    }

    async fn sample(&self, with_tools: bool) -> Outcome {
        self.need(need_sampling)?;
        let request = if with_tools {
            let tools = json!([{"name": "lookup", "inputSchema": {"type": "object"}}]);
            mrtr::sampling("Look up the weather.", 50, Some(tools))
        } else {
            mrtr::sampling("Say hello.", 50, None)
        };
        let answer = self.request("sampling/createMessage", request).await?;
        Ok(text_result(match mrtr::sampled_text(&answer) {
            Some(text) => format!("model: {text}"),
            None => "model: no text".to_string(),
        })
        .into())
    }

    async fn roots(&self) -> Outcome {
        self.need(need_roots)?;
        let answer = self.request("roots/list", mrtr::roots()).await?;
        let uris = mrtr::root_uris("roots", &answer)?;
        Ok(text_result(format!("roots: {}", uris.join("\n"))).into())
    }

    /// `--conformance`: the tools of the 2025-11-25 scenarios that ask the client
    /// (`tools-call-sampling`, `tools-call-elicitation`, `elicitation-sep1034-defaults`,
    /// `elicitation-sep1330-enums`), with the same texts as the input rounds of 2026-07-28
    /// (`crate::conformance::forms`); `None` for any other tool.
    async fn conformance(&self, name: &str, arguments: Option<&JsonObject>) -> Option<Outcome> {
        if name == "test_sampling" {
            return Some(self.conformance_sampling(arguments).await);
        }
        let form = match conformance::form_of(name, arguments)? {
            Ok(form) => form,
            Err(fail) => return Some(Err(fail)),
        };
        Some(self.conformance_form(&form).await)
    }

    async fn conformance_sampling(&self, arguments: Option<&JsonObject>) -> Outcome {
        let prompt = conformance::sampling_prompt(arguments)?;
        self.need(need_sampling)?;
        let request = mrtr::sampling(&prompt, 100, None);
        let answer = self.request("sampling/createMessage", request).await?;
        Ok(text_result(conformance::sampling_text(&answer)).into())
    }

    async fn conformance_form(&self, form: &conformance::Form) -> Outcome {
        self.need(need_form)?;
        let request = mrtr::form(&form.message, form.schema.clone());
        let answer = self.request("elicitation/create", request).await?;
        Ok(text_result(conformance::elicitation_text(form, &answer)?).into())
    }

    async fn ping(&self) -> Outcome {
        self.request("ping", json!({"method": "ping"})).await?;
        Ok(text_result("pong").into())
    }
}

fn stopped(why: &str) -> Fail {
    Fail::Protocol(McpError::internal_error(why.to_string(), None))
}

/// The error -32042 of revision 2025-11-25, with one URL elicitation in its data (the quirk
/// Q5 of docs/rules.md: VS Code opens every URL in it).
fn url_required() -> McpError {
    McpError::new(
        ErrorCode(URL_REQUIRED),
        "This request requires more information.",
        Some(json!({"elicitations": [{
            "mode": "url",
            "elicitationId": "fixture-required",
            "url": AUTH_URL,
            "message": "Sign in to continue."
        }]})),
    )
}

#[derive(serde::Deserialize)]
struct Toggle {
    enabled: bool,
    #[serde(default)]
    target: Option<String>,
}

/// Adds or removes `toggled`; on a change the list change goes to the client before the
/// result (Q6 of docs/rules.md), as a notification of the session.
async fn toggle(
    state: &State,
    context: &RequestContext<RoleServer>,
    args: Option<&rmcp::model::JsonObject>,
) -> Outcome {
    let args: Toggle = arguments("toggle", args)?;
    let prompt = match args.target.as_deref() {
        None | Some("tool") => false,
        Some("prompt") => true,
        Some(other) => {
            return Err(tool_error(format!("target is tool or prompt, not '{other}'")).into());
        }
    };
    let (changed, text) = crate::tools::switch(state, prompt, args.enabled);
    if changed {
        crate::jitter::pause(crate::jitter::Point::Changes).await;
        let sent = if prompt {
            context.peer.notify_prompt_list_changed().await
        } else {
            context.peer.notify_tool_list_changed().await
        };
        sent.map_err(|error| stopped(&format!("cannot send the list change: {error}")))?;
    }
    Ok(text_result(text).into())
}

#[derive(serde::Deserialize)]
struct Touch {
    uri: String,
}

/// `notifications/resources/updated` before the result, when the client subscribed to the URI.
async fn touch(
    older: &Older,
    context: &RequestContext<RoleServer>,
    args: Option<&rmcp::model::JsonObject>,
) -> Outcome {
    let args: Touch = arguments("touch", args)?;
    if older.is_subscribed(&args.uri) {
        let param = typed("a resource update", json!({"uri": args.uri}))?;
        crate::jitter::pause(crate::jitter::Point::Changes).await;
        context
            .peer
            .notify_resource_updated(param)
            .await
            .map_err(|error| stopped(&format!("cannot send the update: {error}")))?;
    }
    Ok(text_result(format!("touched {}", args.uri)).into())
}
