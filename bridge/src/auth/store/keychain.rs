//! The keychain store (docs/token-stores.md, `--token-store keychain`): each entry
//! in credentials of the service `mcp-bridge-vscode` of the host's keychain, split in parts
//! when it is too large for one credential ([`super::parts`]).
//!
//! The user name of a credential is the start of a SHA-256 of the storage key, and `<name>/1`,
//! `<name>/2` … for the further parts: a keychain shows its user names to every program of
//! the user, and the storage key holds the URL, whose query can hold a secret.

use sha2::{Digest, Sha256};

use super::StoreError;
use super::indexed::{Entries, unreadable};
use super::parts::{self, hex};

/// The credentials of one service of a keychain, by user name.
pub trait Credentials: Send + Sync {
    fn get(&self, user: &str) -> Result<Option<Vec<u8>>, StoreError>;
    fn set(&self, user: &str, bytes: &[u8]) -> Result<(), StoreError>;
    /// True when there was a credential.
    fn delete(&self, user: &str) -> Result<bool, StoreError>;
    /// The user names of every credential of the service, also of those that no index names.
    fn users(&self) -> Result<Vec<String>, StoreError>;
}

/// Entries in a keychain.
pub struct Keychain<C: Credentials> {
    credentials: C,
    part_size: usize,
}

impl<C: Credentials> Keychain<C> {
    pub fn new(credentials: C, part_size: usize) -> Keychain<C> {
        Keychain {
            credentials,
            part_size,
        }
    }

    /// The number of parts of the entry of `user`, from its first credential; 1 when the
    /// header does not parse, `None` when there is no entry.
    fn count(&self, user: &str) -> Result<Option<usize>, StoreError> {
        Ok(self
            .credentials
            .get(user)?
            .map(|first| parts::header(&first).map_or(1, |(count, _, _)| count)))
    }
}

/// The user name of the first credential of `key`.
pub fn user_of(key: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(b"mcp-bridge-vscode keychain\0");
    hash.update(key.as_bytes());
    hex(&hash.finalize()[..20])
}

fn part(user: &str, i: usize) -> String {
    format!("{user}/{i}")
}

impl<C: Credentials> Entries for Keychain<C> {
    fn what(&self) -> &'static str {
        "keychain"
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let user = user_of(key);
        let Some(first) = self.credentials.get(&user)? else {
            return Ok(None);
        };
        let count = match parts::header(&first) {
            Ok((count, _, _)) => count,
            Err(why) => {
                unreadable("keychain", why);
                return Ok(None);
            }
        };
        let mut rest = Vec::with_capacity(count - 1);
        for i in 1..count {
            match self.credentials.get(&part(&user, i))? {
                Some(bytes) => rest.push(bytes),
                None => break,
            }
        }
        match parts::join(&first, &rest) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(why) => {
                unreadable("keychain", why);
                Ok(None)
            }
        }
    }

    fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let user = user_of(key);
        let new = parts::split(bytes, self.part_size).map_err(|why| StoreError(why.into()))?;
        let old = self.count(&user)?.unwrap_or(0);
        // The further parts first and the header last: a reader never finds a header whose
        // parts are not written yet (and the digest catches two writers at once).
        for (i, bytes) in new.iter().enumerate().skip(1) {
            self.credentials.set(&part(&user, i), bytes)?;
        }
        self.credentials.set(&user, &new[0])?;
        for i in new.len()..old {
            self.credentials.delete(&part(&user, i))?;
        }
        Ok(())
    }

    fn remove(&self, key: &str) -> Result<bool, StoreError> {
        let user = user_of(key);
        let Some(count) = self.count(&user)? else {
            return Ok(false);
        };
        let deleted = self.credentials.delete(&user)?;
        for i in 1..count {
            self.credentials.delete(&part(&user, i))?;
        }
        Ok(deleted)
    }

    /// Every credential of the service that is left: a sign-in whose entry of the index was
    /// lost (two bridges that changed the index at once), or the parts of an entry that a
    /// failed write left. The number of sign-ins (first credentials) deleted.
    fn remove_rest(&self) -> Result<usize, StoreError> {
        let mut records = 0;
        for user in self.credentials.users()? {
            if self.credentials.delete(&user)? && !user.contains('/') {
                records += 1;
            }
        }
        Ok(records)
    }

    /// A keychain has no lock for the index: two bridges that change it at the same moment
    /// can lose one entry, and `logout` then finds that sign-in through the server's metadata.
    fn lock(&self) -> Result<Option<Box<dyn Send>>, StoreError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use super::*;
    use crate::auth::store::TokenStore;
    use crate::auth::store::indexed::Indexed;
    use crate::auth::store::indexed::tests::record;

    /// A keychain in a map that refuses credentials larger than `limit`, as Windows does.
    struct Fake {
        map: Mutex<HashMap<String, Vec<u8>>>,
        limit: usize,
    }

    impl Credentials for Fake {
        fn get(&self, user: &str) -> Result<Option<Vec<u8>>, StoreError> {
            Ok(self.map.lock().expect("lock").get(user).cloned())
        }
        fn set(&self, user: &str, bytes: &[u8]) -> Result<(), StoreError> {
            if bytes.len() > self.limit {
                return Err(StoreError("too long".into()));
            }
            self.map
                .lock()
                .expect("lock")
                .insert(user.to_owned(), bytes.to_vec());
            Ok(())
        }
        fn delete(&self, user: &str) -> Result<bool, StoreError> {
            Ok(self.map.lock().expect("lock").remove(user).is_some())
        }
        fn users(&self) -> Result<Vec<String>, StoreError> {
            Ok(self.map.lock().expect("lock").keys().cloned().collect())
        }
    }

    fn keychain(limit: usize) -> Indexed<Keychain<Fake>> {
        let fake = Fake {
            map: Mutex::new(HashMap::new()),
            limit,
        };
        Indexed::new(Keychain::new(fake, limit))
    }

    fn users(store: &Indexed<Keychain<Fake>>) -> Vec<String> {
        let mut users: Vec<String> = store
            .entries()
            .credentials
            .map
            .lock()
            .expect("lock")
            .keys()
            .cloned()
            .collect();
        users.sort();
        users
    }

    #[test]
    fn a_large_record_is_stored_in_parts_and_shrinks_again() {
        let store = keychain(512);
        let key = "mcp-bridge-vscode|default|http://127.0.0.1:41894/callback|https://x/mcp";
        let large = record(&"a".repeat(3000));
        store.save(key, &large).expect("save");
        let user = user_of(key);
        let names = users(&store);
        assert!(names.contains(&format!("{user}/6")), "{names:?}");
        assert!(
            names.iter().all(|n| !n.contains("https")),
            "no URL in a name"
        );
        assert_eq!(store.load(key), Ok(Some(large)));
        // A smaller record deletes the parts it no longer needs.
        let small = record("b");
        store.save(key, &small).expect("save small");
        assert_eq!(store.load(key), Ok(Some(small)));
        assert!(
            !users(&store)
                .iter()
                .any(|n| n.starts_with(&format!("{user}/")))
        );
        assert_eq!(store.delete(key), Ok(true));
        assert_eq!(store.load(key), Ok(None));
        assert!(
            users(&store).is_empty(),
            "the index went with the last record"
        );
    }

    #[test]
    fn clear_deletes_the_credentials_that_no_index_names() {
        let store = keychain(512);
        store.save("indexed", &record("a")).expect("save");
        // A sign-in in three parts whose entry of the index was lost.
        store
            .entries()
            .put(
                "lost",
                &serde_json::to_vec(&record(&"b".repeat(1200))).expect("json"),
            )
            .expect("put");
        assert!(users(&store).len() >= 5, "{:?}", users(&store));
        assert_eq!(store.clear(), Ok(2), "the indexed one and the lost one");
        assert_eq!(users(&store), Vec::<String>::new());
    }

    #[test]
    fn a_missing_or_foreign_part_makes_the_record_absent() {
        let store = keychain(512);
        store.save("k", &record(&"a".repeat(2000))).expect("save");
        store.save("other", &record("o")).expect("save");
        let user = user_of("k");
        let fake = &store.entries().credentials;
        let part2 = fake.map.lock().expect("lock").remove(&part(&user, 2));
        assert_eq!(store.load("k"), Ok(None));
        fake.map
            .lock()
            .expect("lock")
            .insert(part(&user, 2), b"from another write".to_vec());
        assert_eq!(store.load("k"), Ok(None));
        fake.map
            .lock()
            .expect("lock")
            .insert(part(&user, 2), part2.expect("part 2"));
        assert_eq!(store.load("k"), Ok(Some(record(&"a".repeat(2000)))));
        fake.map
            .lock()
            .expect("lock")
            .insert(user.clone(), b"no header".to_vec());
        assert_eq!(store.load("k"), Ok(None));
        assert_eq!(
            store.load("other"),
            Ok(Some(record("o"))),
            "nothing else is lost"
        );
        assert_eq!(store.delete("k"), Ok(true));
    }
}
