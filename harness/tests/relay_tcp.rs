//! The scripted upstream's relay over loopback TCP (`HARNESS_RELAY=tcp`, the only way where Unix
//! sockets are missing): scripted transcripts pass with it as with the Unix socket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn scripted_transcripts_pass_with_the_relay_over_loopback_tcp() {
    let harness = PathBuf::from(env!("CARGO_BIN_EXE_harness"));
    let bridge = harness
        .parent()
        .unwrap()
        .join(format!("mcp-bridge-vscode{}", std::env::consts::EXE_SUFFIX));
    if !bridge.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let ok = Command::new(cargo)
            .args(["build", "-p", "mcp-bridge-vscode"])
            .status()
            .expect("cargo build")
            .success();
        assert!(ok, "cargo build -p mcp-bridge-vscode");
    }
    let m1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../transcripts/m1");
    let out = Command::new(&harness)
        .env("HARNESS_RELAY", "tcp")
        .args(["--no-build", "--filter", "C1-discover"])
        .arg(&m1)
        .output()
        .expect("the harness runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("2 passed, 0 failed"), "{stdout}");
}
