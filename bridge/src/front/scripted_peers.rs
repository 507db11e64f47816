//! The bridge's real router ([`crate::front::serve`], the function that the executable runs on
//! stdin and stdout) between two scripted peers over in-memory pipes: the test writes VS
//! Code's lines and reads what VS Code receives, and serves the upstream end of
//! [`Target::Pipe`] line by line (the framing of stdio). Every read is bounded.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;

use crate::front::{self, Hooks};
use crate::translate::initialize::ServerInfoFallback;
use crate::upstream::connect::{Pipe, PipeConnect, Target};

/// The longest wait for one line of either peer.
const LINE_WAIT: Duration = Duration::from_secs(20);

/// The pipes are large enough for the largest line of the tests.
const PIPE_BYTES: usize = 1 << 20;

type Lines = BufReader<ReadHalf<DuplexStream>>;

/// A running router with VS Code's end and, after `initialize`, the upstream's end.
pub struct Router {
    vscode_in: WriteHalf<DuplexStream>,
    vscode_out: Lines,
    upstream_in: Lines,
    upstream_out: WriteHalf<DuplexStream>,
}

async fn next_line(lines: &mut Lines, who: &str) -> Vec<u8> {
    let mut line = Vec::new();
    let read = tokio::time::timeout(LINE_WAIT, lines.read_until(b'\n', &mut line)).await;
    match read {
        Ok(Ok(n)) if n > 0 => line,
        other => panic!("no line from {who}: {other:?}"),
    }
}

impl Router {
    /// Starts the router and brings the connection to the ready state: VS Code's
    /// `initialize`, the upstream's answer to `server/discover`, `notifications/initialized`.
    pub async fn start() -> Router {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let connect = PipeConnect::new(move || {
            let (bridge_read, server_write) = tokio::io::duplex(PIPE_BYTES);
            let (bridge_write, server_read) = tokio::io::duplex(PIPE_BYTES);
            let _ = tx.send((server_read, server_write));
            Ok(Pipe::new(bridge_read, bridge_write))
        });
        let opts = front::Options {
            upstream: Target::Pipe(connect),
            fallback: ServerInfoFallback {
                name: "router-test".into(),
                version: "1".into(),
            },
            discover_timeout: LINE_WAIT,
            answer_initialize_after: None,
            upstream_revision: crate::cli::UpstreamRevision::Modern,
            max_line_bytes: 64 << 20,
            max_in_flight: front::inflight::MAX_IN_FLIGHT,
            shutdown_grace: Duration::from_secs(1),
            sign_in: None,
            refusal: None,
        };
        let (bridge_in, vscode_in) = tokio::io::duplex(PIPE_BYTES);
        let (vscode_out, bridge_out) = tokio::io::duplex(PIPE_BYTES);
        tokio::spawn(front::serve(opts, bridge_in, bridge_out, Hooks::default()));
        let (_, vscode_in) = tokio::io::split(vscode_in);
        let (vscode_out, _) = tokio::io::split(vscode_out);
        let mut vscode_in = vscode_in;
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"Visual Studio Code","version":"1.99.0"}}});
        vscode_in
            .write_all(format!("{init}\n").as_bytes())
            .await
            .unwrap();
        let (server_read, server_write) = tokio::time::timeout(LINE_WAIT, rx.recv())
            .await
            .unwrap()
            .expect("the router connects its upstream");
        let (server_read, _) = tokio::io::split(server_read);
        let (_, upstream_out) = tokio::io::split(server_write);
        let mut router = Router {
            vscode_in,
            vscode_out: BufReader::new(vscode_out),
            upstream_in: BufReader::new(server_read),
            upstream_out,
        };
        let discover = router.upstream_request("server/discover").await;
        let answer = json!({"jsonrpc":"2.0","id":discover["id"],"result":{
            "resultType":"complete","supportedVersions":["2026-07-28"],
            "capabilities":{"tools":{},"resources":{}},
            "serverInfo":{"name":"scripted","version":"1"}}});
        router.upstream_send(answer.to_string().as_bytes()).await;
        let init = router.vscode_next().await;
        let init: Value = serde_json::from_slice(&init).unwrap();
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        router
            .vscode_send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        router
    }

    /// Writes one line of VS Code (`line` without its newline).
    pub async fn vscode_send(&mut self, line: &[u8]) {
        self.vscode_in.write_all(line).await.unwrap();
        self.vscode_in.write_all(b"\n").await.unwrap();
    }

    /// The next line that VS Code receives, with its newline.
    pub async fn vscode_next(&mut self) -> Vec<u8> {
        next_line(&mut self.vscode_out, "the bridge toward VS Code").await
    }

    /// The next line that the upstream receives, with its newline.
    pub async fn upstream_next(&mut self) -> Vec<u8> {
        next_line(&mut self.upstream_in, "the bridge toward the upstream").await
    }

    /// The next request `method` that the upstream receives, as a value; other lines (the
    /// bridge's notifications) are passed over.
    pub async fn upstream_request(&mut self, method: &str) -> Value {
        let line = self.upstream_request_line(method).await;
        serde_json::from_slice(&line).unwrap()
    }

    /// [`Router::upstream_request`] as the bytes received.
    pub async fn upstream_request_line(&mut self, method: &str) -> Vec<u8> {
        loop {
            let line = self.upstream_next().await;
            let v: Value = serde_json::from_slice(&line).expect("the bridge writes JSON");
            if v["method"] == method && v.get("id").is_some() {
                return line;
            }
        }
    }

    /// Writes one line of the upstream (`line` without its newline).
    pub async fn upstream_send(&mut self, line: &[u8]) {
        self.upstream_out.write_all(line).await.unwrap();
        self.upstream_out.write_all(b"\n").await.unwrap();
    }
}
