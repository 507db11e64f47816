//! Runs the real `bridge-fixture-server` binary over pipes, sends raw JSON lines and reads its
//! frames with a bounded wait. Every frame read is checked against the definition of its own
//! message in `../shared/spec/<revision>/schema/schema.json` of the fixture's revision
//! (2026-07-28, or 2025-11-25 with [`Server::older`]; requests and notifications by method,
//! responses by the method of the request that the test sent); without that folder, the test
//! says that it skipped the schema check.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use harness::schema::{Frame, LEGACY, MODERN, SchemaSet, default_spec_dir};
use serde_json::{Value, json};

/// The longest wait for one frame.
pub const FRAME_WAIT: Duration = Duration::from_secs(10);

/// The path of the binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_bridge-fixture-server");

/// The `_meta` envelope of revision 2026-07-28 with these client capabilities.
pub fn meta_with(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fixture-test", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

/// The capabilities of a client that declares every kind of input request.
pub fn all_capabilities() -> Value {
    json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {"tools": {}},
        "roots": {"listChanged": true}
    })
}

/// The `_meta` envelope with every kind of input request.
pub fn meta() -> Value {
    meta_with(all_capabilities())
}

fn schemas(revision: &str) -> Option<&'static SchemaSet> {
    static SETS: [OnceLock<Option<SchemaSet>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = usize::from(revision == LEGACY);
    SETS[slot]
        .get_or_init(|| {
            let dir = default_spec_dir()?;
            Some(SchemaSet::load(&dir, revision).unwrap())
        })
        .as_ref()
}

/// Checks one frame of the fixture against its definition in the schema of 2026-07-28.
pub fn check_schema(frame: &Value, request_method: Option<&str>) {
    check_schema_of(MODERN, frame, request_method);
}

/// Checks one frame of the fixture against its definition in the schema of `revision`.
pub fn check_schema_of(revision: &str, frame: &Value, request_method: Option<&str>) {
    let Some(set) = schemas(revision) else {
        // Under CI a failure; elsewhere one SKIPPED line for the whole test binary.
        harness::skip::skip_once(&format!(
            "fixture schema check: no {revision}/schema/schema.json in the specification folder (MCP_SPEC_DIR)"
        ));
        return;
    };
    let kind = match request_method {
        Some(method) => Frame::ResponseTo(method),
        None => Frame::Message,
    };
    let problems = set
        .check_frame(frame, kind)
        .unwrap_or_else(|e| panic!("no schema check for {frame}: {e}"));
    assert!(
        problems.is_empty(),
        "the frame does not fit the schema of {revision}:\n{frame}\n{}",
        problems.join("\n")
    );
}

enum Line {
    Text(String),
    End,
}

/// One running fixture process.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<String>>,
    /// id (as JSON text) → method of each request that the test sent.
    methods: HashMap<String, String>,
    /// Frames read while the test waited for another frame.
    pub backlog: Vec<Value>,
    /// The revision whose schema checks the frames.
    revision: &'static str,
}

impl Server {
    /// Starts the fixture with these arguments.
    pub fn start(args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Line::End);
                        return;
                    }
                    Ok(_) => {
                        if tx.send(Line::Text(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    return;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            methods: HashMap::new(),
            backlog: Vec::new(),
            revision: MODERN,
        }
    }

    /// Starts the fixture with `--revision 2025-11-25` and these arguments; its frames are
    /// checked against the schema of 2025-11-25.
    pub fn older(args: &[&str]) -> Self {
        let mut all = vec!["--revision", LEGACY];
        all.extend_from_slice(args);
        let mut server = Self::start(&all);
        server.revision = LEGACY;
        server
    }

    /// The same server with its frames checked against the schema of `revision` from now on
    /// (`--revision dual`, once a test has locked the connection to an era).
    pub fn checked_as(mut self, revision: &'static str) -> Self {
        self.revision = revision;
        self
    }

    /// Starts the fixture without arguments.
    pub fn new() -> Self {
        Self::start(&[])
    }

    /// Writes one line (a newline is added).
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one frame; a request's method is kept to check its response.
    pub fn send(&mut self, frame: Value) {
        if let (Some(id), Some(method)) = (frame.get("id"), frame.get("method")) {
            self.methods
                .insert(id.to_string(), method.as_str().unwrap().to_string());
        }
        self.send_line(&frame.to_string());
    }

    /// Sends a request with the default envelope added to its params (2026-07-28 only: the
    /// older revision has no per-request envelope).
    pub fn request(&mut self, id: i64, method: &str, mut params: Value) {
        if self.revision == MODERN && params.get("_meta").is_none() {
            params["_meta"] = meta();
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// Closes stdin: the end of the input.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// The next frame, schema-checked; `None` at the end of stdout. Panics after [`FRAME_WAIT`].
    pub fn next_frame(&mut self) -> Option<Value> {
        self.next_frame_within(FRAME_WAIT)
            .unwrap_or_else(|| panic!("no frame in {FRAME_WAIT:?}; stderr: {}", self.stderr()))
    }

    /// The next frame within `wait`: `None` when none came in time, `Some(None)` at the end of
    /// stdout.
    pub fn next_frame_within(&mut self, wait: Duration) -> Option<Option<Value>> {
        match self.lines.recv_timeout(wait) {
            Ok(Line::Text(text)) => {
                let frame: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("stdout has a line that is not JSON ({e}): {text}"));
                let method = match (frame.get("method"), frame.get("id")) {
                    (None, Some(id)) => Some(
                        self.methods
                            .get(&id.to_string())
                            .unwrap_or_else(|| panic!("a response to no request: {frame}"))
                            .clone(),
                    ),
                    _ => None,
                };
                check_schema_of(self.revision, &frame, method.as_deref());
                Some(Some(frame))
            }
            Ok(Line::End) | Err(RecvTimeoutError::Disconnected) => Some(None),
            Err(RecvTimeoutError::Timeout) => None,
        }
    }

    /// Reads frames until the response with `id`; returns the frames before it and the
    /// response. A frame of the backlog comes first.
    pub fn response(&mut self, id: i64) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        let mut backlog = std::mem::take(&mut self.backlog).into_iter();
        for frame in backlog.by_ref() {
            if frame.get("method").is_none() && frame["id"] == json!(id) {
                self.backlog.extend(backlog);
                return (before, frame);
            }
            before.push(frame);
        }
        loop {
            let frame = self.next_frame().unwrap_or_else(|| {
                panic!(
                    "stdout ended before the response {id}; stderr: {}",
                    self.stderr()
                )
            });
            if frame.get("method").is_none() && frame["id"] == json!(id) {
                return (before, frame);
            }
            before.push(frame);
        }
    }

    /// Sends a request and returns its result (panics on an error response).
    pub fn result(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        let (before, response) = self.response(id);
        self.backlog.extend(before);
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{method} failed: {response}"))
    }

    /// Sends a request and returns its error (panics on a result).
    pub fn error(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        let (before, response) = self.response(id);
        self.backlog.extend(before);
        response
            .get("error")
            .cloned()
            .unwrap_or_else(|| panic!("{method} did not fail: {response}"))
    }

    /// Calls a tool and returns its result.
    pub fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.result(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
    }

    /// Reads frames until the end of stdout (bounded), and returns them.
    pub fn frames_until_end(&mut self) -> Vec<Value> {
        let mut frames = std::mem::take(&mut self.backlog);
        while let Some(frame) = self.next_frame() {
            frames.push(frame);
        }
        frames
    }

    /// Waits for the exit of the process, at most `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "the fixture did not exit in {limit:?}; stderr: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether the process still runs.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits until stderr has a line with `text` (at most [`FRAME_WAIT`]).
    pub fn wait_stderr_line(&self, text: &str) {
        let start = Instant::now();
        while !self.stderr().contains(text) {
            assert!(
                start.elapsed() < FRAME_WAIT,
                "no stderr line with '{text}': {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// What the fixture wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The text of the first content block of a tool result.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {result}"))
}
