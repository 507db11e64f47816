//! The memory of a process (Linux `/proc/<pid>/status` and `/proc/<pid>/smaps_rollup`): the
//! resident size (RSS) counts every page the process maps, also those that every bridge
//! shares; the proportional size (PSS) shares each page among the processes that map it, and
//! the unique size (USS) counts only the pages of this process alone. PSS and USS are what one
//! more bridge costs a user; RSS stays as a labelled column.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A field of /proc/<pid>/status in bytes (VmRSS, VmHWM).
pub(crate) fn status_bytes(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    field_kib(&text, field) * 1024
}

fn field_kib(text: &str, field: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0)
}

/// RSS, PSS and USS of one process, in KiB (`/proc/<pid>/smaps_rollup`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sizes {
    pub(crate) rss: u64,
    pub(crate) pss: u64,
    pub(crate) uss: u64,
}

impl Sizes {
    pub(crate) fn of(pid: u32) -> Sizes {
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        Sizes {
            rss: field_kib(&text, "Rss"),
            pss: field_kib(&text, "Pss"),
            uss: field_kib(&text, "Private_Clean") + field_kib(&text, "Private_Dirty"),
        }
    }

    /// The mean of several processes (the cost per bridge of n bridges side by side).
    pub(crate) fn mean(all: &[Sizes]) -> Sizes {
        let n = all.len().max(1) as u64;
        Sizes {
            rss: all.iter().map(|s| s.rss).sum::<u64>() / n,
            pss: all.iter().map(|s| s.pss).sum::<u64>() / n,
            uss: all.iter().map(|s| s.uss).sum::<u64>() / n,
        }
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({"rss_kib": self.rss, "pss_kib": self.pss, "uss_kib": self.uss})
    }
}

/// Resets the peak resident size (VmHWM) of a process of ours to its current size.
pub(crate) fn reset_peak(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

/// The peak PSS of a process while `f` runs: the kernel keeps no peak of PSS, so a thread reads
/// `smaps_rollup` every millisecond (a message of 16 MiB takes more than 100 ms to pass).
pub(crate) fn peak_pss<T>(pid: u32, f: impl FnOnce() -> T) -> (T, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(Sizes::of(pid).pss));
    let sampler = {
        let (stop, peak) = (stop.clone(), peak.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(Sizes::of(pid).pss, Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
    };
    let out = f();
    peak.fetch_max(Sizes::of(pid).pss, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    (out, peak.load(Ordering::Relaxed))
}

pub(crate) struct Memory {
    /// Idle stdio bridges: one alone, and each of ten of the same binary.
    pub(crate) idle: super::Idle,
    /// (MiB, peak RSS in bytes, peak PSS in KiB) while one message of that size passes.
    pub(crate) peaks: Vec<(usize, u64, u64)>,
    /// RSS in bytes and PSS in KiB, before and after the growth round trips.
    pub(crate) growth_rss: (u64, u64),
    pub(crate) growth_pss: (u64, u64),
}
