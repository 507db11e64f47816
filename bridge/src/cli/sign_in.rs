//! The sign-in options of the URL form, parsed and checked for the sign-in that later issues
//! add. Defaults: `--redirect-port` 41894, `--account default`, `--token-store auto`,
//! `--sign-in-timeout` 300 s.

use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use super::ArgError;
use super::url_rule::check_url;

/// The default of `--redirect-port`: the port of the bridge's client ID metadata document.
pub const DEFAULT_REDIRECT_PORT: u16 = 41894;
/// The default of `--sign-in-timeout`.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// The largest `--sign-in-timeout`: one day.
pub const MAX_SIGN_IN_TIMEOUT_S: u64 = 86_400;
/// The default of `--account`.
pub const DEFAULT_ACCOUNT: &str = "default";

/// Where the bridge keeps the tokens (`--token-store`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TokenStore {
    /// The first store that works: keychain, then file, then memory.
    #[default]
    Auto,
    Keychain,
    File,
    Memory,
}

/// The sign-in options of the URL form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInOptions {
    pub client_id: Option<String>,
    pub client_issuer: Option<Url>,
    pub client_metadata_url: Option<Url>,
    pub redirect_port: u16,
    pub account: String,
    pub token_store: TokenStore,
    pub token_key_file: Option<PathBuf>,
    pub no_browser: bool,
    pub sign_in_timeout: Duration,
}

impl Default for SignInOptions {
    fn default() -> SignInOptions {
        SignInOptions {
            client_id: None,
            client_issuer: None,
            client_metadata_url: None,
            redirect_port: DEFAULT_REDIRECT_PORT,
            account: DEFAULT_ACCOUNT.to_owned(),
            token_store: TokenStore::Auto,
            token_key_file: None,
            no_browser: false,
            sign_in_timeout: DEFAULT_SIGN_IN_TIMEOUT,
        }
    }
}

impl SignInOptions {
    /// The checks between the sign-in options.
    pub(super) fn check(&self) -> Result<(), ArgError> {
        if self.client_issuer.is_some() && self.client_id.is_none() {
            return Err(ArgError::Needs("--client-issuer", "--client-id"));
        }
        if self.client_id.is_some() && self.client_metadata_url.is_some() {
            return Err(ArgError::Excluded("--client-id", "--client-metadata-url"));
        }
        if self.token_key_file.is_some()
            && matches!(self.token_store, TokenStore::Keychain | TokenStore::Memory)
        {
            return Err(ArgError::Needs(
                "--token-key-file",
                "--token-store file or auto",
            ));
        }
        Ok(())
    }
}

/// `--client-id`: not empty, visible ASCII.
pub(super) fn client_id(option: &'static str, text: &str) -> Result<String, ArgError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ArgError::InvalidValue(
            option,
            "use a client ID of visible ASCII characters",
        ));
    }
    Ok(text.to_owned())
}

/// `--client-issuer`: the URL rule of the URL form.
pub(super) fn issuer(option: &'static str, text: &str) -> Result<Url, ArgError> {
    check_url(text).map_err(|hint| ArgError::InvalidValue(option, hint))
}

/// `--client-metadata-url`: https with a path (a client ID metadata document).
pub(super) fn metadata_url(option: &'static str, text: &str) -> Result<Url, ArgError> {
    let url = check_url(text).map_err(|hint| ArgError::InvalidValue(option, hint))?;
    if url.scheme() != "https" || url.path() == "/" {
        return Err(ArgError::InvalidValue(
            option,
            "use an https URL with a path: the URL of a client ID metadata document",
        ));
    }
    Ok(url)
}

/// `--redirect-port`: 1 to 65535.
pub(crate) fn port(option: &'static str, text: &str) -> Result<u16, ArgError> {
    text.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or(ArgError::InvalidValue(option, "use a port from 1 to 65535"))
}

/// `--account`: 1 to 64 letters, digits, `-`, `.`, `_`, `@` or `+`.
pub(crate) fn account(option: &'static str, text: &str) -> Result<String, ArgError> {
    let valid = (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._@+".contains(&b));
    if !valid {
        return Err(ArgError::InvalidValue(
            option,
            "use 1 to 64 letters, digits, -, ., _, @ or +",
        ));
    }
    Ok(text.to_owned())
}

/// `--token-store`: auto, keychain, file or memory.
pub(crate) fn token_store(option: &'static str, text: &str) -> Result<TokenStore, ArgError> {
    match text {
        "auto" => Ok(TokenStore::Auto),
        "keychain" => Ok(TokenStore::Keychain),
        "file" => Ok(TokenStore::File),
        "memory" => Ok(TokenStore::Memory),
        _ => Err(ArgError::InvalidValue(
            option,
            "use auto, keychain, file or memory",
        )),
    }
}

/// `--sign-in-timeout`: whole seconds from 1 to 86400.
pub(super) fn seconds(option: &'static str, text: &str) -> Result<Duration, ArgError> {
    text.parse::<u64>()
        .ok()
        .filter(|s| (1..=MAX_SIGN_IN_TIMEOUT_S).contains(s))
        .map(Duration::from_secs)
        .ok_or(ArgError::InvalidValue(
            option,
            "use whole seconds from 1 to 86400",
        ))
}
