//! The global invariants that every transcript checks on every frame, whatever it says itself
//! (transcripts/README.md lists them), plus the schema check of each frame against the
//! definition of its own message in its revision.
//!
//! Toward VS Code (2025-11-25): one JSON-RPC object a line (R7); string `b-` ids for the
//! bridge's requests, unique; no 2026-07-28 member (R8 and the shaping of results); no non-string
//! `nextCursor` (R4); truthy `items` in every array schema of every tool (R6); a `content` array
//! in every `tools/call` result (R5); no upstream `notifications/cancelled` (quirk); each request
//! answered at most once; no `tasks` declared.
//!
//! At the upstream (2026-07-28): each request valid for its definition, no `task`, only the
//! `_meta` keys of the SDK and of the VS Code profile, no `tasks`, `roots.listChanged`,
//! `sampling.tools` or `sampling.context` in the client capabilities. At an older upstream
//! (the fixture with `--revision 2025-11-25`, docs/harness.md): the same request checks against
//! the schema of 2025-11-25, the upstream's own frames against it too, and each answer of the
//! bridge to a request of the upstream against the result of that request.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use crate::schema::{Frame, SchemaSet};

/// The two schema sets, when the runner has `--schemas`.
#[derive(Clone, Default)]
pub struct Schemas {
    pub legacy: Option<Arc<SchemaSet>>,
    pub modern: Option<Arc<SchemaSet>>,
}

/// Members of 2026-07-28 results that VS Code must never see.
const MODERN_RESULT_MEMBERS: &[&str] = &[
    "resultType",
    "inputRequests",
    "requestState",
    "ttlMs",
    "cacheScope",
    "supportedVersions",
];
/// `_meta` keys of 2026-07-28 results and events that VS Code must never see.
const MODERN_META_KEYS: &[&str] = &[
    "io.modelcontextprotocol/serverInfo",
    "io.modelcontextprotocol/subscriptionId",
];
/// The requests the bridge may send to VS Code (M2).
/// `ping` only from an older upstream, which the relay passes to VS Code (docs/rules.md L3).
const BRIDGE_REQUESTS: &[&str] = &[
    "elicitation/create",
    "sampling/createMessage",
    "roots/list",
    "ping",
];
/// The notifications the bridge may send to VS Code.
const BRIDGE_NOTIFICATIONS: &[&str] = &[
    "notifications/progress",
    "notifications/cancelled",
    "notifications/elicitation/complete",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/message",
];
/// The `_meta` keys an upstream request may carry: the SDK's and the VS Code profile's (R3).
const UPSTREAM_META_KEYS: &[&str] = &[
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/logLevel",
    "progressToken",
    "traceparent",
    "tracestate",
    "vscode.conversationId",
    "vscode.requestId",
];

/// The state of the checks of one transcript. Problems accumulate; the runner fails the
/// transcript on the first one it sees after a step.
#[derive(Default)]
pub struct Checker {
    schemas: Schemas,
    /// Requests the client sent: the id (as JSON text) → method.
    sent: HashMap<String, String>,
    /// Ids of lines that were not valid requests but carried an id (the bridge may answer them
    /// with an error that recovers the id).
    raw_ids: HashSet<String>,
    answered: HashSet<String>,
    bridge_ids: HashSet<String>,
    pub problems: Vec<String>,
    /// The frame of the first problem, for the report.
    pub first_bad: Option<Value>,
    /// The frame being checked.
    current: Option<Value>,
    /// Frames toward VS Code and at the upstream that were checked against a schema.
    pub schema_checked: usize,
    /// The upstream speaks 2025-11-25: its side is checked against that schema.
    pub upstream_legacy: bool,
    /// No bridge: the client talks to the fixture of 2025-11-25 itself (`"direct": true`), so
    /// only the schema and the answers are checked, not the bridge's ids and repairs.
    pub direct: bool,
    /// Requests of an older upstream to the bridge: the id (as JSON text) → method.
    upstream_requests: HashMap<String, String>,
}

fn key(id: &Value) -> String {
    id.to_string()
}

impl Checker {
    pub fn new(schemas: Schemas) -> Self {
        Self {
            schemas,
            ..Self::default()
        }
    }

    /// The method of a request that the client sent with this id.
    pub fn method_of(&self, id: &Value) -> Option<&str> {
        self.sent.get(&key(id)).map(String::as_str)
    }

    /// Records what the client sends: requests (for the answers) and answers to `b-` ids.
    pub fn client_sent(&mut self, frame: &Value) {
        let (Some(id), Some(method)) =
            (frame.get("id"), frame.get("method").and_then(Value::as_str))
        else {
            return;
        };
        self.sent.insert(key(id), method.to_string());
        self.answered.remove(&key(id));
        if self.modern_direct() {
            // The harness is the runtime's own 2026-07-28 client here: its requests are
            // frames of the exchange under test too.
            self.current = Some(frame.clone());
            let set = self.schemas.modern.clone();
            self.schema(set, frame, Frame::Message, &format!("client {method}"));
        }
    }

    /// Records a raw line: an id that the bridge can recover from it may get an error.
    pub fn client_sent_raw(&mut self, text: &str) {
        if let Ok(v) = serde_json::from_str::<Value>(text)
            && v.get("method").is_some_and(Value::is_string)
            && v.get("jsonrpc") == Some(&Value::String("2.0".into()))
        {
            self.client_sent(&v);
            return;
        }
        let re = regex::Regex::new(r#""id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")"#);
        if let Ok(re) = re {
            for c in re.captures_iter(text) {
                if let Some(m) = c.get(1) {
                    self.raw_ids.insert(m.as_str().to_string());
                }
            }
        }
    }

    fn problem(&mut self, p: String) {
        if self.problems.is_empty() {
            self.first_bad = self.current.clone();
        }
        self.problems.push(p);
    }

    fn schema(&mut self, set: Option<Arc<SchemaSet>>, frame: &Value, kind: Frame<'_>, what: &str) {
        let Some(set) = set else { return };
        self.schema_checked += 1;
        match set.check_frame(frame, kind) {
            Ok(list) => {
                for p in list {
                    self.problem(format!("schema {} ({what}): {p}", set.revision()));
                }
            }
            Err(e) => self.problem(format!("schema {} ({what}): {e}", set.revision())),
        }
    }

    /// Checks one stdout line of the bridge; returns the frame when it is a JSON object.
    pub fn toward_client(&mut self, line: &[u8]) -> Option<Value> {
        self.current = Some(Value::String(String::from_utf8_lossy(line).into_owned()));
        let Ok(text) = std::str::from_utf8(line) else {
            self.problem("R7: a stdout line is not UTF-8".into());
            return None;
        };
        if text.contains('\r') {
            self.problem(format!("R7: a stdout line has a carriage return: {text:?}"));
        }
        let frame: Value = match serde_json::from_str(text) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                self.problem(format!(
                    "R7: a stdout line is not one JSON-RPC object: {text}"
                ));
                return None;
            }
        };
        self.current = Some(frame.clone());
        if frame.get("jsonrpc") != Some(&Value::String("2.0".into())) {
            self.problem(format!("R7: a frame without \"jsonrpc\":\"2.0\": {text}"));
        }
        // Directly, the server's own frames: of 2026-07-28 unless it is the older fixture.
        if !self.modern_direct() {
            self.check_no_modern_meta(&frame);
        }
        let legacy = if self.direct {
            self.upstream_schema()
        } else {
            self.schemas.legacy.clone()
        };
        match (frame.get("id"), frame.get("method").and_then(Value::as_str)) {
            (Some(id), Some(method)) => self.bridge_request(id, method, &frame, legacy),
            (None, Some(method)) => self.bridge_notification(method, &frame, legacy),
            (Some(id), None) => self.response(id, &frame, legacy),
            (None, None) => self.problem(format!(
                "a frame that is neither a request, a notification nor a response: {text}"
            )),
        }
        Some(frame)
    }

    fn bridge_request(
        &mut self,
        id: &Value,
        method: &str,
        frame: &Value,
        legacy: Option<Arc<SchemaSet>>,
    ) {
        if self.direct {
            self.schema(legacy, frame, Frame::Message, method);
            return;
        }
        match id.as_str() {
            Some(s) if s.starts_with("b-") => {
                if !self.bridge_ids.insert(s.to_string()) {
                    self.problem(format!(
                        "quirk (cancel ids): the bridge reused its request id {s}"
                    ));
                }
            }
            _ => self.problem(format!(
                "quirk (cancel ids): a request of the bridge must have a string id b-N, got {id}"
            )),
        }
        if !BRIDGE_REQUESTS.contains(&method) {
            self.problem(format!("the bridge sent the request {method} to VS Code"));
            return;
        }
        self.schema(legacy, frame, Frame::Message, method);
    }

    fn bridge_notification(&mut self, method: &str, frame: &Value, legacy: Option<Arc<SchemaSet>>) {
        if self.direct {
            // No bridge: the server's notifications are its own (a listen acknowledgment too).
            self.schema(legacy, frame, Frame::Message, method);
            return;
        }
        if !BRIDGE_NOTIFICATIONS.contains(&method) {
            self.problem(format!(
                "the bridge sent the notification {method} to VS Code"
            ));
            return;
        }
        if method == "notifications/cancelled" {
            let rid = frame.pointer("/params/requestId");
            let ours = rid
                .and_then(Value::as_str)
                .is_some_and(|s| self.bridge_ids.contains(s));
            if !ours {
                self.problem(format!(
                    "quirk (cancel ids): notifications/cancelled toward VS Code names {}, not a request of the bridge (an upstream cancellation was forwarded?)",
                    rid.map_or("nothing".into(), Value::to_string)
                ));
            }
        }
        self.schema(legacy, frame, Frame::Message, method);
    }

    fn response(&mut self, id: &Value, frame: &Value, legacy: Option<Arc<SchemaSet>>) {
        let k = key(id);
        let is_error = frame.get("error").is_some();
        let method = self.sent.get(&k).cloned();
        if id.is_null() {
            if !is_error {
                self.problem("a result with the id null".into());
            }
        } else if method.is_none() && !(is_error && self.raw_ids.contains(&k)) {
            self.problem(format!(
                "a response to the id {k}, which the client never sent"
            ));
        } else if !self.answered.insert(k.clone()) {
            self.problem(format!("the request {k} was answered more than once"));
        }
        if is_error {
            let mut copy = frame.clone();
            if id.is_null()
                && let Some(o) = copy.as_object_mut()
            {
                o.remove("id");
            }
            if let Some(set) = legacy {
                self.schema_checked += 1;
                match set.validate("JSONRPCErrorResponse", &copy) {
                    Ok(list) => list
                        .into_iter()
                        .for_each(|p| self.problem(format!("schema {}: {p}", set.revision()))),
                    Err(e) => self.problem(e),
                }
            }
            return;
        }
        let Some(method) = method else { return };
        let result = frame.get("result").cloned().unwrap_or(Value::Null);
        if !self.direct {
            self.check_result(&method, &result);
        }
        if method == "server/discover" && !self.direct {
            self.problem(
                "C1: server/discover got a result; the bridge answers it with -32601".into(),
            );
            return;
        }
        // Non-object structuredContent stays as the upstream sent it (O11); 2025-11-25 only
        // allows objects, so the schema check leaves it out.
        let mut copy = frame.clone();
        if let Some(sc) = copy.pointer_mut("/result").and_then(Value::as_object_mut)
            && sc.get("structuredContent").is_some_and(|v| !v.is_object())
        {
            sc.remove("structuredContent");
        }
        self.schema(legacy, &copy, Frame::ResponseTo(&method), &method);
    }

    fn check_result(&mut self, method: &str, result: &Value) {
        let Some(obj) = result.as_object() else {
            self.problem(format!("the result of {method} is not an object"));
            return;
        };
        for m in MODERN_RESULT_MEMBERS {
            if obj.contains_key(*m) {
                self.problem(format!(
                    "R8: the result of {method} has the 2026-07-28 member {m}"
                ));
            }
        }
        if let Some(c) = obj.get("nextCursor")
            && !c.is_string()
        {
            self.problem(format!(
                "R4: the result of {method} has a nextCursor that is not a string: {c}"
            ));
        }
        match method {
            "initialize" => {
                if result.pointer("/capabilities/tasks").is_some() {
                    self.problem("tasks: the initialize result declares tasks".into());
                }
                if result
                    .pointer("/capabilities/extensions/io.modelcontextprotocol~1tasks")
                    .is_some()
                {
                    self.problem(
                        "tasks: the initialize result declares the Tasks extension".into(),
                    );
                }
            }
            "tools/list" => {
                for tool in obj
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let name = tool
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string();
                    if let Some(schema) = tool.get("inputSchema") {
                        let mut bad = Vec::new();
                        falsy_items(schema, &mut String::new(), &mut bad);
                        for ptr in bad {
                            self.problem(format!(
                                "R6: tool '{name}': the array schema at '{ptr}' has no truthy items"
                            ));
                        }
                    }
                }
            }
            "tools/call" if !obj.get("content").is_some_and(Value::is_array) => {
                self.problem("R5: the tools/call result has no content array".into());
            }
            _ => {}
        }
    }

    fn check_no_modern_meta(&mut self, frame: &Value) {
        let mut found = Vec::new();
        walk_meta(frame, &mut found);
        for k in found {
            self.problem(format!("R8: a frame toward VS Code has the _meta key {k}"));
        }
    }

    /// Checks one line that the bridge wrote to the upstream; returns the frame.
    pub fn at_upstream(&mut self, text: &str) -> Option<Value> {
        self.current = Some(Value::String(text.to_string()));
        let frame: Value = match serde_json::from_str(text) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                self.problem(format!(
                    "upstream: a line of the bridge is not one JSON-RPC object: {text}"
                ));
                return None;
            }
        };
        if frame.get("jsonrpc") != Some(&Value::String("2.0".into())) {
            self.problem(format!(
                "upstream: a frame without \"jsonrpc\":\"2.0\": {text}"
            ));
        }
        let Some(method) = frame
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            // The bridge answers nothing upstream in 2026-07-28 (no server→client requests);
            // an older upstream's requests get the bridge's answers.
            self.bridge_answered_upstream(&frame);
            return Some(frame);
        };
        if frame.get("id").is_some() {
            if frame.pointer("/params/task").is_some() {
                self.problem(format!("tasks: the upstream request {method} has a task"));
            }
            if let Some(meta) = frame.pointer("/params/_meta").and_then(Value::as_object) {
                for k in meta.keys() {
                    if !UPSTREAM_META_KEYS.contains(&k.as_str()) {
                        self.problem(format!(
                            "R3: the upstream request {method} has the _meta key {k}"
                        ));
                    }
                }
                if let Some(caps) = meta.get("io.modelcontextprotocol/clientCapabilities") {
                    let forbidden = [
                        ("/tasks", "tasks"),
                        (
                            "/extensions/io.modelcontextprotocol~1tasks",
                            "the Tasks extension",
                        ),
                        ("/roots/listChanged", "roots.listChanged"),
                        ("/sampling/tools", "sampling.tools"),
                        ("/sampling/context", "sampling.context"),
                    ];
                    for (ptr, what) in forbidden {
                        if caps.pointer(ptr).is_some() {
                            self.problem(format!(
                                "C2: the upstream request {method} declares {what}"
                            ));
                        }
                    }
                }
            }
        }
        // The bridge's detection probes an older upstream with `server/discover`, a request
        // of 2026-07-28 (docs/harness.md): it is checked against that revision.
        let set = if method == "server/discover" {
            self.schemas.modern.clone()
        } else {
            self.upstream_schema()
        };
        self.schema(set, &frame, Frame::Message, &format!("upstream {method}"));
        Some(frame)
    }

    /// No bridge, and the server is of 2026-07-28: the harness is the Copilot runtime's own
    /// client of that revision (client/modern.rs).
    fn modern_direct(&self) -> bool {
        self.direct && !self.upstream_legacy
    }

    /// The schema of the upstream side: 2026-07-28, or 2025-11-25 for an older upstream.
    fn upstream_schema(&self) -> Option<Arc<SchemaSet>> {
        if self.upstream_legacy {
            self.schemas.legacy.clone()
        } else {
            self.schemas.modern.clone()
        }
    }

    /// An answer of the bridge to a request of an older upstream: valid for the result of
    /// that request; an answer to no request is a problem.
    fn bridge_answered_upstream(&mut self, frame: &Value) {
        if !self.upstream_legacy {
            return;
        }
        let Some(id) = frame.get("id") else { return };
        let Some(method) = self.upstream_requests.remove(&key(id)) else {
            self.problem(format!(
                "upstream: the bridge answered the id {id}, which the upstream did not ask"
            ));
            return;
        };
        let set = self.upstream_schema();
        let what = format!("answer to the upstream's {method}");
        self.schema(set, frame, Frame::ResponseTo(&method), &what);
    }

    /// Checks one line of an older upstream toward the bridge (the tap reports them): valid for
    /// the schema of 2025-11-25; its requests are kept to check the bridge's answers.
    pub fn from_upstream(&mut self, text: &str) {
        if !self.upstream_legacy {
            return;
        }
        self.current = Some(Value::String(text.to_string()));
        let Ok(frame @ Value::Object(_)) = serde_json::from_str::<Value>(text) else {
            self.problem(format!(
                "upstream: a line of the upstream is not JSON: {text}"
            ));
            return;
        };
        let set = self.upstream_schema();
        match (frame.get("id"), frame.get("method").and_then(Value::as_str)) {
            (Some(id), Some(method)) => {
                self.upstream_requests.insert(key(id), method.to_string());
                self.schema(set, &frame, Frame::Message, &format!("upstream's {method}"));
            }
            (None, Some(method)) => {
                self.schema(set, &frame, Frame::Message, &format!("upstream's {method}"));
            }
            // A response of the upstream: its request is one of the bridge's (checked above).
            _ => {}
        }
    }
}

/// Collects the forbidden `_meta` keys anywhere in a frame.
fn walk_meta(v: &Value, found: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(meta) = o.get("_meta").and_then(Value::as_object) {
                for k in MODERN_META_KEYS {
                    if meta.contains_key(*k) {
                        found.push((*k).to_string());
                    }
                }
            }
            o.values().for_each(|c| walk_meta(c, found));
        }
        Value::Array(a) => a.iter().for_each(|c| walk_meta(c, found)),
        _ => {}
    }
}

/// JavaScript's falsy values: what the Copilot extension treats as "no items" (R6).
fn js_falsy(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64().is_none_or(|f| f == 0.0 || f.is_nan()),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// R6: every object with `"type": "array"` must have a truthy `items`. Walks every object of the
/// schema, stricter than Copilot, as the reference does.
pub fn falsy_items(v: &Value, ptr: &mut String, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if o.get("type") == Some(&Value::String("array".into()))
                && o.get("items").is_none_or(js_falsy)
            {
                out.push(ptr.clone());
            }
            for (k, c) in o {
                let len = ptr.len();
                ptr.push('/');
                ptr.push_str(&k.replace('~', "~0").replace('/', "~1"));
                falsy_items(c, ptr, out);
                ptr.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let len = ptr.len();
                ptr.push_str(&format!("/{i}"));
                falsy_items(c, ptr, out);
                ptr.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "invariants_tests.rs"]
mod tests;
