//! The bridge process of one transcript: spawn with pipes, read stdout frames and stderr lines
//! concurrently, signals, the exit code within a bound, and the process tree.
//!
//! The tree is found by a tag in the environment (`MCP_HARNESS_TAG`), which the bridge passes to
//! its upstream (the bridge passes its environment on to the upstream). Unlike the
//! parent links, the tag survives the exit of the bridge, so an orphan is still found (R7: no
//! process of the tree left).
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, watch};

/// The environment variable that marks every process of a transcript's tree.
pub const TAG_VAR: &str = "MCP_HARNESS_TAG";

/// One stdout line of the bridge (without its `\n`).
#[derive(Debug, Clone)]
pub struct Line {
    pub bytes: Vec<u8>,
    pub at: Instant,
    /// False for the last bytes before the end of stdout without a newline (R7).
    pub terminated: bool,
}

/// The stderr lines read so far, and a counter that changes with each new line.
#[derive(Clone)]
pub struct Stderr {
    pub lines: Arc<Mutex<Vec<String>>>,
    pub changed: watch::Receiver<usize>,
}

impl Stderr {
    /// A copy of the lines so far.
    pub fn snapshot(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// The running bridge.
pub struct Bridge {
    child: Child,
    pub pid: i32,
    stdin: Option<ChildStdin>,
    pub stdout: mpsc::UnboundedReceiver<Line>,
    pub stderr: Stderr,
    /// The reader of stderr, which ends at the end of the pipe: awaited at the cleanup, so
    /// that a report holds the last lines of a bridge that has just ended.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    /// Every byte of stdout as it came, kept for the secret sweep (`ci/sweep.sh`).
    pub stdout_kept: Arc<Mutex<Vec<u8>>>,
    pub tag: String,
    pub exit: Option<(ExitStatus, Instant)>,
    pub stdin_closed_at: Option<Instant>,
}

impl Bridge {
    /// Starts `program args…` in its own process group with the tag in its environment.
    pub fn spawn(
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        tag: &str,
    ) -> Result<Self, String> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env(TAG_VAR, tag)
            .kill_on_drop(true);
        // Own group: a signal to the harness never reaches the bridge by accident, and
        // "the tree" is what the bridge made, not the runner.
        #[cfg(unix)]
        cmd.process_group(0);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let pid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or("the bridge has no process id")?;
        let stdin = child.stdin.take();
        let out = child.stdout.take().ok_or("no stdout pipe")?;
        let err = child.stderr.take().ok_or("no stderr pipe")?;
        let (tx, rx) = mpsc::unbounded_channel();
        let stdout_kept = Arc::new(Mutex::new(Vec::new()));
        tokio::spawn(read_stdout(out, tx, stdout_kept.clone()));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (ctx, crx) = watch::channel(0usize);
        let stderr_reader = Some(tokio::spawn(read_stderr(err, lines.clone(), ctx)));
        Ok(Self {
            child,
            pid,
            stdin,
            stdout: rx,
            stderr: Stderr {
                lines,
                changed: crx,
            },
            stderr_reader,
            stdout_kept,
            tag: tag.to_string(),
            exit: None,
            stdin_closed_at: None,
        })
    }

    /// Writes bytes to the bridge's stdin.
    pub async fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        stdin
            .write_all(bytes)
            .await
            .map_err(|e| format!("cannot write to the bridge: {e}"))?;
        stdin
            .flush()
            .await
            .map_err(|e| format!("cannot write to the bridge: {e}"))
    }

    /// Closes stdin: VS Code's first step of a stop (R7).
    pub fn close_stdin(&mut self) {
        if self.stdin.take().is_some() {
            self.stdin_closed_at = Some(Instant::now());
        }
    }

    /// Waits for the exit within `bound`; `None` when the bridge still runs.
    pub async fn wait_exit(&mut self, bound: Duration) -> Option<(ExitStatus, Instant)> {
        if self.exit.is_none()
            && let Ok(Ok(status)) = tokio::time::timeout(bound, self.child.wait()).await
        {
            self.exit = Some((status, Instant::now()));
        }
        self.exit
    }

    /// Sends a signal to the bridge, or to every process of the tree.
    pub fn signal(&self, name: &str, tree: bool) {
        #[cfg(not(unix))]
        let _ = (name, tree);
        #[cfg(unix)]
        self.signal_unix(name, tree);
    }

    #[cfg(unix)]
    fn signal_unix(&self, name: &str, tree: bool) {
        let sig = match name {
            "KILL" => rustix::process::Signal::KILL,
            "INT" => rustix::process::Signal::INT,
            _ => rustix::process::Signal::TERM,
        };
        let pids = if tree {
            tree_pids(&self.tag)
        } else {
            vec![self.pid]
        };
        for pid in pids {
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                // A process that is already gone is what we wanted.
                let _ = rustix::process::kill_process(p, sig);
            }
        }
    }

    /// Kills everything of the tree that is left (the end of every transcript), then reads
    /// stderr to its end: a bridge that ended at once (for example because its upstream could
    /// not start) wrote its last line just before, and the report must show it.
    pub async fn cleanup(&mut self) {
        self.close_stdin();
        if self.exit.is_none() {
            let _ = self.child.start_kill();
            self.wait_exit(Duration::from_secs(2)).await;
        }
        kill_tree(&self.tag);
        self.read_stderr_to_end().await;
    }

    /// How the bridge ended, for a report: `code 1` or `signal 9`, then `, with nothing on
    /// stderr` when it wrote no line (stderr read to its end first); `None` while it runs.
    /// Under wine either end without a line is wine's: the bridge writes a line before each
    /// exit code but 0, and a Windows program has no POSIX signal (ci/windows.sh).
    pub async fn how_it_ended(&mut self, bound: Duration) -> Option<String> {
        let (status, _) = self.wait_exit(bound).await?;
        self.read_stderr_to_end().await;
        let silent = if self.stderr.snapshot().is_empty() {
            ", with nothing on stderr"
        } else {
            ""
        };
        Some(format!("{}{silent}", describe(&status)))
    }

    /// Waits until stderr has been read to its end, within a bound: a process that is not the
    /// bridge (its upstream, or one outside the tree) can still hold the pipe open.
    pub async fn read_stderr_to_end(&mut self) {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), reader).await;
        }
    }
}

async fn read_stdout(
    out: tokio::process::ChildStdout,
    tx: mpsc::UnboundedSender<Line>,
    kept: Arc<Mutex<Vec<u8>>>,
) {
    let mut reader = BufReader::new(out);
    loop {
        let mut buf = Vec::new();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if let Ok(mut k) = kept.lock() {
                    k.extend_from_slice(&buf);
                }
                let terminated = buf.last() == Some(&b'\n');
                if terminated {
                    buf.pop();
                }
                if tx
                    .send(Line {
                        bytes: buf,
                        at: Instant::now(),
                        terminated,
                    })
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

async fn read_stderr(
    err: tokio::process::ChildStderr,
    lines: Arc<Mutex<Vec<String>>>,
    changed: watch::Sender<usize>,
) {
    let mut reader = BufReader::new(err);
    loop {
        let mut buf = Vec::new();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf)
                    .trim_end_matches(['\n', '\r'])
                    .to_string();
                let n = match lines.lock() {
                    Ok(mut l) => {
                        l.push(text);
                        l.len()
                    }
                    Err(_) => return,
                };
                let _ = changed.send(n);
            }
        }
    }
}

/// The live processes whose environment has the tag of this transcript.
pub fn tree_pids(tag: &str) -> Vec<i32> {
    let needle = format!("{TAG_VAR}={tag}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        // Zombies have an empty environ; they are gone for our purpose.
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until no process of the tree is left, within `bound`. Polls /proc: there is no event
/// for the exit of a process that is not our child; the poll is bounded.
pub async fn wait_tree_gone(tag: &str, bound: Duration) -> Vec<i32> {
    let deadline = Instant::now() + bound;
    loop {
        let left = tree_pids(tag);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills every process that is left in the tree.
pub fn kill_tree(tag: &str) {
    #[cfg(unix)]
    for pid in tree_pids(tag) {
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    #[cfg(not(unix))]
    let _ = tag;
}

/// The number of a signal that transcripts name (the same on Linux and macOS).
pub fn signal_number(name: &str) -> i32 {
    match name {
        "KILL" => 9,
        "INT" => 2,
        _ => 15,
    }
}

/// Describes an exit status: `code 0` or `signal 9`.
pub fn describe(status: &ExitStatus) -> String {
    match (status.code(), exit_signal(status)) {
        (Some(c), _) => format!("code {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "an unknown status".into(),
    }
}

/// A binary next to the harness binary (the same target folder), unless the variable `var`
/// names it.
pub fn sibling(var: &str, name: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(var) {
        return Ok(PathBuf::from(p));
    }
    let harness =
        std::env::current_exe().map_err(|e| format!("cannot find the harness binary: {e}"))?;
    let dir = harness.parent().ok_or("the harness binary has no folder")?;
    Ok(dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
}

/// The signal that ended a process (POSIX; elsewhere there is none).
pub fn exit_signal(status: &ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}
