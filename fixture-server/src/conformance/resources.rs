//! The `test://` resources of the conformance suite's server scenarios: a text, a binary, the
//! template `test://template/{id}/data` and the resource that `resources-subscribe` watches.
use serde_json::{Value, json};

use super::PNG;

/// The template of `resources-templates-read`.
const TEMPLATE: &str = "test://template/{id}/data";

/// The resources of `resources/list`, as wire JSON.
pub fn definitions() -> Vec<Value> {
    vec![
        json!({"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"}),
        json!({"uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource (a PNG image)", "mimeType": "image/png"}),
        json!({"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain"}),
    ]
}

/// The templates of `resources/templates/list`, as wire JSON.
pub fn templates() -> Vec<Value> {
    vec![json!({
        "uriTemplate": TEMPLATE,
        "name": "template",
        "description": "A resource template with the parameter id",
        "mimeType": "application/json"
    })]
}

/// The contents of `uri`, as wire JSON; `None` for a URI that is not one of these.
pub fn read(uri: &str) -> Option<Value> {
    let content = match uri {
        "test://static-text" => json!({
            "uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource."
        }),
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
        "test://watched-resource" => json!({
            "uri": uri, "mimeType": "text/plain", "text": "The watched resource."
        }),
        _ => {
            let id = uri
                .strip_prefix("test://template/")?
                .strip_suffix("/data")
                .filter(|id| !id.is_empty() && !id.contains('/'))?;
            let text =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            json!({"uri": uri, "mimeType": "application/json", "text": text.to_string()})
        }
    };
    Some(content)
}
