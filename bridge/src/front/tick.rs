//! The connection's tick: one timer kept pending while requests come, so that the timer of an
//! upstream exchange is never the earliest of the runtime (a hot-path choice of
//! bridge/README.md, "connection-tick").
//!
//! tokio's time driver wakes its own thread whenever a timer is registered before the
//! driver's next planned wake: a write to the runtime's eventfd, and one more `epoll_wait`
//! after it, for each echo through the bridge. Every exchange arms a timer of at least
//! [`super::exchange::FIRST_NOTE`] (10 s); while a tick of [`PERIOD`] is pending, no such
//! timer is earlier, and its registration costs no system call. The tick stops after
//! [`IDLE_TICKS`] ticks without a request, so an idle bridge sleeps without waking.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Half the first "still waiting" line of an exchange: the tick is always earlier.
const PERIOD: Duration = Duration::from_secs(5);
/// Ticks without a request before the tick stops (60 s).
const IDLE_TICKS: u32 = 12;

/// The tick of one connection.
#[derive(Default)]
pub(crate) struct Tick {
    /// A request came since the last tick.
    touched: AtomicBool,
    /// The tick's task runs.
    running: AtomicBool,
}

impl Tick {
    /// Called before an exchange arms its timer: starts the tick when it does not run. It
    /// runs on the runtime of the caller and is not tracked with the connection's tasks: the
    /// stop never waits for it.
    pub(crate) fn touch(tick: &Arc<Tick>) {
        tick.touched.store(true, Ordering::Relaxed);
        if !tick.running.swap(true, Ordering::AcqRel) {
            tokio::spawn(run(Arc::clone(tick)));
        }
    }

    /// Whether the tick's task runs (for the tests).
    #[cfg(test)]
    pub(crate) fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }
}

async fn run(tick: Arc<Tick>) {
    let mut idle = 0;
    let mut interval = tokio::time::interval(PERIOD);
    // The first tick of an interval is at once; the timer that matters is the next one.
    interval.tick().await;
    loop {
        interval.tick().await;
        if tick.touched.swap(false, Ordering::Relaxed) {
            idle = 0;
            continue;
        }
        idle += 1;
        if idle < IDLE_TICKS {
            continue;
        }
        tick.running.store(false, Ordering::Release);
        // A request that came between the last check and the store above saw the tick
        // running and started none: this task goes on for it.
        if tick.touched.load(Ordering::Relaxed) && !tick.running.swap(true, Ordering::AcqRel) {
            idle = 0;
            continue;
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tasks alive on this test's runtime (the test itself is its `block_on` future, not
    /// a task).
    fn tasks() -> usize {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    }

    /// The tick runs while requests come, as one task however many requests, and its task
    /// ends after a minute without one.
    #[tokio::test(start_paused = true)]
    async fn the_tick_ends_its_task_after_a_minute_without_requests() {
        let tick = Arc::new(Tick::default());
        assert_eq!(tasks(), 0);
        Tick::touch(&tick);
        Tick::touch(&tick);
        assert_eq!(tasks(), 1, "one tick for two requests");
        // A request every 20 s for two minutes keeps it running.
        for _ in 0..6 {
            tokio::time::sleep(Duration::from_secs(20)).await;
            Tick::touch(&tick);
            assert!(tick.is_running());
            assert_eq!(tasks(), 1);
        }
        tokio::time::sleep(PERIOD * (IDLE_TICKS + 2)).await;
        assert!(
            !tick.is_running(),
            "still ticking after 70 s without a request"
        );
        assert_eq!(tasks(), 0, "the tick's task did not end");
        Tick::touch(&tick);
        assert_eq!(tasks(), 1, "a new request starts it again");
    }
}
