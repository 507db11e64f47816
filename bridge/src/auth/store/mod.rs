//! Where the tokens of a sign-in are kept (docs/token-stores.md): one [`Record`] per
//! server URL, account and redirect URI, under the key of [`super::identity::storage_key`].
//!
//! The sign-in reaches a store only through [`TokenStore`], so that the keychain, the
//! encrypted files and memory slot in behind one seam. The calls are blocking (a keychain
//! answers over D-Bus or a system API); the sign-in runs them off the runtime's thread.
//!
//! - [`open()`](fn@open): `--token-store auto|keychain|file|memory` and the start-up line ([`open`](mod@open)).
//! - [`keychain`] over [`keychain_host`] (the `keyring` crate), [`file`](mod@file) (XChaCha20-Poly1305),
//!   [`MemoryStore`]; [`indexed`] keeps the [`index`] of stored sign-ins in each of the first
//!   two, because a keychain cannot be listed; [`fallback`] is `auto` after the start.
//! - [`key`]: `MCP_BRIDGE_TOKEN_KEY` and `--token-key-file`; [`paths`]: the token directory.

pub mod fallback;
pub mod file;
pub mod index;
pub mod indexed;
pub mod key;
pub mod keychain;
pub mod keychain_host;
#[cfg(all(test, unix, not(target_os = "macos")))]
mod keychain_tests;
mod memory;
mod open;
pub mod parts;
pub mod paths;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use self::memory::MemoryStore;
pub use self::open::{open, open_file, open_keychain};

/// One stored sign-in: the client of the bridge at the authorization server and its tokens.
/// A client secret of `MCP_BRIDGE_CLIENT_SECRET` is never part of it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The issuer of the authorization server that gave the tokens.
    pub issuer: String,
    /// The resource of the protected resource metadata (RFC 8707).
    pub resource: String,
    /// The client id that the bridge used (registered, given, or its metadata document).
    pub client_id: String,
    /// The secret that a dynamic registration gave the client, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered_secret: Option<String>,
    /// The `token_endpoint_auth_method` that the dynamic registration named, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered_method: Option<String>,
    /// The access token of the requests.
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The refresh token, if the server gave one.
    pub refresh_token: Option<String>,
    /// Seconds since the Unix epoch when the access token expires, if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes that were granted.
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl Record {
    /// The expiry as a time.
    pub fn expiry(&self) -> Option<SystemTime> {
        // A stored number beyond what the clock can hold is no expiry, not a panic.
        self.expires_at
            .and_then(|s| UNIX_EPOCH.checked_add(Duration::from_secs(s)))
    }

    /// The expiry as seconds since the epoch.
    pub fn seconds(at: SystemTime) -> u64 {
        at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }
}

/// `Debug` never shows a token or a secret.
impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Record")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("client_id", &self.client_id)
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// Why a store failed; the text names no token and no secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// A place for stored sign-ins.
pub trait TokenStore: Send + Sync {
    /// The record under `key`; `Ok(None)` when there is none (also for a record that does not
    /// decrypt or parse: that is reported and treated as absent).
    fn load(&self, key: &str) -> Result<Option<Record>, StoreError>;
    /// Saves (or replaces) the record under `key`.
    fn save(&self, key: &str, record: &Record) -> Result<(), StoreError>;
    /// Deletes the record under `key`; true when there was one.
    fn delete(&self, key: &str) -> Result<bool, StoreError>;
    /// The keys of the stored sign-ins in the index of the store (`logout`), oldest first.
    fn list(&self) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }
    /// Deletes every stored sign-in of the index and the index (`logout --all`); the number of
    /// records deleted.
    fn clear(&self) -> Result<usize, StoreError> {
        Ok(0)
    }
}
