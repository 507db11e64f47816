//! The CPU time of a peer and of its upstream (Linux `/proc/<pid>/task/*/schedstat`: the
//! nanoseconds each thread has run), so that a latency gap can be told apart: the peer's own
//! work per call, or the upstream's work behind it (a fixture with a thread pool wakes more or
//! fewer of its threads depending on how its requests arrive).

use std::path::Path;

/// Nanoseconds run by every thread of `pid`.
fn run_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// The children of `pid` (every thread's list).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(Path::new(&t.path()).join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Nanoseconds run so far by a peer (`.0`) and by its children and their children (`.1`).
pub(crate) fn cpu_ns(pid: u32) -> (u64, u64) {
    let mut below = 0;
    let mut todo = children(pid);
    while let Some(c) = todo.pop() {
        below += run_ns(c);
        todo.extend(children(c));
    }
    (run_ns(pid), below)
}
