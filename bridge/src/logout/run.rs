//! What `logout` does with the stores that opened (docs/token-stores.md, "`logout`"), apart
//! from the command line and the network, so that each path is tested with plain stores.
//!
//! One URL: in each store, the index first; a sign-in that is not in the index is deleted only
//! when the protected resource metadata of the server covers the URL (asked once, and only
//! when the store holds such a record). The authorization server is never asked.
//! `--all`: every indexed sign-in of each store, then the token directory.

use std::path::Path;
use std::sync::Arc;

use crate::auth::store::{StoreError, TokenStore};
use crate::log::{self, Level};

/// A store that opened, and its name in lines (`keychain`, `file`).
pub struct Named {
    pub what: &'static str,
    pub store: Arc<dyn TokenStore>,
}

/// What the protected resource metadata of the server says about the URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Metadata {
    /// Its `resource` covers the URL.
    Covers,
    /// Its `resource` is another server.
    OtherResource,
    /// It cannot be read; the cause.
    Unreadable(String),
}

enum Outcome {
    Deleted,
    Nothing,
    Kept(String),
}

/// `logout <url>`: the exit code (0 deleted or nothing to delete, 1 a deletion failed).
pub fn one(
    stores: &[Named],
    key: &str,
    account: &str,
    metadata: &mut dyn FnMut() -> Metadata,
) -> i32 {
    let mut asked: Option<Metadata> = None;
    let mut deleted = false;
    let mut failed = false;
    for named in stores {
        let outcome = (|| -> Result<Outcome, StoreError> {
            let store = named.store.as_ref();
            let indexed = store.list()?.iter().any(|k| k == key);
            if !indexed && store.load(key)?.is_none() {
                return Ok(Outcome::Nothing);
            }
            if !indexed {
                match asked.get_or_insert_with(&mut *metadata) {
                    Metadata::Covers => {}
                    Metadata::OtherResource => {
                        return Ok(Outcome::Kept(
                            "the resource of the protected resource metadata of the server does not cover the URL".into(),
                        ));
                    }
                    Metadata::Unreadable(why) => {
                        return Ok(Outcome::Kept(format!(
                            "the protected resource metadata of the server cannot be read ({why})"
                        )));
                    }
                }
            }
            Ok(if store.delete(key)? {
                Outcome::Deleted
            } else {
                Outcome::Nothing
            })
        })();
        match outcome {
            Ok(Outcome::Deleted) => deleted = true,
            Ok(Outcome::Nothing) => {}
            Ok(Outcome::Kept(why)) => {
                failed = true;
                log::vscode(
                    Level::Err,
                    &format!(
                        "logout kept a stored sign-in in the {} store: {why}. Run logout again when the server answers, or delete the entry yourself (docs/token-stores.md, \"When logout cannot run\")",
                        named.what
                    ),
                );
            }
            Err(error) => {
                failed = true;
                log::vscode(
                    Level::Err,
                    &format!("logout failed in the {} store: {error}", named.what),
                );
            }
        }
    }
    if deleted {
        log::vscode(
            Level::Info,
            &format!(
                "logout deleted the stored sign-in of the account \"{account}\". Run MCP: Restart Server in VS Code to sign in again"
            ),
        );
    } else if !failed {
        log::vscode(
            Level::Info,
            &format!("logout found no stored sign-in of the account \"{account}\" for the URL"),
        );
    }
    i32::from(failed)
}

/// `logout --all`: the exit code.
pub fn all(stores: &[Named], token_dir: Option<&Path>) -> i32 {
    let mut failed = false;
    let mut deleted = 0;
    for named in stores {
        match named.store.clear() {
            Ok(n) => deleted += n,
            Err(error) => {
                failed = true;
                log::vscode(
                    Level::Err,
                    &format!("logout failed in the {} store: {error}", named.what),
                );
            }
        }
    }
    log::vscode(
        Level::Info,
        &format!("logout deleted {deleted} stored sign-ins"),
    );
    if let Some(dir) = token_dir.filter(|d| d.exists()) {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => log::vscode(
                Level::Info,
                &format!("deleted the token directory {}", dir.display()),
            ),
            Err(error) => {
                failed = true;
                log::vscode(
                    Level::Err,
                    &format!(
                        "cannot delete the token directory {}: {}",
                        dir.display(),
                        error.kind()
                    ),
                );
            }
        }
    }
    i32::from(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::MemoryStore;
    use crate::auth::store::indexed::tests::{MapEntries, record};
    use crate::auth::store::indexed::{Entries, Indexed};

    fn indexed() -> Arc<Indexed<MapEntries>> {
        Arc::new(Indexed::new(MapEntries::default()))
    }

    fn named(store: Arc<dyn TokenStore>) -> Vec<Named> {
        vec![Named {
            what: "test",
            store,
        }]
    }

    #[test]
    fn an_indexed_sign_in_is_deleted_without_the_metadata() {
        let store = indexed();
        store.save("k", &record("a")).expect("save");
        store.save("other", &record("b")).expect("save");
        let mut asked = 0;
        let code = one(&named(store.clone()), "k", "default", &mut || {
            asked += 1;
            Metadata::Unreadable("not asked".into())
        });
        assert_eq!((code, asked), (0, 0));
        assert_eq!(store.load("k"), Ok(None));
        assert_eq!(
            store.load("other"),
            Ok(Some(record("b"))),
            "only that sign-in"
        );
        // Nothing left to delete is success too, and the metadata is not asked.
        let code = one(&named(store.clone()), "k", "default", &mut || {
            asked += 1;
            Metadata::Covers
        });
        assert_eq!((code, asked), (0, 0));
    }

    #[test]
    fn a_sign_in_outside_the_index_goes_only_when_the_metadata_covers_the_url() {
        let store = indexed();
        // A record whose index entry was lost (two bridges changed the index at once).
        let bytes = serde_json::to_vec(&record("a")).expect("json");
        store.entries().put("k", &bytes).expect("put");
        for (answer, code, left) in [
            (Metadata::OtherResource, 1, true),
            (Metadata::Unreadable("cannot connect".into()), 1, true),
            (Metadata::Covers, 0, false),
        ] {
            let mut asked = 0;
            let got = one(&named(store.clone()), "k", "default", &mut || {
                asked += 1;
                answer.clone()
            });
            assert_eq!((got, asked), (code, 1), "{answer:?}");
            assert_eq!(store.load("k").expect("load").is_some(), left, "{answer:?}");
        }
    }

    #[test]
    fn all_clears_each_store_and_the_token_directory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tokens");
        std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
        let a = indexed();
        a.save("k1", &record("a")).expect("save");
        a.save("k2", &record("b")).expect("save");
        let b: Arc<dyn TokenStore> = Arc::new(MemoryStore::default());
        b.save("k3", &record("c")).expect("save");
        let stores = vec![
            Named {
                what: "a",
                store: a.clone(),
            },
            Named {
                what: "b",
                store: b.clone(),
            },
        ];
        assert_eq!(all(&stores, Some(&dir)), 0);
        assert_eq!(a.list(), Ok(vec![]));
        assert_eq!(b.load("k3"), Ok(None));
        assert!(!dir.exists());
        assert_eq!(all(&stores, Some(&dir)), 0, "nothing left is success");
    }
}
