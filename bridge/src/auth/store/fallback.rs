//! `--token-store auto` after a working start: the keychain first, and when it stops to answer
//! (the user locked it, the Secret Service went away), the next store for the rest of the
//! process, with one warning (docs/token-stores.md).

use std::sync::{Arc, OnceLock};

use super::{Record, StoreError, TokenStore};
use crate::log::{self, Level};

/// Makes the next store and the text that names it (`the tokens are in …`).
pub type Next = Box<dyn Fn() -> (Arc<dyn TokenStore>, String) + Send + Sync>;

/// The keychain, then the next store.
pub struct Fallback {
    first: Arc<dyn TokenStore>,
    make_next: Next,
    next: OnceLock<Arc<dyn TokenStore>>,
}

impl Fallback {
    pub fn new(first: Arc<dyn TokenStore>, make_next: Next) -> Fallback {
        Fallback {
            first,
            make_next,
            next: OnceLock::new(),
        }
    }

    /// `op` on the keychain until it fails once, then on the next store.
    fn run<T>(
        &self,
        op: impl Fn(&dyn TokenStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.next.get().is_none() {
            match op(self.first.as_ref()) {
                Ok(value) => return Ok(value),
                Err(error) => {
                    // Two threads can fail at once; only the one that sets the next store
                    // writes the warning.
                    self.next.get_or_init(|| {
                        let (store, description) = (self.make_next)();
                        log::bridge(
                            Level::Warn,
                            &format!(
                                "the keychain stopped to answer ({error}). For the rest of the process, {description}"
                            ),
                        );
                        store
                    });
                }
            }
        }
        match self.next.get() {
            Some(next) => op(next.as_ref()),
            None => Err(StoreError("the token store is not available".into())),
        }
    }
}

impl TokenStore for Fallback {
    fn load(&self, key: &str) -> Result<Option<Record>, StoreError> {
        self.run(|s| s.load(key))
    }

    fn save(&self, key: &str, record: &Record) -> Result<(), StoreError> {
        self.run(|s| s.save(key, record))
    }

    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.run(|s| s.delete(key))
    }

    fn list(&self) -> Result<Vec<String>, StoreError> {
        self.run(|s| s.list())
    }

    fn clear(&self) -> Result<usize, StoreError> {
        self.run(|s| s.clear())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;
    use crate::auth::store::MemoryStore;
    use crate::auth::store::indexed::tests::record;

    /// A keychain that answers until it is locked.
    #[derive(Default)]
    struct Lockable {
        inner: MemoryStore,
        locked: AtomicBool,
    }

    impl TokenStore for Lockable {
        fn load(&self, key: &str) -> Result<Option<Record>, StoreError> {
            if self.locked.load(Ordering::SeqCst) {
                return Err(StoreError("locked".into()));
            }
            self.inner.load(key)
        }
        fn save(&self, key: &str, record: &Record) -> Result<(), StoreError> {
            if self.locked.load(Ordering::SeqCst) {
                return Err(StoreError("locked".into()));
            }
            self.inner.save(key, record)
        }
        fn delete(&self, key: &str) -> Result<bool, StoreError> {
            self.inner.delete(key)
        }
    }

    #[test]
    fn a_keychain_that_stops_to_answer_gives_way_to_the_next_store_for_good() {
        let keychain = Arc::new(Lockable::default());
        let made = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&made);
        let next: Arc<dyn TokenStore> = Arc::new(MemoryStore::default());
        let next_for_make = Arc::clone(&next);
        let store = Fallback::new(
            keychain.clone(),
            Box::new(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                (
                    Arc::clone(&next_for_make),
                    "the tokens stay in memory".into(),
                )
            }),
        );
        store.save("k", &record("a")).expect("save in the keychain");
        assert_eq!(keychain.inner.load("k"), Ok(Some(record("a"))));
        keychain.locked.store(true, Ordering::SeqCst);
        assert_eq!(store.load("k"), Ok(None), "the next store has nothing yet");
        store
            .save("k", &record("b"))
            .expect("save in the next store");
        assert_eq!(next.load("k"), Ok(Some(record("b"))));
        // The keychain answers again, but the process stays with the next store.
        keychain.locked.store(false, Ordering::SeqCst);
        assert_eq!(store.load("k"), Ok(Some(record("b"))));
        assert_eq!(made.load(Ordering::SeqCst), 1, "one switch, one warning");
    }
}
