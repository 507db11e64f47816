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

/// The three columns of one measure, interleaved: sample k of each peer is taken before sample
/// k + 1 of any, in an order that rotates, so that a slow moment of this shared machine falls
/// on all three columns alike instead of on one of them.
pub(crate) fn interleaved(
    peers: &mut [Peer],
    runs: usize,
    mut sample: impl FnMut(usize, &mut Peer) -> Duration,
) -> Vec<Stats> {
    let n = peers.len();
    let mut samples = vec![Vec::with_capacity(runs); n];
    for k in 0..runs {
        for j in 0..n {
            let i = (k + j) % n;
            samples[i].push(sample(i, &mut peers[i]));
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

/// From the start of the process to the answer of its first request: `initialize` of the
/// bridge (which starts the fixture and asks its `server/discover`) and `server/discover` of
/// the fixture alone.
pub(crate) fn startup(program: &Path, args: &[&str], modern: bool, runs: usize) -> Stats {
    timed(runs, || {
        let mut peer = Peer::start(program, args, modern);
        if modern {
            peer.call("server/discover", json!({}));
        } else {
            peer.call("initialize", init_params());
        }
        peer.stop();
    })
}
