//! A timer that keeps the runtime's next wake close while requests come (issue 15).
//!
//! Every upstream exchange arms a timer 10 s ahead (the first "still waiting" line,
//! [`super::exchange::FIRST_NOTE`]). tokio wakes its driver through the eventfd whenever a
//! timer is armed earlier than the driver's next planned wake: one more write and one more
//! `epoll_wait` for every request of an otherwise idle connection. While this timer runs, the
//! next planned wake is never more than [`TICK`] away, so arming a request's timers costs
//! no system call. It stops after [`IDLE`] without a request, so an idle bridge sleeps, and
//! frees the spare buffers of large lines ([`crate::wire::pool`]); while it runs, it frees
//! them when they were not used for a tick.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// At most the first note of an exchange (10 s), so that its timer is never the earliest.
const TICK: Duration = Duration::from_secs(5);
/// Without a request for this long, the timer stops.
const IDLE: Duration = Duration::from_secs(60);

/// The timer of one connection.
pub(crate) struct Keeper {
    origin: Instant,
    /// Milliseconds from `origin` of the last request.
    last: AtomicU64,
    running: AtomicBool,
}

impl Keeper {
    pub(crate) fn new() -> Arc<Keeper> {
        Arc::new(Keeper {
            origin: Instant::now(),
            last: AtomicU64::new(0),
            running: AtomicBool::new(false),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A request starts: the timer runs (again).
    pub(crate) fn touch(self: &Arc<Self>) {
        self.last.store(self.now_ms(), Ordering::Relaxed);
        if !self.running.swap(true, Ordering::AcqRel) {
            tokio::spawn(run(Arc::clone(self)));
        }
    }
}

async fn run(keeper: Arc<Keeper>) {
    let idle = u64::try_from(IDLE.as_millis()).unwrap_or(u64::MAX);
    loop {
        tokio::time::sleep(TICK).await;
        crate::wire::pool::age();
        let checked = keeper.now_ms();
        if checked.saturating_sub(keeper.last.load(Ordering::Relaxed)) < idle {
            continue;
        }
        // Idle: the spare buffers of large lines are freed.
        crate::wire::pool::clear();
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
}
