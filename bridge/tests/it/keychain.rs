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

fn bridge_command(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("MCP_BRIDGE_TOKEN_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the bridge runs")
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
    use support::oauth::{bridge, free_port, initialize_signing_in, oauth_fixture, sign_in_urls};
    let fixture = oauth_fixture(&[]);
    let port = free_port();
    let start = |extra: &[&str]| {
        let mut args = vec!["--no-browser", "--token-store", "keychain"];
        args.extend_from_slice(extra);
        let b = bridge(&fixture.url, port, &args, &[]);
        b.expect_line(|l| l.contains("the tokens are in the keychain of the host"));
        b
    };
    let add = |b: &mut support::Bridge| {
        let r = b.exchange(&support::call(
            2,
            "add",
            serde_json::json!({"a": 2, "b": 3}),
        ));
        assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
    };
    let mut first = start(&[]);
    initialize_signing_in(&mut first);
    add(&mut first);
    first.close_and_expect_exit_0();
    let mut second = start(&["--sign-in-timeout", "5"]);
    second.initialize();
    add(&mut second);
    assert!(sign_in_urls(&second).is_empty(), "{}", second.stderr());
    second.close_and_expect_exit_0();
    let port_text = port.to_string();
    let out = bridge_command(&[
        "logout",
        "--token-store",
        "keychain",
        "--redirect-port",
        &port_text,
        &fixture.url,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"default\""),
        "{stderr}"
    );
    let mut third = start(&[]);
    initialize_signing_in(&mut third);
    third.close_and_expect_exit_0();
    for b in [&first, &second, &third] {
        assert!(!b.stderr().contains("bfx_at_") && !b.stderr().contains("bfx_rt_"));
    }
    let out = bridge_command(&["logout", "--all", "--token-store", "keychain"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("logout deleted 1 stored sign-ins"),
        "{stderr}"
    );
    assert!(
        support::keychain::users().is_empty(),
        "--all leaves nothing: {:?}",
        support::keychain::users()
    );
}
