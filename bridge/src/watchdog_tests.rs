//! The panic hook in a real process: this test binary runs itself again with
//! [`CHILD`] set, the child installs [`super::exit_1_on_panic`] and panics with a secret in the
//! message, and the parent reads the child's stderr (docs/stderr.md, docs/exit-codes.md).
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

/// Set in the child: it panics instead of checking.
const CHILD: &str = "MCP_BRIDGE_PANIC_PROBE";
/// The secret in reach of the panic, as a token would be in a request's header.
const SECRET: &str = "PLANTED-PANIC-TOKEN-h6Tz3";

#[test]
fn a_panic_with_a_formatted_message_writes_its_location_and_never_its_message() {
    if std::env::var_os(CHILD).is_some() {
        // As the executable starts (run.rs): the log lines on stderr, then the hook.
        crate::log::install();
        super::exit_1_on_panic(Arc::new(AtomicU32::new(0)));
        refused_header(SECRET).expect(SECRET);
        unreachable!("the hook exits");
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args([
            "--exact",
            "watchdog::tests::a_panic_with_a_formatted_message_writes_its_location_and_never_its_message",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the test binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    keep(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("internal error"))
        .unwrap_or_else(|| panic!("no line of the hook: {stderr}"));
    assert!(
        line.starts_with(
            "mcp-bridge-vscode: vscode: error: the bridge stopped because of an internal error: a panic at bridge/src/watchdog_tests.rs:"
        ),
        "{line}"
    );
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert!(!stdout.contains(SECRET), "{stdout}");
    assert!(!stderr.contains("Bearer"), "{stderr}");
}

/// An error that carries a token in its text, as a request's header would.
fn refused_header(token: &str) -> Result<(), String> {
    Err(format!("Authorization: Bearer {token}"))
}

/// The child's outputs for the secret sweep of CI (ci/sweep.sh), when it keeps outputs.
fn keep(out: &std::process::Output) {
    let Some(dir) = std::env::var_os("MCP_STDERR_DIR") else {
        return;
    };
    let stem = std::path::Path::new(&dir).join(format!("panic-{}", std::process::id()));
    let _ = std::fs::write(stem.with_extension("stdout"), &out.stdout);
    let _ = std::fs::write(stem.with_extension("stderr"), &out.stderr);
}
