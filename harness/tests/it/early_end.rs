//! A bridge that ends before its first answer: the report says how it ended and shows its last
//! stderr lines, read to the end of the pipe, so that `ci/windows.sh` can tell an end of wine's
//! (no line at all) from one of the bridge (a line, then the code).
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

/// Runs the transcript `start` against a bridge that is the shell script `body`; the stdout of
/// the harness, which fails.
fn replay_against(name: &str, body: &str) -> String {
    let dir = std::env::temp_dir().join(format!("harness-early-end-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bridge = dir.join("bridge");
    std::fs::write(&bridge, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&bridge, std::fs::Permissions::from_mode(0o755)).unwrap();
    let transcript: PathBuf = dir.join("start-local.jsonl");
    std::fs::write(
        &transcript,
        "{\"setup\":{\"profile\":\"local\",\"upstream\":\"fixture\"}}\n{\"start\":{}}\n",
    )
    .unwrap();
    let fixture = crate::bins::fixture();
    let mut command = Command::new(crate::bins::harness());
    command
        .env("MCP_BRIDGE_BIN", &bridge)
        .env("BRIDGE_FIXTURE_SERVER", &fixture)
        .arg("--no-build");
    // Under CI the harness runs only with the schema checks (as in relay_tcp.rs).
    if let Some(spec) = harness::schema::default_spec_dir() {
        command.arg("--schemas").arg(spec);
    }
    let out = command.arg(&transcript).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn a_bridge_that_ends_without_a_line_is_reported_as_silent() {
    // It reads the first request, as the wine process did, so that the request is written.
    let report = replay_against("silent", "read -r request\nexit 1");
    assert!(
        report.contains("\n  the bridge ended with code 1, with nothing on stderr\n"),
        "{report}"
    );
}

#[test]
fn the_last_line_of_a_bridge_that_ends_at_once_is_in_the_report() {
    // The line comes after the bridge has ended, from a process outside the tree (without the
    // tag) that holds the bridge's stderr: the report holds it only when stderr is read to
    // its end, not just up to the exit.
    let report = replay_against(
        "line",
        "read -r request\nexec 1>&-\nenv -u MCP_HARNESS_TAG sh -c \"sleep 0.5; echo 'mcp-bridge-vscode: bridge: error: the upstream could not start' >&2\" &\nexit 1",
    );
    assert!(
        report.contains("\n  the bridge ended with code 1\n"),
        "{report}"
    );
    assert!(
        report.contains(
            "last stderr lines:\n    mcp-bridge-vscode: bridge: error: the upstream could not start"
        ),
        "{report}"
    );
}
