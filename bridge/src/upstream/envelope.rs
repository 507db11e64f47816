//! R1, R3: the `_meta` envelope of 2026-07-28 on every upstream request (pure).

use serde_json::{Map, Value};

use crate::translate::level::{self, LogLevel};

/// The revision that the bridge speaks upstream.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
pub const KEY_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const KEY_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const KEY_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const KEY_LOG_LEVEL: &str = level::LOG_LEVEL_META_KEY;

/// What every request of one connection carries: VS Code's `clientInfo` and the re-shaped
/// capabilities (the same set on every request, so that no result varies by request).
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    pub client_info: Value,
    pub capabilities: Value,
}

impl Envelope {
    /// The `_meta` of one request: the keys of the protocol, the log level of VS Code's last
    /// `logging/setLevel` (none before it, so the upstream sends no log messages), the
    /// progress token of the bridge (the upstream request id) when VS Code asked for progress,
    /// and the keys of VS Code that pass (R3). The keys of the protocol come last, so that no
    /// key of the client can replace them.
    pub fn meta(
        &self,
        log_level: Option<LogLevel>,
        progress_token: Option<i64>,
        passthrough: &Map<String, Value>,
    ) -> Value {
        let mut meta = Map::new();
        for (k, v) in passthrough {
            meta.insert(k.clone(), v.clone());
        }
        meta.insert(KEY_PROTOCOL_VERSION.into(), Value::from(PROTOCOL_VERSION));
        meta.insert(KEY_CLIENT_INFO.into(), self.client_info.clone());
        meta.insert(KEY_CLIENT_CAPABILITIES.into(), self.capabilities.clone());
        if let Some(level) = log_level {
            let (key, value) = level::log_level_meta(level);
            meta.insert(key.into(), value);
        }
        if let Some(token) = progress_token {
            meta.insert("progressToken".into(), Value::from(token));
        }
        Value::Object(meta)
    }
}

/// One request frame with its `_meta`.
pub fn request_frame(id: i64, method: &str, mut params: Map<String, Value>, meta: Value) -> Value {
    params.insert("_meta".into(), meta);
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), Value::from("2.0"));
    frame.insert("id".into(), Value::from(id));
    frame.insert("method".into(), Value::from(method));
    frame.insert("params".into(), Value::Object(params));
    Value::Object(frame)
}

/// `notifications/cancelled` for an upstream request.
pub fn cancel_frame(id: i64, reason: &str) -> Value {
    serde_json::json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": id, "reason": reason}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope() -> Envelope {
        Envelope {
            client_info: json!({"name":"Visual Studio Code","version":"1.140.0"}),
            capabilities: json!({"roots":{}}),
        }
    }

    #[test]
    fn r1_every_request_has_version_info_and_capabilities() {
        let meta = envelope().meta(None, None, &Map::new());
        assert_eq!(
            meta,
            json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                   "io.modelcontextprotocol/clientInfo":{"name":"Visual Studio Code","version":"1.140.0"},
                   "io.modelcontextprotocol/clientCapabilities":{"roots":{}}})
        );
    }

    #[test]
    fn r3_level_token_and_passthrough_keys() {
        let pass = json!({"vscode.requestId":"r","traceparent":"t"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let meta = envelope().meta(Some(LogLevel::Info), Some(7), &pass);
        assert_eq!(meta["io.modelcontextprotocol/logLevel"], "info");
        assert_eq!(meta["progressToken"], 7);
        assert_eq!(meta["vscode.requestId"], "r");
        assert_eq!(meta["traceparent"], "t");
    }

    #[test]
    fn request_frame_keeps_params_and_adds_meta() {
        let params = json!({"name":"add","arguments":{"a":2,"b":3}})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let f = request_frame(3, "tools/call", params, json!({"k":1}));
        assert_eq!(
            f,
            json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"k":1}}})
        );
        assert_eq!(
            cancel_frame(3, "the client canceled the request"),
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the client canceled the request"}})
        );
    }
}
