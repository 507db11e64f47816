//! The keychain store against a real Secret Service (docs/token-stores.md): `ci/keychain-tests.sh`
//! runs this test inside `dbus-run-session` with gnome-keyring and an unlocked login collection,
//! and sets `MCP_KEYCHAIN_SESSION`. Elsewhere (the plain `cargo test` of the workspace) the test
//! is a recorded skip that names where it runs; inside the session, a Secret Service that does
//! not answer is a failure (the session's script promises one: a skip here once hid a second
//! daemon that answered from another keyring). What the
//! executable does with the keychain (its start-up line, logout, a sign-in kept across starts,
//! a locked collection) is the integration test `keychain::the_keychain_store_through_the_executable`,
//! which runs after this one in the same session.
//!
//! One test function: the steps share the one collection of the session.

use super::indexed::tests::record;
use super::open_keychain;
use crate::auth::identity::storage_key;

/// The service of the bridge's credentials in the keychain (the docs' "Token stores").
const KEYCHAIN_SERVICE: &str = "mcp-bridge-vscode";

#[test]
fn the_keychain_store_against_the_secret_service() {
    if std::env::var_os("MCP_KEYCHAIN_SESSION").is_none() {
        harness::skip::skip(
            "bridge/src/auth/store/keychain_tests.rs: the keychain tests run in ci/keychain-tests.sh (a D-Bus session with gnome-keyring)",
        );
        return;
    }
    let store = open_keychain().unwrap_or_else(|error| {
        panic!("the Secret Service of the session does not answer: {error}")
    });
    // Step 1: a record larger than one credential (16 KiB on Linux) round-trips in parts, and
    // no credential names the URL.
    let url = "https://mcp.example.com/mcp?api_key=planted-url-secret";
    let key = storage_key(url, "default", 41894);
    let large = record(&"t".repeat(40 * 1024));
    store.save(&key, &large).expect("save");
    assert_eq!(store.load(&key), Ok(Some(large)));
    let names = users();
    assert!(names.len() >= 4, "three parts and the index: {names:?}");
    assert!(
        names.iter().all(|u| !u.contains("mcp.example.com")),
        "{names:?}"
    );
    assert!(names.iter().any(|u| u.ends_with("/2")), "{names:?}");

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
        !users().iter().any(|u| u.ends_with("/2")),
        "old parts are gone"
    );
    assert_eq!(store.delete(&work), Ok(true));
    assert_eq!(store.load(&work), Ok(None));
    assert_eq!(store.load(&key), Ok(Some(record("small"))));

    // Step 3: clearing the store leaves no credential of the service.
    assert_eq!(store.clear(), Ok(1));
    assert_eq!(users(), Vec::<String>::new());
}

/// The user names of the credentials of the service.
fn users() -> Vec<String> {
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
