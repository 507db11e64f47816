//! The outputs kept for the secret sweep of CI (`ci/sweep.sh`, docs/harness.md "The secret
//! sweep"): with `MCP_STDERR_DIR` set, the processes that a transcript starts beside the bridge
//! (the HTTPS fixture, the test browser of a sign-in) write their stdout and stderr to files
//! there; the runner keeps the bridge's own (runner.rs). Without the variable they go nowhere.
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A new path `<kind>-<harness pid>-<n>.<ext>` in the folder, unique within the run (one
/// harness process per replay), or `None` without `MCP_STDERR_DIR`.
pub fn path(kind: &str, ext: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_STDERR_DIR")?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Some(PathBuf::from(dir).join(format!("{kind}-{}-{n}.{ext}", std::process::id())))
}

/// A new file of `kind` for a child's stdout or stderr, or the null device when nothing is
/// kept (or the file cannot be made: the sweep then reads one file less).
pub fn stdio(kind: &str, ext: &str) -> Stdio {
    path(kind, ext)
        .and_then(|p| std::fs::File::create(p).ok())
        .map_or_else(Stdio::null, Stdio::from)
}
