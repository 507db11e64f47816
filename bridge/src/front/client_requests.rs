//! Requests of the bridge to VS Code (the machinery of M2's input rounds): string ids `b-1`,
//! `b-2`, … that can never equal an integer id of VS Code (quirk of M1), one counter per
//! connection shared by all rounds and requests, a table of pending answers, and the
//! cancellation of a request that VS Code has not answered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::input::answers::ClientAnswer;
use crate::input::texts;
use crate::log::{self, Level};
use crate::wire::parse::BRIDGE_ID_PREFIX;
use crate::wire::writer::Outbox;

/// A request of the bridge that waits for its answer.
pub struct PendingAnswer {
    pub id: String,
    pub answer: oneshot::Receiver<ClientAnswer>,
}

/// The frame of a request of the bridge; without `params` when there are none.
pub fn request_frame(id: &str, method: &str, params: Option<Value>) -> Value {
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), "2.0".into());
    frame.insert("id".into(), Value::String(id.to_owned()));
    frame.insert("method".into(), method.into());
    if let Some(params) = params {
        frame.insert("params".into(), params);
    }
    Value::Object(frame)
}

/// The pending table.
#[derive(Default)]
pub struct ClientRequests {
    next: AtomicU64,
    pending: Mutex<HashMap<String, oneshot::Sender<ClientAnswer>>>,
}

impl ClientRequests {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<ClientAnswer>>> {
        crate::sync::lock(&self.pending)
    }

    /// The next id: `b-1`, `b-2`, …
    pub fn next_id(&self) -> String {
        format!(
            "{BRIDGE_ID_PREFIX}{}",
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    /// Sends a request to VS Code (`roots/list` goes without params when the upstream
    /// gave none). The entry exists before the frame goes out, so that the reader can never
    /// see an answer before its entry. The caller writes the debug line, which names the
    /// original request.
    pub fn send(&self, outbox: &Outbox, method: &str, params: Option<Value>) -> PendingAnswer {
        let id = self.next_id();
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        outbox.send(&request_frame(&id, method, params));
        PendingAnswer { id, answer: rx }
    }

    /// The reader routes an answer here. Late, unknown and second answers are dropped
    /// with a debug line: VS Code ignores the bridge's cancellations, so late answers are
    /// normal.
    pub fn resolve(&self, id: &str, answer: ClientAnswer) -> bool {
        match self.lock().remove(id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => {
                log::bridge(
                    Level::Debug,
                    &format!("dropped an answer of the client to no pending request (\"{id}\")"),
                );
                false
            }
        }
    }

    /// Gives a request up: VS Code gets `notifications/cancelled` with the reason (it may
    /// still answer; that late answer is dropped). Nothing for an answered request.
    pub fn cancel(&self, outbox: &Outbox, id: &str, reason: &str) {
        if self.lock().remove(id).is_some() {
            outbox.send(&texts::cancelled(id, reason));
        }
    }

    /// The number of requests that wait for an answer.
    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::writer::spawn_writer;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn r8_quirk_bridge_requests_have_string_ids_and_route_answers() {
        let (w, mut r) = tokio::io::duplex(1 << 16);
        let (outbox, handle) = spawn_writer(w);
        let table = ClientRequests::default();
        let a = table.send(&outbox, "elicitation/create", Some(json!({"message":"m"})));
        let b = table.send(&outbox, "roots/list", None);
        assert_eq!((a.id.as_str(), b.id.as_str()), ("b-1", "b-2"));
        assert!(table.resolve("b-1", ClientAnswer::Result(json!({"action":"accept"}))));
        assert!(
            !table.resolve("b-1", ClientAnswer::Result(json!({}))),
            "second answer dropped"
        );
        assert!(
            !table.resolve("b-9", ClientAnswer::BadLine),
            "unknown answer dropped"
        );
        assert_eq!(
            a.answer.await.ok(),
            Some(ClientAnswer::Result(json!({"action":"accept"})))
        );
        table.cancel(&outbox, "b-2", "the client canceled the request");
        assert!(
            !table.resolve("b-2", ClientAnswer::Result(json!({}))),
            "late answer dropped"
        );
        assert!(b.answer.await.is_err());
        assert_eq!(table.pending(), 0);
        // The counter is the connection's: a later round goes on with b-3.
        assert_eq!(table.send(&outbox, "roots/list", Some(json!({}))).id, "b-3");
        outbox.close();
        let _ = handle.await;
        let mut out = String::new();
        let _ = r.read_to_string(&mut out).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].contains(r#""id":"b-1""#));
        // roots/list without params when the upstream gave none.
        assert_eq!(
            lines[1],
            r#"{"jsonrpc":"2.0","id":"b-2","method":"roots/list"}"#
        );
        assert_eq!(
            lines[2],
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-2","reason":"the client canceled the request"}}"#
        );
        assert_eq!(
            lines[3],
            r#"{"jsonrpc":"2.0","id":"b-3","method":"roots/list","params":{}}"#
        );
    }
}
