//! Where the secrets are kept (docs/secrets.md, docs/token-stores.md): the keychain of the
//! host under the service [`SECRETS_SERVICE`], else encrypted files in the folder
//! [`SECRETS_DIR`] beside the token directory, with a key that the bridge makes itself in
//! [`KEY_FILE`]. Never memory: a `set` that no store keeps fails.
//!
//! Both stores are the token stores' own code ([`crate::auth::store::keychain`] and
//! [`crate::auth::store::file`]) with a service and a folder of their own: `logout`,
//! `logout --all` and the index of at most 256 sign-ins never see a secret, and the secrets
//! have an index of their names here (a keychain cannot be listed).
//!
//! The key file protects against a copy of the secrets folder alone (a committed or synced
//! folder): it is a separate file, private to the user (0600). It does not protect against a
//! program that runs as the user, which can read the key as the bridge does.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::kept::Kept;
use crate::auth::store::StoreError;
use crate::auth::store::file::FileStore;
use crate::auth::store::indexed::Entries;
use crate::auth::store::key;
use crate::auth::store::keychain::{Credentials, Keychain};
use crate::auth::store::keychain_host::HostCredentials;
use crate::auth::store::parts::{PART_SIZE, hex};
use crate::auth::store::paths;

/// The keychain service of the secrets; the sign-ins have `mcp-bridge-vscode`.
pub const SECRETS_SERVICE: &str = "mcp-bridge-vscode-secrets";
/// The folder of the encrypted secrets, beside the token directory.
pub const SECRETS_DIR: &str = "secrets";
/// The key of the encrypted secrets, beside the folder (never inside it).
pub const KEY_FILE: &str = "secrets.key";
/// The key of the index of names in its store.
const INDEX_KEY: &str = "mcp-bridge-vscode-secrets|index";
const INDEX_VERSION: u32 = 1;

/// The key of a secret's entry.
fn entry_key(name: &str) -> String {
    format!("mcp-bridge-vscode-secrets|secret|{name}")
}

/// Which store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Keychain,
    File,
}

/// The secrets of one store, with the index of their names.
pub struct SecretStore {
    entries: Box<dyn Entries>,
    pub kind: Kind,
    /// Where the store is, for `secret list` and the lines: the service or the folder.
    pub place: String,
}

/// The folder and the key file of the encrypted secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePaths {
    pub dir: PathBuf,
    pub key: PathBuf,
}

impl FilePaths {
    /// Beside the token directory of this user (its environment).
    pub fn of_process() -> Result<FilePaths, StoreError> {
        let tokens = paths::token_dir()?;
        let base = tokens
            .parent()
            .ok_or_else(|| StoreError("the token directory has no parent".into()))?;
        Ok(FilePaths::under(base))
    }

    /// In `base` (the folder `mcp-bridge-vscode` of the state directory).
    pub fn under(base: &Path) -> FilePaths {
        FilePaths {
            dir: base.join(SECRETS_DIR),
            key: base.join(KEY_FILE),
        }
    }
}

#[derive(Default, Serialize, Deserialize)]
struct Names {
    version: u32,
    names: Vec<String>,
}

impl SecretStore {
    /// The keychain of the host, asked once for the index, so that a keychain that does not
    /// answer is found here.
    pub fn keychain() -> Result<SecretStore, StoreError> {
        SecretStore::keychain_of(HostCredentials::of_service(SECRETS_SERVICE))
    }

    /// A keychain of these credentials.
    pub fn keychain_of(credentials: impl Credentials + 'static) -> Result<SecretStore, StoreError> {
        let store = SecretStore {
            entries: Box::new(Keychain::new(credentials, PART_SIZE)),
            kind: Kind::Keychain,
            place: format!("the keychain of the host (service \"{SECRETS_SERVICE}\")"),
        };
        store.names()?;
        Ok(store)
    }

    /// The encrypted files of `paths`. Without a key file: `None`, or with `make_key` a new
    /// key (a `set`).
    pub fn file(paths: &FilePaths, make_key: bool) -> Result<Option<SecretStore>, StoreError> {
        if !paths.key.exists() {
            if !make_key {
                return Ok(None);
            }
            write_new_key(&paths.key)?;
        }
        let key = key::load(None, Some(&paths.key), &paths.dir)?
            .ok_or_else(|| StoreError("the key file of the secrets is empty".into()))?;
        Ok(Some(SecretStore {
            entries: Box::new(FileStore::open(&paths.dir, key)?),
            kind: Kind::File,
            place: format!(
                "encrypted files in {} (key {})",
                paths.dir.display(),
                paths.key.display()
            ),
        }))
    }

    /// The secret `name`; `None` when there is none, or when it cannot be read back (the
    /// store reports that).
    pub fn get(&self, name: &str) -> Result<Option<Kept>, StoreError> {
        Ok(self
            .entries
            .get(&entry_key(name))?
            .and_then(|bytes| Kept::parse(&bytes)))
    }

    /// Keeps (or replaces) the secret `name`, then adds it to the index.
    pub fn put(&self, name: &str, kept: &Kept) -> Result<(), StoreError> {
        self.entries.put(&entry_key(name), &kept.to_bytes())?;
        self.change_names(|names| {
            if names.iter().any(|n| n == name) {
                return false;
            }
            names.push(name.to_owned());
            names.sort();
            true
        })
    }

    /// Deletes the secret `name`; true when there was one.
    pub fn remove(&self, name: &str) -> Result<bool, StoreError> {
        let removed = self.entries.remove(&entry_key(name))?;
        self.change_names(|names| {
            let before = names.len();
            names.retain(|n| n != name);
            names.len() != before
        })?;
        Ok(removed)
    }

    /// The names of the index, sorted.
    pub fn names(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .entries
            .get(INDEX_KEY)?
            .and_then(|bytes| serde_json::from_slice::<Names>(&bytes).ok())
            .filter(|index| index.version == INDEX_VERSION)
            .map(|index| index.names)
            .unwrap_or_default())
    }

    fn change_names(
        &self,
        change: impl FnOnce(&mut Vec<String>) -> bool,
    ) -> Result<(), StoreError> {
        let _lock = self.entries.lock()?;
        let mut names = self.names()?;
        if !change(&mut names) {
            return Ok(());
        }
        if names.is_empty() {
            self.entries.remove(INDEX_KEY)?;
            return Ok(());
        }
        let index = Names {
            version: INDEX_VERSION,
            names,
        };
        let bytes = serde_json::to_vec(&index)
            .map_err(|_| StoreError("the index of the secrets cannot be written".into()))?;
        self.entries.put(INDEX_KEY, &bytes)
    }
}

/// Makes the key file: 64 random hexadecimal digits, mode 0600 (tempfile's), written whole
/// and renamed into place without replacing a key that another `set` made meanwhile.
fn write_new_key(path: &Path) -> Result<(), StoreError> {
    let failed = |e: &std::io::Error| {
        StoreError(format!(
            "cannot make the key file {}: {}",
            path.display(),
            e.kind()
        ))
    };
    let parent = path
        .parent()
        .ok_or_else(|| StoreError("the key file has no folder".into()))?;
    std::fs::create_dir_all(parent).map_err(|e| failed(&e))?;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| StoreError(format!("no random bytes for the key of the secrets: {e}")))?;
    let mut temp = tempfile::Builder::new()
        .prefix(".tmp-key-")
        .tempfile_in(parent)
        .map_err(|e| failed(&e))?;
    temp.write_all(format!("{}\n", hex(&bytes)).as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| failed(&e))?;
    match temp.persist_noclobber(path) {
        Ok(_) => Ok(()),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(failed(&e.error)),
    }
}
