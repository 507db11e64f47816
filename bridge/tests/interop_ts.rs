//! Interop with a real 2025-11-25 client that we did not write: the TypeScript SDK v1
//! (`@modelcontextprotocol/sdk`, pinned in tests/interop/package.json) with
//! `StdioClientTransport` starts the bridge with the fixture, lists the tools, calls `add`
//! and gets `5`, gets the prompt `greet`, reads the resource, and (M2) answers the form of
//! `ask_form` through the bridge's input rounds.
//!
//! M2 adds a second upstream: the TypeScript SDK v2 server `@modelcontextprotocol/server`
//! (tests/interop/upstream-v2.mjs) behind the bridge, with a tool that asks for a form.
//!
//! It runs when tests/interop/node_modules is installed (ci/install-peers.sh); otherwise it
//! says that it skipped, except in CI (`CI=true`), where a missing peer is a failure.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `node driver.mjs <bridge> <second>` and returns its one JSON line, or `None` when the
/// peers are not installed outside CI (the test then says that it skipped).
fn run_driver(second: &std::ffi::OsStr, package: &str) -> Option<serde_json::Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("interop");
    if !dir
        .join("node_modules")
        .join("@modelcontextprotocol")
        .join(package)
        .is_dir()
    {
        let why =
            format!("@modelcontextprotocol/{package} is not installed (run ci/install-peers.sh)");
        assert!(std::env::var_os("CI").is_none(), "{why}");
        println!("skipped: {why}");
        return None;
    }
    let mut child = match Command::new("node")
        .current_dir(&dir)
        .arg("driver.mjs")
        .arg(support::bridge_bin())
        .arg(second)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "node does not start: {e}");
            println!("skipped: node does not start ({e})");
            return None;
        }
    };
    let since = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if since.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the interop driver did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        status.success(),
        "driver failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    Some(serde_json::from_str(stdout.trim()).expect("one JSON line"))
}

#[test]
fn interop_typescript_sdk_v1_lists_calls_add_gets_greet_reads_the_resource_and_answers_a_form() {
    let Some(result) = run_driver(support::fixture_bin().as_os_str(), "sdk") else {
        return;
    };
    assert_eq!(result["add"], "5");
    assert_eq!(result["greeting"], "Hello, VS Code.");
    let form = result["form"].as_str().unwrap_or_default();
    assert!(
        form.starts_with("form: accept") && form.contains("Ada"),
        "{result}"
    );
}

/// M2 (issue 5): a second, independent 2026-07-28 upstream, the TypeScript SDK v2 server
/// (tests/interop/upstream-v2.mjs), asks for a form with an InputRequiredResult; the TS v1
/// client answers it through the bridge and the call completes.
#[test]
fn r8_interop_typescript_sdk_v2_server_form_completes_through_the_bridge() {
    let Some(result) = run_driver(std::ffi::OsStr::new("--v2-upstream"), "server") else {
        return;
    };
    assert_eq!(result["weather"], "sunny in Paris");
}
