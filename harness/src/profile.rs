//! The frames of VS Code's two MCP clients, byte for byte where it matters
//!: ids, key order, initialize params.
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::format::Profile;

/// How long the Copilot CLI (1.0.79 and later) waits for the answer to its `server/discover`
/// probe of a stdio server before it sends `initialize` on the same connection (about 0.58 s
/// between the two frames was seen); a late answer still arrives on that connection.
pub const COPILOT_DISCOVER_WAIT: Duration = Duration::from_millis(600);

/// What the Copilot CLI does after its `server/discover` probe (C1); which one, by runtime
/// version: `crate::copilot_runtime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterDiscover {
    /// It sends `initialize` (2025-11-25): after no answer in time, after an error such as
    /// -32601, and even after a successful discover result.
    Initialize,
    /// It gives up the server: the answer was -32602 (invalid params).
    Abort,
    /// It takes the 2026-07-28 path on the same connection, with no `initialize`: the discover
    /// result came in time (runtimes from 1.0.92 on; `crate::copilot_runtime`).
    Modern,
}

/// The step of the Copilot CLI 1.0.79–1.0.82 after `answer` (the whole response frame; `None` when none came in
/// [`COPILOT_DISCOVER_WAIT`]).
pub fn copilot_after_discover(answer: Option<&Value>) -> AfterDiscover {
    let code = answer
        .and_then(|a| a.pointer("/error/code"))
        .and_then(Value::as_i64);
    if code == Some(-32602) {
        AfterDiscover::Abort
    } else {
        AfterDiscover::Initialize
    }
}

/// A request in the profile's key order: Local `jsonrpc, id, method, params` (JsonRpcProtocol);
/// Copilot `method, params, jsonrpc, id` (copilot-cli #1268), with `_meta.progressToken: 0`.
pub fn request(profile: Profile, id: i64, method: &str, mut params: Map<String, Value>) -> Value {
    let mut f = Map::new();
    if profile == Profile::Copilot {
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.entry("progressToken").or_insert(json!(0));
        }
        f.insert("method".into(), json!(method));
        f.insert("params".into(), Value::Object(params));
        f.insert("jsonrpc".into(), json!("2.0"));
        f.insert("id".into(), json!(id));
    } else {
        f.insert("jsonrpc".into(), json!("2.0"));
        f.insert("id".into(), json!(id));
        f.insert("method".into(), json!(method));
        f.insert("params".into(), Value::Object(params));
    }
    Value::Object(f)
}

/// A notification in VS Code's key order: `method, params, jsonrpc` (jsonrpc last).
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut f = Map::new();
    f.insert("method".into(), json!(method));
    if let Some(p) = params {
        f.insert("params".into(), p);
    }
    f.insert("jsonrpc".into(), json!("2.0"));
    Value::Object(f)
}

/// The initialize of VS Code 1.141 or of copilot-cli.
pub fn initialize_params(profile: Profile) -> Map<String, Value> {
    let v = if profile == Profile::Copilot {
        json!({"protocolVersion":"2025-11-25",
            "capabilities":{"elicitation":{"form":{},"url":{}},"sampling":{}},
            "clientInfo":{"name":"copilot-cli","version":"1.0.92-4.unstable.r37397886721.gad270aa"}})
    } else {
        json!({"protocolVersion":"2025-11-25",
            "capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},
                "tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}},
                "extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},
            "clientInfo":{"name":"Visual Studio Code","version":"1.141.0"}})
    };
    v.as_object().cloned().unwrap_or_default()
}

/// Copilot's first frame: server/discover with id 0 and the 2026-07-28 `_meta`.
pub fn copilot_discover() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientInfo":{"name":"copilot-cli","version":"1.0.85"},
        "io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{},"url":{}}}}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_initialize_has_no_roots_and_local_declares_them() {
        let c = initialize_params(Profile::Copilot);
        assert!(c["capabilities"].get("roots").is_none());
        assert_eq!(c["clientInfo"]["name"], "copilot-cli");
        let l = initialize_params(Profile::Local);
        assert!(l["capabilities"].get("roots").is_some());
        assert_eq!(l["clientInfo"]["name"], "Visual Studio Code");
    }

    #[test]
    fn notifications_put_jsonrpc_last() {
        let n = notification("notifications/initialized", None).to_string();
        assert_eq!(
            n,
            r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#
        );
    }

    #[test]
    fn copilot_aborts_on_invalid_params_and_initializes_after_anything_else() {
        let err = |code: i64| json!({"jsonrpc":"2.0","id":0,"error":{"code":code,"message":"m"}});
        assert_eq!(
            copilot_after_discover(Some(&err(-32602))),
            AfterDiscover::Abort
        );
        assert_eq!(
            copilot_after_discover(Some(&err(-32601))),
            AfterDiscover::Initialize
        );
        let ok = json!({"jsonrpc":"2.0","id":0,"result":{"supportedVersions":["2026-07-28"]}});
        assert_eq!(copilot_after_discover(Some(&ok)), AfterDiscover::Initialize);
        assert_eq!(copilot_after_discover(None), AfterDiscover::Initialize);
    }

    #[test]
    fn the_copilot_discover_has_id_0() {
        assert_eq!(copilot_discover()["id"], json!(0));
    }

    #[test]
    fn copilot_requests_put_jsonrpc_before_id_and_carry_token_0() {
        let r = request(Profile::Copilot, 3, "tools/list", Map::new()).to_string();
        assert_eq!(
            r,
            r#"{"method":"tools/list","params":{"_meta":{"progressToken":0}},"jsonrpc":"2.0","id":3}"#
        );
        let l = request(Profile::Local, 4, "tools/list", Map::new()).to_string();
        assert_eq!(
            l,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#
        );
    }
}
