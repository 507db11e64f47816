//! The real third-party servers at a URL, for the interop tests of the URL form:
//!
//! - [`HttpPeer::ts_v2`]: the TypeScript SDK v2 server (`createMcpHandler`),
//!   tests/interop/ts-v2-http-server.mjs, run with node (tests/interop/node_modules from
//!   ci/install-peers.sh); tools `add`, `weather` (a form round), `progress`, `slow`;
//! - [`HttpPeer::py_older`] and [`HttpPeer::ts_v1`]: servers of revision 2025-11-25 with
//!   Streamable HTTP sessions, the Python SDK 1.30 (tests/older/python_server.py) and the
//!   TypeScript SDK v1 (tests/interop/ts-v1-server.mjs); tools `add`, `ask_name` (a form),
//!   `toggle` (a list change);
//! - [`HttpPeer::rmcp`]: rmcp's `StreamableHttpService`, the example `rmcp_http_peer` of the
//!   fixture package (built by `cargo build --workspace --all-targets`, or
//!   `cargo build -p bridge-fixture-server --example rmcp_http_peer`); tools `add`, `ask_city`
//!   (a form round), `progress`, `slow`.
//!
//! Each prints `listening http://127.0.0.1:<port>/mcp` first and exits at the end of its stdin:
//! dropping the [`HttpPeer`] closes stdin and waits (bounded) for the exit, so no process is
//! left. Both start functions give `None` (the test says it skipped) outside CI when the peer
//! is not installed or built; in CI (`CI` set) a missing peer is a failure.
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The bound of the start of a peer (its first line) and of its exit.
const BOUND: Duration = Duration::from_secs(20);

/// A running HTTP peer.
pub struct HttpPeer {
    child: Child,
    stdin: Option<ChildStdin>,
    url: String,
    name: &'static str,
}

impl HttpPeer {
    /// The TypeScript SDK v2 server, or `None` outside CI when node or the package is missing.
    pub fn ts_v2() -> Option<HttpPeer> {
        Self::node("server", &["ts-v2-http-server.mjs"], "ts-v2-http-server")
    }

    /// A script of tests/interop run with node (`args`: the script and its arguments), when
    /// the npm package `@modelcontextprotocol/<package>` of ci/install-peers.sh is there.
    fn node(package: &str, args: &[&str], name: &'static str) -> Option<HttpPeer> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join("interop");
        let installed = dir
            .join("node_modules")
            .join("@modelcontextprotocol")
            .join(package);
        if !installed.is_dir() {
            return skipped(&format!(
                "@modelcontextprotocol/{package} is not installed (run ci/install-peers.sh)"
            ));
        }
        let mut command = Command::new("node");
        command.current_dir(&dir).args(args);
        Self::spawn(name, command)
    }

    /// L4: the FastMCP server of the Python SDK 1.30 (revision 2025-11-25,
    /// tests/older/python_server.py `--http`, Streamable HTTP with sessions), or `None`
    /// outside CI when the venv of ci/install-peers.sh is missing.
    pub fn py_older() -> Option<HttpPeer> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let venv = root.join("../target/py-peers");
        let python = if cfg!(windows) {
            venv.join("Scripts").join("python.exe")
        } else {
            venv.join("bin").join("python")
        };
        if !python.is_file() {
            return skipped(
                "the Python SDK 1.30 is not installed at target/py-peers (run ci/install-peers.sh)",
            );
        }
        let mut command = Command::new(python);
        command
            .arg(root.join("tests/older/python_server.py"))
            .arg("--http");
        Self::spawn("py-older-http", command)
    }

    /// L4: the TypeScript SDK v1 server (revision 2025-11-25, tests/interop/ts-v1-server.mjs
    /// `--http`, Streamable HTTP with sessions), or `None` outside CI when the package is
    /// missing.
    pub fn ts_v1() -> Option<HttpPeer> {
        Self::node("sdk", &["ts-v1-server.mjs", "--http"], "ts-v1-older-http")
    }

    /// rmcp's Streamable HTTP server, or `None` outside CI when the example is not built.
    pub fn rmcp() -> Option<HttpPeer> {
        let path = rmcp_peer_bin();
        if !path.exists() {
            return skipped(&format!(
                "{} is missing (run cargo build -p bridge-fixture-server --example rmcp_http_peer)",
                path.display()
            ));
        }
        Self::spawn("rmcp_http_peer", Command::new(path))
    }

    fn spawn(name: &'static str, mut command: Command) -> Option<HttpPeer> {
        let mut child = match command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(kept_stderr(name))
            .spawn()
        {
            Ok(child) => child,
            Err(e) => return skipped(&format!("{name} does not start: {e}")),
        };
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("the peer's stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = tx.send(reader.read_line(&mut line).map(|_| line));
            // Drain the rest, so that the peer never blocks on a full pipe; kept for the sweep.
            let _ = match super::kept::path(name, "stdout").and_then(|p| File::create(p).ok()) {
                Some(mut kept) => std::io::copy(&mut reader, &mut kept),
                None => std::io::copy(&mut reader, &mut std::io::sink()),
            };
        });
        let mut peer = HttpPeer {
            child,
            stdin,
            url: String::new(),
            name,
        };
        let line = match rx.recv_timeout(BOUND) {
            Ok(Ok(line)) => line,
            other => panic!("{name} printed no first line within {BOUND:?}: {other:?}"),
        };
        let url = line
            .trim_end()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("{name}: unexpected first line {line:?}"));
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{name}: {url}"
        );
        peer.url = url.to_owned();
        Some(peer)
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Closes the peer's stdin and waits (bounded) for its exit.
    pub fn stop(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        drop(self.stdin.take());
        let since = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if since.elapsed() > BOUND => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!(
                        "{} did not exit within {BOUND:?} of the end of its stdin",
                        self.name
                    );
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        if self.stdin.is_some() && !std::thread::panicking() {
            self.stop_now();
        } else if self.stdin.is_some() {
            drop(self.stdin.take());
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `<target>/debug/examples/rmcp_http_peer` found from this test executable
/// (`<target>/debug/deps/<test>`); `RMCP_HTTP_PEER` overrides it.
pub fn rmcp_peer_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("RMCP_HTTP_PEER") {
        return PathBuf::from(path);
    }
    super::profile_dir()
        .join("examples")
        .join(format!("rmcp_http_peer{}", std::env::consts::EXE_SUFFIX))
}

fn skipped(why: &str) -> Option<HttpPeer> {
    harness::skip::skip(why);
    None
}

/// The peer's stderr: a kept file for the secret sweep (`MCP_STDERR_DIR`), else the test's.
fn kept_stderr(name: &str) -> Stdio {
    match super::kept::path(name, "stderr").and_then(|p| File::create(p).ok()) {
        Some(file) => Stdio::from(file),
        None => Stdio::inherit(),
    }
}
