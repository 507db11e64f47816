//! Timings: the median, minimum and maximum of samples.

use super::*;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Stats {
    pub(crate) median: Duration,
    pub(crate) min: Duration,
    pub(crate) max: Duration,
}

pub(crate) fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    Stats {
        median: samples[samples.len() / 2],
        min: samples[0],
        max: samples[samples.len() - 1],
    }
}

pub(crate) fn timed(runs: usize, mut f: impl FnMut()) -> Stats {
    stats(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

pub(crate) fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
