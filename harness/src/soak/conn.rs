//! One bridge of the soak, driven as VS Code drives it: requests in the profile's key order,
//! every stdout line checked (JSON-RPC 2.0 only, R7), every response counted by its id: exactly
//! once, or at most once for a request that the client cancelled (the bridge then owes no
//! response).
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::format::Profile;
use crate::process::{self, Bridge};
use crate::profile;

/// The bound of one exchange (a loaded machine, a sign-in, an input round).
pub const EXCHANGE: Duration = Duration::from_secs(30);

/// What one connection counted.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub requests: u64,
    pub answered: u64,
    pub cancelled: u64,
    pub lost: u64,
    pub doubled: u64,
    pub bad_frames: u64,
    pub progress: u64,
    pub list_changes: u64,
    pub updates: u64,
    pub parse_errors: u64,
    pub bad_lines_sent: u64,
    pub problems: Vec<String>,
}

impl Tally {
    pub fn add(&mut self, other: &Tally) {
        self.requests += other.requests;
        self.answered += other.answered;
        self.cancelled += other.cancelled;
        self.lost += other.lost;
        self.doubled += other.doubled;
        self.bad_frames += other.bad_frames;
        self.progress += other.progress;
        self.list_changes += other.list_changes;
        self.updates += other.updates;
        self.parse_errors += other.parse_errors;
        self.bad_lines_sent += other.bad_lines_sent;
        self.problems.extend(other.problems.iter().cloned());
    }
}

/// A request of the client: how many responses came, and whether the client cancelled it.
#[derive(Debug, Default)]
struct Sent {
    responses: u32,
    cancelled: bool,
}

/// The client side of one bridge process.
pub struct Conn {
    pub bridge: Bridge,
    pub profile: Profile,
    next_id: i64,
    sent: HashMap<String, Sent>,
    stash: HashMap<String, Value>,
    pub tally: Tally,
    /// The notifications/cancelled of the bridge for its own `b-` requests.
    pub cancelled_questions: Vec<String>,
}

impl Conn {
    pub fn start(
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        profile: Profile,
        tag: &str,
    ) -> Result<Conn, String> {
        Ok(Conn {
            bridge: Bridge::spawn(program, args, env, tag)?,
            profile,
            next_id: 1,
            sent: HashMap::new(),
            stash: HashMap::new(),
            tally: Tally::default(),
            cancelled_questions: Vec::new(),
        })
    }

    pub async fn send(&mut self, frame: &Value) -> Result<(), String> {
        let mut line = frame.to_string().into_bytes();
        line.push(b'\n');
        self.bridge.write(&line).await
    }

    /// A line that is not JSON: the bridge answers it with a parse error of id null.
    pub async fn send_bad_line(&mut self) -> Result<(), String> {
        self.tally.bad_lines_sent += 1;
        self.bridge.write(b"this is not JSON\n").await
    }

    /// Sends a request with the next id and records it.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<i64, String> {
        let id = self.next_id;
        self.next_id += 1;
        let params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        self.send_with_id(id, method, params).await?;
        Ok(id)
    }

    /// Sends a request with a chosen id (Copilot's server/discover has id 0).
    pub async fn send_with_id(
        &mut self,
        id: i64,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<(), String> {
        let frame = profile::request(self.profile, id, method, params);
        self.sent.insert(json!(id).to_string(), Sent::default());
        self.tally.requests += 1;
        self.send(&frame).await
    }

    /// The client cancels its request `id` (the bridge owes no response for it).
    pub async fn cancel(&mut self, id: i64) -> Result<(), String> {
        if let Some(s) = self.sent.get_mut(&json!(id).to_string()) {
            s.cancelled = true;
        }
        let note = profile::notification(
            "notifications/cancelled",
            Some(json!({"requestId": id, "reason": "the soak stops the chat"})),
        );
        self.send(&note).await
    }

    /// The next stdout frame, checked and counted; None at the end of stdout.
    pub async fn next(&mut self, bound: Duration) -> Result<Option<Value>, String> {
        let line = match tokio::time::timeout(bound, self.bridge.stdout.recv()).await {
            Err(_) => return Err(format!("no frame in {} s", bound.as_secs())),
            Ok(None) => return Ok(None),
            Ok(Some(line)) => line,
        };
        let frame: Value = match serde_json::from_slice(&line.bytes) {
            Ok(v @ Value::Object(_)) if v["jsonrpc"] == "2.0" && line.terminated => v,
            _ => {
                self.tally.bad_frames += 1;
                let text = String::from_utf8_lossy(&line.bytes);
                let head: String = text.chars().take(120).collect();
                self.tally
                    .problems
                    .push(format!("a stdout line that is not JSON-RPC: {head}"));
                return Ok(Some(Value::Null));
            }
        };
        let is_response = frame.get("method").is_none()
            && (frame.get("result").is_some() || frame.get("error").is_some());
        if is_response {
            self.count_response(&frame);
        } else if frame.get("id").is_none() {
            match frame["method"].as_str().unwrap_or_default() {
                "notifications/progress" => self.tally.progress += 1,
                "notifications/resources/updated" => self.tally.updates += 1,
                "notifications/cancelled" => {
                    if let Some(id) = frame["params"]["requestId"].as_str() {
                        self.cancelled_questions.push(id.to_owned());
                    }
                }
                m if m.ends_with("/list_changed") => self.tally.list_changes += 1,
                _ => {}
            }
        }
        Ok(Some(frame))
    }

    fn count_response(&mut self, frame: &Value) {
        let id = &frame["id"];
        if id.is_null() {
            self.tally.parse_errors += 1;
            return;
        }
        match self.sent.get_mut(&id.to_string()) {
            Some(s) => {
                s.responses += 1;
                if s.responses == 2 {
                    self.tally.doubled += 1;
                    self.tally
                        .problems
                        .push(format!("a second response for the id {id}"));
                }
            }
            None => self
                .tally
                .problems
                .push(format!("a response for the id {id}, never sent")),
        }
    }

    /// Answers a request of the bridge: a form is accepted, the roots are none, and a
    /// sampling request is refused as a user would.
    pub async fn answer(&mut self, question: &Value) -> Result<(), String> {
        let id = question["id"].clone();
        let reply = match question["method"].as_str().unwrap_or_default() {
            "elicitation/create" => {
                json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept","content":{"name":"Soak"}}})
            }
            "roots/list" => json!({"jsonrpc":"2.0","id":id,"result":{"roots":[]}}),
            "ping" => json!({"jsonrpc":"2.0","id":id,"result":{}}),
            _ => {
                json!({"jsonrpc":"2.0","id":id,"error":{"code":-32000,"message":"The user refused"}})
            }
        };
        self.send(&reply).await
    }

    /// The response of `id`; the bridge's questions meanwhile get [`Conn::answer`].
    pub async fn response(&mut self, id: i64) -> Result<Value, String> {
        let key = json!(id).to_string();
        let deadline = Instant::now() + EXCHANGE;
        loop {
            if let Some(r) = self.stash.remove(&key) {
                return Ok(r);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(frame) = self.next(left).await? else {
                return Err(format!("stdout ended before the response of {id}"));
            };
            if frame.get("method").is_some() && frame.get("id").is_some() {
                self.answer(&frame).await?;
            } else if frame.get("method").is_none() && !frame["id"].is_null() {
                self.stash.insert(frame["id"].to_string(), frame);
            }
        }
    }

    /// The next request of the bridge (its input round), not answered.
    pub async fn question(&mut self) -> Result<Value, String> {
        let deadline = Instant::now() + EXCHANGE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(frame) = self.next(left).await? else {
                return Err("stdout ended before a question".into());
            };
            if frame.get("method").is_some() && frame.get("id").is_some() {
                return Ok(frame);
            }
            if frame.get("method").is_none() && !frame["id"].is_null() {
                self.stash.insert(frame["id"].to_string(), frame);
            }
        }
    }

    /// Reads frames until the bridge's notifications/cancelled for `question_id`.
    pub async fn question_cancelled(&mut self, question_id: &str) -> Result<(), String> {
        let deadline = Instant::now() + EXCHANGE;
        while !self.cancelled_questions.iter().any(|q| q == question_id) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left).await? {
                None => return Err("stdout ended before the cancellation".into()),
                Some(f) if f.get("method").is_none() && !f["id"].is_null() => {
                    self.stash.insert(f["id"].to_string(), f);
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The proportional set size of the anonymous memory of the process (heap, stacks), in
    /// KiB: the file-backed part is shared with the other processes of the same binary, so
    /// its share moves when another bridge starts or exits, and a leak grows the anonymous
    /// part.
    pub fn pss_kib(&self) -> Option<u64> {
        rollup_kib(self.bridge.pid, "Pss_Anon:")
    }

    /// The end: stdin closes, the rest of stdout is read and checked, the exit code must be
    /// `code` within `bound`, and no process of the tree may stay (R7). Then the requests
    /// without a response that the client did not cancel are counted as lost.
    pub async fn finish(&mut self, code: i32, bound: Duration) {
        self.bridge.close_stdin();
        let deadline = Instant::now() + bound;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left).await {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    self.tally
                        .problems
                        .push(format!("after the end of stdin: {e}"));
                    break;
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match self.bridge.wait_exit(left).await {
            Some((status, _)) if status.code() == Some(code) => {}
            Some((status, _)) => self.tally.problems.push(format!(
                "exit with {} (expected code {code})",
                process::describe(&status)
            )),
            None => self
                .tally
                .problems
                .push(format!("no exit within {} s", bound.as_secs())),
        }
        let orphans = process::wait_tree_gone(&self.bridge.tag, Duration::from_secs(3)).await;
        if !orphans.is_empty() {
            self.tally
                .problems
                .push(format!("orphan processes {orphans:?}"));
            process::kill_tree(&self.bridge.tag);
        }
        for s in self.sent.values() {
            match (s.responses, s.cancelled) {
                (0, true) => self.tally.cancelled += 1,
                (0, false) => self.tally.lost += 1,
                (_, true) => {
                    self.tally.cancelled += 1;
                    self.tally.answered += 1;
                }
                _ => self.tally.answered += 1,
            }
        }
        if self.tally.lost > 0 {
            self.tally
                .problems
                .push(format!("{} requests without a response", self.tally.lost));
        }
        self.sent.clear();
    }
}

/// A line of `/proc/<pid>/smaps_rollup` (`Pss:`, `Pss_Anon:`…), in KiB.
pub fn rollup_kib(pid: i32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Where the programs and the test CA are.
#[derive(Debug, Clone)]
pub struct Programs {
    pub bridge: PathBuf,
    pub fixture: PathBuf,
    pub ca: PathBuf,
}
