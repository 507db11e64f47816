//! The task of each request in flight at a URL, of every revision, by the client's id:
//! aborting it closes its POST and its event stream, so that a cancelled or timed-out request
//! does not hold a connection of the server until the stop (L4).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::task::AbortHandle;

use crate::sync::lock;

/// The tasks of the requests in flight; clones share them.
#[derive(Clone, Default)]
pub struct Inflight(Arc<Mutex<HashMap<i64, AbortHandle>>>);

impl Inflight {
    /// Runs the exchange of request `id` on a task of its own, known under `id` until it ends.
    pub fn spawn(&self, id: i64, exchange: impl Future<Output = ()> + Send + 'static) {
        let tasks = self.clone();
        // The entry goes in before the task can remove it: the task waits for the lock.
        let mut map = lock(&self.0);
        let task = tokio::spawn(async move {
            exchange.await;
            lock(&tasks.0).remove(&id);
        });
        map.insert(id, task.abort_handle());
    }

    /// Request `id` was cancelled or timed out: its task ends (a request that already ended
    /// is not found).
    pub fn cancel(&self, id: i64) {
        if let Some(task) = lock(&self.0).remove(&id) {
            task.abort();
        }
    }

    /// The stop: every request's task ends.
    pub fn abort_all(&self) {
        for (_, task) in lock(&self.0).drain() {
            task.abort();
        }
    }
}
