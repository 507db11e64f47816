//! The upstream command as a child process on stdio, in its own process group (POSIX) or
//! job object (Windows), with the stop sequence of R7 (docs/exit-codes.md): close its stdin; after
//! `shutdown_grace` a termination signal to its group; after one more grace a kill.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::events::Events;
use super::lines::{LineLink, LineTransport, Stopper};
use super::{Ended, ExitInfo, TransportEvent};
use crate::log::{self, Level};
use crate::wire::writer::Room;

/// The `shutdown_grace` of the stop sequence (R7, docs/exit-codes.md).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Variables that only the upstream command gets (docs/secrets.md): never set in the
/// bridge's own environment. `Debug` shows the names, never a value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ChildEnv(pub Vec<(std::ffi::OsString, std::ffi::OsString)>);

impl std::fmt::Debug for ChildEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| name))
            .finish()
    }
}

/// What a child needs besides its command line.
#[derive(Clone)]
pub struct ChildOptions {
    pub max_line_bytes: usize,
    pub grace: Duration,
    /// The process (group) id of the current child, for the watchdog of the executable.
    pub pid: Arc<AtomicU32>,
}

/// Starts `command` with `args` (and the variables of `env` added to the bridge's
/// environment, for this child alone) as the transport of lines over its pipes; its stderr is the
/// bridge's stderr, so that its lines reach VS Code's Output channel.
pub fn spawn(
    command: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
    env: &ChildEnv,
    opts: &ChildOptions,
    events: Events,
    room: Room,
) -> io::Result<Arc<LineTransport>> {
    let mut wrap = CommandWrap::with_new(command, |c| {
        c.args(args)
            .envs(env.0.iter().map(|(name, value)| (name, value)))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        c.stderr(std::process::Stdio::inherit());
    });
    #[cfg(unix)]
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    wrap.wrap(process_wrap::tokio::JobObject);
    // On Windows this also makes the job kill its processes when the bridge ends.
    wrap.wrap(KillOnDrop);
    let mut child = wrap.spawn()?;
    let stdin = child
        .stdin()
        .take()
        .ok_or_else(|| io::Error::other("no stdin pipe"))?;
    let stdout = child
        .stdout()
        .take()
        .ok_or_else(|| io::Error::other("no stdout pipe"))?;
    if let Some(pid) = child.id() {
        opts.pid.store(pid, Ordering::SeqCst);
    }
    #[cfg(unix)]
    crate::wire::stdio_pipes::grow_pipe(&stdout);
    let stdin = crate::wire::stdio_pipes::child_stdin(stdin)?;

    let link = LineLink::spawn(stdout, stdin, opts.max_line_bytes, events.clone(), room);
    let stop = Arc::new(Notify::new());
    let (end_tx, end) = watch::channel(None);
    tokio::spawn(supervise(
        child,
        opts.grace,
        Arc::clone(&stop),
        link.clone(),
        events,
        end_tx,
    ));
    Ok(LineTransport::new(link, end, Stopper::Process(stop)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Running,
    StdinClosed,
    Terminated,
    Killed,
    GaveUp,
}

/// Owns the child: waits for its exit, and runs the stop sequence when the bridge stops it or
/// when the child closes its stdout (an upstream that closes stdout but keeps running is
/// noticed and stopped).
async fn supervise(
    mut child: Box<dyn ChildWrapper>,
    grace: Duration,
    stop: Arc<Notify>,
    link: LineLink,
    events: Events,
    end_tx: watch::Sender<Option<Ended>>,
) {
    let mut phase = Phase::Running;
    let mut deadline: Option<Instant> = None;
    let info = loop {
        let timer = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            status = child.wait() => break status.map(exit_info).unwrap_or(ExitInfo::Unknown),
            _ = stop.notified(), if phase == Phase::Running => {}
            _ = link.read_closed.notified(), if phase == Phase::Running => {}
            _ = timer => {}
        }
        phase = match phase {
            Phase::Running => {
                link.close();
                Phase::StdinClosed
            }
            Phase::StdinClosed => {
                terminate(child.as_mut());
                Phase::Terminated
            }
            Phase::Terminated => {
                let _ = child.start_kill();
                Phase::Killed
            }
            Phase::Killed | Phase::GaveUp => {
                log::bridge(
                    Level::Warn,
                    "the upstream server did not stop after a kill signal",
                );
                Phase::GaveUp
            }
        };
        if phase == Phase::GaveUp {
            break ExitInfo::Unknown;
        }
        deadline = Some(Instant::now() + grace);
    };
    // The leader is gone; the rest of its group goes too, so that no process of the tree
    // stays behind (a grandchild could hold the pipes open).
    let _ = child.start_kill();
    let ended = Ended { exit: Some(info) };
    let _ = events.send(TransportEvent::Ended(ended));
    let _ = end_tx.send(Some(ended));
}

/// The termination signal to the process group (POSIX). Windows has no such signal: the job
/// object is stopped one grace later.
fn terminate(child: &mut dyn ChildWrapper) {
    #[cfg(unix)]
    {
        let _ = child.signal(nix::sys::signal::Signal::SIGTERM as i32);
    }
    #[cfg(windows)]
    {
        let _ = child;
    }
}

fn exit_info(status: std::process::ExitStatus) -> ExitInfo {
    if let Some(code) = status.code() {
        return ExitInfo::Code(code);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return ExitInfo::Signal(signal);
        }
    }
    ExitInfo::Unknown
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    use crate::upstream::envelope::RequestFrame;
    use crate::upstream::{Outgoing, Transport};
    use crate::wire::reader::RawLine;

    async fn exited(t: &LineTransport) -> Option<ExitInfo> {
        let mut w = t.end_watch();
        tokio::time::timeout(Duration::from_secs(10), w.wait_for(Option::is_some))
            .await
            .ok()?
            .ok()
            .and_then(|v| *v)
            .and_then(|e| e.exit)
    }

    #[tokio::test]
    async fn lines_flow_and_exit_code_is_reported() {
        let (tx, mut rx) = crate::upstream::events::channel();
        let t = sh("read l; echo \"$l\"; exit 3", SHUTDOWN_GRACE, tx);
        let params = crate::wire::lazy::LazyObject::new();
        let frame = RequestFrame::new(1, "x", &params, b"{}".to_vec());
        assert!(t.send(Outgoing::Request(&frame)));
        match rx.recv().await {
            Some(TransportEvent::Line(RawLine::Line(l))) => assert_eq!(
                l,
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"_meta\":{}}}"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(exited(&t).await, Some(ExitInfo::Code(3)));
    }

    #[tokio::test]
    async fn stop_closes_stdin_first() {
        let (tx, _rx) = crate::upstream::events::channel();
        let t = sh("cat >/dev/null; exit 0", SHUTDOWN_GRACE, tx);
        let start = Instant::now();
        t.stop();
        assert_eq!(exited(&t).await, Some(ExitInfo::Code(0)));
        assert!(start.elapsed() < SHUTDOWN_GRACE);
    }

    #[tokio::test]
    async fn a_child_that_ignores_stdin_gets_the_termination_signal() {
        let (tx, _rx) = crate::upstream::events::channel();
        let grace = Duration::from_millis(200);
        let t = sh("exec sleep 30", grace, tx);
        t.stop();
        assert_eq!(exited(&t).await, Some(ExitInfo::Signal(15)));
    }

    #[tokio::test]
    async fn a_child_that_ignores_the_termination_signal_is_killed() {
        let (tx, _rx) = crate::upstream::events::channel();
        let grace = Duration::from_millis(200);
        let t = sh("trap '' TERM; while :; do sleep 0.05; done", grace, tx);
        t.stop();
        assert_eq!(exited(&t).await, Some(ExitInfo::Signal(9)));
    }

    #[tokio::test]
    async fn closing_stdout_while_running_is_noticed_and_stopped() {
        let (tx, mut rx) = crate::upstream::events::channel();
        let grace = Duration::from_millis(200);
        let t = sh("exec >&-; exec sleep 30 <&-", grace, tx);
        assert!(matches!(rx.recv().await, Some(TransportEvent::Closed)));
        assert_eq!(exited(&t).await, Some(ExitInfo::Signal(15)));
    }

    /// A `sh -c <script>` upstream with a line limit of 1 KiB.
    fn sh(script: &str, grace: Duration, tx: Events) -> Arc<LineTransport> {
        spawn(
            "sh".as_ref(),
            &["-c".into(), script.into()],
            &Default::default(),
            &opts(grace),
            tx,
            Room::unlimited(),
        )
        .expect("sh starts")
    }

    fn opts(grace: Duration) -> ChildOptions {
        ChildOptions {
            max_line_bytes: 1024,
            grace,
            pid: Arc::new(AtomicU32::new(0)),
        }
    }

    #[tokio::test]
    async fn a_command_that_does_not_exist_fails_to_spawn() {
        let (tx, _rx) = crate::upstream::events::channel();
        assert!(
            spawn(
                "/nonexistent/upstream".as_ref(),
                &[],
                &Default::default(),
                &opts(SHUTDOWN_GRACE),
                tx,
                Room::unlimited()
            )
            .is_err()
        );
    }
}
