//! The jitter mode of a replay (`--jitter SEED`, or `MCP_JITTER_SEED` in the harness's
//! environment; docs/harness.md, "Jitter"): random, seeded waits at the points where the
//! contract promises no order, so that a transcript that relies on an order by chance fails in a
//! few runs instead of one in twenty, and the failure can be replayed from its seed.
//!
//! Each transcript (and era) gets its own seed, derived from the run's seed and its name, in
//! `MCP_JITTER_SEED` of the bridge's environment: the fixture behind the bridge (or the HTTPS
//! fixture, or the embedded one) reads it and waits at its points (docs/fixture.md). The
//! harness's own scripted upstream waits before each automatic answer ([`Waits::next`]): a real
//! server answers the requests in flight in any order. The frames that a transcript's own steps
//! send upstream keep their order: that order is the transcript's (Q6 on stdio).
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::time::Duration;

/// The seed of the jitter mode: on the harness's command line's behalf, and passed on to the
/// fixture (which reads it under the same name).
pub const SEED_VAR: &str = "MCP_JITTER_SEED";
/// The range of each wait in milliseconds, `<low>-<high>` (0-50 without it).
pub const RANGE_VAR: &str = "MCP_JITTER_MS";
/// The points that wait, separated by commas (every point without it): the fixture's `answer`,
/// `listen`, `changes`, and the harness's `auto`.
pub const POINTS_VAR: &str = "MCP_JITTER_AT";
/// The range without [`RANGE_VAR`].
const DEFAULT_RANGE: (u64, u64) = (0, 50);

/// The seed of one transcript run: the run's seed mixed with the transcript's name (with its
/// era), so that `--filter` replays a transcript with the waits it had in the whole run.
pub fn transcript_seed(run_seed: u64, name: &str) -> u64 {
    // DefaultHasher::new() has fixed keys: the same seed and name give the same value.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    run_seed.hash(&mut hasher);
    name.hash(&mut hasher);
    hasher.finish()
}

/// A new seed for a run that names none (`--jitter random`): CI's transcript step prints it.
pub fn fresh_seed() -> u64 {
    fastrand::u64(..)
}

/// The seed of `--jitter`: a number, or `random` for a fresh one.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    if text == "random" {
        return Ok(fresh_seed());
    }
    text.trim()
        .parse()
        .map_err(|_| format!("the jitter seed is a number or `random`, not {text:?}"))
}

/// The seed from the environment of the jitter variable, if it holds one.
pub fn env_seed(env: &[(String, String)]) -> Option<u64> {
    env.iter()
        .find(|(k, _)| k == SEED_VAR)
        .and_then(|(_, v)| v.parse().ok())
}

/// The waits of the harness's scripted upstream before its automatic answers.
pub struct Waits {
    rng: Mutex<fastrand::Rng>,
    low: u64,
    high: u64,
}

impl Waits {
    /// The waits for `seed`, with the range and the points of the harness's environment; `None`
    /// when `MCP_JITTER_AT` leaves out `auto`.
    pub fn new(seed: u64) -> Option<Self> {
        let var = |name| std::env::var(name).ok();
        Self::from_values(seed, var(RANGE_VAR).as_deref(), var(POINTS_VAR).as_deref())
    }

    fn from_values(seed: u64, range: Option<&str>, points: Option<&str>) -> Option<Self> {
        if let Some(points) = points
            && !points.split(',').any(|p| p.trim() == "auto")
        {
            return None;
        }
        let (low, high) = range.and_then(parse_range).unwrap_or(DEFAULT_RANGE);
        Some(Self {
            rng: Mutex::new(fastrand::Rng::with_seed(seed)),
            low,
            high,
        })
    }

    /// The next wait.
    pub fn next(&self) -> Duration {
        let ms = match self.rng.lock() {
            Ok(mut rng) => rng.u64(self.low..=self.high),
            Err(_) => self.low,
        };
        Duration::from_millis(ms)
    }
}

/// `<low>-<high>` in milliseconds, low not above high.
fn parse_range(text: &str) -> Option<(u64, u64)> {
    let (low, high) = text.split_once('-')?;
    let (low, high) = (low.trim().parse().ok()?, high.trim().parse().ok()?);
    (low <= high).then_some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_transcript_has_its_own_seed_and_the_same_one_in_every_run() {
        let a = transcript_seed(7, "m1/a.jsonl [2026-07-28]");
        assert_eq!(a, transcript_seed(7, "m1/a.jsonl [2026-07-28]"));
        assert_ne!(a, transcript_seed(7, "m1/a.jsonl [2025-11-25]"));
        assert_ne!(a, transcript_seed(8, "m1/a.jsonl [2026-07-28]"));
    }

    #[test]
    fn the_automatic_answers_wait_within_the_range_unless_auto_is_left_out() {
        let w = Waits::from_values(3, Some("10-12"), None).expect("waits");
        assert!((0..50).all(|_| (10..=12).contains(&w.next().as_millis())));
        assert!(Waits::from_values(3, None, Some("listen,answer")).is_none());
        assert!(Waits::from_values(3, None, Some("answer, auto")).is_some());
        assert!(parse_seed("x").is_err());
        assert_eq!(parse_seed("42"), Ok(42));
    }
}
