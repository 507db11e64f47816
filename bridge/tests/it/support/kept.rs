//! The outputs that the secret sweep of CI reads (`ci/sweep.sh`, docs/harness.md "The secret
//! sweep"): with `MCP_STDERR_DIR` set, every process these tests start leaves its stdout and
//! stderr there, and the tests add the browser's argv and environment, Chromium's log and the
//! token-store folders. Without the variable nothing is kept.
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A new path in the folder: `<kind>-<test>-<pid>-<n>.<ext>` (the test's thread carries its
/// name), or `None` without `MCP_STDERR_DIR`. Unique within the run: the process id tells the
/// test binaries apart (the Linux run, the contention step, the keychain session), `n` the
/// files of one binary.
pub fn path(kind: &str, ext: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_STDERR_DIR")?;
    let test: String = std::thread::current()
        .name()
        .unwrap_or("main")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("{kind}-{test}-{}-{n}.{ext}", std::process::id());
    Some(Path::new(&dir).join(name))
}

/// Keeps `bytes` as a new file of `kind`.
pub fn keep(kind: &str, ext: &str, bytes: &[u8]) {
    if let Some(path) = path(kind, ext) {
        let _ = std::fs::write(path, bytes);
    }
}

/// Keeps the stdout and the stderr of a process run with `Command::output`.
pub fn keep_output(kind: &str, out: &Output) {
    keep(kind, "stdout", &out.stdout);
    keep(kind, "stderr", &out.stderr);
}

/// Keeps a copy of a file (a log that a test's program wrote beside it), if it exists.
pub fn keep_file(kind: &str, ext: &str, file: &Path) {
    if let Ok(bytes) = std::fs::read(file) {
        keep(kind, ext, &bytes);
    }
}

/// Keeps a copy of every file under `dir` (a token store's folder) in a new folder
/// `store-<test>-<pid>-<n>.d`: the sweep checks that no secret is there in clear.
pub fn keep_tree(dir: &Path) {
    if !dir.is_dir() {
        return;
    }
    let Some(to) = path("store", "d") else {
        return;
    };
    copy_tree(dir, &to);
}

fn copy_tree(from: &Path, to: &Path) {
    if std::fs::create_dir_all(to).is_err() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let target = to.join(entry.file_name());
        match entry.file_type() {
            Ok(t) if t.is_dir() => copy_tree(&entry.path(), &target),
            Ok(t) if t.is_file() => {
                let _ = std::fs::copy(entry.path(), target);
            }
            _ => {}
        }
    }
}
