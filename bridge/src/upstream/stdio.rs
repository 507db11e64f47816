//! The upstream command as a child process on stdio, in its own process group (POSIX) or
//! job object (Windows), with the stop sequence of the contract: close its stdin; after
//! `shutdown_grace` a termination signal to its group; after one more grace a kill.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{Notify, mpsc, watch};
use tokio::time::Instant;

use super::{ExitInfo, Transport, TransportEvent};
use crate::log::{self, Level};
use crate::wire::reader::{LineReader, RawLine};
use crate::wire::writer::Room;

/// The contract's `shutdown_grace`.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

enum WriterCmd {
    Frame(Vec<u8>),
    Close,
}

/// A running upstream command.
pub struct StdioTransport {
    writer: mpsc::UnboundedSender<WriterCmd>,
    stop: Arc<Notify>,
    exit: watch::Receiver<Option<ExitInfo>>,
    pid: Option<u32>,
}

impl StdioTransport {
    /// Starts `command` with `args`; its stderr is the bridge's stderr, so that its lines
    /// reach VS Code's Output channel.
    pub fn spawn(
        command: &std::ffi::OsStr,
        args: &[std::ffi::OsString],
        max_line_bytes: usize,
        grace: Duration,
        events: mpsc::UnboundedSender<TransportEvent>,
        room: Room,
    ) -> io::Result<Arc<StdioTransport>> {
        let mut wrap = CommandWrap::with_new(command, |c| {
            c.args(args)
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
        let pid = child.id();
        #[cfg(unix)]
        {
            crate::stdio_pipes::grow_pipe(&stdin);
            crate::stdio_pipes::grow_pipe(&stdout);
        }

        let (writer_tx, writer_rx) = mpsc::unbounded_channel();
        let stop = Arc::new(Notify::new());
        let stdout_closed = Arc::new(Notify::new());
        let (exit_tx, exit_rx) = watch::channel(None);

        tokio::spawn(write_loop(stdin, writer_rx));
        tokio::spawn(read_loop(
            stdout,
            max_line_bytes,
            events.clone(),
            Arc::clone(&stdout_closed),
            room,
        ));
        let close_writer = writer_tx.clone();
        tokio::spawn(supervise(
            child,
            grace,
            Arc::clone(&stop),
            stdout_closed,
            close_writer,
            events,
            exit_tx,
        ));
        Ok(Arc::new(StdioTransport {
            writer: writer_tx,
            stop,
            exit: exit_rx,
            pid,
        }))
    }
}

impl Transport for StdioTransport {
    fn send(&self, frame: &Value) -> bool {
        match serde_json::to_vec(frame) {
            Ok(bytes) => self.writer.send(WriterCmd::Frame(bytes)).is_ok(),
            Err(_) => false,
        }
    }

    fn stop(&self) {
        // notify_one keeps a permit, so a stop before the supervisor waits is not lost.
        self.stop.notify_one();
    }

    fn exit_watch(&self) -> watch::Receiver<Option<ExitInfo>> {
        self.exit.clone()
    }

    fn process_id(&self) -> Option<u32> {
        self.pid
    }
}

async fn write_loop(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<WriterCmd>) {
    while let Some(cmd) = rx.recv().await {
        match cmd {
            WriterCmd::Frame(mut bytes) => {
                bytes.push(b'\n');
                if stdin.write_all(&bytes).await.is_err() {
                    break;
                }
                if rx.is_empty() && stdin.flush().await.is_err() {
                    break;
                }
            }
            WriterCmd::Close => break,
        }
    }
    // Dropping stdin closes it: the first step of the stop sequence.
    let _ = stdin.shutdown().await;
}

async fn read_loop(
    stdout: ChildStdout,
    max: usize,
    events: mpsc::UnboundedSender<TransportEvent>,
    closed: Arc<Notify>,
    room: Room,
) {
    let mut reader = LineReader::new(stdout, max);
    loop {
        // Backpressure: while VS Code has not read what the bridge queued for it, the next
        // line of the upstream waits in its pipe, not in the memory of the bridge.
        room.wait().await;
        match reader.next().await {
            Ok(RawLine::Eof) | Err(_) => break,
            Ok(line) => {
                if events.send(TransportEvent::Line(line)).is_err() {
                    break;
                }
            }
        }
    }
    let _ = events.send(TransportEvent::Closed);
    closed.notify_one();
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
    stdout_closed: Arc<Notify>,
    writer: mpsc::UnboundedSender<WriterCmd>,
    events: mpsc::UnboundedSender<TransportEvent>,
    exit_tx: watch::Sender<Option<ExitInfo>>,
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
            _ = stdout_closed.notified(), if phase == Phase::Running => {}
            _ = timer => {}
        }
        phase = match phase {
            Phase::Running => {
                let _ = writer.send(WriterCmd::Close);
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
    let _ = events.send(TransportEvent::Exited(info));
    let _ = exit_tx.send(Some(info));
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

    async fn exited(t: &StdioTransport) -> Option<ExitInfo> {
        let mut w = t.exit_watch();
        tokio::time::timeout(Duration::from_secs(10), w.wait_for(Option::is_some))
            .await
            .ok()?
            .ok()
            .and_then(|v| *v)
    }

    #[tokio::test]
    async fn lines_flow_and_exit_code_is_reported() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let t = sh("read l; echo \"$l\"; exit 3", SHUTDOWN_GRACE, tx);
        assert!(t.send(&serde_json::json!({"a":1})));
        match rx.recv().await {
            Some(TransportEvent::Line(RawLine::Line(l))) => assert_eq!(l, b"{\"a\":1}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(exited(&t).await, Some(ExitInfo::Code(3)));
    }

    #[tokio::test]
    async fn stop_closes_stdin_first() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let t = sh("cat >/dev/null; exit 0", SHUTDOWN_GRACE, tx);
        let start = Instant::now();
        t.stop();
        assert_eq!(exited(&t).await, Some(ExitInfo::Code(0)));
        assert!(start.elapsed() < SHUTDOWN_GRACE);
    }

    #[tokio::test]
    async fn a_child_that_ignores_stdin_gets_the_termination_signal() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let grace = Duration::from_millis(200);
        let t = sh("exec sleep 30", grace, tx);
        t.stop();
        assert_eq!(exited(&t).await, Some(ExitInfo::Signal(15)));
    }

    #[tokio::test]
    async fn a_child_that_ignores_the_termination_signal_is_killed() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let grace = Duration::from_millis(200);
        let t = sh("trap '' TERM; while :; do sleep 0.05; done", grace, tx);
        t.stop();
        assert_eq!(exited(&t).await, Some(ExitInfo::Signal(9)));
    }

    #[tokio::test]
    async fn closing_stdout_while_running_is_noticed_and_stopped() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let grace = Duration::from_millis(200);
        let t = sh("exec >&-; exec sleep 30 <&-", grace, tx);
        assert!(matches!(rx.recv().await, Some(TransportEvent::Closed)));
        assert_eq!(exited(&t).await, Some(ExitInfo::Signal(15)));
    }

    /// A `sh -c <script>` upstream with a line limit of 1 KiB.
    fn sh(
        script: &str,
        grace: Duration,
        tx: mpsc::UnboundedSender<TransportEvent>,
    ) -> Arc<StdioTransport> {
        StdioTransport::spawn(
            "sh".as_ref(),
            &["-c".into(), script.into()],
            1024,
            grace,
            tx,
            Room::unlimited(),
        )
        .expect("sh starts")
    }

    #[tokio::test]
    async fn a_command_that_does_not_exist_fails_to_spawn() {
        let (tx, _rx) = mpsc::unbounded_channel();
        assert!(
            StdioTransport::spawn(
                "/nonexistent/upstream".as_ref(),
                &[],
                1024,
                SHUTDOWN_GRACE,
                tx,
                Room::unlimited()
            )
            .is_err()
        );
    }
}
