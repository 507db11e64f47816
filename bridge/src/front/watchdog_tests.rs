//! The bound of the stop and the internal error line (R7, docs/rules.md; bridge/README.md
//! "Reliability") with the executable's own hooks around [`serve`]: the watchdog and the
//! panic hook.
//!
//! Both end their process, so they run in a child process (`test_support::child`): this
//! test executable runs itself with `--exact <child test>`; the child tests return at once in
//! the ordinary run.
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::serve;
use super::timeout_tests::{
    DISCOVER, assert_the_watchdog_ended_it, scripted_options, vscode_initialize, watchdog_hooks,
};
use crate::test_support::child::{Ran, is_child, run_child};
use crate::watchdog::exit_1_on_panic;

/// The shutdown_grace of the watchdog test's bridge.
const GRACE: Duration = Duration::from_secs(5);

/// The child of the watchdog test: the bridge's own `serve` with the watchdog of the
/// executable, armed at 1 s, in front of an upstream that ignores the end of its stdin and
/// the termination signal, with a shutdown_grace of 5 s: the bridge's own stop would take
/// 10 s, so the watchdog fires first.
#[test]
fn child_watchdog() {
    if !is_child("child_watchdog") {
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
        let hooks = watchdog_hooks(&pid, Duration::from_secs(1));
        let bridge = tokio::spawn(serve(
            scripted_options(&script, GRACE),
            bridge_in,
            bridge_out,
            hooks,
        ));
        let mut lines = BufReader::new(from_bridge).lines();
        to_bridge
            .write_all(format!("{}\n", vscode_initialize(1)).as_bytes())
            .await
            .expect("write");
        let r = lines.next_line().await.expect("read").expect("a line");
        assert!(r.contains("\"result\""), "{r}");
        drop(to_bridge);
        let eof_at = Instant::now();
        let _ = bridge.await;
        // The upstream ignores the end of its stdin and SIGTERM: before the grace ends, only
        // the watchdog's SIGKILL ends it, and the bridge's stop ends with it. The watchdog's
        // exit is then under way on its own thread (its line is written, its kill sent): this
        // thread must not race it with an exit of its own, so it waits for that exit.
        if eof_at.elapsed() < GRACE {
            loop {
                std::thread::park();
            }
        }
        eprintln!("the bridge stopped before the watchdog");
        std::process::exit(7);
    });
}

#[test]
fn r7_the_watchdog_writes_its_line_kills_the_upstream_group_and_exits_0() {
    // The end of stderr also proves that the kill reached the upstream (it ignores SIGTERM
    // and holds stderr open).
    assert_the_watchdog_ended_it(&run_child(module_path!(), "child_watchdog", &[]));
}

/// The child of the panic test: the executable's panic hook, an upstream process group that
/// ignores SIGTERM, then a panic inside a task of the runtime.
#[test]
fn child_panic() {
    if !is_child("child_panic") {
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
    let Ran { code, stderr, .. } = run_child(module_path!(), "child_panic", &[]);
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
