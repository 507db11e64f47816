//! L1, L3: an upstream server of revision 2025-11-25 or older (docs/older-servers.md). Pure
//! functions: whether the answer to `server/discover` says that the server is older, which
//! revisions its `initialize` result may name, and the bridge's answer to a request of the
//! server. Its request frame is the client's ([`crate::upstream::envelope::RequestFrame::older`]).

use serde_json::{Map, Value};

use crate::wire::lazy::LazyObject;

/// L1: the revisions that an older server may answer `initialize` with.
pub const OLDER_REVISIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// L1: the error codes of a definite answer to `server/discover` from a server that does not
/// know it: method not found, invalid params (the Python SDK validates the unknown method as
/// a request of its own and refuses its params), invalid request.
const DEFINITE_CODES: [i64; 3] = [-32601, -32602, -32600];

/// L1: true when the error that answered `server/discover` says that the server is of an
/// older revision. Only an error answer counts: a time-out, a closed output or any other code
/// is no answer about the revision.
pub fn discover_says_older(error: &Value) -> bool {
    error
        .get("code")
        .and_then(Value::as_i64)
        .is_some_and(|code| DEFINITE_CODES.contains(&code))
}

/// L1, L4: the HTTP statuses of the `server/discover` POST that say that a server at a URL is
/// of an older revision (it refuses the request before any session, or has no such endpoint
/// or method).
const DEFINITE_STATUSES: [u16; 3] = [400, 404, 405];

/// L1, L4: true when the HTTP status of the refused `server/discover` POST says that the
/// server is of an older revision.
pub fn status_says_older(status: u16) -> bool {
    DEFINITE_STATUSES.contains(&status)
}

/// L1: the revision named by an `initialize` result of an older server, when it is one that
/// the bridge relays.
pub fn accepted_revision(result: &Value) -> Option<&str> {
    result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .filter(|v| OLDER_REVISIONS.contains(v))
}

/// L2, C3: VS Code's progress token of a request to an older server (it stays with the
/// bridge; the request goes upstream with the bridge's id as its token).
pub fn progress_token(params: &LazyObject) -> Option<Value> {
    params
        .get_value("_meta")
        .and_then(|meta| meta.get("progressToken").cloned())
        .filter(|t| matches!(t, Value::String(_) | Value::Number(_)))
}

/// L3: the bridge's response upstream to a request of the server (its id as the server gave
/// it).
pub fn upstream_response(id: Value, response: Result<Value, Value>) -> Value {
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), "2.0".into());
    frame.insert("id".into(), id);
    match response {
        Ok(result) => frame.insert("result".into(), result),
        Err(error) => frame.insert("error".into(), error),
    };
    Value::Object(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn l1_only_method_not_found_invalid_params_and_invalid_request_say_older() {
        for code in [-32601, -32602, -32600] {
            assert!(
                discover_says_older(&json!({"code": code, "message": "m"})),
                "{code}"
            );
        }
        for code in [-32603, -32000, -32022, -32700] {
            assert!(
                !discover_says_older(&json!({"code": code, "message": "m"})),
                "{code}"
            );
        }
        assert!(!discover_says_older(&json!({"message": "no code"})));
        assert!(!discover_says_older(&json!({"code": "-32601"})));
    }

    #[test]
    fn l4_only_400_404_and_405_to_the_discover_post_say_older() {
        for status in [400, 404, 405] {
            assert!(status_says_older(status), "{status}");
        }
        for status in [401, 403, 406, 408, 500, 502, 503, 200] {
            assert!(!status_says_older(status), "{status}");
        }
    }

    #[test]
    fn l1_the_older_revisions_are_accepted_and_others_are_not() {
        for v in OLDER_REVISIONS {
            assert_eq!(accepted_revision(&json!({"protocolVersion": v})), Some(v));
        }
        assert_eq!(
            accepted_revision(&json!({"protocolVersion": "2026-07-28"})),
            None
        );
        assert_eq!(
            accepted_revision(&json!({"protocolVersion": "2024-10-07"})),
            None
        );
        assert_eq!(accepted_revision(&json!({})), None);
    }

    #[test]
    fn l2_c3_the_progress_token_of_vscode_is_read_and_other_kinds_are_not_tokens() {
        let lazy = |v: Value| LazyObject::from(v.as_object().cloned().unwrap_or_default());
        assert_eq!(
            progress_token(&lazy(json!({"_meta":{"progressToken":0}}))),
            Some(json!(0))
        );
        assert_eq!(
            progress_token(&lazy(json!({"_meta":{"progressToken":{"x":1}}}))),
            None
        );
        assert_eq!(progress_token(&LazyObject::new()), None);
    }

    #[test]
    fn l3_a_response_upstream_keeps_the_server_id() {
        assert_eq!(
            upstream_response(json!("s-1"), Ok(json!({}))),
            json!({"jsonrpc": "2.0", "id": "s-1", "result": {}})
        );
        assert_eq!(
            upstream_response(json!(3), Err(json!({"code": -1, "message": "m"}))),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "m"}})
        );
    }
}
