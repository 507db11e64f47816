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

/// A bug must not leave VS Code waiting: the contract's line `the bridge stopped because of an
/// internal error: <error>`, the upstream group killed, exit 1 (the panic hook of the
/// executable; public so that a test process can install it and panic).
pub fn exit_1_on_panic(upstream_pid: Arc<AtomicU32>) {
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        log::vscode(
            Level::Err,
            &format!("the bridge stopped because of an internal error: {what}{at}"),
        );
        kill_upstream(&upstream_pid);
        std::process::exit(1);
    }));
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
