//! The watchdog of the stop sequence: VS Code sends no signal on POSIX when the extension
//! host removes the handler, so the bridge stops itself. If it has not stopped 8 s after the
//! end of stdin, it writes the warning line, kills the upstream's process group and exits 0.
//!
//! A plain thread, not a task: it must work when the runtime is stuck.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::log::{self, Level};

/// The time from the end of stdin to the watchdog.
pub const WATCHDOG_AFTER: Duration = Duration::from_secs(8);

/// Starts the watchdog thread.
pub fn arm(upstream_pid: Arc<AtomicU32>, after: Duration) {
    let spawned = std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            std::thread::sleep(after);
            log::vscode(
                Level::Warn,
                &format!(
                    "the bridge did not stop in {} s after the end of stdin, thus it stops now",
                    after.as_secs()
                ),
            );
            kill_upstream(&upstream_pid);
            std::process::exit(0);
        });
    if spawned.is_err() {
        log::vscode(Level::Warn, "cannot start the watchdog");
    }
}

/// A bug must not leave VS Code waiting: the line `the bridge stopped because of an internal
/// error: <error>` (docs/stderr.md), the upstream group killed, exit 1 (the panic hook of the
/// executable). `<error>` is the panic's message only when it is a literal of the source
/// (`panic!("…")`, `unreachable!()`, `Option::unwrap`): a formatted message (`expect` on an
/// error, `panic!("{x}")`) can hold what was in reach where the bridge panicked (a token, a form
/// answer, a header), and no secret may reach stderr (R7). Then only the location is written:
/// a file and a line of the bridge's source say where to look.
pub fn exit_1_on_panic(upstream_pid: Arc<AtomicU32>) {
    std::panic::set_hook(Box::new(move |info| {
        // A `&'static str` payload is a literal of the source: it cannot hold a value of the
        // run. A formatted message is a `String`, and is left out.
        let literal = info.payload().downcast_ref::<&'static str>().copied();
        log::vscode(Level::Err, &internal_error_line(literal, info.location()));
        kill_upstream(&upstream_pid);
        std::process::exit(1);
    }));
}

/// The text of the line for a panic with the literal message `literal` (if it has one) at `at`.
fn internal_error_line(literal: Option<&str>, at: Option<&std::panic::Location<'_>>) -> String {
    let at = at
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    match literal {
        Some(message) => {
            format!("the bridge stopped because of an internal error: {message}{at}")
        }
        None => format!(
            "the bridge stopped because of an internal error: a panic{at} (its message is not written: it could hold a secret)"
        ),
    }
}

/// Kills the process group of the upstream (POSIX). On Windows the job object of the child
/// ends with the bridge, because the job kills its processes when its last handle closes.
pub fn kill_upstream(upstream_pid: &AtomicU32) {
    let pid = upstream_pid.load(Ordering::SeqCst);
    // 0: no upstream command was started.
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(pid)
            && pid != 0
        {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

#[cfg(test)]
mod tests {
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
                "mcp-bridge-vscode: vscode: error: the bridge stopped because of an internal error: a panic at bridge/src/watchdog.rs:"
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
}
