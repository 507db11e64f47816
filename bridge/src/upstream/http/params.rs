//! `x-mcp-header` of Streamable HTTP 2026-07-28 (pure): a tool's input schema can name
//! parameters whose values go into `Mcp-Param-<name>` headers of its `tools/call`. A client on
//! HTTP mirrors them, and leaves a tool whose annotation breaks a constraint out of
//! `tools/list` (with a warning line), so that one bad tool does not stop the others.

use serde_json::{Map, Value};

use super::headers::header_value;

/// The key of the annotation inside a property's schema.
const KEY: &str = "x-mcp-header";
/// The largest integer that a header may carry: 2^53 - 1.
const SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One mirrored parameter: the chain of `properties` keys from the root, and the header name
/// after `Mcp-Param-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    pub path: Vec<String>,
    pub name: String,
}

/// Why a tool is left out of `tools/list`: its annotation breaks a constraint (the text is
/// the warning line's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("the header name {0} occurs twice")]
    Twice(String),
    #[error("x-mcp-header at /{0} is not on a property reached through properties alone")]
    NotReachable(String),
    #[error("x-mcp-header at /{0} is not an HTTP token")]
    NotToken(String),
    #[error("x-mcp-header {0} is on a property that is not a string, an integer or a boolean")]
    NotPrimitive(String),
}

/// The mirrored parameters of one input schema, or why the tool must be left out.
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, ParamError> {
    let mut found = Vec::new();
    collect(input_schema, &mut Vec::new(), &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for header in &found {
        let lower = header.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(ParamError::Twice(header.name.clone()));
        }
        seen.push(lower);
    }
    Ok(found)
}

/// Walks every member: an annotation is valid only on a property reached from the root by
/// `properties` keys alone (not through `items`, a composition, a condition or `$ref`).
fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<ParamHeader>,
) -> Result<(), ParamError> {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map.get(KEY) {
                found.push(check_annotation(map, name, path)?);
            }
            for (key, value) in map {
                if key == KEY {
                    continue;
                }
                path.push(key.clone());
                let result = collect(value, path, found);
                path.pop();
                result?;
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                let result = collect(item, path, found);
                path.pop();
                result?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_annotation(
    property: &Map<String, Value>,
    name: &Value,
    path: &[String],
) -> Result<ParamHeader, ParamError> {
    let statically_reachable = !path.is_empty()
        && path.len().is_multiple_of(2)
        && path.iter().step_by(2).all(|k| k == "properties");
    if !statically_reachable {
        return Err(ParamError::NotReachable(path.join("/")));
    }
    let Some(name) = name
        .as_str()
        .filter(|n| !n.is_empty() && n.bytes().all(is_tchar))
    else {
        return Err(ParamError::NotToken(path.join("/")));
    };
    let primitive = matches!(
        property.get("type").and_then(Value::as_str),
        Some("string" | "integer" | "boolean")
    );
    if !primitive {
        return Err(ParamError::NotPrimitive(name.to_owned()));
    }
    Ok(ParamHeader {
        path: path.iter().skip(1).step_by(2).cloned().collect(),
        name: name.to_owned(),
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The headers of one call: the value at each path, when there is one of the right kind.
pub fn call_headers(headers: &[ParamHeader], arguments: Option<&Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for header in headers {
        let value =
            arguments.and_then(|args| header.path.iter().try_fold(args, |v, key| v.get(key)));
        let text = match value {
            Some(Value::String(s)) => Some(header_value(s)),
            Some(Value::Bool(b)) => Some(b.to_string()),
            Some(Value::Number(n)) => n
                .as_i64()
                .filter(|i| (-SAFE_INTEGER..=SAFE_INTEGER).contains(i))
                .map(|i| i.to_string()),
            _ => None,
        };
        if let Some(text) = text {
            out.push((format!("mcp-param-{}", header.name), text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(props: Value) -> Value {
        json!({"type":"object","properties":props})
    }

    #[test]
    fn the_example_of_the_specification_mirrors_the_region() {
        let s = schema(json!({
            "region":{"type":"string","x-mcp-header":"Region"},
            "query":{"type":"string"}}));
        let headers = param_headers(&s).expect("valid");
        assert_eq!(
            headers,
            vec![ParamHeader {
                path: vec!["region".into()],
                name: "Region".into()
            }]
        );
        let args = json!({"region":"us-west1","query":"SELECT 1"});
        assert_eq!(
            call_headers(&headers, Some(&args)),
            vec![("mcp-param-Region".to_owned(), "us-west1".to_owned())]
        );
        assert!(call_headers(&headers, Some(&json!({"query":"x"}))).is_empty());
        assert!(call_headers(&headers, None).is_empty());
    }

    #[test]
    fn nested_properties_integers_booleans_and_encoded_values() {
        let s = schema(json!({
            "outer":{"type":"object","properties":{
                "n":{"type":"integer","x-mcp-header":"N"},
                "b":{"type":"boolean","x-mcp-header":"B"},
                "t":{"type":"string","x-mcp-header":"T"}}}}));
        let headers = param_headers(&s).expect("valid");
        let args = json!({"outer":{"n":-7,"b":true,"t":"Hello, 世界"}});
        assert_eq!(
            call_headers(&headers, Some(&args)),
            vec![
                ("mcp-param-N".to_owned(), "-7".to_owned()),
                ("mcp-param-B".to_owned(), "true".to_owned()),
                (
                    "mcp-param-T".to_owned(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()
                ),
            ]
        );
        let too_big = json!({"outer":{"n":9007199254740992_i64}});
        assert!(call_headers(&headers, Some(&too_big)).is_empty());
    }

    #[test]
    fn annotations_that_break_a_constraint_leave_the_tool_out() {
        for bad in [
            schema(json!({"a":{"type":"string","x-mcp-header":""}})),
            schema(json!({"a":{"type":"string","x-mcp-header":"a b"}})),
            schema(json!({"a":{"type":"string","x-mcp-header":"a\r\n"}})),
            schema(json!({"a":{"type":"string","x-mcp-header":7}})),
            schema(json!({"a":{"type":"number","x-mcp-header":"A"}})),
            schema(json!({"a":{"type":"array","items":{"type":"string"},"x-mcp-header":"A"}})),
            schema(json!({"a":{"x-mcp-header":"A"}})),
            schema(
                json!({"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}),
            ),
            schema(json!({"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}})),
            schema(json!({"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}})),
            json!({"type":"object","x-mcp-header":"Root"}),
            json!({"$defs":{"d":{"type":"string","x-mcp-header":"D"}}}),
        ] {
            assert!(param_headers(&bad).is_err(), "{bad}");
        }
        assert_eq!(
            param_headers(&schema(json!({"a":{"type":"string"}}))),
            Ok(vec![])
        );
    }
}
