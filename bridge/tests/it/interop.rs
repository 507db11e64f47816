//! Interop with real peers that we did not write (pinned in tests/interop/package.json):
//!
//! - the TypeScript SDK v1 client (`@modelcontextprotocol/sdk`, 2025-11-25) with
//!   `StdioClientTransport` starts the bridge with the fixture, lists the tools, calls `add`
//!   and gets `5`, gets the prompt `greet`, reads the resource, and (M2) answers the form of
//!   `ask_form` through the bridge's input rounds;
//! - M2 (R8): the TypeScript SDK v2 server (`@modelcontextprotocol/server`, 2026-07-28,
//!   `serveStdio`, tests/interop/ts-v2-server.mjs) as the upstream asks for a form with an
//!   InputRequiredResult, and the call completes;
//! - M3 (O6, the quirk on tool re-listing): the same client in front of the bridge, with the
//!   same TypeScript SDK v2 server as the upstream: a tool that changes the tool list gives
//!   the client the list change before its result.
//!
//! They run when tests/interop/node_modules is installed (ci/install-peers.sh); otherwise they
//! say that they skipped, except in CI (`CI=true`), where a missing peer is a failure.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("interop")
}

/// Runs `node <script> <args>` in tests/interop when the `packages` are installed; returns
/// its one JSON line, or `None` (skipped) outside CI when a peer or node is missing.
fn run_driver(packages: &[&str], script: &str, args: &[PathBuf]) -> Option<serde_json::Value> {
    let dir = interop_dir();
    let missing = packages.iter().find(|p| {
        !dir.join("node_modules")
            .join("@modelcontextprotocol")
            .join(p)
            .is_dir()
    });
    if let Some(package) = missing {
        let why =
            format!("@modelcontextprotocol/{package} is not installed (run ci/install-peers.sh)");
        harness::skip::skip(&format!("bridge interop_ts: {why}"));
        return None;
    }
    let mut child = match Command::new("node")
        .current_dir(&dir)
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            harness::skip::skip(&format!("bridge interop_ts: node does not start ({e})"));
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
            panic!("the interop driver {script} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().expect("output");
    crate::support::kept::keep_output("peer", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        status.success(),
        "driver {script} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    Some(serde_json::from_str(stdout.trim()).expect("one JSON line"))
}

/// What the TypeScript SDK v1 driver reports when its list, calls, read and form all worked.
fn assert_the_v1_driver_did_everything(result: &serde_json::Value) {
    assert_eq!(result["add"], "5");
    assert_eq!(result["greeting"], "Hello, VS Code.");
    let form = result["form"].as_str().unwrap_or_default();
    assert!(
        form.starts_with("form: accept") && form.contains("Ada"),
        "{result}"
    );
}

#[test]
fn interop_typescript_sdk_v1_lists_calls_add_gets_greet_reads_the_resource_and_answers_a_form() {
    let Some(result) = run_driver(
        &["sdk"],
        "driver.mjs",
        &[support::bridge_bin(), support::fixture_bin()],
    ) else {
        return;
    };
    assert_the_v1_driver_did_everything(&result);
}

/// M5 (the embedded bridge, bridge/README.md): the same client against `bridge-fixture-server --embedded` directly: its
/// `initialize` selects the bridge inside the fixture's process; no bridge process.
#[test]
fn m5_interop_typescript_sdk_v1_against_the_embedded_fixture_directly() {
    let Some(result) = run_driver(
        &["sdk"],
        "driver.mjs",
        &[PathBuf::from("--embedded"), support::fixture_bin()],
    ) else {
        return;
    };
    assert_the_v1_driver_did_everything(&result);
}

/// M2 (docs/rules.md R8): a second, independent 2026-07-28 upstream, the TypeScript SDK v2 server
/// (tests/interop/ts-v2-server.mjs), asks for a form with an InputRequiredResult; the TS v1
/// client answers it through the bridge and the call completes.
#[test]
fn r8_interop_typescript_sdk_v2_server_form_completes_through_the_bridge() {
    let Some(result) = run_driver(
        &["sdk", "server"],
        "driver.mjs",
        &[support::bridge_bin(), PathBuf::from("--v2-upstream")],
    ) else {
        return;
    };
    assert_eq!(result["weather"], "sunny in Paris");
}

#[test]
fn m3_o6_interop_typescript_sdk_v2_server_list_change_reaches_the_v1_client_before_the_result() {
    let Some(result) = run_driver(
        &["sdk", "server"],
        "list_change.mjs",
        &[support::bridge_bin()],
    ) else {
        return;
    };
    assert_eq!(
        result["events"],
        serde_json::json!(["list_changed", "result"])
    );
    assert_eq!(result["before"], serde_json::json!(["extra", "hide_extra"]));
    assert_eq!(result["after"], serde_json::json!(["hide_extra"]));
}
