//! The idle memory of bridges of one binary side by side: one alone, then ten, each past its
//! `initialize`. With ten, the pages of the executable are shared ten ways, so the mean PSS per
//! bridge is what one more bridge in a VS Code window costs.

use super::*;

/// How long a bridge is left after its `initialize` before its memory is read: its start-up
/// tasks (the upstream's discovery, the first list reads) are done by then.
const SETTLE: Duration = Duration::from_millis(300);

pub(crate) struct Idle {
    pub(crate) one: Sizes,
    pub(crate) ten_each: Sizes,
}

/// Starts bridges with `start` (a bridge past `initialize`): the memory of the first one alone,
/// then the mean of ten of them. Every bridge started here is stopped before it returns.
pub(crate) fn idle_bridges(mut start: impl FnMut() -> Peer) -> Idle {
    let first = start();
    std::thread::sleep(SETTLE);
    let one = Sizes::of(first.pid());
    let mut all = vec![first];
    all.extend((1..10).map(|_| start()));
    std::thread::sleep(SETTLE);
    let sizes: Vec<Sizes> = all.iter().map(|p| Sizes::of(p.pid())).collect();
    for peer in all {
        peer.stop();
    }
    Idle {
        one,
        ten_each: Sizes::mean(&sizes),
    }
}

impl Idle {
    pub(crate) fn print(&self, what: &str) {
        let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
        for (label, s) in [("1 bridge", self.one), ("10 bridges, each", self.ten_each)] {
            println!(
                "  {what} idle, {label}: PSS {:.2} MB, USS {:.2} MB (RSS {:.2} MB)",
                mb(s.pss),
                mb(s.uss),
                mb(s.rss)
            );
        }
    }

    pub(crate) fn json(&self) -> Value {
        json!({"one": self.one.json(), "ten_each": self.ten_each.json()})
    }
}
