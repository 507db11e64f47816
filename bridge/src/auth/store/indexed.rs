//! A [`TokenStore`] over a store of named byte entries (the keychain, the encrypted files):
//! records as JSON, and the index of stored sign-ins kept up to date on each save and delete.
//! A record or an index that does not parse is reported (one warning) and treated as absent;
//! a failed update of the index is reported and does not fail the save (the sign-in works
//! without it; only `logout` needs it, and it falls back to the server's metadata).

use std::sync::Mutex;

use super::index::{INDEX_KEY, Index};
use super::{Record, StoreError, TokenStore};
use crate::log::{self, Level};

/// A store of named byte entries.
pub trait Entries: Send + Sync {
    /// The name of the store in lines: `keychain` or `file`.
    fn what(&self) -> &'static str;
    /// The bytes under `key`; `None` when there are none, and also when they cannot be read
    /// back (a file that does not decrypt, parts that do not belong together): the store
    /// reports that itself.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Writes the entry `key` (a new one or in place of the old one).
    fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError>;
    /// True when there was an entry.
    fn remove(&self, key: &str) -> Result<bool, StoreError>;
    /// Holds other processes off the index while it is read, changed and written; `None`
    /// where the store has no such lock (a keychain).
    fn lock(&self) -> Result<Option<Box<dyn Send>>, StoreError>;
    /// After the indexed entries and the index are gone (`logout --all`): deletes the entries
    /// that are left where the store can find them without the index; the number of sign-ins
    /// deleted. The files need none: `logout --all` deletes the token directory.
    fn remove_rest(&self) -> Result<usize, StoreError> {
        Ok(0)
    }
}

/// Records and the index over [`Entries`].
pub struct Indexed<E: Entries> {
    entries: E,
    /// The threads of this process take turns at the index.
    turn: Mutex<()>,
}

impl<E: Entries> Indexed<E> {
    pub fn new(entries: E) -> Indexed<E> {
        Indexed {
            entries,
            turn: Mutex::new(()),
        }
    }

    #[cfg(test)]
    pub fn entries(&self) -> &E {
        &self.entries
    }

    /// The index; an empty one when there is none or it does not parse (reported).
    pub fn index(&self) -> Result<Index, StoreError> {
        let Some(bytes) = self.entries.get(INDEX_KEY)? else {
            return Ok(Index::default());
        };
        Ok(Index::parse(&bytes).unwrap_or_else(|why| {
            unreadable(self.entries.what(), why);
            Index::default()
        }))
    }

    /// Reads, changes and writes the index under the lock; a failure is only a warning.
    fn update(&self, change: impl FnOnce(&mut Index) -> bool) {
        let result = (|| {
            let _turn = crate::sync::lock(&self.turn);
            let _lock = self.entries.lock()?;
            let mut index = self.index()?;
            if change(&mut index) {
                if index.entries().is_empty() {
                    self.entries.remove(INDEX_KEY)?;
                } else {
                    self.entries.put(INDEX_KEY, &index.to_bytes())?;
                }
            }
            Ok::<(), StoreError>(())
        })();
        if let Err(error) = result {
            log::bridge(
                Level::Warn,
                &format!(
                    "the index of the stored sign-ins in the {} store was not updated ({error}); logout finds the sign-in through the protected resource metadata of the server",
                    self.entries.what()
                ),
            );
        }
    }
}

/// The warning for an entry that cannot be read back; it names no key (a key holds the URL,
/// whose query can hold a secret).
pub fn unreadable(what: &str, why: &str) {
    log::bridge(
        Level::Warn,
        &format!(
            "a stored sign-in in the {what} store cannot be read ({why}); the bridge treats it as absent"
        ),
    );
}

impl<E: Entries> TokenStore for Indexed<E> {
    fn load(&self, key: &str) -> Result<Option<Record>, StoreError> {
        let Some(bytes) = self.entries.get(key)? else {
            return Ok(None);
        };
        match serde_json::from_slice(&bytes) {
            Ok(record) => Ok(Some(record)),
            Err(_) => {
                unreadable(self.entries.what(), "the record is not valid");
                Ok(None)
            }
        }
    }

    fn save(&self, key: &str, record: &Record) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(record)
            .map_err(|_| StoreError("the record cannot be written".into()))?;
        self.entries.put(key, &bytes)?;
        let mut evicted = Vec::new();
        self.update(|index| {
            let added = index.add_evicting(key);
            let changed = added.is_some();
            evicted = added.unwrap_or_default();
            changed
        });
        // The oldest sign-in leaves the store with its entry of the index (docs/token-stores.md:
        // `logout --all` finds every sign-in through the index); a failed removal leaves it
        // for the store's own tools.
        for gone in evicted {
            if let Err(error) = self.entries.remove(&gone) {
                log::bridge(
                    Level::Warn,
                    &format!(
                        "the oldest stored sign-in of the {} store was not deleted ({error})",
                        self.entries.what()
                    ),
                );
            }
        }
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        let deleted = self.entries.remove(key)?;
        self.update(|index| index.remove(key));
        Ok(deleted)
    }

    fn list(&self) -> Result<Vec<String>, StoreError> {
        Ok(self.index()?.entries().to_vec())
    }

    fn clear(&self) -> Result<usize, StoreError> {
        let _turn = crate::sync::lock(&self.turn);
        let _lock = self.entries.lock()?;
        let mut deleted = 0;
        for key in self.index()?.entries() {
            if self.entries.remove(key)? {
                deleted += 1;
            }
        }
        self.entries.remove(INDEX_KEY)?;
        Ok(deleted + self.entries.remove_rest()?)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Entries in a map, for the tests of the index.
    #[derive(Default)]
    pub struct MapEntries(pub Mutex<HashMap<String, Vec<u8>>>);

    impl Entries for MapEntries {
        fn what(&self) -> &'static str {
            "test"
        }
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
            Ok(self.0.lock().expect("lock").get(key).cloned())
        }
        fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
            self.0
                .lock()
                .expect("lock")
                .insert(key.to_owned(), bytes.to_vec());
            Ok(())
        }
        fn remove(&self, key: &str) -> Result<bool, StoreError> {
            Ok(self.0.lock().expect("lock").remove(key).is_some())
        }
        fn lock(&self) -> Result<Option<Box<dyn Send>>, StoreError> {
            Ok(None)
        }
    }

    pub fn record(token: &str) -> Record {
        Record {
            issuer: "https://as.example".into(),
            resource: "https://mcp.example/mcp".into(),
            client_id: "client".into(),
            registered_secret: None,
            registered_method: None,
            access_token: token.into(),
            refresh_token: Some(format!("{token}-refresh")),
            expires_at: Some(1_900_000_000),
            scopes: vec!["mcp:read".into()],
        }
    }

    #[test]
    fn saves_and_deletes_keep_the_index_and_clear_empties_the_store() {
        let store = Indexed::new(MapEntries::default());
        store.save("k1", &record("a")).expect("save");
        store.save("k2", &record("b")).expect("save");
        store.save("k1", &record("c")).expect("save again");
        assert_eq!(store.list(), Ok(vec!["k2".to_owned(), "k1".to_owned()]));
        assert_eq!(store.load("k1"), Ok(Some(record("c"))));
        assert_eq!(store.delete("k2"), Ok(true));
        assert_eq!(store.delete("k2"), Ok(false));
        assert_eq!(store.list(), Ok(vec!["k1".to_owned()]));
        store.save("k3", &record("d")).expect("save");
        assert_eq!(store.clear(), Ok(2));
        assert_eq!(store.list(), Ok(vec![]));
        assert!(
            store.entries().0.lock().expect("lock").is_empty(),
            "nothing is left"
        );
        // The index goes with its last entry.
        store.save("k4", &record("e")).expect("save");
        store.delete("k4").expect("delete");
        assert!(store.entries().0.lock().expect("lock").is_empty());
    }

    #[test]
    fn the_sign_in_that_leaves_a_full_index_leaves_the_store() {
        let store = Indexed::new(MapEntries::default());
        for i in 0..=super::super::index::MAX_ENTRIES {
            store.save(&format!("k{i}"), &record("a")).expect("save");
        }
        assert_eq!(
            store.load("k0"),
            Ok(None),
            "the oldest is gone with its index entry"
        );
        assert_eq!(store.load("k1"), Ok(Some(record("a"))));
        assert_eq!(store.clear(), Ok(super::super::index::MAX_ENTRIES));
        assert!(
            store.entries().0.lock().expect("lock").is_empty(),
            "logout --all leaves nothing"
        );
    }

    #[test]
    fn a_record_or_an_index_that_does_not_parse_is_absent_and_nothing_else_is_lost() {
        let store = Indexed::new(MapEntries::default());
        store.save("good", &record("a")).expect("save");
        store.entries().put("bad", b"{not json").expect("put");
        assert_eq!(store.load("bad"), Ok(None));
        assert_eq!(store.load("good"), Ok(Some(record("a"))));
        store.entries().put(INDEX_KEY, b"garbage").expect("put");
        assert_eq!(store.list(), Ok(vec![]));
        // The next save writes a new index.
        store.save("next", &record("b")).expect("save");
        assert_eq!(store.list(), Ok(vec!["next".to_owned()]));
        assert_eq!(store.load("good"), Ok(Some(record("a"))));
    }
}
