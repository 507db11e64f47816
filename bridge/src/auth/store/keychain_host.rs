//! The credentials of the host's keychain through the `keyring` crate: Windows Credential
//! Manager, the macOS Keychain, or the Secret Service (over zbus) on Linux and the BSDs.
//!
//! Each call runs on a thread of its own and gets [`ANSWER_TIME`]: a keychain that hangs (a
//! D-Bus service that never answers, an unlock prompt that nobody sees) becomes an error, and
//! `auto` switches to the next store. On Linux without a display (neither `DISPLAY` nor
//! `WAYLAND_DISPLAY`), a call first asks the Secret Service whether its default collection is
//! locked, and a locked one is an error instead of an unlock prompt.

use std::sync::mpsc;
use std::time::Duration;

use super::StoreError;
use super::keychain::Credentials;
use crate::auth::identity::KEYCHAIN_SERVICE;

/// The time for one answer of the keychain.
pub const ANSWER_TIME: Duration = Duration::from_secs(25);

/// The credentials of one service of the host's keychain: `mcp-bridge-vscode` for the
/// sign-ins, another one for the secrets of `secret set` (docs/token-stores.md), so that
/// neither ever sees the other's credentials.
pub struct HostCredentials {
    answer_time: Duration,
    service: &'static str,
}

impl HostCredentials {
    /// The credentials of the sign-ins.
    pub fn new() -> HostCredentials {
        HostCredentials::of_service(KEYCHAIN_SERVICE)
    }

    /// The credentials of `service`.
    pub fn of_service(service: &'static str) -> HostCredentials {
        HostCredentials {
            answer_time: ANSWER_TIME,
            service,
        }
    }

    /// Runs `op` on a thread of its own, for at most the answer time.
    fn run<T: Send + 'static>(
        &self,
        op: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("keychain".into())
            .spawn(move || {
                let _ = tx.send(no_prompt().and_then(|()| op()));
            })
            .map_err(|e| StoreError(format!("cannot start a thread for the keychain: {e}")))?;
        rx.recv_timeout(self.answer_time).map_err(|_| {
            StoreError(format!(
                "the keychain did not answer in {} s",
                self.answer_time.as_secs()
            ))
        })?
    }

    /// Runs `op` on the credential of `user`, as [`HostCredentials::run`] does.
    fn call<T: Send + 'static>(
        &self,
        op: impl FnOnce(keyring::Entry) -> Result<T, StoreError> + Send + 'static,
        user: &str,
    ) -> Result<T, StoreError> {
        let user = user.to_owned();
        let service = self.service;
        self.run(move || op(keyring::Entry::new(service, &user).map_err(describe)?))
    }
}

impl Default for HostCredentials {
    fn default() -> HostCredentials {
        HostCredentials::new()
    }
}

impl Credentials for HostCredentials {
    fn get(&self, user: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.call(
            |entry| match entry.get_secret() {
                Ok(bytes) => Ok(Some(bytes)),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(describe(e)),
            },
            user,
        )
    }

    fn set(&self, user: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let bytes = bytes.to_vec();
        self.call(
            move |entry| entry.set_secret(&bytes).map_err(describe),
            user,
        )
    }

    fn delete(&self, user: &str) -> Result<bool, StoreError> {
        self.call(
            |entry| match entry.delete_credential() {
                Ok(()) => Ok(true),
                Err(keyring::Error::NoEntry) => Ok(false),
                Err(e) => Err(describe(e)),
            },
            user,
        )
    }

    /// A search of the host's keychain (keyring-core's, in the store that keyring set up):
    /// the Secret Service and the macOS Keychain by the attribute `service`, the Credential
    /// Manager by a pattern of the target name, which is `<user>.<service>`. Only the
    /// credentials whose service is the bridge's are kept.
    fn users(&self) -> Result<Vec<String>, StoreError> {
        let service = self.service;
        self.run(move || {
            if keyring::Entry::store_status().is_err() {
                return Err(describe(keyring::Error::NoDefaultStore));
            }
            #[cfg(windows)]
            let pattern = format!(r"\.{service}$");
            #[cfg(windows)]
            let spec = std::collections::HashMap::from([("pattern", pattern.as_str())]);
            #[cfg(not(windows))]
            let spec = std::collections::HashMap::from([("service", service)]);
            let found = keyring_core::Entry::search(&spec).map_err(describe)?;
            Ok(found
                .iter()
                .filter_map(keyring_core::Entry::get_specifiers)
                .filter(|(found, _)| found == service)
                .map(|(_, user)| user)
                .collect())
        })
    }
}

/// The text of an error of keyring. Its variants with data carry a platform error or names,
/// never a secret (the bridge reads and writes bytes, so no `BadEncoding` with the bytes).
fn describe(error: keyring::Error) -> StoreError {
    let text = match &error {
        keyring::Error::NoDefaultStore => match keyring::Entry::store_status() {
            Err(cause) => format!("the keychain of the host is not available: {cause}"),
            Ok(()) => "the keychain of the host is not available".to_owned(),
        },
        keyring::Error::NoStorageAccess(cause) => {
            format!("the keychain refused the access: {cause}")
        }
        keyring::Error::PlatformFailure(cause) => format!("the keychain failed: {cause}"),
        keyring::Error::TooLong(..) => "an entry is too long for the keychain".to_owned(),
        keyring::Error::BadEncoding(..) | keyring::Error::BadDataFormat(..) => {
            "the keychain has an entry that is not valid".to_owned()
        }
        _ => format!("the keychain failed: {error}"),
    };
    StoreError(text)
}

/// True when a graphical session can show a prompt.
fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Linux and the BSDs without a display: a locked (or missing) default collection is an
/// error, because the Secret Service would ask for a prompt that nobody can see.
#[cfg(all(unix, not(target_os = "macos")))]
fn no_prompt() -> Result<(), StoreError> {
    use secret_service::EncryptionType;
    use secret_service::blocking::SecretService;
    if has_display() {
        return Ok(());
    }
    let service = SecretService::connect(EncryptionType::Plain).map_err(|e| {
        StoreError(format!(
            "the Secret Service of the host does not answer: {e}"
        ))
    })?;
    let collection = service.get_default_collection().map_err(|_| {
        StoreError(
            "the Secret Service has no default collection, and without a display (DISPLAY, WAYLAND_DISPLAY) no prompt can make one"
                .into(),
        )
    })?;
    match collection.is_locked() {
        Ok(false) => Ok(()),
        Ok(true) => Err(StoreError(
            "the keychain is locked, and without a display (DISPLAY, WAYLAND_DISPLAY) no prompt can unlock it"
                .into(),
        )),
        Err(e) => Err(StoreError(format!("the Secret Service failed: {e}"))),
    }
}

/// Windows and macOS show their own prompts where they need one.
#[cfg(not(all(unix, not(target_os = "macos"))))]
fn no_prompt() -> Result<(), StoreError> {
    let _ = has_display;
    Ok(())
}
