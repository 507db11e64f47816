//! The sign-in of the executable's URL form, made at the start: the token store of
//! `--token-store` (its line, or exit 2), the client choice (the secret only from
//! `MCP_BRIDGE_CLIENT_SECRET`), and the session. A static `Authorization` header disables the
//! sign-in (docs/sign-in.md: the two exclude each other).

use std::sync::Arc;

use url::Url;

use super::flow::Settings;
use super::identity::storage_key;
use super::registration::ClientChoice;
use super::session::{Session, SessionOptions};
use super::store::{self, StoreError, TokenStore};
use super::token_source::TokenSource;
use crate::cli::{HeaderSpec, SignInOptions};
use crate::log::{self, Level};
use crate::webclient::{ClientError, ClientOptions, build_client};

/// The variable of the secret of a pre-registered confidential client.
pub const CLIENT_SECRET_VARIABLE: &str = "MCP_BRIDGE_CLIENT_SECRET";

/// Why the sign-in cannot be made (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the token store did not open: {0}")]
    Store(StoreError),
    #[error("the bridge cannot make the HTTP client of the sign-in: {0}")]
    Client(ClientError),
}

/// The sign-in of `url` as the transport and the front hold it, or `None` when a static
/// `Authorization` header replaces the sign-in. `http`: what the transport's client is made
/// of (the same CAs and proxies).
pub fn session_for(
    url: &Url,
    headers: &[HeaderSpec],
    options: &SignInOptions,
    http: &ClientOptions,
) -> Result<Option<TokenSource>, StartError> {
    if headers
        .iter()
        .any(|h| h.name().eq_ignore_ascii_case("authorization"))
    {
        return Ok(None);
    }
    let opened = store::open(options.token_store, options.token_key_file.as_deref())
        .map_err(StartError::Store)?;
    log::bridge(Level::Info, &opened.line);
    let client = build_client(http).map_err(StartError::Client)?;
    let hidden_env = headers
        .iter()
        .filter_map(|h| match h {
            HeaderSpec::Env { var, .. } => Some(var.clone()),
            HeaderSpec::Literal { .. } | HeaderSpec::Secret { .. } => None,
        })
        .collect();
    let choice = ClientChoice {
        client_id: options.client_id.clone(),
        client_issuer: options.client_issuer.clone(),
        client_secret: std::env::var(CLIENT_SECRET_VARIABLE)
            .ok()
            .filter(|s| !s.is_empty() && options.client_id.is_some())
            .map(oauth2::ClientSecret::new),
        metadata_url: options.client_metadata_url.clone(),
    };
    let session = Session::new(
        client,
        SessionOptions {
            mcp: url.clone(),
            settings: Settings {
                redirect_port: options.redirect_port,
                no_browser: options.no_browser,
                timeout: options.sign_in_timeout,
                sandbox: std::env::var_os("SANDBOX_RUNTIME").is_some_and(|v| v == "1"),
                hidden_env,
            },
            choice,
            key: storage_key(url.as_str(), &options.account, options.redirect_port),
            store: Arc::clone(&opened.store) as Arc<dyn TokenStore>,
        },
    );
    Ok(Some(TokenSource::new(Arc::new(session))))
}
