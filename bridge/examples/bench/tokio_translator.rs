//! `bench --tokio-translator inline|task <program> [args…]`: the byte translator
//! ([`byte_request`], [`byte_response`]) on the bridge's kind of runtime, one current-thread
//! tokio runtime with the four pipes on its reactor, as two more floors of `--compare`:
//! - `inline`: the reader of VS Code's lines writes each request upstream, and the reader of
//!   the child's lines writes each response to VS Code: no task per request;
//! - `task`: a task per request, as the bridge runs one: it writes its request upstream and
//!   waits for its response (a `oneshot` from the reader of the child's lines) against a
//!   timer of its own, then writes the response.
//!
//! Between the two is the cost of a task per request on this runtime, with no rule at all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::oneshot;

use super::translator::{
    Request, Response, byte_request, byte_response, initialize_frame, response_frame,
    upstream_frame, upstream_id,
};
use super::{TokioPipes, on_tokio};

/// Who waits for the response of an upstream id.
enum Waiting {
    /// `inline`: VS Code's id; the reader of the child's lines answers.
    Id(Vec<u8>),
    /// `task`: the task of the request.
    Task(oneshot::Sender<Vec<u8>>),
}

type Shared<T> = Arc<tokio::sync::Mutex<T>>;
type Table = Arc<Mutex<HashMap<u64, Waiting>>>;

pub(crate) fn tokio_translator(mode: &str, program: &str, args: &[String]) {
    let per_request = match mode {
        "inline" => false,
        "task" => true,
        other => panic!("--tokio-translator takes inline or task, not {other}"),
    };
    on_tokio(program, args, |pipes| serve(per_request, pipes));
}

/// The two readers, on the runtime of [`on_tokio`].
async fn serve(per_request: bool, mut pipes: TokioPipes) {
    let stdout: Shared<pipe::Sender> = Arc::new(tokio::sync::Mutex::new(pipes.stdout));
    let to_child = Arc::new(tokio::sync::Mutex::new(pipes.to_child));
    let table: Table = Arc::default();
    let back = tokio::spawn(responses(pipes.from_child, table.clone(), stdout.clone()));
    let mut lines = BufReader::with_capacity(256 * 1024, pipes.stdin);
    let (mut line, mut next) = (Vec::new(), 0u64);
    while lines
        .read_until(b'\n', &mut line)
        .await
        .is_ok_and(|n| n > 0)
    {
        if let Some(request) = byte_request(&line) {
            if request.method == br#""initialize""# {
                write(&stdout, &initialize_frame(request.id)).await;
            } else {
                next += 1;
                if per_request {
                    start_task(next, &request, &table, &to_child, &stdout);
                } else {
                    let mut frame = Vec::new();
                    upstream_frame(next, &request, &mut frame);
                    let id = request.id.to_vec();
                    table.lock().expect("table").insert(next, Waiting::Id(id));
                    if !write(&to_child, &frame).await {
                        break;
                    }
                }
            }
        }
        line.clear();
    }
    back.abort();
    let _ = pipes.child.start_kill();
    let _ = pipes.child.wait().await;
}

/// `task`: the task of one request.
fn start_task(
    upstream_id: u64,
    request: &Request<'_>,
    table: &Table,
    to_child: &Shared<tokio::process::ChildStdin>,
    stdout: &Shared<pipe::Sender>,
) {
    let mut frame = Vec::new();
    upstream_frame(upstream_id, request, &mut frame);
    let (tx, rx) = oneshot::channel();
    table
        .lock()
        .expect("table")
        .insert(upstream_id, Waiting::Task(tx));
    let id = request.id.to_vec();
    let (to_child, stdout) = (to_child.clone(), stdout.clone());
    tokio::spawn(async move {
        if !write(&to_child, &frame).await {
            return;
        }
        // The bridge's exchange arms one timer for its limit.
        let timer = tokio::time::sleep(Duration::from_secs(60));
        tokio::select! {
            body = rx => if let Ok(body) = body {
                write(&stdout, &response_frame(&id, &body)).await;
            },
            () = timer => {}
        }
    });
}

/// The child's responses: to VS Code (`inline`) or to the task of their request.
async fn responses(
    from_child: tokio::process::ChildStdout,
    table: Table,
    stdout: Shared<pipe::Sender>,
) {
    let mut lines = BufReader::with_capacity(256 * 1024, from_child);
    let mut line = Vec::new();
    while lines
        .read_until(b'\n', &mut line)
        .await
        .is_ok_and(|n| n > 0)
    {
        if let Some(Response { id, body }) = byte_response(&line) {
            let waiting = upstream_id(id).and_then(|n| table.lock().expect("table").remove(&n));
            match waiting {
                Some(Waiting::Id(ours)) => {
                    write(&stdout, &response_frame(&ours, &body)).await;
                }
                Some(Waiting::Task(tx)) => {
                    let _ = tx.send(body);
                }
                None => {}
            }
        }
        line.clear();
    }
}

/// One frame to a shared pipe; false when the pipe is gone.
async fn write<W: AsyncWrite + Unpin>(to: &Shared<W>, frame: &[u8]) -> bool {
    to.lock().await.write_all(frame).await.is_ok()
}
