//! The resident memory of a process (Linux `/proc/<pid>/status`).

/// A field of /proc/<pid>/status in bytes (VmRSS, VmHWM).
pub(crate) fn status_bytes(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets the peak resident size (VmHWM) of a process of ours to its current size.
pub(crate) fn reset_peak(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

pub(crate) struct Memory {
    pub(crate) idle: u64,
    /// The anonymous pages of the idle bridge (heap, stacks, relocated data): what each
    /// further bridge adds; the rest of `idle` are file pages of the executable and of the
    /// shared libraries, which every bridge process that VS Code starts shares.
    pub(crate) idle_anon: u64,
    pub(crate) peaks: Vec<(usize, u64)>,
    pub(crate) growth: (u64, u64),
}
