//! One connection of `harness check`: the server (or the bridge in front of it) as a child
//! process on stdio, driven like VS Code drives it. The requests of the server are answered with
//! the simulator's defaults: roots from the current folder (none on Copilot), forms accepted
//! with their default values, URLs declined, a canned sampling answer.
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::format::Profile;
use crate::process::Bridge;
use crate::profile::request;

/// What a wait for a response gave instead of the response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// No response within the bound.
    Timeout,
    /// The stdout of the process ended.
    Eof,
    /// Writing to the process failed.
    Write(String),
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Timeout => write!(f, "no response in time"),
            Broken::Eof => write!(f, "the process closed its stdout"),
            Broken::Write(e) => write!(f, "{e}"),
        }
    }
}

/// A running process spoken to as VS Code would.
pub struct Conn {
    pub proc: Bridge,
    pub profile: Profile,
    next_id: i64,
    /// Responses that came while another one was awaited (id as JSON text).
    stash: HashMap<String, Value>,
    /// The methods of the requests that the process sent to the client, in order.
    pub asked: Vec<String>,
    /// Notifications from the process, in order.
    pub notifications: Vec<Value>,
    /// Stdout lines that are not JSON-RPC messages (R7).
    pub not_json: Vec<String>,
    pub started: Instant,
}

impl Conn {
    /// Starts `program args…` with the tag of the check in its environment.
    pub fn spawn(
        program: &Path,
        args: &[String],
        profile: Profile,
        tag: &str,
    ) -> Result<Self, String> {
        let proc = Bridge::spawn(program, args, &[], tag)?;
        Ok(Self {
            proc,
            profile,
            next_id: if profile == Profile::Copilot { 0 } else { 1 },
            stash: HashMap::new(),
            asked: Vec::new(),
            notifications: Vec::new(),
            not_json: Vec::new(),
            started: Instant::now(),
        })
    }

    /// The next request id of the client (Copilot starts at 0, the Local harness at 1).
    pub fn take_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub async fn send(&mut self, frame: &Value) -> Result<(), Broken> {
        self.proc
            .write(format!("{frame}\n").as_bytes())
            .await
            .map_err(Broken::Write)
    }

    /// Sends a request in the profile's shape; gives its id.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<i64, Broken> {
        let id = self.take_id();
        let frame = request(self.profile, id, method, params);
        self.send(&frame).await?;
        Ok(id)
    }

    /// Sends a request and waits for its response (the whole frame).
    pub async fn call(
        &mut self,
        method: &str,
        params: Map<String, Value>,
        bound: Duration,
    ) -> Result<Value, Broken> {
        let id = self.send_request(method, params).await?;
        self.response(id, bound).await
    }

    /// A response to `id` that came while another one was awaited, if any.
    pub fn stashed(&mut self, id: i64) -> Option<Value> {
        self.stash.remove(&json!(id).to_string())
    }

    /// Waits for the response to `id`, answering the requests of the process meanwhile.
    pub async fn response(&mut self, id: i64, bound: Duration) -> Result<Value, Broken> {
        let key = json!(id).to_string();
        if let Some(r) = self.stash.remove(&key) {
            return Ok(r);
        }
        let deadline = Instant::now() + bound;
        loop {
            let frame = self.next_frame(deadline).await?;
            let method = frame.get("method").and_then(Value::as_str);
            match (frame.get("id"), method) {
                (Some(rid), None) if *rid == json!(id) => return Ok(frame),
                (Some(rid), None) => {
                    self.stash.insert(rid.to_string(), frame.clone());
                }
                (Some(rid), Some(m)) => {
                    let (rid, m) = (rid.clone(), m.to_string());
                    self.answer(&rid, &m, frame.get("params")).await?;
                }
                (None, Some(_)) => self.notifications.push(frame),
                _ => {}
            }
        }
    }

    /// Reads frames until nothing comes for `quiet` (notifications after the lists: list
    /// changes that make VS Code list again), answering requests meanwhile.
    pub async fn settle(&mut self, quiet: Duration) {
        loop {
            let deadline = Instant::now() + quiet;
            let Ok(frame) = self.next_frame(deadline).await else {
                return;
            };
            let method = frame.get("method").and_then(Value::as_str);
            match (frame.get("id"), method) {
                (Some(rid), Some(m)) => {
                    let (rid, m) = (rid.clone(), m.to_string());
                    if self.answer(&rid, &m, frame.get("params")).await.is_err() {
                        return;
                    }
                }
                (None, Some(_)) => self.notifications.push(frame),
                (Some(rid), None) => {
                    self.stash.insert(rid.to_string(), frame.clone());
                }
                _ => {}
            }
        }
    }

    /// The next JSON-RPC message on stdout; other lines are recorded and skipped, as VS Code
    /// skips them.
    async fn next_frame(&mut self, deadline: Instant) -> Result<Value, Broken> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match tokio::time::timeout(left, self.proc.stdout.recv()).await {
                Err(_) => return Err(Broken::Timeout),
                Ok(None) => return Err(Broken::Eof),
                Ok(Some(line)) => line,
            };
            let text = String::from_utf8_lossy(&line.bytes).into_owned();
            match serde_json::from_str::<Value>(&text) {
                Ok(v) if v.get("jsonrpc") == Some(&json!("2.0")) => return Ok(v),
                _ if text.trim().is_empty() => {}
                _ => {
                    if self.not_json.len() < 5 {
                        self.not_json.push(text.chars().take(200).collect());
                    }
                }
            }
        }
    }

    /// Answers a request of the process with the simulator's default.
    async fn answer(
        &mut self,
        id: &Value,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(), Broken> {
        self.asked.push(method.to_string());
        let outcome = default_answer(self.profile, method, params);
        let mut reply = Map::new();
        reply.insert("jsonrpc".into(), json!("2.0"));
        reply.insert("id".into(), id.clone());
        match outcome {
            Ok(result) => reply.insert("result".into(), result),
            Err((code, message)) => {
                reply.insert("error".into(), json!({"code": code, "message": message}))
            }
        };
        self.send(&Value::Object(reply)).await
    }

    /// Closes stdin and waits for the exit within `bound`; kills the tree after it. Gives the
    /// time the process took, or `None` when it had to be killed.
    pub async fn stop(&mut self, bound: Duration) -> Option<Duration> {
        let t0 = Instant::now();
        self.proc.close_stdin();
        let exited = self.proc.wait_exit(bound).await.is_some();
        self.proc.cleanup().await;
        exited.then(|| t0.elapsed())
    }
}

/// The default answer of the simulator to a request of the server (or of the bridge).
pub fn default_answer(
    profile: Profile,
    method: &str,
    params: Option<&Value>,
) -> Result<Value, (i64, String)> {
    match method {
        "ping" => Ok(json!({})),
        "roots/list" if profile == Profile::Copilot => {
            Err((-32601, "Method not found: roots/list".into()))
        }
        "roots/list" => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
            let name = cwd
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "workspace".into());
            let path = cwd.to_string_lossy().replace('\\', "/");
            let uri = if path.starts_with('/') {
                format!("file://{path}")
            } else {
                format!("file:///{path}")
            };
            Ok(json!({"roots":[{"uri": uri, "name": name}]}))
        }
        "sampling/createMessage" => Ok(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "harness check: a sampled answer"},
            "model": "harness-check"
        })),
        "elicitation/create" => {
            let params = params.cloned().unwrap_or_default();
            if params.get("mode") == Some(&json!("url")) {
                // The simulator opens no browser.
                return Ok(json!({"action": "decline"}));
            }
            let schema = params.get("requestedSchema").cloned().unwrap_or_default();
            Ok(json!({"action": "accept", "content": form_defaults(&schema)}))
        }
        other => Err((-32601, format!("Method not found: {other}"))),
    }
}

/// The content of an accepted form: each property's `default`, else the first enum value, else
/// an empty value of its type.
pub fn form_defaults(schema: &Value) -> Value {
    let mut out = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    for (name, prop) in props.into_iter().flatten() {
        let value = if let Some(d) = prop.get("default") {
            d.clone()
        } else if let Some(first) = prop
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            first.clone()
        } else if let Some(first) = prop
            .get("oneOf")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
            .and_then(|c| c.get("const"))
        {
            first.clone()
        } else {
            match prop.get("type").and_then(Value::as_str) {
                Some("number") | Some("integer") => json!(prop.get("minimum").unwrap_or(&json!(0))),
                Some("boolean") => json!(false),
                Some("array") => json!([]),
                _ => json!("harness"),
            }
        };
        out.insert(name.clone(), value);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_gives_no_roots_and_local_gives_the_current_folder() {
        assert!(default_answer(Profile::Copilot, "roots/list", None).is_err());
        let r = default_answer(Profile::Local, "roots/list", None).unwrap();
        assert!(
            r["roots"][0]["uri"]
                .as_str()
                .unwrap()
                .starts_with("file:///")
        );
    }

    #[test]
    fn forms_are_accepted_with_defaults_and_urls_declined() {
        let p = json!({"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{
            "a":{"type":"string","default":"x"},"b":{"type":"integer","minimum":2},
            "c":{"type":"string","enum":["e1","e2"]},"d":{"type":"boolean"}}}});
        let r = default_answer(Profile::Local, "elicitation/create", Some(&p)).unwrap();
        assert_eq!(
            r,
            json!({"action":"accept","content":{"a":"x","b":2,"c":"e1","d":false}})
        );
        let u = json!({"mode":"url","url":"https://example.com","message":"m","elicitationId":"e"});
        let r = default_answer(Profile::Local, "elicitation/create", Some(&u)).unwrap();
        assert_eq!(r, json!({"action":"decline"}));
    }
}
