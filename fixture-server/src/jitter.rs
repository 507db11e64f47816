//! The jitter mode (docs/fixture.md, "Jitter"): with `MCP_JITTER_SEED=<u64>` in its
//! environment, the fixture waits a random, seeded time (0 to 50 ms unless `MCP_JITTER_MS`
//! says `<low>-<high>`) at the points where the contract promises the client no order, so that
//! a test that relies on an order by chance fails in a few runs instead of one in twenty:
//!
//! - `answer`: before it answers a request (requests in flight are answered in any order);
//! - `listen`: before it opens a listen stream at a URL (its acknowledgment, thus the list
//!   changes of Q7, against the answers of the other HTTP requests);
//! - `changes`: before it writes a list change or an update on a listen stream.
//!
//! `MCP_JITTER_AT=<point>,…` keeps only the named points (a forced reproduction of one race).
//! The orders that the contract promises stay: a tool's list change is written before its
//! result (Q6 on stdio), whatever the waits, because the tool waits for the write.
//! Without the variable nothing waits. No line is written about it: the stderr lines of a
//! transcript are checked.
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::sync::lock;

/// The variable that turns the jitter on, with its seed.
pub const SEED_VAR: &str = "MCP_JITTER_SEED";
/// The range of each wait in milliseconds, `<low>-<high>`.
pub const RANGE_VAR: &str = "MCP_JITTER_MS";
/// The points that wait, separated by commas (all without it).
pub const POINTS_VAR: &str = "MCP_JITTER_AT";
/// The range without [`RANGE_VAR`].
const DEFAULT_RANGE: (u64, u64) = (0, 50);

/// A point where the contract promises no order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    Answer,
    Listen,
    Changes,
}

impl Point {
    fn name(self) -> &'static str {
        match self {
            Point::Answer => "answer",
            Point::Listen => "listen",
            Point::Changes => "changes",
        }
    }
}

/// The jitter of this process, read once from the environment.
struct Jitter {
    rng: Mutex<fastrand::Rng>,
    low: u64,
    high: u64,
    points: Option<Vec<String>>,
}

impl Jitter {
    /// The settings from the variables' values; `None` without a seed or with one that is not
    /// a number (the fixture then runs as usual).
    fn from_values(seed: Option<&str>, range: Option<&str>, points: Option<&str>) -> Option<Self> {
        let seed = seed?.trim().parse::<u64>().ok()?;
        let (low, high) = range.and_then(parse_range).unwrap_or(DEFAULT_RANGE);
        let points = points.map(|p| p.split(',').map(|s| s.trim().to_string()).collect());
        Some(Self {
            rng: Mutex::new(fastrand::Rng::with_seed(seed)),
            low,
            high,
            points,
        })
    }

    /// The wait at `point`: nothing at a point left out, else a draw in the range.
    fn delay(&self, point: Point) -> Option<Duration> {
        if let Some(points) = &self.points
            && !points.iter().any(|p| p == point.name())
        {
            return None;
        }
        let ms = lock(&self.rng).u64(self.low..=self.high);
        Some(Duration::from_millis(ms))
    }
}

/// `<low>-<high>` in milliseconds, low not above high.
fn parse_range(text: &str) -> Option<(u64, u64)> {
    let (low, high) = text.split_once('-')?;
    let (low, high) = (low.trim().parse().ok()?, high.trim().parse().ok()?);
    (low <= high).then_some((low, high))
}

fn jitter() -> Option<&'static Jitter> {
    static JITTER: OnceLock<Option<Jitter>> = OnceLock::new();
    JITTER
        .get_or_init(|| {
            let var = |name| std::env::var(name).ok();
            Jitter::from_values(
                var(SEED_VAR).as_deref(),
                var(RANGE_VAR).as_deref(),
                var(POINTS_VAR).as_deref(),
            )
        })
        .as_ref()
}

/// Waits the jitter of `point` (at once without the jitter mode).
pub async fn pause(point: Point) {
    if let Some(delay) = jitter().and_then(|j| j.delay(point))
        && !delay.is_zero()
    {
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_waits_within_the_range() {
        let draws = |seed| {
            let j = Jitter::from_values(Some(seed), Some("5-9"), None).expect("jitter");
            (0..20)
                .map(|_| j.delay(Point::Answer).map(|d| d.as_millis()))
                .collect::<Vec<_>>()
        };
        let a = draws("7");
        assert_eq!(a, draws("7"));
        assert_ne!(a, draws("8"));
        assert!(a.iter().all(|d| d.is_some_and(|ms| (5..=9).contains(&ms))));
    }

    #[test]
    fn only_the_named_points_wait_and_no_seed_means_no_jitter() {
        let j = Jitter::from_values(Some("1"), None, Some("listen")).expect("jitter");
        assert!(j.delay(Point::Answer).is_none());
        assert!(j.delay(Point::Listen).is_some());
        assert!(Jitter::from_values(None, Some("0-5"), None).is_none());
        assert!(Jitter::from_values(Some("x"), None, None).is_none());
        assert_eq!(parse_range("9-3"), None);
        assert_eq!(parse_range("100-100"), Some((100, 100)));
    }
}
