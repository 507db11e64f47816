//! The keychain store against a real Secret Service (the contract's "Token storage"):
//! `ci/keychain-tests.sh` runs this file inside `dbus-run-session` with gnome-keyring and an
//! unlocked login collection, and sets `MCP_KEYCHAIN_SESSION`. Elsewhere (the plain `cargo
//! test` of the workspace) the test is a recorded skip that names where it runs; inside the
//! session, a Secret Service that does not answer is a failure under CI and a skip elsewhere.
//!
//! One test function: the steps share the one collection of the session, and the last step
//! locks it.

use crate::support;

use std::process::Command;

use mcp_bridge_vscode::testing::{Record, open_keychain, storage_key};

/// The service of the bridge's credentials in the keychain (the docs' "Token stores").
const KEYCHAIN_SERVICE: &str = "mcp-bridge-vscode";

fn record(token: &str) -> Record {
    Record {
        issuer: "https://as.example".into(),
        resource: "https://mcp.example/mcp".into(),
        client_id: "client".into(),
        registered_secret: None,
        registered_method: None,
        access_token: token.into(),
        refresh_token: Some(format!("{token}-refresh")),
        expires_at: Some(1_900_000_000),
        scopes: vec![],
    }
}

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
fn the_keychain_store_against_the_secret_service() {
    if std::env::var_os("MCP_KEYCHAIN_SESSION").is_none() {
        harness::skip::skip(
            "bridge/tests/keychain.rs: the keychain tests run in ci/keychain-tests.sh (a D-Bus session with gnome-keyring)",
        );
        return;
    }
    let store = match open_keychain() {
        Ok(store) => store,
        Err(error) => {
            harness::skip::skip(&format!(
                "bridge/tests/keychain.rs: no Secret Service answers ({error})"
            ));
            return;
        }
    };
    // Step 1: a record larger than one credential (16 KiB on Linux) round-trips in parts, and
    // no credential names the URL.
    let url = "https://mcp.example.com/mcp?api_key=planted-url-secret";
    let key = storage_key(url, "default", 41894);
    let large = record(&"t".repeat(40 * 1024));
    store.save(&key, &large).expect("save");
    assert_eq!(store.load(&key), Ok(Some(large)));
    let users = users();
    assert!(users.len() >= 4, "three parts and the index: {users:?}");
    assert!(
        users.iter().all(|u| !u.contains("mcp.example.com")),
        "{users:?}"
    );
    assert!(users.iter().any(|u| u.ends_with("/2")), "{users:?}");

    // Step 2: accounts stay apart; delete and the index.
    let work = storage_key(url, "work", 41894);
    store.save(&work, &record("work-token")).expect("save work");
    store.save(&key, &record("small")).expect("shrink");
    assert_eq!(store.load(&key), Ok(Some(record("small"))));
    assert_eq!(
        store.list(),
        Ok(vec![work.clone(), key.clone()]),
        "newest last"
    );
    assert!(
        !users_now().iter().any(|u| u.ends_with("/2")),
        "old parts are gone"
    );
    assert_eq!(store.delete(&work), Ok(true));
    assert_eq!(store.load(&work), Ok(None));
    assert_eq!(store.load(&key), Ok(Some(record("small"))));

    // Step 3: the executable names the keychain, and logout finds the sign-in in the index.
    let out = bridge_command(&["--token-store", "keychain", "https://127.0.0.1:9/mcp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "mcp-bridge-vscode: bridge: info: the tokens are in the keychain of the host (service \"{KEYCHAIN_SERVICE}\")"
        )),
        "{stderr}"
    );
    let logout_url = "https://mcp.example.com/mcp";
    store
        .save(&storage_key(logout_url, "default", 41894), &record("x"))
        .expect("save");
    let out = bridge_command(&["logout", "--token-store", "keychain", logout_url]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"default\""),
        "{stderr}"
    );
    assert_eq!(
        store.load(&storage_key(logout_url, "default", 41894)),
        Ok(None)
    );
    let out = bridge_command(&["logout", "--all", "--token-store", "keychain"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("logout deleted 1 stored sign-ins"),
        "{stderr}"
    );
    assert!(
        users_now().is_empty(),
        "--all leaves nothing: {:?}",
        users_now()
    );

    // Step 4: with the sign-in, a second start reuses the token from the keychain without a
    // sign-in line, and logout makes the next start sign in again.
    sign_in_with_the_keychain();

    // Step 5: a locked collection without a display is an error, never an unlock prompt.
    lock_default_collection();
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
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut third = start(&[]);
    initialize_signing_in(&mut third);
    third.close_and_expect_exit_0();
    for b in [&first, &second, &third] {
        assert!(!b.stderr().contains("bfx_at_") && !b.stderr().contains("bfx_rt_"));
    }
    let out = bridge_command(&["logout", "--all", "--token-store", "keychain"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The user names of the credentials of the service.
#[cfg(all(unix, not(target_os = "macos")))]
fn users() -> Vec<String> {
    users_now()
}

#[cfg(all(unix, not(target_os = "macos")))]
fn users_now() -> Vec<String> {
    use secret_service::EncryptionType;
    use secret_service::blocking::SecretService;
    let service = SecretService::connect(EncryptionType::Plain).expect("connect");
    let found = service
        .search_items(std::collections::HashMap::from([(
            "service",
            KEYCHAIN_SERVICE,
        )]))
        .expect("search");
    found
        .unlocked
        .iter()
        .chain(found.locked.iter())
        .filter_map(|item| item.get_attributes().ok())
        .filter_map(|attributes| attributes.get("username").cloned())
        .collect()
}

#[cfg(all(unix, not(target_os = "macos")))]
fn lock_default_collection() {
    use secret_service::EncryptionType;
    use secret_service::blocking::SecretService;
    let service = SecretService::connect(EncryptionType::Plain).expect("connect");
    service
        .get_default_collection()
        .expect("default collection")
        .lock()
        .expect("lock");
}
