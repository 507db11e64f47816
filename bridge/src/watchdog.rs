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
#[path = "watchdog_tests.rs"]
mod tests;
