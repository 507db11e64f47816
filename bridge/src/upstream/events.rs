//! Where a transport reports its [`TransportEvent`]s: to the router of its client, called on
//! the task of the transport that received the event (a hot-path choice of bridge/README.md: a task of its own for the
//! router cost a wake-up and a poll on every message of the upstream).
//!
//! The router sees the events one at a time, in the order in which they were sent, as
//! through a queue: a send while another event is being routed (on another thread, or from
//! the router itself) only queues its event, and whoever is routing takes it next. No lock
//! is held while the router runs. Events sent before the client installs its router wait for
//! it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use super::TransportEvent;

/// What the router wants after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// Nothing comes after this event (the end of the connection): the router is dropped,
    /// and later events are refused.
    Stop,
}

/// The router of a client.
pub type Router = Box<dyn FnMut(TransportEvent) -> Flow + Send>;

/// The sending side, for the transport and its tasks. Cloning it is cheap.
#[derive(Clone)]
pub struct Events {
    hub: Arc<Hub>,
}

/// The receiving side: the client installs its router with [`Inbox::route`].
pub struct Inbox {
    hub: Option<Arc<Hub>>,
}

struct Hub {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<TransportEvent>,
    /// `None` before the router is installed, and while someone is routing (it holds it).
    router: Option<Router>,
    routing: bool,
    /// The router stopped, or the inbox was dropped without one: events are refused.
    done: bool,
}

/// A new pair of an event sender and its inbox.
pub fn events() -> (Events, Inbox) {
    let hub = Arc::new(Hub {
        state: Mutex::new(State::default()),
    });
    (
        Events {
            hub: Arc::clone(&hub),
        },
        Inbox { hub: Some(hub) },
    )
}

impl Events {
    /// Routes `event` now, or queues it behind the events being routed. False once nothing
    /// routes any more (the router stopped): the transport may stop reading.
    pub fn send(&self, event: TransportEvent) -> bool {
        let router = {
            let mut state = self.hub.lock();
            if state.done {
                return false;
            }
            state.queue.push_back(event);
            if state.routing {
                return true;
            }
            match state.router.take() {
                Some(router) => {
                    state.routing = true;
                    router
                }
                None => return true,
            }
        };
        self.hub.drain(router)
    }
}

impl Inbox {
    /// Installs the router; the events that came before it are routed now.
    pub fn route(mut self, router: Router) {
        let Some(hub) = self.hub.take() else {
            return;
        };
        let mut state = hub.lock();
        if state.done {
            return;
        }
        if state.queue.is_empty() {
            state.router = Some(router);
            return;
        }
        state.routing = true;
        drop(state);
        hub.drain(router);
    }
}

impl Drop for Inbox {
    /// An inbox dropped without a router: nobody will read the events.
    fn drop(&mut self) {
        if let Some(hub) = &self.hub {
            let mut state = hub.lock();
            state.done = true;
            state.queue.clear();
        }
    }
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    /// Routes the queued events with `router`, which the caller took, until the queue is
    /// empty; then puts the router back. False when the router stopped.
    fn drain(&self, mut router: Router) -> bool {
        loop {
            let next = {
                let mut state = self.lock();
                match state.queue.pop_front() {
                    Some(event) => event,
                    None => {
                        state.router = Some(router);
                        state.routing = false;
                        return true;
                    }
                }
            };
            if router(next) == Flow::Stop {
                {
                    let mut state = self.lock();
                    state.done = true;
                    state.routing = false;
                    state.queue.clear();
                }
                // Dropped without the lock: the router may hold the last handle of things
                // that send events when they go.
                drop(router);
                return false;
            }
        }
    }
}

/// For tests of a transport: its events in a channel.
#[cfg(test)]
pub fn channel() -> (Events, tokio::sync::mpsc::UnboundedReceiver<TransportEvent>) {
    let (events, inbox) = events();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    inbox.route(Box::new(move |event| {
        if tx.send(event).is_ok() {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }));
    (events, rx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::reader::RawLine;

    fn line(n: u8) -> TransportEvent {
        TransportEvent::Line(RawLine::Line(vec![n]))
    }

    fn number(event: &TransportEvent) -> u8 {
        match event {
            TransportEvent::Line(RawLine::Line(l)) => l[0],
            _ => 0,
        }
    }

    #[test]
    fn events_before_the_router_wait_and_keep_their_order() {
        let (tx, inbox) = events();
        assert!(tx.send(line(1)));
        assert!(tx.send(line(2)));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        inbox.route(Box::new(move |e| {
            s.lock().expect("lock").push(number(&e));
            Flow::Continue
        }));
        assert!(tx.send(line(3)));
        assert_eq!(*seen.lock().expect("lock"), [1, 2, 3]);
    }

    #[test]
    fn an_event_sent_by_the_router_itself_is_routed_after_the_current_one() {
        let (tx, inbox) = events();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let again = tx.clone();
        inbox.route(Box::new(move |e| {
            let n = number(&e);
            if n == 1 {
                assert!(again.send(line(2)), "queued, not routed inside");
            }
            s.lock().expect("lock").push(n);
            Flow::Continue
        }));
        assert!(tx.send(line(1)));
        assert_eq!(*seen.lock().expect("lock"), [1, 2]);
    }

    #[test]
    fn after_stop_the_router_is_gone_and_events_are_refused() {
        let (tx, inbox) = events();
        let alive = Arc::new(());
        let held = Arc::clone(&alive);
        inbox.route(Box::new(move |_| {
            let _ = &held;
            Flow::Stop
        }));
        assert!(!tx.send(line(1)), "the stopping event reports the stop");
        assert_eq!(Arc::strong_count(&alive), 1, "the router was dropped");
        assert!(!tx.send(line(2)));
    }

    #[test]
    fn an_inbox_dropped_without_a_router_refuses_events() {
        let (tx, inbox) = events();
        assert!(tx.send(line(1)));
        drop(inbox);
        assert!(!tx.send(line(2)));
    }
}
