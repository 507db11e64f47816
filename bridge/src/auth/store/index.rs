//! The index of stored sign-ins (pure): the keys of the records of one store, newest last, at
//! most [`MAX_ENTRIES`]. A keychain cannot be listed, so `logout` finds the sign-ins of a URL,
//! and `logout --all` every sign-in, through the index. It lives in the same store as the
//! records (encrypted, or in the keychain), under [`INDEX_KEY`].

use serde::{Deserialize, Serialize};

/// The key of the index in its store. A key of [`crate::auth::identity::storage_key`] has four
/// parts separated by `|`, so it never equals this one.
pub const INDEX_KEY: &str = "mcp-bridge-vscode|index";
/// The entries of the index at most; the oldest goes first.
pub const MAX_ENTRIES: usize = 256;
const VERSION: u32 = 1;

/// The index of one store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    version: u32,
    /// Storage keys, the one saved last at the end.
    entries: Vec<String>,
}

impl Index {
    /// The index of the bytes of a store; an error for bytes that are not an index of this
    /// version.
    pub fn parse(bytes: &[u8]) -> Result<Index, &'static str> {
        let index: Index = serde_json::from_slice(bytes)
            .map_err(|_| "the index of the stored sign-ins is not valid")?;
        if index.version != VERSION {
            return Err("the index of the stored sign-ins has another version");
        }
        Ok(index)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let index = Index {
            version: VERSION,
            entries: self.entries.clone(),
        };
        serde_json::to_vec(&index).unwrap_or_default()
    }

    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    #[cfg(test)]
    pub fn contains(&self, key: &str) -> bool {
        self.entries.iter().any(|k| k == key)
    }

    /// Adds `key` as the newest entry (once); the oldest entries go beyond [`MAX_ENTRIES`].
    /// True when the index changed.
    #[cfg(test)]
    pub fn add(&mut self, key: &str) -> bool {
        self.add_evicting(key).is_some()
    }

    /// `Index::add` (the form of the tests) that returns the keys that went beyond
    /// [`MAX_ENTRIES`] (`None` when the index did not change): their sign-ins must leave the
    /// store too, or `logout --all` could not find them in a keychain.
    pub fn add_evicting(&mut self, key: &str) -> Option<Vec<String>> {
        if self.entries.last().is_some_and(|k| k == key) {
            return None;
        }
        self.entries.retain(|k| k != key);
        self.entries.push(key.to_owned());
        let extra = self.entries.len().saturating_sub(MAX_ENTRIES);
        Some(self.entries.drain(..extra).collect())
    }

    /// Removes `key`; true when it was there.
    pub fn remove(&mut self, key: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|k| k != key);
        self.entries.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_keeps_each_key_once_newest_last_and_at_most_256() {
        let mut index = Index::default();
        assert!(index.add("a"));
        assert!(index.add("b"));
        assert!(!index.add("b"), "already the newest");
        assert!(index.add("a"), "moves to the end");
        assert_eq!(index.entries(), ["b", "a"]);
        for i in 0..300 {
            index.add(&format!("k{i}"));
        }
        assert_eq!(index.entries().len(), MAX_ENTRIES);
        assert_eq!(index.entries()[0], "k44", "the oldest went first");
        assert!(!index.contains("a"));
        assert!(index.remove("k299"));
        assert!(!index.remove("k299"));
    }

    #[test]
    fn the_index_round_trips_and_refuses_other_bytes() {
        let mut index = Index::default();
        index.add("mcp-bridge-vscode|default|http://127.0.0.1:41894/callback|https://x/mcp");
        let bytes = index.to_bytes();
        let back = Index::parse(&bytes).expect("parse");
        assert_eq!(back.entries(), index.entries());
        assert!(Index::parse(b"not json").is_err());
        assert!(Index::parse(br#"{"version":2,"entries":[]}"#).is_err());
        assert!(Index::parse(br#"{"entries":[]}"#).is_err());
    }
}
