//! R1, R3: the `_meta` envelope of 2026-07-28 on every request to a server of that revision,
//! and [`RequestFrame`], one upstream request in the dialect of its connection (L2: for an
//! older server, VS Code's params with only the progress token replaced) (pure).

use serde::Serialize;
use serde_json::{Map, Value};

use super::dialect::Dialect;
use crate::translate::level::{self, LogLevel};
use crate::wire::lazy::LazyObject;
use crate::wire::out::{Frame, FrameBuf};

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

    /// The members of `_meta` that are the same on every request of a connection, as JSON
    /// text (a client keeps them, so that each request only copies them).
    pub fn fixed_members(&self) -> Vec<u8> {
        let mut out = vec![b'{'];
        member(&mut out, KEY_PROTOCOL_VERSION, PROTOCOL_VERSION);
        member(&mut out, KEY_CLIENT_INFO, &self.client_info);
        member(&mut out, KEY_CLIENT_CAPABILITIES, &self.capabilities);
        out.remove(0);
        out
    }

    /// The same `_meta` as [`Envelope::meta`], written straight as JSON text with the text of
    /// [`Envelope::fixed_members`]: no map is built for each request (a hot-path choice of
    /// bridge/README.md).
    pub fn meta_bytes_with(
        &self,
        fixed: &[u8],
        log_level: Option<LogLevel>,
        progress_token: Option<i64>,
        passthrough: &Map<String, Value>,
    ) -> Vec<u8> {
        let level = log_level.map(level::log_level_meta);
        let own = |k: &str| {
            k == KEY_PROTOCOL_VERSION
                || k == KEY_CLIENT_INFO
                || k == KEY_CLIENT_CAPABILITIES
                || (level.is_some() && k == KEY_LOG_LEVEL)
                || (progress_token.is_some() && k == "progressToken")
        };
        if passthrough.keys().any(|k| own(k)) {
            // A key of the client that the envelope replaces keeps its place: the map does it.
            let meta = self.meta(log_level, progress_token, passthrough);
            return serde_json::to_vec(&meta).unwrap_or_else(|_| b"{}".to_vec());
        }
        let mut out = Vec::with_capacity(256);
        out.push(b'{');
        for (k, v) in passthrough {
            member(&mut out, k, v);
        }
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(fixed);
        if let Some((key, value)) = &level {
            member(&mut out, key, value);
        }
        if let Some(token) = progress_token {
            member(&mut out, "progressToken", &token);
        }
        out.push(b'}');
        out
    }
}

/// One `"key":value` of an object that `out` has opened.
fn member<T: Serialize + ?Sized>(out: &mut Vec<u8>, key: &str, value: &T) {
    if out.len() > 1 {
        out.push(b',');
    }
    // Into a Vec, a string or a Value cannot fail.
    let _ = serde_json::to_writer(&mut *out, key);
    out.push(b':');
    let _ = serde_json::to_writer(&mut *out, value);
}

/// One upstream request as it goes out, in the dialect of its connection: the params as
/// received (raw members stay raw) with the `_meta` of the envelope in them (R1, R3), or for
/// an older server (L2) the params as received with only the progress token replaced.
#[derive(Clone, Debug)]
pub struct RequestFrame<'a> {
    pub id: i64,
    pub method: &'a str,
    params: &'a LazyObject,
    /// The JSON text of `_meta`, set into the params; `None`: the params as they are.
    meta: Option<Vec<u8>>,
    pub dialect: Dialect,
}

impl<'a> RequestFrame<'a> {
    /// A request of 2026-07-28. `_meta` goes into the params as `Map::insert` puts it: last,
    /// or in the place of a `_meta` that the params have. The params are borrowed: the request
    /// task keeps them for a retry of an input round (R8), and a frame needs no copy of them.
    pub fn new(id: i64, method: &'a str, params: &'a LazyObject, meta: Vec<u8>) -> Self {
        RequestFrame {
            id,
            method,
            params,
            meta: Some(meta),
            dialect: Dialect::Modern,
        }
    }

    /// L2: a request to an older server: VS Code's params as received; with `progress`, the
    /// progress token of `_meta` becomes the bridge's id (C3: VS Code's own token may be `0` on
    /// every request, so progress is keyed by request). Empty params go without `params`.
    pub fn older(id: i64, method: &'a str, params: &'a LazyObject, progress: bool) -> Self {
        let meta = progress
            .then(|| params.get_value("_meta"))
            .flatten()
            .and_then(|meta| match meta.into_owned() {
                Value::Object(mut meta) => {
                    meta.insert("progressToken".into(), Value::from(id));
                    serde_json::to_vec(&meta).ok()
                }
                _ => None,
            });
        RequestFrame {
            id,
            method,
            params,
            meta,
            dialect: Dialect::Older,
        }
    }

    /// False for a request to an older server without params (the member is left out).
    fn has_params(&self) -> bool {
        self.meta.is_some() || !self.params.is_empty()
    }

    /// The frame as one line, with the members of the params written from their bytes.
    pub fn line(&self) -> Frame {
        let meta_len = self.meta.as_ref().map_or(0, Vec::len);
        // The envelope, the method and the `\n`: the buffer never grows.
        let size = 80 + self.method.len() + meta_len + self.params.copied_len();
        let mut out = FrameBuf::with_capacity(size);
        out.push(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_value(&self.id);
        out.push(b",\"method\":");
        out.push_value_str(self.method);
        if self.has_params() {
            out.push(b",\"params\":");
            match &self.meta {
                Some(meta) => self.params.write_setting(&mut out, "_meta", meta),
                None => self.params.write(&mut out),
            }
        }
        out.push(b"}");
        out.into_line()
    }

    /// The frame as a value (a transport that reads members of it, such as HTTP's headers).
    pub fn to_value(&self) -> Value {
        let mut frame = Map::new();
        frame.insert("jsonrpc".into(), Value::from("2.0"));
        frame.insert("id".into(), Value::from(self.id));
        frame.insert("method".into(), Value::from(self.method));
        if self.has_params() {
            let mut params = self.params.to_map();
            if let Some(meta) = &self.meta {
                params.insert(
                    "_meta".into(),
                    serde_json::from_slice(meta).unwrap_or_default(),
                );
            }
            frame.insert("params".into(), Value::Object(params));
        }
        Value::Object(frame)
    }
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
    fn meta_bytes_are_the_meta() {
        let pass = json!({"vscode.requestId":"r","traceparent":"t"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (level, token, pass) in [
            (None, None, Map::new()),
            (Some(LogLevel::Info), Some(7), pass.clone()),
            (None, Some(1), pass),
        ] {
            let e = envelope();
            let bytes = e.meta_bytes_with(&e.fixed_members(), level, token, &pass);
            assert_eq!(
                bytes,
                serde_json::to_vec(&e.meta(level, token, &pass)).unwrap_or_default()
            );
        }
        let clash = json!({"vscode.a":1,"progressToken":"x"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let e = envelope();
        assert_eq!(
            e.meta_bytes_with(&e.fixed_members(), None, Some(3), &clash),
            serde_json::to_vec(&e.meta(None, Some(3), &clash)).unwrap_or_default()
        );
    }

    #[test]
    fn the_line_of_a_request_frame_is_the_request_frame() {
        let params = json!({"name":"add","_meta":{"old":1},"arguments":{"a":2}})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let lazy = params.into();
        let f = RequestFrame::new(3, "tools/call", &lazy, b"{\"k\":1}".to_vec());
        let expected = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
            "params":{"name":"add","_meta":{"k":1},"arguments":{"a":2}}});
        assert_eq!(f.to_value(), expected);
        let mut line = serde_json::to_vec(&expected).unwrap_or_default();
        line.push(b'\n');
        assert_eq!(f.line().to_vec(), line);
    }

    #[test]
    fn l2_a_request_to_an_older_server_gets_the_bridge_id_and_token_and_keeps_the_rest() {
        let lazy = |v: Value| LazyObject::from(v.as_object().cloned().unwrap_or_default());
        let params = lazy(json!({"name": "echo", "arguments": {"x": 1},
            "_meta": {"progressToken": 0, "vscode.requestId": "r"}}));
        let expected = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"x": 1},
                "_meta": {"progressToken": 7, "vscode.requestId": "r"}}});
        let frame = RequestFrame::older(7, "tools/call", &params, true);
        assert_eq!(frame.to_value(), expected);
        let mut line = serde_json::to_vec(&expected).unwrap_or_default();
        line.push(b'\n');
        assert_eq!(frame.line().to_vec(), line);
        let without = RequestFrame::older(7, "tools/call", &params, false);
        assert_eq!(
            without.to_value()["params"]["_meta"],
            json!({"progressToken": 0, "vscode.requestId": "r"}),
            "no progress asked: the params as received"
        );
        let empty = LazyObject::new();
        let bare = RequestFrame::older(8, "tools/list", &empty, false);
        let expected = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"});
        assert_eq!(bare.to_value(), expected);
        let mut line = serde_json::to_vec(&expected).unwrap_or_default();
        line.push(b'\n');
        assert_eq!(bare.line().to_vec(), line);
    }

    #[test]
    fn a_cancellation_names_the_request_and_the_reason() {
        assert_eq!(
            cancel_frame(3, "the client canceled the request"),
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the client canceled the request"}})
        );
    }
}
