//! Runs the real `bridge-fixture-server --listen 127.0.0.1:0` and talks to it over real TLS
//! with the test CA of `certs/` (reqwest with rustls, only the given CA trusted).
#![allow(dead_code, reason = "each test file uses a part of the helpers")]
#![allow(clippy::unwrap_used, reason = "tests")]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

use crate::support::{BIN, meta};

/// The longest wait for a line or a response.
pub const WAIT: Duration = Duration::from_secs(10);

/// A file of the test PKI.
pub fn cert(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../certs")
        .join(name)
}

/// A running HTTP fixture; dropping it kills the process.
pub struct HttpFixture {
    pub child: Child,
    pub url: String,
    stderr: Receiver<String>,
}

impl HttpFixture {
    /// Starts the fixture on 127.0.0.1 with a free port and reads its `listening` line.
    pub fn start(args: &[&str]) -> Self {
        Self::start_with_env(args, &[])
    }

    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(BIN)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let url = first
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("the first stdout line is {first:?}"))
            .trim_end_matches('\n')
            .to_string();
        let (sender, stderr) = channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, url, stderr }
    }

    /// Waits (at most [`WAIT`]) for a stderr line that contains `text`.
    pub fn wait_stderr(&self, text: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(text) => return line,
                Ok(_) => {}
                Err(error) => panic!("no stderr line with {text:?}: {error}"),
            }
        }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client that trusts only `ca` (a file of `certs/`).
pub fn client(ca: &str) -> reqwest::Client {
    mcp_bridge_vscode::install_crypto_provider();
    let pem = std::fs::read(cert(ca)).unwrap();
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A JSON-RPC request with the `_meta` envelope (every capability) merged into `params`.
pub fn request(id: u64, method: &str, mut params: Value) -> Value {
    let envelope = params.get("_meta").cloned().unwrap_or_else(|| json!({}));
    let mut full = meta();
    for (key, value) in envelope.as_object().unwrap() {
        full[key] = value.clone();
    }
    params["_meta"] = full;
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A POST with the headers that revision 2026-07-28 requires (`Mcp-Name` from the body).
pub fn post(client: &reqwest::Client, url: &str, body: &Value) -> reqwest::RequestBuilder {
    let method = body["method"].as_str().unwrap();
    let mut builder = client
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    let params = &body["params"];
    if let Some(name) = params["name"].as_str().or(params["uri"].as_str())
        && matches!(method, "tools/call" | "prompts/get" | "resources/read")
    {
        builder = builder.header("Mcp-Name", name);
    }
    builder.json(body)
}

/// The JSON body of a response that must be `application/json`.
pub async fn json_body(response: reqwest::Response) -> Value {
    let kind = response.headers()[CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_string();
    assert!(kind.starts_with("application/json"), "{kind}");
    response.json().await.unwrap()
}

/// The SSE events of a response, read one at a time.
pub struct Events {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<axum::body::Bytes>>,
    buffer: Vec<u8>,
}

impl Events {
    pub fn of(response: reqwest::Response) -> Self {
        let headers = response.headers();
        assert_eq!(headers[CONTENT_TYPE], "text/event-stream");
        assert_eq!(headers["x-accel-buffering"], "no");
        Self {
            body: response.bytes_stream().boxed(),
            buffer: Vec::new(),
        }
    }

    /// The JSON of the next `data:` event; `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8(event).unwrap();
                let data: Vec<&str> = text
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if data.is_empty() {
                    continue; // a comment (keep-alive)
                }
                return Some(serde_json::from_str(&data.join("\n")).unwrap());
            }
            let chunk = tokio::time::timeout(WAIT, self.body.next())
                .await
                .expect("an SSE event within the wait")?;
            self.buffer.extend_from_slice(&chunk.unwrap());
        }
    }
}
