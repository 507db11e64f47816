//! The encrypted file store of the secrets (docs/secrets.md, docs/token-stores.md): the key
//! that `set` makes, the round trip, the index of names, and what a copy of the folder alone
//! shows.

use super::kept::{Binding, Kept};
use super::store::{FilePaths, SecretStore};
use crate::auth::store::file::FileStore;
use crate::auth::store::indexed::Entries;
use crate::auth::store::key;

const VALUE: &str = "s3cr3t-marker-file-store";

fn kept(value: &str) -> Kept {
    Kept::new(
        Binding::Origin("https://api.example.com".into()),
        value.into(),
    )
}

#[test]
fn the_file_store_keeps_secrets_encrypted_with_a_key_of_its_own() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let paths = FilePaths::under(&tmp.path().join("mcp-bridge-vscode"));
    assert!(
        SecretStore::file(&paths, false).expect("no key").is_none(),
        "without a key file a start finds no file store"
    );
    let store = SecretStore::file(&paths, true)
        .expect("opens")
        .expect("a new key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&paths.key)
            .expect("key")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the key file is private");
        let mode = std::fs::metadata(&paths.dir)
            .expect("dir")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "the folder is private");
    }
    store.put("b-key", &kept(VALUE)).expect("put");
    store.put("a-key", &kept("other")).expect("put");
    assert_eq!(store.get("b-key"), Ok(Some(kept(VALUE))));
    assert_eq!(store.names(), Ok(vec!["a-key".into(), "b-key".into()]));
    // Setting again replaces.
    store
        .put("b-key", &kept("line 1\nline 2"))
        .expect("replace");
    let reopened = SecretStore::file(&paths, true)
        .expect("opens")
        .expect("the same key");
    assert_eq!(reopened.get("b-key"), Ok(Some(kept("line 1\nline 2"))));
    store.put("b-key", &kept(VALUE)).expect("put back");

    // No file of the folder holds the value or a name in clear.
    for entry in std::fs::read_dir(&paths.dir).expect("dir") {
        let bytes = std::fs::read(entry.expect("entry").path()).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(VALUE) && !text.contains("b-key"), "{text}");
    }
    // A copy of the folder alone (with another key) opens nothing.
    let other =
        FileStore::open(&paths.dir, key::parse(&"07".repeat(32)).expect("a key")).expect("opens");
    assert_eq!(
        other.get("mcp-bridge-vscode-secrets|secret|b-key"),
        Ok(None)
    );

    assert_eq!(store.remove("b-key"), Ok(true));
    assert_eq!(store.remove("b-key"), Ok(false));
    assert_eq!(store.get("b-key"), Ok(None));
    assert_eq!(store.names(), Ok(vec!["a-key".into()]));
}
