//! The harness of the process tests: the real `mcp-bridge-vscode` binary with real pipes.
//!
//! Every wait is bounded (frames, exit, end of stderr); nothing sleeps to synchronise. The
//! end of stderr proves that no process of the bridge's tree is left: the upstream command
//! inherits the bridge's stderr, so stderr ends only when every process holding it is gone.
#![allow(dead_code)]

pub mod faults;
pub mod http_peers;
pub mod https_fixture;
pub mod kept;
pub mod keychain;
pub mod oauth;
pub mod ports;
pub mod proxy;
pub mod stored;
pub mod url_upstreams;
pub mod wine;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness::format::Profile;
use harness::profile;
use serde_json::{Value, json};

/// The contract's bound from the end of stdin to the exit of the bridge and its tree:
/// 2 × shutdown_grace + 2 s.
/// The variables of the machine that would send the requests of the URL form elsewhere (its
/// proxies) or change a sign-in (a browser, VS Code's sandbox, a client secret): the process
/// tests of the URL form start the bridge without them.
pub const MACHINE_VARS: [&str; 9] = [
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "BROWSER",
    "SANDBOX_RUNTIME",
    "MCP_BRIDGE_CLIENT_SECRET",
];

pub const EXIT_BOUND: Duration = Duration::from_secs(6);
/// The bound of one exchange in these tests.
pub const EXCHANGE: Duration = Duration::from_secs(20);

/// VS Code's own `initialize` line, from the one source of the client frames: the harness's
/// profiles (the version of VS Code that the transcripts use too).
pub fn vscode_initialize(id: u64) -> Value {
    profile::request(
        Profile::Local,
        id as i64,
        "initialize",
        profile::initialize_params(Profile::Local),
    )
}

/// The `initialize` line of the Copilot CLI, from the harness's profiles.
pub fn copilot_initialize(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize",
        "params":profile::initialize_params(Profile::Copilot)})
}

/// The `clientInfo.version` of [`vscode_initialize`].
pub fn vscode_version() -> String {
    profile::initialize_params(Profile::Local)["clientInfo"]["version"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
}

pub fn call(id: u64, name: &str, arguments: Value) -> Value {
    request(id, "tools/call", json!({"name":name,"arguments":arguments}))
}

/// The bridge binary of this build.
pub fn bridge_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
}

/// The folder of the binaries of this build (`<target>/debug`), found from this test
/// executable (`<target>/debug/deps/<test>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/debug")
        .to_path_buf()
}

/// The fixture server: `BRIDGE_FIXTURE_SERVER`, else `<target>/debug/bridge-fixture-server`
/// found from this test executable (`target/debug/deps/<test>`).
pub fn fixture_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("BRIDGE_FIXTURE_SERVER") {
        return PathBuf::from(path);
    }
    let path = profile_dir().join(format!(
        "bridge-fixture-server{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(
        path.exists(),
        "the fixture server is missing at {}: run cargo build -p bridge-fixture-server",
        path.display()
    );
    path
}

/// What came out of stdout.
#[derive(Debug)]
pub enum Out {
    Frame(Value),
    /// A line that is not one JSON-RPC message (a failure of R7).
    NotJson(String),
}

/// A running bridge.
pub struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<Out>,
    stderr: Arc<Mutex<String>>,
    stderr_done: Receiver<()>,
    stdout_done: Arc<Mutex<bool>>,
    /// Every byte of stdout as it came, for the secret sweep ([`kept`]).
    stdout_kept: Arc<Mutex<Vec<u8>>>,
    /// The `XDG_STATE_HOME` given to the bridge: its token store's folder, kept at the end.
    state_home: Option<PathBuf>,
    pub all_frames: Vec<Value>,
}

impl Bridge {
    /// Starts the bridge with `args` (options, `--`, command and its args).
    pub fn start(args: &[&str]) -> Bridge {
        Self::start_with_env(args, &[])
    }

    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Bridge {
        Self::start_with_env_removed(args, env, &[])
    }

    /// Starts the bridge with `env` set and the variables of `removed` taken away (for
    /// example the proxy variables of the machine that runs the tests).
    pub fn start_with_env_removed(args: &[&str], env: &[(&str, &str)], removed: &[&str]) -> Bridge {
        Self::start_program(&bridge_bin(), args, env, removed)
    }

    /// Starts another program in place of the bridge (M5: the fixture with `--embedded`).
    pub fn start_program(
        program: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
        removed: &[&str],
    ) -> Bridge {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for k in removed {
            cmd.env_remove(k);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("the bridge starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, frames) = mpsc::channel();
        let stdout_done = Arc::new(Mutex::new(false));
        let done_flag = Arc::clone(&stdout_done);
        let stdout_kept = Arc::new(Mutex::new(Vec::new()));
        let kept_sink = Arc::clone(&stdout_kept);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if let Ok(mut k) = kept_sink.lock() {
                            k.extend_from_slice(&line);
                        }
                        let ends_with_newline = line.last() == Some(&b'\n');
                        let text = String::from_utf8_lossy(&line)
                            .trim_end_matches('\n')
                            .to_owned();
                        let out = match serde_json::from_str::<Value>(&text) {
                            Ok(v)
                                if v.is_object()
                                    && ends_with_newline
                                    && v.get("jsonrpc") == Some(&json!("2.0")) =>
                            {
                                Out::Frame(v)
                            }
                            _ => Out::NotJson(text),
                        };
                        if tx.send(out).is_err() {
                            break;
                        }
                    }
                }
            }
            *done_flag.lock().expect("flag") = true;
        });
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr_text);
        let (done_tx, stderr_done) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink
                        .lock()
                        .expect("stderr")
                        .push_str(&String::from_utf8_lossy(&buf[..n])),
                }
            }
            let _ = done_tx.send(());
        });
        Bridge {
            child,
            stdin,
            frames,
            stderr: stderr_text,
            stderr_done,
            stdout_done,
            stdout_kept,
            state_home: env
                .iter()
                .find(|(k, _)| *k == "XDG_STATE_HOME")
                .map(|(_, v)| PathBuf::from(v)),
            all_frames: Vec::new(),
        }
    }

    /// Sends one frame as one line.
    pub fn send(&mut self, frame: &Value) {
        let mut line = serde_json::to_vec(frame).expect("json");
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Sends raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the bridge");
        stdin.flush().expect("flush");
    }

    /// Closes stdin (VS Code's first step of the stop sequence) and returns the time.
    pub fn close_stdin(&mut self) -> Instant {
        self.stdin.take();
        Instant::now()
    }

    /// The next frame that is not a notification, within `limit` each. Notifications may come
    /// first: the gap replay (R2) follows the listen stream's acknowledgment at any time
    /// after `notifications/initialized`.
    pub fn next_message(&mut self, limit: Duration) -> Value {
        loop {
            let f = self.next_frame(limit);
            if f.get("id").is_some() {
                return f;
            }
            assert!(
                f["method"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("notifications/")),
                "neither a notification nor a message with an id: {f}"
            );
        }
    }

    /// The next frame, within `limit`.
    pub fn next_frame(&mut self, limit: Duration) -> Value {
        match self.frames.recv_timeout(limit) {
            Ok(Out::Frame(v)) => {
                self.all_frames.push(v.clone());
                v
            }
            Ok(Out::NotJson(line)) => panic!(
                "stdout has a line that is not one JSON-RPC message: {line:.200}\nstderr:\n{}",
                self.stderr()
            ),
            Err(RecvTimeoutError::Timeout) => {
                panic!("no frame within {limit:?}\nstderr:\n{}", self.stderr())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("stdout ended\nstderr:\n{}", self.stderr())
            }
        }
    }

    /// The response with `id`, and the notifications before it. A response with another id
    /// is a failure.
    pub fn response_with_notifications(&mut self, id: &Value) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let frame = self.next_frame(EXCHANGE);
            if frame.get("id").is_some() && frame.get("method").is_none() {
                assert_eq!(frame["id"], *id, "an unexpected response: {frame}");
                return (frame, notes);
            }
            notes.push(frame);
        }
    }

    /// The response with `id` (notifications before it are skipped).
    pub fn response(&mut self, id: u64) -> Value {
        self.response_with_notifications(&json!(id)).0
    }

    /// Sends a request and returns its response.
    pub fn exchange(&mut self, frame: &Value) -> Value {
        self.send(frame);
        self.response_with_notifications(&frame["id"].clone()).0
    }

    /// Asserts that no frame arrives within `limit` (used only where the contract says that
    /// nothing comes, after the event that would cause it).
    pub fn no_frame(&mut self, limit: Duration) {
        if let Ok(out) = self.frames.recv_timeout(limit) {
            panic!("an unexpected frame: {out:?}");
        }
    }

    /// Waits for the exit of the bridge and the end of its stderr (no process of the tree
    /// holds it any more), both within `limit` from `since`.
    pub fn wait_exit(&mut self, since: Instant, limit: Duration) -> ExitStatus {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            if since.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "the bridge did not exit within {limit:?}\nstderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let left = limit.saturating_sub(since.elapsed()) + Duration::from_millis(500);
        if self.stderr_done.recv_timeout(left).is_err() {
            panic!(
                "a process of the bridge's tree still holds stderr after {limit:?}\nstderr:\n{}",
                self.stderr()
            );
        }
        // The rest of stdout.
        while let Ok(out) = self.frames.recv_timeout(Duration::from_millis(200)) {
            match out {
                Out::Frame(v) => self.all_frames.push(v),
                Out::NotJson(line) => panic!("stdout has a line that is not JSON-RPC: {line:.200}"),
            }
        }
        status
    }

    /// Closes stdin and asserts exit code 0 within the contract's bound.
    pub fn close_and_expect_exit_0(&mut self) {
        let since = self.close_stdin();
        let status = self.wait_exit(since, EXIT_BOUND);
        assert_eq!(status.code(), Some(0), "stderr:\n{}", self.stderr());
    }

    /// Everything on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The stderr lines of the bridge itself.
    pub fn bridge_lines(&self) -> Vec<String> {
        self.stderr()
            .lines()
            .filter(|l| l.starts_with("mcp-bridge-vscode: "))
            .map(str::to_owned)
            .collect()
    }

    /// Waits (bounded) until a line of the bridge matches; stderr is read on its own thread,
    /// so a line written before a frame can arrive after it here.
    pub fn expect_line(&self, matches: impl Fn(&str) -> bool) {
        let since = Instant::now();
        while since.elapsed() < EXCHANGE {
            if self.bridge_lines().iter().any(|l| matches(l)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no such stderr line\nstderr:\n{}", self.stderr());
    }

    /// Waits (bounded) until stderr contains `text` anywhere (a line of the upstream that
    /// is written in pieces can interleave with a line of the bridge).
    pub fn expect_text(&self, text: &str) {
        let since = Instant::now();
        while since.elapsed() < EXCHANGE {
            if self.stderr().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no stderr text {text}\nstderr:\n{}", self.stderr());
    }

    /// Initializes with VS Code's line and returns the result.
    pub fn initialize(&mut self) -> Value {
        let r = self.exchange(&vscode_initialize(1));
        assert!(
            r.get("result").is_some(),
            "initialize failed: {r}\nstderr:\n{}",
            self.stderr()
        );
        r["result"].clone()
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // A failed test must not leave the bridge running; its upstream then sees the end of
        // its stdin.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        // The secret sweep of CI (ci/sweep.sh) reads the stdout, the stderr and the token
        // store of every bridge of the process tests; the readers end with the process (bounded).
        if std::env::var_os("MCP_STDERR_DIR").is_some() {
            let _ = self.stderr_done.recv_timeout(Duration::from_secs(2));
            let since = Instant::now();
            while !*self.stdout_done.lock().unwrap_or_else(|e| e.into_inner())
                && since.elapsed() < Duration::from_secs(2)
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            let stdout = self
                .stdout_kept
                .lock()
                .map(|k| k.clone())
                .unwrap_or_default();
            kept::keep("process", "stdout", &stdout);
            kept::keep("process", "stderr", self.stderr().as_bytes());
            if let Some(home) = &self.state_home {
                kept::keep_tree(home);
            }
        }
    }
}

/// Every file under `dir` (none when it does not exist).
pub fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}
