//! The runner's side of the scripted upstream: it listens on the Unix socket of the relay
//! (relay.rs), checks every frame the bridge writes upstream (invariants.rs, 2026-07-28),
//! answers the requests of `auto` itself, and queues the others for `upstream_expect`.
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc;

use crate::format::Scripted;
use crate::invariants::Checker;

/// What the runner sees of the upstream side.
#[derive(Debug, Clone)]
pub enum Event {
    /// A frame the bridge wrote to the upstream.
    Frame(Value),
    /// The bridge closed the upstream's stdin.
    Eof,
    /// The relay process ended (or was killed).
    Closed,
}

type Writer = Arc<tokio::sync::Mutex<Option<OwnedWriteHalf>>>;

/// The scripted upstream of one transcript.
pub struct ScriptedUpstream {
    _dir: tempfile::TempDir,
    pub sock: PathBuf,
    pub events: mpsc::UnboundedReceiver<Event>,
    writer: Writer,
    /// The id of the last request taken by `upstream_expect`: the default target of a reply.
    pub last_request: Option<Value>,
}

/// The discover result of `"discover": "default"`: tools, prompts, resources, completions and
/// logging, without list changes (so no listen stream is needed).
pub fn default_discover() -> Value {
    json!({
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}, "prompts": {}, "resources": {}, "completions": {}, "logging": {}},
        "instructions": "The scripted upstream of the harness.",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted-upstream", "version": "1.0.0"}}
    })
}

impl ScriptedUpstream {
    /// Binds the socket and starts accepting relays.
    pub fn listen(opts: &Scripted, checker: Arc<Mutex<Checker>>) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("harness-")
            .tempdir()
            .map_err(|e| format!("no temporary directory: {e}"))?;
        let sock = dir.path().join("upstream.sock");
        let listener = UnixListener::bind(&sock)
            .map_err(|e| format!("cannot bind {}: {e}", sock.display()))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let writer: Writer = Arc::new(tokio::sync::Mutex::new(None));
        let auto = Auto { table: auto_table(opts), used: HashMap::new() };
        tokio::spawn(accept(listener, tx, writer.clone(), auto, checker));
        Ok(Self {
            _dir: dir,
            sock,
            events: rx,
            writer,
            last_request: None,
        })
    }

    /// Sends a line from the upstream to the bridge, after `delay` (a slow server), without
    /// holding up the transcript.
    pub async fn write_line(&self, line: String, delay: Duration) -> Result<(), String> {
        if delay.is_zero() {
            return send(&self.writer, crate::relay::write_msg(&line)).await;
        }
        let writer = self.writer.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = send(&writer, crate::relay::write_msg(&line)).await;
        });
        Ok(())
    }

    /// Tells the relay to exit with `code` (the upstream exits at this step).
    pub async fn exit(&self, code: i32) -> Result<(), String> {
        send(&self.writer, format!("{}\n", json!({ "exit": code }))).await
    }

    /// Tells the relay to close its stdout and keep running.
    pub async fn close_stdout(&self) -> Result<(), String> {
        send(
            &self.writer,
            format!("{}\n", json!({ "close_stdout": true })),
        )
        .await
    }
}

async fn send(writer: &Writer, msg: String) -> Result<(), String> {
    let mut guard = writer.lock().await;
    let w = guard
        .as_mut()
        .ok_or("the upstream is not connected (the bridge did not start it)")?;
    w.write_all(msg.as_bytes())
        .await
        .map_err(|e| format!("cannot write to the relay: {e}"))
}

/// method → reply (`{"result"}`, `{"error"}` or "hang").
fn auto_table(opts: &Scripted) -> Map<String, Value> {
    let mut t = opts.auto.clone();
    if let Some(d) = &opts.discover {
        let result = if d == "default" {
            default_discover()
        } else {
            d.clone()
        };
        t.entry("server/discover")
            .or_insert(json!({ "result": result }));
    }
    t
}

/// The automatic replies and how many of each method were used.
struct Auto {
    table: Map<String, Value>,
    used: HashMap<String, usize>,
}

async fn accept(
    listener: UnixListener,
    tx: mpsc::UnboundedSender<Event>,
    writer: Writer,
    mut auto: Auto,
    checker: Arc<Mutex<Checker>>,
) {
    // The bridge may start the upstream again after a failed initialize: each relay in turn.
    while let Ok((stream, _)) = listener.accept().await {
        let (read, write) = stream.into_split();
        *writer.lock().await = Some(write);
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if msg.get("eof").is_some() {
                let _ = tx.send(Event::Eof);
                continue;
            }
            let Some(text) = msg.get("in").and_then(Value::as_str) else {
                continue;
            };
            let frame = match checker.lock() {
                Ok(mut c) => c.at_upstream(text),
                Err(_) => return,
            };
            let Some(frame) = frame else { continue };
            if let Some(reply) = auto_reply(&mut auto, &frame) {
                if let Some(line) = reply {
                    let _ = send(&writer, crate::relay::write_msg(&line)).await;
                }
                continue;
            }
            let _ = tx.send(Event::Frame(frame));
        }
        *writer.lock().await = None;
        let _ = tx.send(Event::Closed);
    }
}

/// `Some(Some(line))`: answer with the line; `Some(None)`: swallow (hang); `None`: not automatic.
fn auto_reply(auto: &mut Auto, frame: &Value) -> Option<Option<String>> {
    let method = frame.get("method")?.as_str()?;
    let id = frame.get("id")?;
    let reply = auto.table.get(method)?;
    let reply = match reply {
        Value::Array(list) => {
            let n = auto.used.entry(method.to_string()).or_insert(0);
            let r = list.get(*n).or_else(|| list.last())?;
            *n += 1;
            r
        }
        one => one,
    };
    if reply == "hang" {
        return Some(None);
    }
    let mut out = Map::new();
    out.insert("jsonrpc".into(), json!("2.0"));
    out.insert("id".into(), id.clone());
    if let Some(r) = reply.get("result") {
        out.insert("result".into(), r.clone());
    } else if let Some(e) = reply.get("error") {
        out.insert("error".into(), e.clone());
    }
    Some(Some(Value::Object(out).to_string()))
}
