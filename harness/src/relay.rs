//! `harness upstream-relay <socket> [--stubborn]`: the bridge's upstream command in a scripted
//! transcript. It copies its stdin to a Unix socket on which the runner listens, and writes to
//! its stdout what the runner tells it, so the runner sees and answers every upstream frame.
//!
//! The socket carries one JSON object a line. Relay → runner: `{"in": <line>}` for each line
//! the bridge wrote to the upstream, `{"eof": true}` at the end of its stdin. Runner → relay:
//! `{"write": <line>}` (written as is, plus a newline: frames that are not valid are possible),
//! `{"exit": <code>}`, `{"close_stdout": true}`.
//!
//! With `--stubborn`, the relay ignores the end of its stdin and the termination signal, like a
//! server that does not stop: only a kill ends it (the bridge's stop sequence, R7).
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// A message from the runner to the relay.
pub fn write_msg(line: &str) -> String {
    format!("{}\n", json!({ "write": line }))
}

/// Runs the relay; returns the exit code of the process.
pub async fn run(sock: &Path, stubborn: bool) -> i32 {
    // Registering a handler replaces the default action, so SIGTERM no longer ends us.
    let _term = if stubborn {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
    } else {
        None
    };
    let stream =
        match tokio::time::timeout(Duration::from_secs(10), UnixStream::connect(sock)).await {
            Ok(Ok(s)) => s,
            _ => {
                eprintln!(
                    "harness upstream-relay: cannot connect to {}",
                    sock.display()
                );
                return 70;
            }
        };
    let (sock_read, mut sock_write) = stream.into_split();
    let mut commands = BufReader::new(sock_read).lines();
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = Some(tokio::io::stdout());
    let mut stdin_open = true;
    loop {
        tokio::select! {
            line = stdin.next_line(), if stdin_open => {
                let msg = match line {
                    Ok(Some(l)) => json!({ "in": l }),
                    _ => {
                        stdin_open = false;
                        json!({ "eof": true })
                    }
                };
                if sock_write.write_all(format!("{msg}\n").as_bytes()).await.is_err() {
                    return 0;
                }
                if !stdin_open && !stubborn {
                    let _ = sock_write.flush().await;
                    return 0;
                }
            }
            cmd = commands.next_line() => {
                // The runner is gone: end, so that no relay outlives its transcript.
                let Ok(Some(cmd)) = cmd else { return 0 };
                let Ok(cmd) = serde_json::from_str::<Value>(&cmd) else { continue };
                if let Some(text) = cmd.get("write").and_then(Value::as_str) {
                    if let Some(out) = stdout.as_mut() {
                        let ok = out.write_all(format!("{text}\n").as_bytes()).await.is_ok()
                            && out.flush().await.is_ok();
                        if !ok {
                            stdout = None;
                        }
                    }
                } else if let Some(code) = cmd.get("exit").and_then(Value::as_i64) {
                    if let Some(out) = stdout.as_mut() {
                        let _ = out.flush().await;
                    }
                    return i32::try_from(code).unwrap_or(1);
                } else if cmd.get("close_stdout").is_some() {
                    stdout = None;
                    close_stdout();
                }
            }
        }
    }
}

/// Puts /dev/null in place of fd 1, which closes the pipe to the bridge while the relay runs on
/// (a server that closed its stdout but did not exit).
fn close_stdout() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
    }
}
