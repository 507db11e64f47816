//! The secrets against a real Secret Service (docs/secrets.md): `ci/keychain-tests.sh` runs
//! this test inside its D-Bus session with gnome-keyring and sets `MCP_KEYCHAIN_SESSION`;
//! elsewhere it is a recorded skip that names where it runs.
//!
//! One test function: the steps share the one collection of the session.

use super::kept::{Binding, Kept};
use super::store::{SECRETS_SERVICE, SecretStore};
use crate::auth::identity::storage_key;
use crate::auth::store::indexed::tests::record;
use crate::auth::store::open_keychain;

const VALUE: &str = "s3cr3t-marker-keychain";

#[test]
fn the_keychain_store_keeps_secrets_apart_from_the_sign_ins() {
    if std::env::var_os("MCP_KEYCHAIN_SESSION").is_none() {
        harness::skip::skip(
            "bridge/src/secrets/keychain_tests.rs: the keychain tests run in ci/keychain-tests.sh (a D-Bus session with gnome-keyring)",
        );
        return;
    }
    let secrets = SecretStore::keychain().unwrap_or_else(|error| {
        panic!("the Secret Service of the session does not answer: {error}")
    });
    let kept = Kept::new(
        Binding::Command {
            program: "my-server".into(),
            folder: None,
        },
        VALUE.into(),
    );
    secrets.put("api-key", &kept).expect("put");
    assert_eq!(secrets.get("api-key"), Ok(Some(kept.clone())));
    assert_eq!(secrets.names(), Ok(vec!["api-key".to_owned()]));
    assert!(
        users(SECRETS_SERVICE)
            .iter()
            .all(|u| !u.contains("api-key")),
        "no credential names the secret"
    );

    // logout --all clears the sign-ins' service: every secret stays.
    let tokens = open_keychain().expect("the keychain of the sign-ins");
    tokens
        .save(
            &storage_key("https://mcp.example.com/mcp", "default", 41894),
            &record("t"),
        )
        .expect("save a sign-in");
    assert_eq!(tokens.clear(), Ok(1));
    assert_eq!(users("mcp-bridge-vscode"), Vec::<String>::new());
    assert_eq!(secrets.get("api-key"), Ok(Some(kept)));

    assert_eq!(secrets.remove("api-key"), Ok(true));
    assert_eq!(secrets.get("api-key"), Ok(None));
    assert_eq!(
        users(SECRETS_SERVICE),
        Vec::<String>::new(),
        "the index went too"
    );
}

/// The user names of the credentials of `service`.
fn users(service: &str) -> Vec<String> {
    use secret_service::EncryptionType;
    use secret_service::blocking::SecretService;
    let connection = SecretService::connect(EncryptionType::Plain).expect("connect");
    let found = connection
        .search_items(std::collections::HashMap::from([("service", service)]))
        .expect("search");
    found
        .unlocked
        .iter()
        .chain(found.locked.iter())
        .filter_map(|item| item.get_attributes().ok())
        .filter_map(|attributes| attributes.get("username").cloned())
        .collect()
}
