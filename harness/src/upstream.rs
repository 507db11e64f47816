//! The runner's side of the scripted upstream: it listens on the socket of the relay
//! (relay.rs): a Unix socket, or a loopback TCP port where Unix sockets are missing (Windows) or
//! when `HARNESS_RELAY=tcp`; checks every frame the bridge writes upstream (invariants.rs, 2026-07-28),
//! answers the requests of `auto` itself, and queues the others for `upstream_expect`.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
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

type Writer = Arc<tokio::sync::Mutex<Option<Box<dyn AsyncWrite + Send + Unpin>>>>;
type Reader = Box<dyn AsyncRead + Send + Unpin>;

/// The listening socket of the relay.
enum Listener {
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
    Tcp(tokio::net::TcpListener),
}

impl Listener {
    /// The next relay, split into its two halves.
    async fn accept(&self) -> std::io::Result<(Reader, Box<dyn AsyncWrite + Send + Unpin>)> {
        match self {
            #[cfg(unix)]
            Listener::Unix(l) => {
                let (stream, _) = l.accept().await?;
                let (r, w) = stream.into_split();
                Ok((Box::new(r), Box::new(w)))
            }
            Listener::Tcp(l) => {
                let (stream, _) = l.accept().await?;
                let (r, w) = stream.into_split();
                Ok((Box::new(r), Box::new(w)))
            }
        }
    }
}

/// True when the relay uses loopback TCP: always where Unix sockets are missing, elsewhere when
/// the variable `HARNESS_RELAY` is `tcp`.
pub fn relay_over_tcp() -> bool {
    !cfg!(unix) || std::env::var("HARNESS_RELAY").is_ok_and(|v| v == "tcp")
}

/// Binds the relay's socket: gives the listener and the address for `upstream-relay`.
fn bind(dir: &std::path::Path) -> Result<(Listener, String), String> {
    #[cfg(unix)]
    if !relay_over_tcp() {
        let sock = dir.join("upstream.sock");
        let l = tokio::net::UnixListener::bind(&sock)
            .map_err(|e| format!("cannot bind {}: {e}", sock.display()))?;
        return Ok((Listener::Unix(l), sock.to_string_lossy().into_owned()));
    }
    let _ = dir;
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot bind 127.0.0.1:0: {e}"))?;
    let addr = std_listener
        .local_addr()
        .map_err(|e| format!("no local address: {e}"))?;
    std_listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot set the listener non-blocking: {e}"))?;
    let l = tokio::net::TcpListener::from_std(std_listener)
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    Ok((Listener::Tcp(l), format!("tcp:{addr}")))
}

/// The scripted upstream of one transcript.
pub struct ScriptedUpstream {
    _dir: tempfile::TempDir,
    /// What `harness upstream-relay` connects to: a socket path, or `tcp:127.0.0.1:<port>`.
    pub address: String,
    pub events: mpsc::UnboundedReceiver<Event>,
    writer: Writer,
    /// The id of the last request taken by `upstream_expect`: the default target of a reply.
    pub last_request: Option<Value>,
    /// The accept task; it ends with the transcript, not with the process.
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
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
    /// Binds the socket and starts accepting relays; with `jitter` (the transcript's seed), each
    /// automatic answer waits first (jitter.rs).
    pub fn listen(
        opts: &Scripted,
        checker: Arc<Mutex<Checker>>,
        jitter: Option<u64>,
    ) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("harness-")
            .tempdir()
            .map_err(|e| format!("no temporary directory: {e}"))?;
        let (listener, address) = bind(dir.path())?;
        let (tx, rx) = mpsc::unbounded_channel();
        let writer: Writer = Arc::new(tokio::sync::Mutex::new(None));
        let auto = Auto {
            table: auto_table(opts),
            used: HashMap::new(),
            waits: jitter.and_then(crate::jitter::Waits::new).map(Arc::new),
        };
        let task = tokio::spawn(accept(listener, tx, writer.clone(), auto, checker));
        Ok(Self {
            _dir: dir,
            address,
            events: rx,
            writer,
            last_request: None,
            task,
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
pub struct Auto {
    table: Map<String, Value>,
    used: HashMap<String, usize>,
    /// The jitter mode: each answer waits, so that answers to requests in flight may cross.
    waits: Option<Arc<crate::jitter::Waits>>,
}

impl Auto {
    /// A table of method → `{"result":…}`, `{"error":…}`, `"hang"`, or an array of them.
    pub fn new(table: Map<String, Value>) -> Self {
        Self {
            table,
            used: HashMap::new(),
            waits: None,
        }
    }
}

async fn accept(
    listener: Listener,
    tx: mpsc::UnboundedSender<Event>,
    writer: Writer,
    mut auto: Auto,
    checker: Arc<Mutex<Checker>>,
) {
    // The bridge may start the upstream again after a failed initialize: each relay in turn.
    while let Ok((read, write)) = listener.accept().await {
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
            if let Some(text) = msg.get("out").and_then(Value::as_str) {
                if let Ok(mut c) = checker.lock() {
                    c.from_upstream(text);
                }
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
                match (reply, &auto.waits) {
                    (Some(line), Some(waits)) => {
                        let (writer, delay) = (writer.clone(), waits.next());
                        tokio::spawn(async move {
                            tokio::time::sleep(delay).await;
                            let _ = send(&writer, crate::relay::write_msg(&line)).await;
                        });
                    }
                    (Some(line), None) => {
                        let _ = send(&writer, crate::relay::write_msg(&line)).await;
                    }
                    (None, _) => {}
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
pub fn auto_reply(auto: &mut Auto, frame: &Value) -> Option<Option<String>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_replies_are_used_in_turn_and_the_last_repeats() {
        let mut table = Map::new();
        table.insert(
            "tools/list".into(),
            json!([{"result":{"n":1}},{"result":{"n":2}}]),
        );
        table.insert("tools/call".into(), json!("hang"));
        let mut auto = Auto {
            table,
            used: HashMap::new(),
            waits: None,
        };
        let req = |id: i64, m: &str| json!({"jsonrpc":"2.0","id":id,"method":m});
        let n = |r: Option<Option<String>>| {
            let v: Value = serde_json::from_str(&r.unwrap().unwrap()).unwrap();
            (v["id"].clone(), v["result"]["n"].clone())
        };
        assert_eq!(
            n(auto_reply(&mut auto, &req(1, "tools/list"))),
            (json!(1), json!(1))
        );
        assert_eq!(
            n(auto_reply(&mut auto, &req(2, "tools/list"))),
            (json!(2), json!(2))
        );
        assert_eq!(
            n(auto_reply(&mut auto, &req(3, "tools/list"))),
            (json!(3), json!(2))
        );
        assert_eq!(auto_reply(&mut auto, &req(4, "tools/call")), Some(None));
        assert_eq!(auto_reply(&mut auto, &req(5, "prompts/list")), None);
    }

    #[test]
    fn the_default_discover_has_server_info_and_no_list_changes() {
        let d = default_discover();
        assert_eq!(
            d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "scripted-upstream"
        );
        assert!(d.pointer("/capabilities/tools/listChanged").is_none());
    }
}
