//! The bound of the stop and the internal error line (R7, docs/rules.md; bridge/README.md
//! "Reliability") with the executable's own hooks around [`serve`]: the watchdog and the
//! panic hook.
//!
//! Both end their process, so they run in a child process: this test executable runs itself
//! with `MCP_FAULT_CHILD` set and `--exact <child test>`; the child tests return at once
//! without it.
#![cfg(unix)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use harness::format::Profile;
use harness::profile;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::timeout_tests::{DISCOVER, scripted_options};
use super::{Hooks, serve};
use crate::watchdog::{arm, exit_1_on_panic};

const CHILD_ENV: &str = "MCP_FAULT_CHILD";

fn child_mode() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// The name of the test `name` of this module as the test binary lists it (`<module>::<name>`,
/// the crate's name left out): the binary holds the tests of every module.
fn test_path(name: &str) -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}

/// Runs the child test `name` of this executable in its own process; returns its exit code,
/// its stderr (complete: every process holding it is gone) and the time to its exit.
fn run_child(name: &str) -> (Option<i32>, String, Duration) {
    let mut child = Command::new(std::env::current_exe().expect("test executable"))
        .args([
            "--exact",
            &test_path(name),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child test starts");
    let started = Instant::now();
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the child test {name} did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    let text = rx
        .recv_timeout(Duration::from_secs(2))
        .expect("no process of the child's tree holds stderr (the upstream group is killed)");
    (status.code(), text, took)
}

/// The child of the watchdog test: the bridge's own `serve` with the watchdog of the
/// executable, armed at 1 s, in front of an upstream that ignores the end of its stdin and
/// the termination signal, with a shutdown_grace of 5 s: the bridge's own stop would take
/// 10 s, so the watchdog fires first.
#[test]
fn child_watchdog() {
    if child_mode().as_deref() != Some("child_watchdog") {
        return;
    }
    crate::log::install();
    let script =
        format!("trap '' TERM; read l; {DISCOVER}; while read -r l; do :; done; exec sleep 60");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let (mut to_bridge, bridge_in) = tokio::io::duplex(1 << 16);
        let (bridge_out, from_bridge) = tokio::io::duplex(1 << 16);
        let pid = Arc::new(AtomicU32::new(0));
        let watchdog_pid = Arc::clone(&pid);
        let hooks = Hooks {
            on_eof: Some(Box::new(move || arm(watchdog_pid, Duration::from_secs(1)))),
            upstream_pid: pid,
        };
        let bridge = tokio::spawn(serve(
            scripted_options(&script, Duration::from_secs(5)),
            bridge_in,
            bridge_out,
            hooks,
        ));
        let mut lines = BufReader::new(from_bridge).lines();
        let initialize = profile::request(
            Profile::Local,
            1,
            "initialize",
            profile::initialize_params(Profile::Local),
        );
        to_bridge
            .write_all(format!("{initialize}\n").as_bytes())
            .await
            .expect("write");
        let r = lines.next_line().await.expect("read").expect("a line");
        assert!(r.contains("\"result\""), "{r}");
        drop(to_bridge);
        let _ = bridge.await;
        // Not reached: the watchdog exits the process first.
        eprintln!("the bridge stopped before the watchdog");
        std::process::exit(7);
    });
}

#[test]
fn r7_the_watchdog_writes_its_line_kills_the_upstream_group_and_exits_0() {
    let (code, stderr, took) = run_child("child_watchdog");
    assert_eq!(code, Some(0), "stderr:\n{stderr}");
    assert!(
        stderr.contains(
            "mcp-bridge-vscode: vscode: warning: the bridge did not stop in 1 s after the end of stdin, thus it stops now\n"
        ),
        "{stderr}"
    );
    // Before the first grace of 5 s ends: the watchdog, not the stop sequence, ended it; the
    // end of stderr proves that the kill reached the upstream (it ignores SIGTERM).
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// The child of the panic test: the executable's panic hook, an upstream process group that
/// ignores SIGTERM, then a panic inside a task of the runtime.
#[test]
fn child_panic() {
    if child_mode().as_deref() != Some("child_panic") {
        return;
    }
    crate::log::install();
    let upstream = Command::new("sh")
        .args(["-c", "trap '' TERM; exec sleep 60"])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("the upstream starts");
    exit_1_on_panic(Arc::new(AtomicU32::new(upstream.id())));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let _ = tokio::spawn(async { panic!("planted internal error") }).await;
    });
    std::process::exit(7);
}

#[test]
fn the_internal_error_line_kills_the_upstream_group_and_exits_1() {
    let (code, stderr, _) = run_child("child_panic");
    assert_eq!(code, Some(1), "stderr:\n{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("mcp-bridge-vscode: vscode: error: the bridge stopped because of an internal error: "))
        .unwrap_or_else(|| panic!("no internal error line:\n{stderr}"));
    assert!(
        line.contains("planted internal error at bridge/src/front/watchdog_tests.rs:"),
        "{line}"
    );
}
