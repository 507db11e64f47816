//! The URL form (a hot-path choice of bridge/README.md): round trip and resident memory of the bridge at
//! `https://127.0.0.1:<port>/mcp` of `bridge-fixture-server --listen 127.0.0.1:0`, against a
//! direct HTTPS client of the fixture (reqwest, one connection kept), and against
//! `mcp-remote` from npm when `MCP_REMOTE` names its `dist/proxy.js` (run with `node`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Peer, Stats, stats, status_bytes};

/// What one run of the URL form measured.
pub struct UrlFigures {
    pub direct: Stats,
    pub bridge: Stats,
    pub bridge_rss: u64,
    /// The figures of mcp-remote (its round trip, its resident size, and the error of the
    /// call when it could not call the tool), or why nothing could be measured.
    pub remote: Result<Remote, String>,
}

pub struct Remote {
    pub round_trip: Stats,
    pub rss: u64,
    /// The error that each call got, when the calls failed (the round trip is then the one
    /// of the error).
    pub error: Option<String>,
}

/// The test CA of the repository (the fixture serves a certificate that it signed).
fn ca_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../certs/ca.crt")
}

struct Fixture {
    child: Child,
    url: String,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_fixture(fixture: &Path) -> Option<Fixture> {
    let mut child = Command::new(fixture)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut first = String::new();
    BufReader::new(child.stdout.take()?)
        .read_line(&mut first)
        .ok()?;
    let url = first.trim().strip_prefix("listening ")?.to_owned();
    Some(Fixture { child, url })
}

/// The direct client: one POST per call over one kept connection, the body read whole.
fn direct(url: &str, runs: usize, warmup: usize) -> Result<Stats, String> {
    mcp_bridge_vscode::install_crypto_provider();
    let pem = std::fs::read(ca_file()).map_err(|e| e.to_string())?;
    let ca = reqwest::Certificate::from_pem(&pem).map_err(|e| e.to_string())?;
    let client = reqwest::Client::builder()
        .tls_certs_merge([ca])
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let call = |id: usize| {
        let body = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"echo","arguments":{"text":"hello"},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},
                "io.modelcontextprotocol/clientCapabilities":{}}}});
        let request = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(body.to_string());
        async move {
            let response = request.send().await.map_err(|e| e.to_string())?;
            let text = response.text().await.map_err(|e| e.to_string())?;
            if text.contains("\"result\"") {
                Ok(())
            } else {
                Err(format!("no result: {text:.200}"))
            }
        }
    };
    runtime.block_on(async {
        for i in 0..warmup {
            call(i).await?;
        }
        let mut samples = Vec::with_capacity(runs);
        for i in 0..runs {
            let t = Instant::now();
            call(warmup + i).await?;
            samples.push(t.elapsed());
        }
        Ok(stats(samples))
    })
}

/// A 2025-11-25 client over stdio (the bridge, mcp-remote): initialize, then echo calls.
fn via_stdio(mut peer: Peer, runs: usize, warmup: usize) -> (Stats, u64) {
    peer.call("initialize", super::init_params());
    peer.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    let echo = json!({"name":"echo","arguments":{"text":"hello"}});
    let s = super::calls(std::slice::from_mut(&mut peer), &echo, warmup, runs)[0];
    let rss = status_bytes(peer.pid(), "VmRSS");
    peer.stop();
    (s, rss)
}

/// mcp-remote, with a bound on the whole: it speaks 2025-11-25 to the server, so a call may
/// fail; then the round trip of the error answer is what is measured, and the error is kept.
fn remote(proxy: &Path, url: &str, runs: usize, warmup: usize) -> Result<Remote, String> {
    let (tx, rx) = mpsc::channel();
    let args = [proxy.to_string_lossy().into_owned(), url.to_owned()];
    let mut child = Command::new("node");
    child.env("NODE_EXTRA_CA_CERTS", ca_file()).args(&args);
    let mut peer = Peer::from_command(child, false);
    let pid = peer.pid();
    std::thread::spawn(move || {
        peer.call("initialize", super::init_params());
        peer.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        let echo = json!({"name":"echo","arguments":{"text":"hello"}});
        let mut error = None;
        let mut samples = Vec::with_capacity(runs);
        for i in 0..warmup + runs {
            let (id, frame) = peer.frame("tools/call", echo.clone());
            let t = Instant::now();
            let (_, ok) = peer.exchange_any(id, &frame);
            if i >= warmup {
                samples.push(t.elapsed());
            }
            if !ok && error.is_none() {
                error = Some(String::from_utf8_lossy(&peer.line).trim().to_owned());
            }
        }
        let rss = status_bytes(peer.pid(), "VmRSS");
        peer.stop();
        let _ = tx.send(Remote {
            round_trip: stats(samples),
            rss,
            error,
        });
    });
    rx.recv_timeout(Duration::from_secs(120)).map_err(|_| {
        let _ = Command::new("kill").arg(pid.to_string()).status();
        "no answers within 120 s".to_owned()
    })
}

pub fn measure(fixture: &Path, bridge: &Path, runs: usize, warmup: usize) -> Option<UrlFigures> {
    let fx = start_fixture(fixture)?;
    let direct = match direct(&fx.url, runs, warmup) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("the direct HTTPS client failed: {e}");
            return None;
        }
    };
    let ca = ca_file().to_string_lossy().into_owned();
    let peer = Peer::start(bridge, &["--ca-file", &ca, &fx.url], false);
    let (bridge, bridge_rss) = via_stdio(peer, runs, warmup);
    let remote = match std::env::var_os("MCP_REMOTE") {
        Some(proxy) => remote(Path::new(&proxy), &fx.url, runs, warmup),
        None => Err("not measured: set MCP_REMOTE to mcp-remote's dist/proxy.js".to_owned()),
    };
    Some(UrlFigures {
        direct,
        bridge,
        bridge_rss,
        remote,
    })
}

/// The JSON of the figures (in the last line of `--json`).
pub fn to_json(f: &UrlFigures) -> Value {
    let col = |s: &Stats| json!({"median_s": s.median.as_secs_f64(), "min_s": s.min.as_secs_f64(), "max_s": s.max.as_secs_f64()});
    json!({
        "direct_https": col(&f.direct),
        "bridge": col(&f.bridge),
        "bridge_rss": f.bridge_rss,
        "mcp_remote": match &f.remote {
            Ok(r) => json!({"echo": col(&r.round_trip), "rss": r.rss, "call_error": r.error}),
            Err(why) => json!({"failed": why}),
        },
    })
}
