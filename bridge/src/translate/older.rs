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

/// L1, L4: the codes of the errors of 2026-07-28 that only a server of that revision (or a
/// later one) sends: `HeaderMismatch` and `MissingRequiredClientCapability`. Such a refusal
/// of `server/discover` is the server's answer, not a sign of an older server.
const MODERN_CODES: [i64; 2] = [-32020, -32021];

/// L1, L4: `UnsupportedProtocolVersionError`, whose `data.supported` names the revisions of
/// the server.
const UNSUPPORTED_VERSION: i64 = -32022;

/// L1, L4: what a refused `server/discover` says of the server (the decision table of L4 in
/// docs/rules.md).
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A server of an older revision: VS Code's `initialize` goes upstream.
    Older,
    /// A server of 2026-07-28 or later that refused the request: its error reaches VS Code.
    Modern,
    /// -32022 that names no revision the bridge speaks: the revisions it names, as sent.
    NoneSpoken(Vec<String>),
}

/// L1, L4: reads a refused `server/discover`: its HTTP status at a URL (`None` on stdio), its
/// JSON-RPC error, if the answer had one, and the revision of the bridge's request (`ours`). `None`: no answer about the revision (a time-out,
/// a 5xx), which is a failure of `initialize`.
pub fn refusal(status: Option<u16>, error: Option<&Value>, ours: &str) -> Option<Refusal> {
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
    match code {
        Some(code) if MODERN_CODES.contains(&code) => return Some(Refusal::Modern),
        Some(UNSUPPORTED_VERSION) => return error.map(|e| supported_says(e, ours)),
        _ => {}
    }
    let older = status.is_some_and(status_says_older) || error.is_some_and(discover_says_older);
    older.then_some(Refusal::Older)
}

/// -32022: the bridge's own revision `ours` (tried again before this is asked) means a server
/// of 2026-07-28, an older revision that the bridge relays an older server, none a failure
/// that names them.
fn supported_says(error: &Value, ours: &str) -> Refusal {
    let supported: Vec<&str> = error
        .pointer("/data/supported")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if supported.contains(&ours) {
        Refusal::Modern
    } else if supported.iter().any(|r| OLDER_REVISIONS.contains(r)) {
        Refusal::Older
    } else {
        Refusal::NoneSpoken(supported.into_iter().map(str::to_owned).collect())
    }
}

/// How many revisions of a -32022 the error names, and how many characters of each: a
/// hostile server's list stays one short line.
const NAMED_REVISIONS: usize = 8;
const REVISION_CHARS: usize = 32;

/// L1, L4: the revisions of a -32022 as the error and the log line name them: each a JSON
/// string (quotes and control characters escaped), at most [`NAMED_REVISIONS`] of at most
/// [`REVISION_CHARS`] characters each.
pub fn named_revisions(supported: &[String]) -> String {
    if supported.is_empty() {
        return "none".to_owned();
    }
    let mut names: Vec<String> = supported
        .iter()
        .take(NAMED_REVISIONS)
        .map(|r| Value::from(r.chars().take(REVISION_CHARS).collect::<String>()).to_string())
        .collect();
    if supported.len() > NAMED_REVISIONS {
        names.push(format!("and {} more", supported.len() - NAMED_REVISIONS));
    }
    names.join(", ")
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

    /// The bridge's revision, as the front passes it.
    const OURS: &str = "2026-07-28";

    #[test]
    fn l4_a_400_with_a_modern_error_is_a_modern_server_and_other_bodies_are_older() {
        let error = |code: i64| json!({"code": code, "message": "m"});
        for code in [-32020, -32021] {
            assert_eq!(
                refusal(Some(400), Some(&error(code)), OURS),
                Some(Refusal::Modern)
            );
            assert_eq!(
                refusal(None, Some(&error(code)), OURS),
                Some(Refusal::Modern)
            );
        }
        assert_eq!(refusal(Some(400), None, OURS), Some(Refusal::Older));
        assert_eq!(
            refusal(Some(400), Some(&error(-32000)), OURS),
            Some(Refusal::Older)
        );
        assert_eq!(
            refusal(None, Some(&error(-32601)), OURS),
            Some(Refusal::Older)
        );
        assert_eq!(refusal(Some(503), None, OURS), None);
        assert_eq!(refusal(None, Some(&error(-32603)), OURS), None);
    }

    #[test]
    fn l4_a_32022_follows_its_supported_revisions() {
        let unsupported =
            |list: Value| json!({"code": -32022, "message": "m", "data": {"supported": list}});
        let older = unsupported(json!(["2025-06-18", "1999-01-01"]));
        assert_eq!(refusal(Some(400), Some(&older), OURS), Some(Refusal::Older));
        assert_eq!(refusal(None, Some(&older), OURS), Some(Refusal::Older));
        let ours = unsupported(json!(["2026-07-28"]));
        assert_eq!(refusal(Some(400), Some(&ours), OURS), Some(Refusal::Modern));
        let none = unsupported(json!(["2027-01-01", 5]));
        assert_eq!(
            refusal(Some(400), Some(&none), OURS),
            Some(Refusal::NoneSpoken(vec!["2027-01-01".into()]))
        );
        let without = json!({"code": -32022, "message": "m"});
        assert_eq!(
            refusal(None, Some(&without), OURS),
            Some(Refusal::NoneSpoken(vec![]))
        );
    }

    #[test]
    fn l4_the_named_revisions_are_escaped_and_capped() {
        assert_eq!(named_revisions(&[]), "none");
        assert_eq!(
            named_revisions(&["a\"\u{7}b".into(), "2027-01-01".into()]),
            r#""a\"\u0007b", "2027-01-01""#
        );
        let many: Vec<String> = (0..10).map(|i| format!("r{i}")).collect();
        assert!(named_revisions(&many).ends_with(", and 2 more"));
        let long = vec!["x".repeat(100)];
        assert_eq!(named_revisions(&long).len(), REVISION_CHARS + 2);
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
