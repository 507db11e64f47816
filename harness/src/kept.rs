//! The outputs kept for the secret sweep of CI (`ci/sweep.sh`, docs/harness.md "The secret
//! sweep"): with `MCP_STDERR_DIR` set, the processes that a transcript starts beside the bridge
//! (the HTTPS fixture, the test browser of a sign-in) write their stdout and stderr to files
//! there; the runner keeps the bridge's own (runner.rs). Without the variable they go nowhere.
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);
/// The pass of `--repeat` that runs now (0: a run of one pass).
static PASS: AtomicUsize = AtomicUsize::new(0);

/// Names the outputs kept from now on after pass `n` of `--repeat` (from 1), so that every
/// pass keeps its own files and the sweep reads them all.
pub fn set_pass(n: usize) {
    PASS.store(n, Ordering::Relaxed);
}

/// `<harness pid>` in a run of one pass, `<harness pid>-pass<n>` in pass n of `--repeat`: the
/// part of every kept name that tells the replays and the passes apart.
pub fn run_tag() -> String {
    match PASS.load(Ordering::Relaxed) {
        0 => std::process::id().to_string(),
        n => format!("{}-pass{n}", std::process::id()),
    }
}

/// A new path `<kind>-<run tag>-<n>.<ext>` in the folder, unique within the run (one
/// harness process per replay), or `None` without `MCP_STDERR_DIR`.
pub fn path(kind: &str, ext: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_STDERR_DIR")?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Some(PathBuf::from(dir).join(format!("{kind}-{}-{n}.{ext}", run_tag())))
}

/// A new file of `kind` for a child's stdout or stderr, or the null device when nothing is
/// kept (or the file cannot be made: the sweep then reads one file less).
pub fn stdio(kind: &str, ext: &str) -> Stdio {
    path(kind, ext)
        .and_then(|p| std::fs::File::create(p).ok())
        .map_or_else(Stdio::null, Stdio::from)
}
