//! The request headers of Streamable HTTP 2026-07-28 (pure): `MCP-Protocol-Version`,
//! `Mcp-Method`, and `Mcp-Name` for the requests that name a tool, a prompt or a resource,
//! with the Base64 form for a value that is not a plain header value.

use base64::Engine;
use serde_json::Value;

use crate::upstream::envelope::PROTOCOL_VERSION;

/// What every POST accepts: a JSON body or an SSE stream.
pub const ACCEPT: &str = "application/json, text/event-stream";

/// The header of the revision, of every revision since 2025-06-18: 2026-07-28 on every
/// request, an older server's negotiated revision after its `initialize`.
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// The headers of one request, in order.
pub fn standard_headers(method: &str, frame: &Value) -> Vec<(String, String)> {
    let mut headers = vec![
        (VERSION_HEADER.to_owned(), PROTOCOL_VERSION.to_owned()),
        ("mcp-method".to_owned(), header_value(method)),
    ];
    if let Some(name) = name_source(method, frame) {
        headers.push(("mcp-name".to_owned(), header_value(name)));
    }
    headers
}

/// The member that `Mcp-Name` carries: `params.name` of `tools/call` and `prompts/get`,
/// `params.uri` of `resources/read`.
fn name_source<'a>(method: &str, frame: &'a Value) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    frame.get("params")?.get(key)?.as_str()
}

/// A value as a header value: as it is when it is visible ASCII and spaces without a space at
/// either end and not of the sentinel's form; else `=?base64?<Base64 of UTF-8>?=`.
pub fn header_value(value: &str) -> String {
    let visible = value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = visible && !padded && !sentinel;
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_examples_of_the_specification_encode_as_it_says() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(
            header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(header_value(""), "");
    }

    #[test]
    fn mcp_name_comes_from_the_name_or_the_uri() {
        let call = json!({"params":{"name":"add","arguments":{}}});
        assert_eq!(
            standard_headers("tools/call", &call),
            vec![
                ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
                ("mcp-method".to_owned(), "tools/call".to_owned()),
                ("mcp-name".to_owned(), "add".to_owned()),
            ]
        );
        let read = json!({"params":{"uri":"file:///a b"}});
        assert_eq!(
            standard_headers("resources/read", &read)[2],
            ("mcp-name".to_owned(), "file:///a b".to_owned())
        );
        let get = json!({"params":{"name":"greet"}});
        assert_eq!(standard_headers("prompts/get", &get).len(), 3);
        assert_eq!(
            standard_headers("tools/list", &json!({"params":{}})).len(),
            2
        );
        assert_eq!(
            standard_headers("tools/call", &json!({"params":{"name":7}})).len(),
            2
        );
    }
}
