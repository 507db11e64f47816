//! The memory store: the tokens live as long as the process (a sign-in at each start).

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Record, StoreError, TokenStore};

#[derive(Default)]
pub struct MemoryStore {
    records: Mutex<HashMap<String, Record>>,
}

impl MemoryStore {
    fn records(&self) -> std::sync::MutexGuard<'_, HashMap<String, Record>> {
        crate::sync::lock(&self.records)
    }
}

impl TokenStore for MemoryStore {
    fn load(&self, key: &str) -> Result<Option<Record>, StoreError> {
        Ok(self.records().get(key).cloned())
    }

    fn save(&self, key: &str, record: &Record) -> Result<(), StoreError> {
        self.records().insert(key.to_owned(), record.clone());
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self.records().remove(key).is_some())
    }

    fn list(&self) -> Result<Vec<String>, StoreError> {
        let mut keys: Vec<String> = self.records().keys().cloned().collect();
        keys.sort();
        Ok(keys)
    }

    fn clear(&self) -> Result<usize, StoreError> {
        let mut records = self.records();
        let n = records.len();
        records.clear();
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_keeps_saves_replaces_and_deletes_by_key() {
        let store = MemoryStore::default();
        let record = Record {
            issuer: "https://as.example".into(),
            resource: "https://mcp.example/mcp".into(),
            client_id: "c".into(),
            registered_secret: None,
            registered_method: None,
            access_token: "at-1".into(),
            refresh_token: Some("rt-1".into()),
            expires_at: Some(10),
            scopes: vec!["mcp:read".into()],
        };
        assert_eq!(store.load("k"), Ok(None));
        store.save("k", &record).expect("save");
        assert_eq!(store.load("k"), Ok(Some(record.clone())));
        assert_eq!(store.load("other"), Ok(None));
        assert_eq!(store.list(), Ok(vec!["k".to_owned()]));
        assert_eq!(store.delete("k"), Ok(true));
        assert_eq!(store.delete("k"), Ok(false));
        store.save("a", &record).expect("save");
        assert_eq!(store.clear(), Ok(1));
        assert_eq!(store.load("a"), Ok(None));
        assert!(
            !format!("{record:?}").contains("at-1"),
            "Debug shows no token"
        );
        assert!(!format!("{record:?}").contains("rt-1"));
    }
}
