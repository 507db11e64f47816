//! `harness upstream-relay <socket> [--stubborn] [-- <command> args…]`: the bridge's upstream
//! command when the runner must see the upstream side.
//!
//! - Scripted (no command): the relay copies its stdin to a Unix socket on which the runner
//!   listens, and writes to its stdout what the runner tells it, so the runner sees and answers
//!   every upstream frame.
//! - Tap (with a command, e.g. the fixture): the relay runs the command, copies the bridge's lines
//!   to it and its lines back, and reports every line of the bridge to the runner, which checks
//!   it against the 2026-07-28 schema (2025-11-25 for an older upstream, whose own lines it
//!   then checks too). The relay exits with the command's exit code.
//!
//! The socket is a Unix socket path, or `tcp:127.0.0.1:<port>` (loopback TCP, where Unix sockets
//! are missing; upstream.rs chooses). It carries one JSON object a line. Relay → runner: `{"in": <line>}` for each line
//! the bridge wrote to the upstream, `{"out": <line>}` for each line of the tapped command,
//! `{"eof": true}` at the end of its stdin. Runner → relay:
//! `{"write": <line>}` (written as is, plus a newline: frames that are not valid are possible),
//! `{"exit": <code>}`, `{"close_stdout": true}`.
//!
//! With `--stubborn`, the relay ignores the end of its stdin and the termination signal, like a
//! server that does not stop: only a kill ends it (the bridge's stop sequence, R7).
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// A message from the runner to the relay.
pub fn write_msg(line: &str) -> String {
    format!("{}\n", json!({ "write": line }))
}

/// The child of a tap.
struct Tapped {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<Lines<BufReader<ChildStdout>>>,
}

/// Runs the relay; returns the exit code of the process.
pub async fn run(sock: &str, stubborn: bool, command: &[String]) -> i32 {
    // Registering a handler replaces the default action, so SIGTERM no longer ends us.
    // (Windows has no such signal: there the stubborn relay only ignores the end of stdin.)
    #[cfg(unix)]
    let _term = if stubborn {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
    } else {
        None
    };
    let connect = tokio::time::timeout(Duration::from_secs(10), connect(sock));
    let Ok(Ok((sock_read, mut sock_write))) = connect.await else {
        eprintln!("harness upstream-relay: cannot connect to {sock}");
        return 70;
    };
    let mut tap = match command.split_first() {
        None => None,
        Some((program, args)) => {
            let spawned = tokio::process::Command::new(program)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn();
            match spawned {
                Ok(mut child) => Some(Tapped {
                    stdin: child.stdin.take(),
                    stdout: child.stdout.take().map(|o| BufReader::new(o).lines()),
                    child,
                }),
                Err(e) => {
                    eprintln!("harness upstream-relay: cannot start {program}: {e}");
                    return 70;
                }
            }
        }
    };
    let mut commands = BufReader::new(sock_read).lines();
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = Some(tokio::io::stdout());
    let mut stdin_open = true;
    loop {
        let child_out = async {
            match tap.as_mut().and_then(|t| t.stdout.as_mut()) {
                Some(lines) => lines.next_line().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            line = stdin.next_line(), if stdin_open => {
                let line = match line {
                    Ok(Some(l)) => Some(l),
                    _ => None,
                };
                let msg = match &line {
                    Some(l) => json!({ "in": l }),
                    None => json!({ "eof": true }),
                };
                let _ = sock_write.write_all(format!("{msg}\n").as_bytes()).await;
                if let Some(t) = tap.as_mut() {
                    match &line {
                        Some(l) => {
                            if let Some(w) = t.stdin.as_mut() {
                                let _ = w.write_all(format!("{l}\n").as_bytes()).await;
                                let _ = w.flush().await;
                            }
                        }
                        // The end of input goes on to the child, which then stops by itself.
                        None => t.stdin = None,
                    }
                }
                if line.is_none() {
                    stdin_open = false;
                    if !stubborn && tap.is_none() {
                        let _ = sock_write.flush().await;
                        return 0;
                    }
                }
            }
            line = child_out => {
                match line {
                    Ok(Some(l)) => {
                        let msg = json!({ "out": l });
                        let _ = sock_write.write_all(format!("{msg}\n").as_bytes()).await;
                        write_out(&mut stdout, &l).await;
                    }
                    // The child closed its stdout: it exits; its code becomes ours.
                    _ => return child_exit(&mut tap).await,
                }
            }
            cmd = commands.next_line() => {
                // The runner is gone: end, so that no relay outlives its transcript.
                let Ok(Some(cmd)) = cmd else {
                    if let Some(t) = tap.as_mut() {
                        let _ = t.child.start_kill();
                    }
                    return 0;
                };
                let Ok(cmd) = serde_json::from_str::<Value>(&cmd) else { continue };
                if let Some(text) = cmd.get("write").and_then(Value::as_str) {
                    write_out(&mut stdout, text).await;
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

type Halves = (
    Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
);

/// Connects to the runner: `tcp:<address>` over loopback TCP, else the Unix socket at the path.
async fn connect(sock: &str) -> std::io::Result<Halves> {
    if let Some(addr) = sock.strip_prefix("tcp:") {
        let (r, w) = tokio::net::TcpStream::connect(addr).await?.into_split();
        return Ok((Box::new(r), Box::new(w)));
    }
    #[cfg(unix)]
    {
        let (r, w) = tokio::net::UnixStream::connect(std::path::Path::new(sock))
            .await?
            .into_split();
        Ok((Box::new(r), Box::new(w)))
    }
    #[cfg(not(unix))]
    Err(std::io::Error::other(
        "no Unix sockets here: give tcp:<address>",
    ))
}

async fn write_out(stdout: &mut Option<tokio::io::Stdout>, text: &str) {
    if let Some(out) = stdout.as_mut() {
        let ok = out.write_all(format!("{text}\n").as_bytes()).await.is_ok()
            && out.flush().await.is_ok();
        if !ok {
            *stdout = None;
        }
    }
}

/// The exit code of the tapped child (bounded: a child that closed its stdout but runs on is
/// killed after 2 s, as a bridge would).
async fn child_exit(tap: &mut Option<Tapped>) -> i32 {
    let Some(t) = tap.as_mut() else { return 0 };
    let status = match tokio::time::timeout(Duration::from_secs(2), t.child.wait()).await {
        Ok(Ok(s)) => s,
        _ => {
            let _ = t.child.start_kill();
            match t.child.wait().await {
                Ok(s) => s,
                Err(_) => return 1,
            }
        }
    };
    status
        .code()
        .unwrap_or_else(|| 128 + crate::process::exit_signal(&status).unwrap_or(0))
}

/// Puts /dev/null in place of fd 1, which closes the pipe to the bridge while the relay runs on
/// (a server that closed its stdout but did not exit).
fn close_stdout() {
    #[cfg(unix)]
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
    }
}
