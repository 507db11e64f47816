//! Input hardening: one line → one JSON-RPC message, or the error of docs/errors.md with the id
//! recovered where it can be. Both sides use it.

use serde_json::{Map, Value};

use super::recover::recover_id;
use super::surrogates::replace_lone_surrogates;
use crate::errors::Cause;

/// The nesting limit: serde_json's recursion limit, which the parser enforces itself.
pub const MAX_DEPTH: usize = 128;

/// A message that passed the checks.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response: `Ok(result)` or `Err(error object)`.
    Response {
        id: Value,
        body: Result<Value, Value>,
    },
}

/// The outcome of one line.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    Message(Message),
    /// The line gets an error response with this id (`null` when none was recovered).
    Invalid {
        id: Value,
        cause: Cause,
        detail: Option<String>,
    },
    /// M2: a bad line whose id is a request id of the bridge (`b-…`): it is the client's
    /// answer to that request, and it is not valid. No error goes out.
    BadAnswer {
        id: String,
    },
    /// A response that cannot be matched (no valid id): dropped without a word.
    Dropped,
}

/// True for a JSON-RPC id: a string or an integer that fits 64 bits.
pub fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// The prefix of the ids of the bridge's own requests to VS Code (a quirk of M1: they can
/// never equal an integer id of VS Code).
pub const BRIDGE_ID_PREFIX: &str = "b-";

fn invalid(id: Option<Value>, cause: Cause, detail: Option<String>) -> Parsed {
    if let Some(Value::String(s)) = &id
        && s.starts_with(BRIDGE_ID_PREFIX)
    {
        return Parsed::BadAnswer { id: s.clone() };
    }
    Parsed::Invalid {
        id: id.unwrap_or(Value::Null),
        cause,
        detail,
    }
}

/// A line over `--max-line-bytes`: -32600 `line_too_long` with the recovered id.
pub fn too_long(head: &[u8], tail: &[u8], limit: usize) -> Parsed {
    invalid(
        recover_id(head, tail),
        Cause::LineTooLong,
        Some(format!("limit: {limit} bytes")),
    )
}

/// Parses one line (without its newline).
pub fn parse_line(line: &[u8]) -> Parsed {
    if std::str::from_utf8(line).is_err() {
        return invalid(recover_id(line, line), Cause::ParseError, None);
    }
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(v) => v,
        Err(e) => match retry_after_error(line, &e) {
            Some(v) => v,
            None => return syntax_error(line, &e),
        },
    };
    classify(value)
}

fn retry_after_error(line: &[u8], error: &serde_json::Error) -> Option<Value> {
    // VS Code's JSON.stringify can write a lone surrogate as `\udXXX`; serde_json refuses it.
    // Such a line gets U+FFFD in place of each lone surrogate, as a browser would show it.
    let text = error.to_string();
    if !(text.contains("surrogate") || text.contains("hex escape")) {
        return None;
    }
    let fixed = replace_lone_surrogates(std::str::from_utf8(line).ok()?)?;
    serde_json::from_str(&fixed).ok()
}

fn syntax_error(line: &[u8], error: &serde_json::Error) -> Parsed {
    let id = recover_id(line, line);
    if error.to_string().starts_with("recursion limit exceeded") {
        return invalid(
            id,
            Cause::TooDeep,
            Some(format!("limit: {MAX_DEPTH} levels")),
        );
    }
    invalid(id, Cause::ParseError, None)
}

/// Sorts a parsed value into a message, or the error of its shape.
pub fn classify(value: Value) -> Parsed {
    let Value::Object(mut obj) = value else {
        // A batch (removed in 2025-11-25) or a scalar.
        return invalid(None, Cause::InvalidRequestShape, None);
    };
    let id = obj.get("id").cloned();
    let good_id = id.clone().filter(valid_id);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(good_id, Cause::InvalidRequestShape, None);
    }
    if let Some(method) = obj.get("method") {
        let Some(method) = method.as_str().map(str::to_owned) else {
            return invalid(good_id, Cause::InvalidRequestShape, None);
        };
        let params = obj.remove("params");
        return match id {
            None => Parsed::Message(Message::Notification { method, params }),
            Some(id) if valid_id(&id) => Parsed::Message(Message::Request { id, method, params }),
            Some(_) => invalid(None, Cause::InvalidRequestShape, None),
        };
    }
    response(obj, id)
}

fn response(mut obj: Map<String, Value>, id: Option<Value>) -> Parsed {
    let result = obj.remove("result");
    let error = obj.remove("error");
    let Some(id) = id.filter(valid_id) else {
        return Parsed::Dropped;
    };
    match (result, error) {
        (Some(result), None) => Parsed::Message(Message::Response {
            id,
            body: Ok(result),
        }),
        (None, Some(error)) => Parsed::Message(Message::Response {
            id,
            body: Err(error),
        }),
        _ => invalid(Some(id), Cause::InvalidRequestShape, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(line: &[u8]) -> (Value, Cause, Option<String>) {
        match parse_line(line) {
            Parsed::Invalid { id, cause, detail } => (id, cause, detail),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn requests_notifications_and_responses() {
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Parsed::Message(Message::Request {
                id: json!(1),
                method: "ping".into(),
                params: None
            })
        );
        // VS Code puts jsonrpc last in notifications.
        assert_eq!(
            parse_line(
                br#"{"method":"notifications/cancelled","params":{"requestId":7},"jsonrpc":"2.0"}"#
            ),
            Parsed::Message(Message::Notification {
                method: "notifications/cancelled".into(),
                params: Some(json!({"requestId":7}))
            })
        );
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":"b-1","result":{"action":"accept"}}"#),
            Parsed::Message(Message::Response {
                id: json!("b-1"),
                body: Ok(json!({"action":"accept"}))
            })
        );
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}"#),
            Parsed::Message(Message::Response {
                id: json!(3),
                body: Err(json!({"code":1,"message":"m"}))
            })
        );
    }

    #[test]
    fn parse_error_with_recovered_id() {
        assert_eq!(
            err(br#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"#),
            (json!(5), Cause::ParseError, None)
        );
        assert_eq!(err(b"not json"), (Value::Null, Cause::ParseError, None));
    }

    #[test]
    fn invalid_utf8_is_a_parse_error_with_the_id() {
        assert_eq!(
            err(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\xff\"}"),
            (json!(9), Cause::ParseError, None)
        );
    }

    #[test]
    fn too_deep_has_the_limit() {
        let mut line = br#"{"jsonrpc":"2.0","id":4,"method":"x","params":"#.to_vec();
        line.extend(std::iter::repeat_n(b'[', 200));
        line.extend(std::iter::repeat_n(b']', 200));
        line.push(b'}');
        assert_eq!(
            err(&line),
            (json!(4), Cause::TooDeep, Some("limit: 128 levels".into()))
        );
        // 100 levels pass.
        let mut ok = br#"{"jsonrpc":"2.0","id":4,"method":"x","params":"#.to_vec();
        ok.extend(std::iter::repeat_n(b'[', 100));
        ok.extend(std::iter::repeat_n(b']', 100));
        ok.push(b'}');
        assert!(matches!(parse_line(&ok), Parsed::Message(_)));
    }

    #[test]
    fn invalid_shapes() {
        assert_eq!(
            err(br#"{"jsonrpc":"1.0","id":2,"method":"x"}"#),
            (json!(2), Cause::InvalidRequestShape, None)
        );
        assert_eq!(
            err(br#"{"id":2,"method":"x"}"#),
            (json!(2), Cause::InvalidRequestShape, None)
        );
        assert_eq!(
            err(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            (Value::Null, Cause::InvalidRequestShape, None)
        );
        assert_eq!(err(b"3"), (Value::Null, Cause::InvalidRequestShape, None));
        assert_eq!(
            err(br#"{"jsonrpc":"2.0","id":2,"method":5}"#),
            (json!(2), Cause::InvalidRequestShape, None)
        );
        assert_eq!(
            err(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            (Value::Null, Cause::InvalidRequestShape, None)
        );
        assert_eq!(
            err(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#),
            (Value::Null, Cause::InvalidRequestShape, None)
        );
        assert_eq!(
            err(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            (Value::Null, Cause::InvalidRequestShape, None)
        );
        assert_eq!(
            err(br#"{"jsonrpc":"2.0","id":1}"#),
            (json!(1), Cause::InvalidRequestShape, None)
        );
        assert_eq!(
            err(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#),
            (json!(1), Cause::InvalidRequestShape, None)
        );
    }

    #[test]
    fn responses_without_a_valid_id_are_dropped() {
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
            Parsed::Dropped
        );
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","result":{}}"#),
            Parsed::Dropped
        );
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":[1],"error":{}}"#),
            Parsed::Dropped
        );
    }

    #[test]
    fn m2_bad_answer_to_a_bridge_request_is_no_error() {
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":"b-4","result":"#),
            Parsed::BadAnswer { id: "b-4".into() }
        );
        assert_eq!(
            too_long(br#"{"jsonrpc":"2.0","id":"b-2","#, b"", 10),
            Parsed::BadAnswer { id: "b-2".into() }
        );
    }

    #[test]
    fn too_long_recovers_the_id_from_head_or_tail() {
        assert_eq!(
            too_long(
                br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"a":"xxxx"#,
                b"xxxx\"}}",
                64
            ),
            Parsed::Invalid {
                id: json!(12),
                cause: Cause::LineTooLong,
                detail: Some("limit: 64 bytes".into())
            }
        );
        assert_eq!(
            too_long(
                br#"{"method":"tools/call","params":{"a":"xxxx"#,
                br#"xxxx"}},"jsonrpc":"2.0","id":"r-9"}"#,
                64
            ),
            Parsed::Invalid {
                id: json!("r-9"),
                cause: Cause::LineTooLong,
                detail: Some("limit: 64 bytes".into())
            }
        );
    }

    #[test]
    fn lone_surrogates_of_vscode_are_replaced() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"t":"a\ud800b\udc00","ok":"\ud83d\ude00"}}"#;
        match parse_line(line) {
            Parsed::Message(Message::Request {
                params: Some(p), ..
            }) => {
                assert_eq!(p["t"], "a\u{fffd}b\u{fffd}");
                assert_eq!(p["ok"], "\u{1F600}");
            }
            other => panic!("{other:?}"),
        }
    }
}
