//! The URL form (a hot-path choice of bridge/README.md): round trip and resident memory of the bridge at
//! `https://127.0.0.1:<port>/mcp` of `bridge-fixture-server --listen 127.0.0.1:0`, against a
//! direct HTTPS client of the fixture (reqwest, one connection kept), and against
//! `mcp-remote` from npm when `MCP_REMOTE` names its `dist/proxy.js` (run with `node` and
//! `--protocol auto`); echo calls, input rounds and the idle memory of each.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Idle, Peer, Sizes, Stats, idle_bridges, stats};

/// What one run of the URL form measured.
pub struct UrlFigures {
    pub direct: Stats,
    pub bridge: Stats,
    /// One input round (`ask_form`, the form answered) through the bridge.
    pub bridge_form: Stats,
    /// Idle URL-form bridges: one alone, and each of ten.
    pub bridge_idle: Idle,
    /// The figures of mcp-remote, or why nothing could be measured.
    pub remote: Result<Remote, String>,
}

/// mcp-remote run with `--protocol auto`, so that it speaks the server's revision and each
/// call can succeed: the comparison counts only when every sampled call did.
pub struct Remote {
    pub round_trip: Stats,
    pub form: Stats,
    pub idle: Sizes,
    pub calls: usize,
    pub calls_failed: usize,
    /// The first error answer, when a call failed.
    pub error: Option<String>,
}

/// The arguments mcp-remote gets besides its proxy script and the URL.
pub const REMOTE_PROTOCOL: &str = "auto";

/// The test CA of the repository (the fixture serves a certificate that it signed).
pub(crate) fn ca_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../certs/ca.crt")
}

pub(crate) struct Fixture {
    child: Child,
    pub(crate) url: String,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fixture at a URL, with `args` after `--listen 127.0.0.1:0`.
pub(crate) fn start_fixture(fixture: &Path, args: &[&str]) -> Option<Fixture> {
    let mut child = Command::new(fixture)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
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

/// A 2025-11-25 client over stdio (the bridge): echo calls and input rounds.
pub(crate) fn via_stdio(
    mut peer: Peer,
    runs: usize,
    warmup: usize,
    forms: usize,
) -> (Stats, Stats) {
    let echo = json!({"name":"echo","arguments":{"text":"hello"}});
    let s = super::calls(std::slice::from_mut(&mut peer), &echo, warmup, runs)[0];
    let form = super::timed(forms, || {
        assert!(peer.form_round(), "the form round failed")
    });
    peer.stop();
    (s, form)
}

/// A URL-form bridge past `initialize` and `notifications/initialized`.
pub(crate) fn start_url_bridge(bridge: &Path, ca: &str, url: &str) -> Peer {
    let mut peer = Peer::start(bridge, &["--ca-file", ca, url], false);
    peer.call("initialize", super::init_params());
    peer.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    peer
}

/// mcp-remote, with a bound on the whole: its idle memory after `initialize`, then echo calls
/// and input rounds, each of which must succeed (a failed one is counted and kept).
pub(crate) fn remote(
    proxy: &Path,
    url: &str,
    runs: usize,
    warmup: usize,
    forms: usize,
) -> Result<Remote, String> {
    let (tx, rx) = mpsc::channel();
    let args = [
        proxy.to_string_lossy().into_owned(),
        url.to_owned(),
        "--protocol".to_owned(),
        REMOTE_PROTOCOL.to_owned(),
    ];
    let mut child = Command::new("node");
    child.env("NODE_EXTRA_CA_CERTS", ca_file()).args(&args);
    let mut peer = Peer::from_command(child, false);
    let pid = peer.pid();
    std::thread::spawn(move || {
        peer.call("initialize", super::init_params());
        peer.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        std::thread::sleep(Duration::from_millis(300));
        let idle = Sizes::of(peer.pid());
        let echo = json!({"name":"echo","arguments":{"text":"hello"}});
        let mut error = None;
        let mut failed = 0;
        let mut samples = Vec::with_capacity(runs);
        for i in 0..warmup + runs {
            let (id, frame) = peer.frame("tools/call", echo.clone());
            let t = Instant::now();
            let (_, ok) = peer.exchange_any(id, &frame);
            if i >= warmup {
                samples.push(t.elapsed());
            }
            if !ok {
                failed += 1;
                error.get_or_insert_with(|| String::from_utf8_lossy(&peer.line).trim().to_owned());
            }
        }
        let form = super::timed(forms, || {
            if !peer.form_round() {
                failed += 1;
                error.get_or_insert_with(|| String::from_utf8_lossy(&peer.line).trim().to_owned());
            }
        });
        peer.stop();
        let _ = tx.send(Remote {
            round_trip: stats(samples),
            form,
            idle,
            calls: warmup + runs + forms,
            calls_failed: failed,
            error,
        });
    });
    rx.recv_timeout(Duration::from_secs(300)).map_err(|_| {
        let _ = Command::new("kill").arg(pid.to_string()).status();
        "no answers within 300 s".to_owned()
    })
}

/// mcp-remote takes about 10 ms per call: its samples are bounded so that the run stays short.
pub(crate) const REMOTE_RUNS: usize = 1000;

/// The idle memory of URL-form bridges in front of the fixture at a URL (one alone, and each
/// of ten), or None when the fixture did not start at a URL.
pub(crate) fn idle(fixture: &Path, bridge: &Path) -> Option<Idle> {
    let fx = start_fixture(fixture, &[])?;
    let ca = ca_file().to_string_lossy().into_owned();
    Some(idle_bridges(|| start_url_bridge(bridge, &ca, &fx.url)))
}

pub fn measure(
    fixture: &Path,
    bridge: &Path,
    runs: usize,
    warmup: usize,
    forms: usize,
) -> Option<UrlFigures> {
    let fx = start_fixture(fixture, &[])?;
    let direct = match direct(&fx.url, runs, warmup) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("the direct HTTPS client failed: {e}");
            return None;
        }
    };
    let ca = ca_file().to_string_lossy().into_owned();
    let bridge_idle = idle_bridges(|| start_url_bridge(bridge, &ca, &fx.url));
    let peer = start_url_bridge(bridge, &ca, &fx.url);
    let (bridge, bridge_form) = via_stdio(peer, runs, warmup, forms);
    let remote = match std::env::var_os("MCP_REMOTE") {
        Some(proxy) => remote(
            Path::new(&proxy),
            &fx.url,
            runs.min(REMOTE_RUNS),
            warmup.min(50),
            forms,
        ),
        None => Err("not measured: set MCP_REMOTE to mcp-remote's dist/proxy.js".to_owned()),
    };
    Some(UrlFigures {
        direct,
        bridge,
        bridge_form,
        bridge_idle,
        remote,
    })
}

/// The JSON of the figures (`url` in the last line of `--json`).
pub fn to_json(f: &UrlFigures) -> Value {
    let col = |s: &Stats| json!({"median_s": s.median.as_secs_f64(), "min_s": s.min.as_secs_f64(), "max_s": s.max.as_secs_f64()});
    json!({
        "direct_https": col(&f.direct),
        "bridge": col(&f.bridge),
        "bridge_form": col(&f.bridge_form),
        "bridge_idle": f.bridge_idle.json(),
        "bridge_minus_direct_ms": (f.bridge.median.as_secs_f64() - f.direct.median.as_secs_f64()) * 1e3,
        "mcp_remote": match &f.remote {
            Ok(r) => json!({"protocol": REMOTE_PROTOCOL, "echo": col(&r.round_trip),
                "form": col(&r.form), "idle": r.idle.json(), "calls": r.calls,
                "calls_failed": r.calls_failed, "first_error": r.error,
                "latency_over_direct_to_bridge": (r.round_trip.median.as_secs_f64() - f.direct.median.as_secs_f64())
                    / (f.bridge.median.as_secs_f64() - f.direct.median.as_secs_f64()),
                "idle_pss_to_bridge": r.idle.pss as f64 / f.bridge_idle.one.pss.max(1) as f64}),
            Err(why) => json!({"protocol": REMOTE_PROTOCOL, "failed": why}),
        },
    })
}
