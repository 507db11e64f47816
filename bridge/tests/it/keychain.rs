//! The keychain store through the executable, against a real Secret Service
//! (docs/token-stores.md): `ci/keychain-tests.sh` runs this file inside `dbus-run-session`
//! with gnome-keyring and an unlocked login collection, and sets `MCP_KEYCHAIN_SESSION`,
//! after the store's own unit test (`auth::store::keychain_tests`). Elsewhere (the plain
//! `cargo test` of the workspace) the test is a recorded skip that names where it runs.
//!
//! One test function: the steps share the one collection of the session, and the last step
//! locks it.

use crate::support;

use std::process::Command;

#[cfg(all(unix, not(target_os = "macos")))]
const KEY: &str = "5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3";

fn bridge_command(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("MCP_BRIDGE_TOKEN_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the bridge runs");
    support::kept::keep_output("cli", &out);
    out
}

#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn the_keychain_store_through_the_executable() {
    if std::env::var_os("MCP_KEYCHAIN_SESSION").is_none() {
        harness::skip::skip(
            "bridge/tests/it/keychain.rs: the keychain tests run in ci/keychain-tests.sh (a D-Bus session with gnome-keyring)",
        );
        return;
    }
    // Step 1: the executable names the keychain.
    let out = bridge_command(&["--token-store", "keychain", "https://127.0.0.1:9/mcp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "mcp-bridge-vscode: bridge: info: the tokens are in the keychain of the host (service \"{}\")",
            support::keychain::SERVICE
        )),
        "{stderr}"
    );

    // Step 2: with the sign-in, a second start reuses the token from the keychain without a
    // sign-in line; logout finds the sign-in in the index and makes the next start sign in
    // again; logout --all leaves no credential.
    sign_in_with_the_keychain();

    // Step 3: a locked collection without a display is an error, never an unlock prompt.
    support::keychain::lock_default_collection();
    let out = bridge_command(&["--token-store", "keychain", "https://127.0.0.1:9/mcp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("mcp-bridge-vscode: vscode: error: the token store did not open: the keychain is locked, and without a display"),
        "{stderr}"
    );
    let out = bridge_command(&["https://127.0.0.1:9/mcp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "auto goes on without the keychain: {stderr}"
    );
    assert!(
        stderr.contains(
            "the tokens stay in memory: the keychain is not available (the keychain is locked"
        ),
        "{stderr}"
    );
}

/// The bridge with `--token-store keychain` in front of the fixture's authorization server.
#[cfg(all(unix, not(target_os = "macos")))]
fn sign_in_with_the_keychain() {
    let fixture = support::oauth::oauth_fixture(&[]);
    // The key of the setup is for a file store; the keychain store does not read it.
    let setup = support::stored::Stored::new(&fixture.url, "keychain", KEY);
    setup.sign_in(&[]);
    setup.reuse(&[]);
    // The keyring's files while they hold the sign-in, for the secret sweep (a token store's
    // folder: no token in clear; gnome-keyring encrypts them with the collection's password).
    if let Some(data) = std::env::var_os("XDG_DATA_HOME") {
        support::kept::keep_tree(&std::path::Path::new(&data).join("keyrings"));
    }
    let (code, stderr) = setup.logout(&[&fixture.url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"default\""),
        "{stderr}"
    );
    setup.sign_in(&[]);
    // A sign-in that no index names (an update of the index that two bridges lost), in two
    // parts: `logout --all` finds it by a search of the keychain and deletes both.
    let lost = "0123456789abcdef0123456789abcdef01234567";
    support::keychain::plant(lost, b"the first part");
    support::keychain::plant(&format!("{lost}/1"), b"the second part");
    let (code, stderr) = setup.logout(&["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted 2 stored sign-ins"),
        "{stderr}"
    );
    assert!(
        support::keychain::users().is_empty(),
        "--all leaves nothing: {:?}",
        support::keychain::users()
    );
}
