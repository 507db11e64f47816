//! The tools that change the lists and the resources: `toggle`, `toggled` and `touch` (O6, O7).
use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::json;

use crate::call::{Call, Outcome, no_input, tool};
use crate::json::{arguments, text_result};
use crate::state::State;
use std::sync::atomic::Ordering;

pub fn definitions(state: &State) -> Vec<Tool> {
    let mut tools = vec![tool(
        "toggle",
        "Adds or removes the tool or the prompt toggled; each listen stream gets the list change before the result",
        json!({
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "target": {"type": "string", "enum": ["tool", "prompt"], "default": "tool"}
            },
            "required": ["enabled"]
        }),
        false,
    )];
    if state.tool_enabled() {
        tools.push(tool(
            "toggled",
            "Exists while toggle enabled it",
            no_input(),
            true,
        ));
    }
    tools.push(tool(
        "touch",
        "Sends an update of the resource to each listen stream that subscribed to it, before the result",
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string"}},
            "required": ["uri"]
        }),
        false,
    ));
    tools
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Target {
    Tool,
    Prompt,
}

#[derive(Deserialize)]
struct Toggle {
    enabled: bool,
    target: Option<Target>,
}

/// Changes the list, and writes the list change to every listen stream before the result:
/// VS Code lists the tools again before the next turn only in this order (the quirk Q6 of docs/rules.md).
pub async fn toggle(call: &Call<'_>) -> Outcome {
    let args: Toggle = arguments("toggle", call.arguments)?;
    let prompt = matches!(args.target, Some(Target::Prompt));
    let (changed, text) = switch(call.state, prompt, args.enabled);
    if changed {
        if prompt {
            call.state.listeners.prompts_changed().await;
        } else {
            call.state.listeners.tools_changed().await;
        }
    }
    Ok(text_result(text).into())
}

/// Q6: sets the flag of the `toggled` tool (or prompt) for both revisions of the fixture, which
/// each send their list change before the result. Whether the flag moved, and the result text.
pub fn switch(state: &State, prompt: bool, enabled: bool) -> (bool, String) {
    let (name, flag) = if prompt {
        ("prompt", &state.toggled_prompt)
    } else {
        ("tool", &state.toggled_tool)
    };
    let changed = flag.swap(enabled, Ordering::SeqCst) != enabled;
    let word = if enabled { "enabled" } else { "disabled" };
    let note = if changed { "" } else { " (no change)" };
    (changed, format!("{name} toggled: {word}{note}"))
}

#[derive(Deserialize)]
struct Touch {
    uri: String,
}

/// Writes `notifications/resources/updated` to each stream that subscribed to the URI, before
/// the result.
pub async fn touch(call: &Call<'_>) -> Outcome {
    let args: Touch = arguments("touch", call.arguments)?;
    call.state.listeners.resource_updated(&args.uri).await;
    Ok(text_result(format!("touched {}", args.uri)).into())
}
