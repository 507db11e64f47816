//! The one timer of a connection while requests come (a hot-path choice of bridge/README.md).
//!
//! An upstream exchange needs a timer: its first "still waiting" line comes after 10 s
//! ([`super::exchange::FIRST_NOTE`]) and its limit after at least as long. Most exchanges end
//! long before any of their times, so an exchange whose times are all more than [`TICK`] away
//! waits for the next tick of this timer ([`Keeper::tick`], a place in a list of waiters)
//! before it arms its own: at most one tick after its start, so before its first time. A
//! request then costs no registration in tokio's timer wheel and no work of the time driver
//! for it (see `bridge/README.md` for what was measured).
//!
//! While this timer runs, the runtime's next planned wake is never more than [`TICK`] away,
//! so a timer armed later than that costs no wake of the driver through its eventfd (one
//! more write and one more `epoll_wait`). It stops after [`IDLE`] without a request, so an
//! idle bridge sleeps.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Half the first note of an exchange (10 s): its timer is never the earliest, and an
/// exchange that arms its own at the first tick after its start has at least 5 s left.
pub(crate) const TICK: Duration = Duration::from_secs(5);
/// Without a request for this long, the timer stops.
const IDLE: Duration = Duration::from_secs(60);

/// The timer of one connection.
pub(crate) struct Keeper {
    origin: Instant,
    /// Milliseconds from `origin` of the last request.
    last: AtomicU64,
    running: AtomicBool,
    /// Woken at every tick.
    tick: Notify,
    /// Called at every tick: the exchanges without a task of their own get one that keeps
    /// their times (`super::inline`).
    on_tick: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl Keeper {
    pub(crate) fn new() -> Arc<Keeper> {
        Arc::new(Keeper {
            origin: Instant::now(),
            last: AtomicU64::new(0),
            running: AtomicBool::new(false),
            tick: Notify::new(),
            on_tick: OnceLock::new(),
        })
    }

    /// Sets what runs at every tick besides the waiters of [`Keeper::tick`] (once).
    pub(crate) fn on_tick(&self, hook: Box<dyn Fn() + Send + Sync>) {
        let _ = self.on_tick.set(hook);
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A request starts: the timer runs (again), for at least [`IDLE`].
    pub(crate) fn touch(self: &Arc<Self>) {
        self.last.store(self.now_ms(), Ordering::Relaxed);
        if !self.running.swap(true, Ordering::AcqRel) {
            tokio::spawn(run(Arc::clone(self)));
        }
    }

    /// The next tick, at most [`TICK`] after a [`Keeper::touch`]. Call `enable` on the
    /// future (pinned) at once, so that a tick before its first poll still counts.
    pub(crate) fn tick(&self) -> tokio::sync::futures::Notified<'_> {
        self.tick.notified()
    }
}

async fn run(keeper: Arc<Keeper>) {
    let idle = u64::try_from(IDLE.as_millis()).unwrap_or(u64::MAX);
    loop {
        tokio::time::sleep(TICK).await;
        keeper.tick.notify_waiters();
        if let Some(hook) = keeper.on_tick.get() {
            hook();
        }
        let checked = keeper.now_ms();
        if checked.saturating_sub(keeper.last.load(Ordering::Relaxed)) < idle {
            continue;
        }
        keeper.running.store(false, Ordering::Release);
        // A request that came between the check and the store found the timer running.
        let again = keeper.last.load(Ordering::Relaxed) >= checked;
        // Go on only when no other run started in between.
        if !again || keeper.running.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn runs_while_requests_come_and_stops_when_idle() {
        let k = Keeper::new();
        k.touch();
        assert!(k.running.load(Ordering::Acquire));
        tokio::time::sleep(IDLE / 2).await;
        k.touch();
        tokio::time::sleep(IDLE / 2 + TICK).await;
        assert!(
            k.running.load(Ordering::Acquire),
            "a request came within the idle time"
        );
        tokio::time::sleep(IDLE + 2 * TICK).await;
        assert!(!k.running.load(Ordering::Acquire), "stopped when idle");
        k.touch();
        assert!(k.running.load(Ordering::Acquire), "starts again");
    }

    /// An exchange whose times are more than a tick away arms its own timer at the first
    /// tick after its start (`front::exchange`), so the tick comes within [`TICK`].
    #[tokio::test(start_paused = true)]
    async fn the_first_tick_comes_within_one_tick_of_a_request() {
        let k = Keeper::new();
        k.touch();
        let started = Instant::now();
        let tick = k.tick();
        tokio::pin!(tick);
        tick.as_mut().enable();
        tokio::time::timeout(2 * TICK, tick).await.expect("a tick");
        assert!(started.elapsed() <= TICK, "{:?}", started.elapsed());
        // A request in the middle of a tick: the next tick is at most TICK away.
        tokio::time::sleep(TICK / 2).await;
        k.touch();
        let started = Instant::now();
        tokio::time::timeout(2 * TICK, k.tick())
            .await
            .expect("a tick");
        assert!(started.elapsed() <= TICK, "{:?}", started.elapsed());
    }
}
