//! The Secret Service of the session of `ci/keychain-tests.sh`, read and locked directly (not
//! through the bridge): what the keychain holds after the bridge's runs.
#![cfg(all(unix, not(target_os = "macos")))]

use secret_service::EncryptionType;
use secret_service::blocking::SecretService;

/// The service of the bridge's credentials in the keychain (the docs' "Token stores").
pub const SERVICE: &str = "mcp-bridge-vscode";

/// The user names of the credentials of the service.
pub fn users() -> Vec<String> {
    let service = SecretService::connect(EncryptionType::Plain).expect("connect");
    let found = service
        .search_items(std::collections::HashMap::from([("service", SERVICE)]))
        .expect("search");
    found
        .unlocked
        .iter()
        .chain(found.locked.iter())
        .filter_map(|item| item.get_attributes().ok())
        .filter_map(|attributes| attributes.get("username").cloned())
        .collect()
}

/// Writes a credential of the service under `user` into the default collection, as the
/// bridge's keychain store writes one (the attributes `service` and `username`), but with no
/// entry in the bridge's index.
pub fn plant(user: &str, secret: &[u8]) {
    let service = SecretService::connect(EncryptionType::Plain).expect("connect");
    service
        .get_default_collection()
        .expect("default collection")
        .create_item(
            "planted by the test",
            std::collections::HashMap::from([("service", SERVICE), ("username", user)]),
            secret,
            true,
            "application/octet-stream",
        )
        .expect("create the item");
}

/// Locks the default collection.
pub fn lock_default_collection() {
    let service = SecretService::connect(EncryptionType::Plain).expect("connect");
    service
        .get_default_collection()
        .expect("default collection")
        .lock()
        .expect("lock");
}
