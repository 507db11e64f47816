//! Interop with a real 2025-11-25 client that we did not write: the TypeScript SDK v1
//! (`@modelcontextprotocol/sdk`, pinned in tests/interop/package.json) with
//! `StdioClientTransport` starts the bridge with the fixture, lists the tools, calls `add`
//! and gets `5`, gets the prompt `greet`, and reads the resource.
//!
//! It runs when tests/interop/node_modules is installed (ci/install-peers.sh); otherwise it
//! says that it skipped, except in CI (`CI=true`), where a missing peer is a failure.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn interop_typescript_sdk_v1_lists_calls_add_gets_greet_and_reads_the_resource() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("interop");
    if !dir
        .join("node_modules")
        .join("@modelcontextprotocol")
        .join("sdk")
        .is_dir()
    {
        let why = "the TypeScript SDK is not installed (run ci/install-peers.sh)";
        assert!(std::env::var_os("CI").is_none(), "{why}");
        println!("skipped: {why}");
        return;
    }
    let mut child = match Command::new("node")
        .current_dir(&dir)
        .arg("driver.mjs")
        .arg(support::bridge_bin())
        .arg(support::fixture_bin())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "node does not start: {e}");
            println!("skipped: node does not start ({e})");
            return;
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
    let result: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(result["add"], "5");
    assert_eq!(result["greeting"], "Hello, VS Code.");
}
