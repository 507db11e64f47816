//! R2, R3, C1, C3, O8, O9: method classes and the parameters of a forwarded request.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::wire::lazy::{LazyObject, Member};

/// The `_meta` key that marks a client of revision 2026-07-28 (C1).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// How the bridge handles a method of VS Code (exact and case sensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodClass {
    Initialize,
    /// R2: answered `{}` in every state.
    Ping,
    /// R2: answered `{}` in every state; the level is kept for upstream requests.
    SetLevel,
    /// C1, C4: -32601 at once, in every state, never forwarded.
    Discover,
    /// O7 (M3): the listen stream handles these.
    Subscribe,
    Unsubscribe,
    /// O8, O9: forwarded upstream with the same name.
    Forward(ForwardKind),
    /// Everything else: -32601.
    Unknown,
}

/// The kinds of forwarded requests; they differ in their time limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForwardKind {
    List,
    Read,
    Call,
    Complete,
}

/// The waits of R8 and docs/errors.md (`timeout`): lists and reads 120 s, calls 1 h.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(120);
pub const READ_TIMEOUT: Duration = Duration::from_secs(120);
pub const CALL_TIMEOUT: Duration = Duration::from_secs(3600);
/// M2: the wait for VS Code's answers of one input round (a person fills the form), and every
/// later upstream round of a read (the upstream may work on the answers).
pub const INPUT_TIMEOUT: Duration = Duration::from_secs(3600);

impl ForwardKind {
    /// The time limit of one upstream round of this kind.
    pub fn timeout(self) -> Duration {
        match self {
            ForwardKind::List | ForwardKind::Complete => LIST_TIMEOUT,
            ForwardKind::Read => READ_TIMEOUT,
            ForwardKind::Call => CALL_TIMEOUT,
        }
    }

    /// R8: the time limit of upstream round
    /// `round` (0 = the first request): a read's retries get the input wait.
    pub fn timeout_for_round(self, round: u32) -> Duration {
        match self {
            ForwardKind::Read if round > 0 => INPUT_TIMEOUT,
            other => other.timeout(),
        }
    }
}

/// Sorts a method of VS Code into its class.
pub fn classify(method: &str) -> MethodClass {
    match method {
        "initialize" => MethodClass::Initialize,
        "ping" => MethodClass::Ping,
        "logging/setLevel" => MethodClass::SetLevel,
        "server/discover" => MethodClass::Discover,
        "resources/subscribe" => MethodClass::Subscribe,
        "resources/unsubscribe" => MethodClass::Unsubscribe,
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            MethodClass::Forward(ForwardKind::List)
        }
        "prompts/get" | "resources/read" => MethodClass::Forward(ForwardKind::Read),
        "tools/call" => MethodClass::Forward(ForwardKind::Call),
        "completion/complete" => MethodClass::Forward(ForwardKind::Complete),
        _ => MethodClass::Unknown,
    }
}

/// C1: true when the `_meta` of the params has the protocol-version key of 2026-07-28, the
/// mark of a client that speaks both revisions.
pub fn has_modern_meta(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(PROTOCOL_VERSION_KEY))
}

/// The parts of a forwarded request.
#[derive(Clone, Debug)]
pub struct Forwarded {
    /// The params without `_meta` and `task`; every other member is kept unchanged (as the
    /// bytes received, where the line took the pass-through parse).
    pub params: LazyObject,
    /// R3, C3, O4: VS Code's progress token (a UUID string, the integer 0, …); it stays with
    /// the bridge and is never sent upstream.
    pub progress_token: Option<Value>,
    /// R3: the `_meta` keys of VS Code that go upstream.
    pub meta: Map<String, Value>,
}

/// R3, C3: splits the params of a forwarded request. Params that are missing or not an
/// object become `{}`; `task` goes away because the bridge declares no tasks. The params are
/// taken by value, so that a large argument is never copied here.
#[cfg(test)]
pub fn forward_params(params: Option<Value>) -> Forwarded {
    forward_object(match params {
        Some(Value::Object(map)) => LazyObject::from(map),
        _ => LazyObject::new(),
    })
}

/// R3, C3: `forward_params` (the form of the tests) of params whose members are parsed on demand: only `_meta` is
/// read; `task` and `_meta` go away as `Map::remove` takes them.
pub fn forward_object(mut out: LazyObject) -> Forwarded {
    out.remove("task");
    let meta = out.remove("_meta").map(Member::into_value);
    let meta = meta.as_ref().and_then(Value::as_object);
    let progress_token = meta
        .and_then(|m| m.get("progressToken"))
        .filter(|t| matches!(t, Value::String(_) | Value::Number(_) | Value::Bool(_)))
        .cloned();
    let passed = meta
        .map(|m| {
            m.iter()
                .filter(|(k, _)| passes_upstream(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    Forwarded {
        params: out,
        progress_token,
        meta: passed,
    }
}

/// R3: a `_meta` key of VS Code goes upstream when the VS Code profile allows it
/// (`traceparent`, `tracestate`, or the prefix `vscode.`), it is a valid key of 2026-07-28,
/// the SDK does not own it, and it has no reserved prefix.
pub fn passes_upstream(key: &str) -> bool {
    let allowed = key == "traceparent" || key == "tracestate" || key.starts_with("vscode.");
    allowed && valid_meta_key(key) && !sdk_owned(key) && !reserved_prefix(key)
}

fn sdk_owned(key: &str) -> bool {
    key == "progressToken" || key.starts_with("io.modelcontextprotocol/")
}

/// The spec's rule for a `_meta` key: an optional prefix of dot-separated labels that ends
/// with `/` (each label starts with a letter, ends with a letter or digit, and has letters,
/// digits or hyphens inside), then a name that is empty or starts and ends with an
/// alphanumeric character and has alphanumerics, `-`, `_` and `.` inside.
pub fn valid_meta_key(key: &str) -> bool {
    let (prefix, name) = match key.rfind('/') {
        Some(slash) => (Some(&key[..slash]), &key[slash + 1..]),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty() || !prefix.split('.').all(valid_label))
    {
        return false;
    }
    valid_name(name)
}

fn valid_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphabetic()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        }
        _ => false,
    }
}

fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match (bytes.first(), bytes.last()) {
        (None, _) => true,
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// A prefix whose second label is `modelcontextprotocol` or `mcp` belongs to MCP.
fn reserved_prefix(key: &str) -> bool {
    let Some(slash) = key.rfind('/') else {
        return false;
    };
    matches!(
        key[..slash].split('.').nth(1),
        Some("modelcontextprotocol") | Some("mcp")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn r2_c1_method_classes_are_exact() {
        assert_eq!(classify("initialize"), MethodClass::Initialize);
        assert_eq!(classify("ping"), MethodClass::Ping);
        assert_eq!(classify("logging/setLevel"), MethodClass::SetLevel);
        assert_eq!(classify("server/discover"), MethodClass::Discover);
        assert_eq!(classify("resources/subscribe"), MethodClass::Subscribe);
        assert_eq!(classify("resources/unsubscribe"), MethodClass::Unsubscribe);
        for m in [
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
        ] {
            assert_eq!(classify(m), MethodClass::Forward(ForwardKind::List), "{m}");
        }
        assert_eq!(
            classify("prompts/get"),
            MethodClass::Forward(ForwardKind::Read)
        );
        assert_eq!(
            classify("resources/read"),
            MethodClass::Forward(ForwardKind::Read)
        );
        assert_eq!(
            classify("tools/call"),
            MethodClass::Forward(ForwardKind::Call)
        );
        assert_eq!(
            classify("completion/complete"),
            MethodClass::Forward(ForwardKind::Complete)
        );
        for m in [
            "subscriptions/listen",
            "tasks/get",
            "tasks/list",
            "Tools/List",
            "",
            "initialize ",
        ] {
            assert_eq!(classify(m), MethodClass::Unknown, "{m}");
        }
    }

    #[test]
    fn waits_of_the_contract() {
        assert_eq!(ForwardKind::List.timeout(), Duration::from_secs(120));
        assert_eq!(ForwardKind::Complete.timeout(), Duration::from_secs(120));
        assert_eq!(ForwardKind::Read.timeout(), Duration::from_secs(120));
        assert_eq!(ForwardKind::Call.timeout(), Duration::from_secs(3600));
        // R8: the retries of a read wait as long as the input itself.
        assert_eq!(
            ForwardKind::Read.timeout_for_round(0),
            Duration::from_secs(120)
        );
        assert_eq!(
            ForwardKind::Read.timeout_for_round(1),
            Duration::from_secs(3600)
        );
        assert_eq!(
            ForwardKind::Call.timeout_for_round(5),
            Duration::from_secs(3600)
        );
        assert_eq!(
            ForwardKind::List.timeout_for_round(1),
            Duration::from_secs(120)
        );
    }

    #[test]
    fn c1_modern_meta_is_recognised() {
        assert!(has_modern_meta(Some(
            &json!({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})
        )));
        assert!(!has_modern_meta(Some(
            &json!({"_meta":{"progressToken":1}})
        )));
        assert!(!has_modern_meta(Some(
            &json!({"io.modelcontextprotocol/protocolVersion":"x"})
        )));
        assert!(!has_modern_meta(Some(&json!({"_meta":"x"}))));
        assert!(!has_modern_meta(None));
    }

    #[test]
    fn r3_only_trace_and_vscode_keys_go_upstream() {
        let params = json!({"name":"add","arguments":{"a":2,"_meta":{"kept":1}},"task":{},
            "_meta":{"progressToken":"p","vscode.conversationId":"c","vscode.requestId":"r",
              "traceparent":"00-1-01","tracestate":"x=1","other":"o","vscode.bad key":"k","vscode.":"e",
              "io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/x":1,"baggage":"b",
              "vscode.mcp/x":1}});
        let f = forward_params(Some(params));
        assert_eq!(
            f.params.into_map(),
            json!({"name":"add","arguments":{"a":2,"_meta":{"kept":1}}})
                .as_object()
                .cloned()
                .unwrap_or_default()
        );
        assert_eq!(f.progress_token, Some(json!("p")));
        assert_eq!(
            Value::Object(f.meta),
            json!({"vscode.conversationId":"c","vscode.requestId":"r","traceparent":"00-1-01","tracestate":"x=1"})
        );
    }

    #[test]
    fn c3_progress_token_zero_and_other_scalars() {
        for token in [
            json!(0),
            json!("3f1c2e0a"),
            json!(1.5),
            json!(true),
            json!(""),
            json!(u64::MAX),
        ] {
            let f = forward_params(Some(json!({"_meta":{"progressToken":token}})));
            assert_eq!(f.progress_token, Some(token));
        }
        for token in [json!(null), json!({}), json!([0])] {
            let f = forward_params(Some(json!({"_meta":{"progressToken":token}})));
            assert_eq!(f.progress_token, None);
        }
        assert_eq!(
            forward_params(Some(json!({"_meta":[1]}))).progress_token,
            None
        );
    }

    #[test]
    fn r3_params_missing_or_not_object_become_empty() {
        for p in [None, Some(json!(null)), Some(json!([1])), Some(json!("x"))] {
            let f = forward_params(p);
            assert!(f.params.is_empty() && f.meta.is_empty() && f.progress_token.is_none());
        }
        let f = forward_params(Some(json!({"cursor":"c2"})));
        assert_eq!(Value::Object(f.params.into_map()), json!({"cursor":"c2"}));
    }

    #[test]
    fn r3_meta_key_rules() {
        for ok in [
            "vscode.conversationId",
            "a",
            "com.example/x",
            "com.example.mcp/y",
            "a-b.c/",
            "x_y.z",
            "1a",
        ] {
            assert!(valid_meta_key(ok), "{ok}");
        }
        for bad in [
            "vscode.",
            "vscode.bad key",
            "/x",
            "1com/x",
            "com-/x",
            "a..b/x",
            "_x",
            "x_",
            "é",
        ] {
            assert!(!valid_meta_key(bad), "{bad}");
        }
        assert!(reserved_prefix("io.modelcontextprotocol/x"));
        assert!(reserved_prefix("dev.mcp/x"));
        assert!(reserved_prefix("org.modelcontextprotocol.api/x"));
        assert!(!reserved_prefix("com.example.mcp/x"));
        assert!(!reserved_prefix("mcp"));
    }
}
