//! The measures: calls of each size interleaved over the three peers, list changes, and the
//! start up to the `initialize` result.

use super::*;

pub(crate) fn echo_args(bytes: usize) -> Value {
    json!({"name":"echo","arguments":{"text":"x".repeat(bytes)}})
}

/// A large argument and a small result: the echo tool ignores the unknown member `pad`.
pub(crate) fn pad_args(bytes: usize) -> Value {
    json!({"name":"echo","arguments":{"text":"hi","pad":"x".repeat(bytes)}})
}

/// The columns of one measure, interleaved: sample k of each peer is taken before sample
/// k + 1 of any, in an order that rotates, so that a slow moment of this shared machine falls
/// on all columns alike instead of on one of them.
pub(crate) fn interleaved(
    peers: &mut [Peer],
    runs: usize,
    mut sample: impl FnMut(usize, &mut Peer) -> Duration,
) -> Vec<Stats> {
    rotated(peers.len(), runs, |i| sample(i, &mut peers[i]))
}

/// `runs` samples of each of `n` columns in the rotating order of [`interleaved`].
fn rotated(n: usize, runs: usize, mut sample: impl FnMut(usize) -> Duration) -> Vec<Stats> {
    let mut samples = vec![Vec::with_capacity(runs); n];
    for k in 0..runs {
        for j in 0..n {
            let i = (k + j) % n;
            samples[i].push(sample(i));
        }
    }
    samples.into_iter().map(stats).collect()
}

/// `runs` round trips of `tools/call` with `args` on each peer, after `warmup` untimed ones.
/// The request bytes are built before the clock starts.
pub(crate) fn calls(peers: &mut [Peer], args: &Value, warmup: usize, runs: usize) -> Vec<Stats> {
    let mut frames = vec![Vec::new(); peers.len()];
    for (peer, frames) in peers.iter_mut().zip(frames.iter_mut()) {
        for _ in 0..warmup {
            peer.call("tools/call", args.clone());
        }
        *frames = (0..runs)
            .map(|_| peer.frame("tools/call", args.clone()))
            .rev()
            .collect();
    }
    interleaved(peers, runs, |i, peer| {
        let (id, frame) = frames[i].pop().expect("frame");
        let t = Instant::now();
        peer.exchange(id, &frame);
        t.elapsed()
    })
}

/// One `toggle` per sample: each list change reaches the peer before its result.
pub(crate) fn list_changes(peers: &mut [Peer], n: usize) -> Vec<Stats> {
    let mut before = vec![0; peers.len()];
    for (peer, before) in peers.iter_mut().zip(before.iter_mut()) {
        // Two toggles first, so that the listen stream is open and acknowledged.
        for enabled in [true, false] {
            peer.call(
                "tools/call",
                json!({"name":"toggle","arguments":{"enabled":enabled}}),
            );
        }
        *before = peer.notes;
    }
    // After the two toggles each tool is off: the samples switch it on, off, on…
    let mut toggles = vec![0usize; peers.len()];
    let s = interleaved(peers, n, |i, peer| {
        let enabled = toggles[i].is_multiple_of(2);
        toggles[i] += 1;
        let (id, frame) = peer.frame(
            "tools/call",
            json!({"name":"toggle","arguments":{"enabled":enabled}}),
        );
        let t = Instant::now();
        peer.exchange(id, &frame);
        t.elapsed()
    });
    for (peer, before) in peers.iter().zip(before) {
        let seen = peer.notes - before;
        assert!(seen >= n, "{seen} list changes for {n} toggles");
    }
    s
}

/// From the start of the process to the answer of its first request, for each of `starts`
/// (program, arguments, whether it speaks 2026-07-28), interleaved as the calls are: the
/// fixture alone (`server/discover`), the relay in front of it (the cost of one more process
/// that starts the fixture, the floor of any bridge) and the bridge (`initialize`, which
/// starts the fixture and asks its `server/discover`). The clock stops at the answer; the
/// stop that follows is not counted.
pub(crate) fn startup(starts: &[(&Path, Vec<&str>, bool)], runs: usize) -> Vec<Stats> {
    rotated(starts.len(), runs, |i| {
        let (program, args, modern) = &starts[i];
        let t = Instant::now();
        let mut peer = Peer::start(program, args, *modern);
        if *modern {
            peer.call("server/discover", json!({}));
        } else {
            peer.call("initialize", init_params());
        }
        let took = t.elapsed();
        peer.stop();
        took
    })
}

/// Many calls in flight: `window` echo calls are sent at once, and each response lets one more
/// go, up to `per_batch` calls; a sample is the time per call of one batch (its inverse is the
/// calls per second). The batches of the peers are interleaved as the round trips are.
pub(crate) fn inflight(
    peers: &mut [Peer],
    window: usize,
    per_batch: usize,
    batches: usize,
) -> Vec<Stats> {
    let echo = json!({"name":"echo","arguments":{"text":"hello"}});
    interleaved(peers, batches, |_, peer| {
        let mut frames: Vec<(u64, Vec<u8>)> = (0..per_batch)
            .map(|_| peer.frame("tools/call", echo.clone()))
            .rev()
            .collect();
        // The ids of the batch, whatever order the frames were built in.
        let first = frames.iter().map(|f| f.0).min().unwrap_or(0);
        let t = Instant::now();
        let mut window_bytes = Vec::new();
        for _ in 0..window.min(per_batch) {
            if let Some((_, frame)) = frames.pop() {
                window_bytes.extend_from_slice(&frame);
            }
        }
        peer.send(&window_bytes);
        let mut done = 0;
        while done < per_batch {
            if let Some(ok) = peer.read_response_in(first..first + per_batch as u64) {
                assert!(ok, "error: {:.300}", String::from_utf8_lossy(&peer.line));
                done += 1;
                if let Some((_, frame)) = frames.pop() {
                    peer.send(&frame);
                }
            }
        }
        t.elapsed() / per_batch as u32
    })
}

/// The 16 and 64 MiB results over [relay, line relay, bridge] (see [`line_relay`]).
pub(crate) struct Floor {
    pub(crate) big: Vec<Stats>,
    pub(crate) huge: Vec<Stats>,
}
