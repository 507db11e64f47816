//! The forms and the sampling of the 2025-11-25 scenarios `tools-call-elicitation`,
//! `elicitation-sep1034-defaults`, `elicitation-sep1330-enums` and `tools-call-sampling`: their
//! requests and result texts, the same in both revisions. The 2026-07-28 fixture asks them as
//! input rounds ([`super::tools`]), the older one as server-initiated requests
//! (`crate::older::tools`).
use rmcp::model::JsonObject;
use serde_json::{Value, json};

use crate::call::Fail;
use crate::mrtr::{self, elicited};

/// A string argument of the call, or a tool error.
fn string_argument(arguments: Option<&JsonObject>, tool: &str, name: &str) -> Result<String, Fail> {
    arguments
        .and_then(|arguments| arguments.get(name))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            crate::json::tool_error(format!("{tool} needs the string argument {name}")).into()
        })
}

/// The text of an elicitation answer: `<prefix>action=<action>, content=<content>`.
pub fn elicitation_text(form: &Form, answer: &Value) -> Result<String, Fail> {
    let answer = elicited(form.key, answer)?;
    let content = Value::Object(answer.content.unwrap_or_default());
    Ok(format!(
        "{}action={}, content={content}",
        form.prefix, answer.action
    ))
}

/// The text of a sampling answer, or `no text`.
pub fn sampled(answer: &Value) -> String {
    mrtr::sampled_text(answer).unwrap_or_else(|| "no text".to_string())
}

/// The result text of `test_sampling`: `LLM response: <text>`.
pub fn sampling_text(answer: &Value) -> String {
    format!("LLM response: {}", sampled(answer))
}

/// The prompt of `test_sampling`, or a tool error.
pub fn sampling_prompt(arguments: Option<&JsonObject>) -> Result<String, Fail> {
    string_argument(arguments, "test_sampling", "prompt")
}

/// One form of the scenarios `tools-call-elicitation`, `elicitation-sep1034-defaults` and
/// `elicitation-sep1330-enums`: the same in both revisions, asked as an input round here and
/// as a server-initiated request in the older revision (`crate::older::tools`).
pub struct Form {
    /// The key of the input request (an input round).
    pub key: &'static str,
    pub message: String,
    pub schema: Value,
    /// The start of the result text.
    prefix: &'static str,
}

/// The form of the tool `name`, `None` when it asks none; a tool error when its arguments
/// lack what it needs.
pub fn form_of(name: &str, arguments: Option<&JsonObject>) -> Option<Result<Form, Fail>> {
    Some(Ok(match name {
        "test_elicitation" => {
            let message = match string_argument(arguments, name, "message") {
                Ok(message) => message,
                Err(fail) => return Some(Err(fail)),
            };
            Form {
                key: "user",
                message,
                schema: json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                }),
                prefix: "User response: ",
            }
        }
        "test_elicitation_sep1034_defaults" => Form {
            key: "defaults",
            message: "Please review and update the form fields with defaults".into(),
            schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                }
            }),
            prefix: "Elicitation completed: ",
        },
        "test_elicitation_sep1330_enums" => Form {
            key: "enums",
            message: "Please select options from the enum fields".into(),
            schema: json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "description": "Choose an option", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "description": "Choose a titled option", "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}
                    ]},
                    "legacyEnum": {"type": "string", "description": "Choose a legacy option", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "description": "Choose options", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "description": "Choose titled options", "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]}}
                }
            }),
            prefix: "Elicitation completed: ",
        },
        _ => return None,
    }))
}
