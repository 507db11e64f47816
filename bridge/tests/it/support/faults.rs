//! Small helpers of the fault matrix, the load test and the secret sweep: the pid and the peak
//! memory of a running bridge, and the count of the responses of each id.

use std::collections::HashMap;

use serde_json::Value;

impl super::Bridge {
    /// The process id of the bridge.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The peak resident memory of the bridge so far, in KiB (Linux; `None` elsewhere).
    pub fn peak_kib(&self) -> Option<u64> {
        vm_hwm_kib(self.pid())
    }
}

/// The peak resident memory of a process in KiB (Linux: VmHWM of /proc/<pid>/status).
pub fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The number of responses (frames with an id and no method) for each id, by its JSON text.
pub fn response_counts(frames: &[Value]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for f in frames {
        if let (None, Some(id)) = (f.get("method"), f.get("id")) {
            *counts.entry(id.to_string()).or_insert(0) += 1;
        }
    }
    counts
}

/// Asserts that each id of `ids` has exactly one response in `frames`.
pub fn answered_once(frames: &[Value], ids: &[Value]) {
    let counts = response_counts(frames);
    for id in ids {
        assert_eq!(
            counts.get(&id.to_string()).copied().unwrap_or(0),
            1,
            "request {id}: not answered exactly once"
        );
    }
}

/// Asserts that no id of `ids` has a response in `frames` (cancelled as the contract says).
pub fn never_answered(frames: &[Value], ids: &[Value]) {
    let counts = response_counts(frames);
    for id in ids {
        assert!(
            !counts.contains_key(&id.to_string()),
            "request {id}: a response where the contract cancels without one"
        );
    }
}
