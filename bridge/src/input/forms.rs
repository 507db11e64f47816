//! Forms (O1 and the quirks of VS Code about forms): the compilation of a `requestedSchema`,
//! the validation of accepted content, and the one-choice forms that VS Code can show.

use jsonschema::{Draft, Validator};
use serde_json::{Value, json};

/// The message of the Continue form that replaces a URL the user accepted earlier.
pub const CONTINUE_MESSAGE: &str = "Complete the step in the web browser. Then select Continue.";

/// O1: a `requestedSchema` that does not compile; the text is the compiler's (a check maps it
/// to the cause of the input request, never shows it to VS Code).
#[derive(Debug, thiserror::Error)]
#[error("the requested schema does not compile: {0}")]
pub struct SchemaError(String);

/// O1: compile a `requestedSchema` as the bridge validates it: the 2020-12 dialect, with
/// `$schema` removed (the form's dialect is fixed; a remote meta-schema would need I/O) and
/// unknown keywords allowed. No reference is ever fetched (`offline`), so a remote `$ref`
/// fails to compile instead of reaching the network. Formats are annotations, as 2020-12
/// says by default: a format the upstream server wants asserted, it asserts itself.
pub fn compile_requested_schema(schema: &Value) -> Result<Validator, SchemaError> {
    let mut schema = schema.clone();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
    }
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .offline()
        .build(&schema)
        .map_err(|e| SchemaError(e.to_string()))
}

/// Quirk "VS Code does not examine the accepted content of a form": whether accepted content
/// is valid against the compiled `requestedSchema`.
pub fn content_is_valid(validator: &Validator, content: &Value) -> bool {
    validator.is_valid(content)
}

/// Quirk "VS Code cannot show a form without a property": whether a form has no property.
pub fn has_no_property(requested_schema: &Value) -> bool {
    requested_schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|p| p.is_empty())
}

/// The schema of the one-choice forms: one property `continue` with the one value `Continue`
/// (VS Code reads the first property without a check, so a form needs one).
pub fn continue_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "continue": {
                "type": "string",
                "title": "Continue",
                "enum": ["Continue"],
                "default": "Continue"
            }
        },
        "required": ["continue"]
    })
}

/// Quirk "VS Code cannot show a form without a property": the params of the choice form with
/// the server's message. Accept maps to `{"action":"accept","content":{}}` upstream.
pub fn choice_form(message: &str) -> Value {
    json!({"mode": "form", "message": message, "requestedSchema": continue_schema()})
}

/// O1: the params of the Continue form for a URL that the user accepted in an earlier round
/// and that the upstream server asks for again. Accept maps to `{"action":"accept"}`.
pub fn continue_form() -> Value {
    choice_form(CONTINUE_MESSAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quirk_form_without_property_gets_exact_choice_form() {
        let expected: Value = serde_json::from_str(
            r#"{"mode":"form","message":"Delete the file?","requestedSchema":{"type":"object","properties":{"continue":{"type":"string","title":"Continue","enum":["Continue"],"default":"Continue"}},"required":["continue"]}}"#,
        )
        .unwrap();
        let got = choice_form("Delete the file?");
        assert_eq!(got, expected);
        // Exact member order too (preserve_order): the wire text is the same.
        assert_eq!(got.to_string(), expected.to_string());
    }

    #[test]
    fn o1_continue_form_message_is_exact() {
        let f = continue_form();
        assert_eq!(
            f["message"],
            "Complete the step in the web browser. Then select Continue."
        );
        assert_eq!(f["requestedSchema"], continue_schema());
        assert!(f.get("url").is_none() && f.get("elicitationId").is_none());
    }

    #[test]
    fn quirk_has_no_property() {
        assert!(has_no_property(
            &json!({"type": "object", "properties": {}})
        ));
        assert!(has_no_property(&json!({"type": "object"})));
        assert!(!has_no_property(
            &json!({"type": "object", "properties": {"a": {"type": "string"}}})
        ));
    }

    #[test]
    fn o1_requested_schema_compiles_without_its_dialect() {
        let s = json!({"$schema": "https://example.com/not-a-dialect", "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]});
        let v = compile_requested_schema(&s).unwrap();
        assert!(content_is_valid(&v, &json!({"name": "Bo"})));
        assert!(!content_is_valid(&v, &json!({"name": 7})));
        assert!(!content_is_valid(&v, &json!({"name": ""})));
        assert!(!content_is_valid(&v, &json!({})));
    }

    #[test]
    fn o1_requested_schema_that_does_not_compile() {
        for bad in [
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(["}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}),
            json!({"type": "object", "properties": {"a": {"type": "strin"}}}),
        ] {
            assert!(compile_requested_schema(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn o1_formats_are_annotations() {
        let s =
            json!({"type": "object", "properties": {"e": {"type": "string", "format": "email"}}});
        let v = compile_requested_schema(&s).unwrap();
        assert!(content_is_valid(&v, &json!({"e": "not an address"})));
    }
}
