//! The peers of the bench: a child process spoken to over its pipes (the fixture straight, the
//! byte relay, the bridge), the relays themselves, and how each is started.

use super::*;

pub(crate) struct Peer {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: BufReader<ChildStdout>,
    pub(crate) line: Vec<u8>,
    pub(crate) next_id: u64,
    pub(crate) modern: bool,
    /// Notifications read while waiting for responses.
    pub(crate) notes: usize,
}

impl Peer {
    pub(crate) fn start(program: &Path, args: &[&str], modern: bool) -> Peer {
        let mut command = Command::new(program);
        command.args(args);
        Peer::from_command(command, modern)
    }

    pub(crate) fn from_command(mut command: Command, modern: bool) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", command.get_program()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(MIB, child.stdout.take().expect("stdout"));
        Peer {
            child,
            stdin,
            stdout,
            line: Vec::new(),
            next_id: 1,
            modern,
            notes: 0,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The bytes of one request (built before the clock starts).
    pub(crate) fn frame(&mut self, method: &str, mut params: Value) -> (u64, Vec<u8>) {
        let id = self.next_id;
        self.next_id += 1;
        if self.modern {
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},
                "io.modelcontextprotocol/clientCapabilities":{}});
        }
        let mut frame =
            serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
                .expect("json");
        frame.push(b'\n');
        (id, frame)
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Sends a prepared request and reads up to its response; returns the response length.
    pub(crate) fn exchange(&mut self, id: u64, frame: &[u8]) -> usize {
        let (n, ok) = self.exchange_any(id, frame);
        assert!(ok, "error: {:.300}", String::from_utf8_lossy(&self.line));
        n
    }

    /// [`Peer::exchange`] that also takes an error response: its length and whether it is a
    /// result.
    pub(crate) fn exchange_any(&mut self, id: u64, frame: &[u8]) -> (usize, bool) {
        self.send(frame);
        loop {
            self.line.clear();
            let n = self.stdout.read_until(b'\n', &mut self.line).expect("read");
            assert!(n > 0, "the peer closed its output");
            if let Some(ok) = response_to(&self.line, id) {
                return (n, ok);
            }
            self.notes += 1;
        }
    }

    /// Reads one line: `Some(is_result)` when it is the response to an id in `ids`, `None` for
    /// anything else (a notification, counted).
    pub(crate) fn read_response_in(&mut self, ids: std::ops::Range<u64>) -> Option<bool> {
        self.line.clear();
        let n = self.stdout.read_until(b'\n', &mut self.line).expect("read");
        assert!(n > 0, "the peer closed its output");
        let v: Value = serde_json::from_slice(&self.line).expect("one JSON line");
        let id = v.get("id").and_then(Value::as_u64);
        match id {
            Some(id) if ids.contains(&id) && v.get("method").is_none() => {
                Some(v.get("result").is_some())
            }
            _ => {
                self.notes += 1;
                None
            }
        }
    }

    /// One input round: `ask_form` asks the client for a form (`elicitation/create`), which is
    /// answered; `true` when the call then got a result that is not a tool error.
    pub(crate) fn form_round(&mut self) -> bool {
        let (id, frame) = self.frame("tools/call", json!({"name":"ask_form","arguments":{}}));
        self.send(&frame);
        loop {
            self.line.clear();
            let n = self.stdout.read_until(b'\n', &mut self.line).expect("read");
            assert!(n > 0, "the peer closed its output");
            let v: Value = serde_json::from_slice(&self.line).expect("one JSON line");
            if v.get("method").and_then(Value::as_str) == Some("elicitation/create") {
                let answer = json!({"jsonrpc":"2.0","id":v["id"],
                    "result":{"action":"accept","content":{"name":"Ada"}}});
                let mut bytes = serde_json::to_vec(&answer).expect("json");
                bytes.push(b'\n');
                self.send(&bytes);
            } else if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                let result = v.get("result");
                return result.is_some_and(|r| r.get("isError") != Some(&json!(true)));
            }
        }
    }

    pub(crate) fn call(&mut self, method: &str, params: Value) -> usize {
        let (id, frame) = self.frame(method, params);
        self.exchange(id, &frame)
    }

    pub(crate) fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// `Some(is_result)` when `line` is the response to `id`. A long line is not parsed (the
/// bench would measure itself): its id and kind are read from its start or its end.
pub(crate) fn response_to(line: &[u8], id: u64) -> Option<bool> {
    if line.len() < MIB {
        let v: Value = serde_json::from_slice(line).expect("one JSON line");
        return (v.get("id") == Some(&json!(id)) && v.get("method").is_none())
            .then(|| v.get("result").is_some());
    }
    let head = &line[..256];
    let tail = &line[line.len() - 256..];
    let needle = format!("\"id\":{id}");
    let has = |hay: &[u8], s: &str| memchr::memmem::find(hay, s.as_bytes()).is_some();
    (has(head, &needle) || has(tail, &needle)).then(|| has(head, "\"result\""))
}

/// Starts `program` with piped stdin and stdout and a silent stderr.
pub(crate) fn spawn_piped<S: AsRef<std::ffi::OsStr>>(
    program: &std::ffi::OsStr,
    args: &[S],
) -> Child {
    Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.to_string_lossy()))
}

/// `bench --relay <program> [args…]`: copies stdin to the program and its stdout back, byte
/// for byte, on two threads. The cost of one more process in the pipe, and nothing else.
pub(crate) fn relay(program: &str, args: &[String]) {
    let mut child = spawn_piped(program.as_ref(), args);
    let mut to_child = child.stdin.take().expect("stdin");
    let mut from_child = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_child);
    });
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match std::io::Read::read(&mut from_child, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                    break;
                }
            }
        }
    }
    let _ = child.wait();
}

/// `bench --line-relay <program> [args…]`: the relay that forwards whole lines only, both
/// ways: each line is read to its newline before its first byte is written. A bridge has to do
/// that (it must see that a line is one JSON message, and rewrite its id, before it forwards
/// it), so this store-and-forward relay is the floor of a large message through any bridge,
/// where the byte relay above overlaps its read with its write. It asks for pipe buffers of
/// 1 MiB as the bridge does, so that the floor and the bridge differ only in what the bridge
/// does with a line.
pub(crate) fn line_relay(program: &str, args: &[String]) {
    fn lines(from: impl std::io::Read, mut to: impl Write) {
        let mut from = BufReader::with_capacity(256 * 1024, from);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if to.write_all(&line).and_then(|()| to.flush()).is_err() {
                        break;
                    }
                }
            }
        }
    }
    let mut child = spawn_piped(program.as_ref(), args);
    let to_child = child.stdin.take().expect("stdin");
    let from_child = child.stdout.take().expect("stdout");
    grow_pipes(&to_child, &from_child);
    std::thread::spawn(move || lines(std::io::stdin().lock(), to_child));
    lines(from_child, std::io::stdout().lock());
    let _ = child.wait();
}

/// `bench --tokio-relay <program> [args…]`: the line relay on the bridge's kind of runtime: one
/// current-thread tokio runtime, the four pipes on its reactor (non-blocking, `epoll`), one
/// task per direction that reads a whole line and writes it. Nothing is parsed, so this is the
/// floor of a bridge built as this one is: what it costs beyond this relay is the bridge's own
/// work per message, not its runtime or its pipes.
pub(crate) fn tokio_relay(program: &str, args: &[String]) {
    use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
    async fn lines(from: impl tokio::io::AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
        let mut from = tokio::io::BufReader::with_capacity(256 * 1024, from);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if to.write_all(&line).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
    on_tokio(program, args, |mut pipes| async move {
        let up = tokio::spawn(lines(pipes.stdin, pipes.to_child));
        lines(pipes.from_child, pipes.stdout).await;
        up.abort();
        let _ = pipes.child.wait().await;
    });
}

/// The four pipes of a line relay on the reactor of a tokio runtime: the child's and this
/// process's stdin and stdout.
pub(crate) struct TokioPipes {
    pub(crate) child: tokio::process::Child,
    pub(crate) to_child: tokio::process::ChildStdin,
    pub(crate) from_child: tokio::process::ChildStdout,
    pub(crate) stdin: tokio::net::unix::pipe::Receiver,
    pub(crate) stdout: tokio::net::unix::pipe::Sender,
}

/// Runs `body` on one current-thread tokio runtime, the bridge's kind, with `program` started
/// there and the four pipes (with the bridge's buffer size) on its reactor.
pub(crate) fn on_tokio<F: std::future::Future<Output = ()>>(
    program: &str,
    args: &[String],
    body: impl FnOnce(TokioPipes) -> F,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let to_child = child.stdin.take().expect("stdin");
        let from_child = child.stdout.take().expect("stdout");
        grow_pipes(&to_child, &from_child);
        let stdin = tokio::net::unix::pipe::Receiver::from_owned_fd(own(std::io::stdin()))
            .expect("stdin is a pipe");
        let stdout = tokio::net::unix::pipe::Sender::from_owned_fd(own(std::io::stdout()))
            .expect("stdout is a pipe");
        body(TokioPipes {
            child,
            to_child,
            from_child,
            stdin,
            stdout,
        })
        .await;
    });
}

/// One of this process's standard pipes, to put on the reactor as a pipe.
fn own(fd: impl std::os::fd::AsFd) -> std::os::fd::OwnedFd {
    fd.as_fd().try_clone_to_owned().expect("dup")
}

/// The four pipes of a line relay (the child's two and this process's stdin and stdout) with
/// the bridge's buffer size.
fn grow_pipes(to_child: &impl std::os::fd::AsFd, from_child: &impl std::os::fd::AsFd) {
    grow_pipe(to_child);
    grow_pipe(from_child);
    grow_pipe(&std::io::stdin());
    grow_pipe(&std::io::stdout());
}

/// A pipe buffer of 1 MiB, as the bridge asks for (`wire::stdio_pipes::PIPE_BYTES`).
fn grow_pipe(fd: &impl std::os::fd::AsFd) {
    let _ = nix::fcntl::fcntl(fd.as_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
}

/// The store-and-forward relay in front of the fixture, past its `server/discover`.
pub(crate) fn line_relay_peer(fixture: &Path) -> Peer {
    let fixture_arg = fixture.to_string_lossy().into_owned();
    let mut peer = Peer::start(&me(), &["--line-relay", &fixture_arg], true);
    peer.call("server/discover", json!({}));
    peer
}

pub(crate) fn start_all(fixture: &Path) -> [Peer; 3] {
    let fixture_arg = fixture.to_string_lossy().into_owned();
    let me = me();
    let mut direct = Peer::start(fixture, &[], true);
    let mut relayed = Peer::start(&me, &["--relay", &fixture_arg], true);
    for peer in [&mut direct, &mut relayed] {
        peer.call("server/discover", json!({}));
        // The listen stream of list changes (its result comes at the end).
        let (_, frame) = peer.frame(
            "subscriptions/listen",
            json!({"notifications":{"toolsListChanged":true}}),
        );
        peer.send(&frame);
    }
    let bridge = find("BRIDGE_BIN", "mcp-bridge-vscode");
    drop_cached_pages(&bridge);
    [direct, relayed, start_bridge(&bridge, fixture)]
}

/// A bridge in front of the fixture, past `initialize` and `notifications/initialized`.
pub(crate) fn start_bridge(bridge: &Path, fixture: &Path) -> Peer {
    let fixture_arg = fixture.to_string_lossy().into_owned();
    let mut via = Peer::start(bridge, &["--", &fixture_arg], false);
    via.call("initialize", init_params());
    via.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    via
}

pub(crate) fn init_params() -> Value {
    json!({"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"bench","version":"1"}})
}
