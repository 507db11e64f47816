//! The watchdog of the stop (R7, docs/windows.md "The stop sequence on Windows") on Windows,
//! run under wine by ci/windows.sh: the bridge's own [`serve`] with the executable's watchdog,
//! armed at 1 s, in front of a stubborn upstream (`ci/windows/stubborn.c`: it never reads its
//! stdin and never answers) with a shutdown_grace of 5 s. The bridge's own stop would end the
//! job at 2 × 5 s; the watchdog must end the process first, with its line and exit 0.
//!
//! No input of the executable keeps its stop past 8 s on Windows (each part of the stop is
//! bounded below that), so the watchdog is provoked here with a longer grace, in a child
//! process of this test executable (`test_support::child`): the watchdog ends its process.
#![cfg(windows)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;

use super::serve;
use super::timeout_tests::{
    assert_the_watchdog_ended_it, options, vscode_initialize, watchdog_hooks,
};
use crate::test_support::child::{is_child, run_child};
use crate::upstream::connect::Target;

/// The folder of ci/windows.sh's Windows tools (a path of the host: `/` is drive `Z:`).
const TOOLS: &str = "MCP_WINE_TOOLS";

/// The stubborn upstream, as a Windows path.
fn stubborn() -> Option<PathBuf> {
    let tools = std::env::var(TOOLS).ok()?;
    Some(PathBuf::from(format!(
        "Z:{}\\stubborn-upstream.exe",
        tools.replace('/', "\\")
    )))
}

#[test]
fn child_watchdog_on_windows() {
    if !is_child("child_watchdog_on_windows") {
        return;
    }
    crate::log::install();
    let stubborn = stubborn().expect("MCP_WINE_TOOLS in the child");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let (mut to_bridge, bridge_in) = tokio::io::duplex(1 << 16);
        let (bridge_out, _from_bridge) = tokio::io::duplex(1 << 16);
        let pid = Arc::new(AtomicU32::new(0));
        let hooks = watchdog_hooks(&pid, Duration::from_secs(1));
        let upstream = Target::Command {
            command: stubborn.into_os_string(),
            args: vec![],
            env: Default::default(),
        };
        let bridge = tokio::spawn(serve(
            options(upstream, "stubborn", Duration::from_secs(5)),
            bridge_in,
            bridge_out,
            hooks,
        ));
        // VS Code's initialize starts the upstream (its discover is never answered); stdin
        // ends once the upstream runs, so that the stop has a job to end.
        to_bridge
            .write_all(format!("{}\n", vscode_initialize(1)).as_bytes())
            .await
            .expect("write");
        let started = Instant::now();
        while pid.load(Ordering::SeqCst) == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the upstream did not start"
            );
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(to_bridge);
        let _ = bridge.await;
        // Not reached: the watchdog exits the process first.
        eprintln!("the bridge stopped before the watchdog");
        std::process::exit(7);
    });
}

#[test]
fn r7_on_windows_the_watchdog_writes_its_line_and_exits_0_before_the_stop_ends_the_job() {
    if stubborn().is_none() {
        harness::skip::skip("the watchdog on Windows needs ci/windows.sh (MCP_WINE_TOOLS)");
        return;
    }
    assert_the_watchdog_ended_it(&run_child(module_path!(), "child_watchdog_on_windows", &[]));
}
