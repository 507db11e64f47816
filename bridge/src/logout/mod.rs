//! `mcp-bridge-vscode logout` (docs/token-stores.md, "`logout`", and docs/exit-codes.md): 0 when
//! the deletion succeeded, also when there was nothing to delete; 1 when a deletion failed; 2
//! for arguments that are not valid, a `--ca-file` that the bridge cannot use, and with
//! `--token-store keychain` or `file` a store that does not open. With `auto`, logout skips a
//! store that does not open (one line), and the token key, when one is given, must be valid.
//!
//! The files: [`args`] its command line on clap; [`run`] the index, the metadata check and
//! `--all`; this one the stores and the exit codes. `run.rs` of the crate hands it the
//! arguments after `logout`.

pub mod args;
pub mod run;
#[cfg(test)]
mod stored_tests;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use url::Url;

use self::args::{Logout, Parsed, Target};
use self::run::{Metadata, Named};
use crate::auth::challenge::Challenge;
use crate::auth::failure::Failure;
use crate::auth::identity::storage_key;
use crate::auth::store::key::{self, KEY_ENV};
use crate::auth::store::{StoreError, open_file, open_keychain, paths};
use crate::cli::{TokenStore, USAGE};
use crate::log::{self, Level};
use crate::webclient::{ClientOptions, build_client, load_ca_file};

/// The stores that `logout` works on.
enum Stores {
    /// `--token-store memory`: nothing outlives a process.
    Memory,
    /// The stores that opened, and for `--all` the token directory to delete.
    Opened {
        stores: Vec<Named>,
        token_dir: Option<PathBuf>,
    },
}

/// Runs `logout` with the arguments after the word `logout`; the exit code.
pub fn main(arguments: &[OsString]) -> i32 {
    let logout = match args::parse(arguments) {
        Ok(Parsed::Run(logout)) => logout,
        Ok(Parsed::Help) => {
            let _ = std::io::stdout().write_all(USAGE.as_bytes());
            return 0;
        }
        Err(error) => {
            log::vscode(Level::Err, &error.to_string());
            let _ = std::io::stderr().write_all(USAGE.as_bytes());
            return 2;
        }
    };
    log::set_threshold(logout.log_level);
    let roots = match logout.ca_file.as_deref().map(load_ca_file).transpose() {
        Ok(roots) => roots.unwrap_or_default(),
        Err(error) => {
            log::vscode(
                Level::Err,
                &format!("cannot use the CA certificates of --ca-file: {error}"),
            );
            return 2;
        }
    };
    let (stores, token_dir) = match open_stores(&logout) {
        Ok(Stores::Memory) => {
            log::vscode(
                Level::Info,
                "the memory store keeps no sign-in after the end of the process: logout has nothing to delete",
            );
            return 0;
        }
        Ok(Stores::Opened { stores, token_dir }) => (stores, token_dir),
        Err(error) => {
            log::vscode(
                Level::Err,
                &format!("the token store did not open: {error}"),
            );
            return 2;
        }
    };
    match &logout.target {
        Target::All => run::all(&stores, token_dir.as_deref()),
        Target::Url(url) => {
            let key = storage_key(url.as_str(), &logout.account, logout.redirect_port);
            run::one(&stores, &key, &logout.account, &mut || {
                resource_metadata(url, roots.clone())
            })
        }
    }
}

/// The stores of `--token-store`; an error only where the exit code is 2.
fn open_stores(logout: &Logout) -> Result<Stores, StoreError> {
    let all = logout.target == Target::All;
    let key_env = std::env::var_os(KEY_ENV);
    let key_file = logout.token_key_file.as_deref();
    match logout.token_store {
        TokenStore::Memory => Ok(Stores::Memory),
        TokenStore::Keychain => Ok(Stores::Opened {
            stores: vec![keychain(open_keychain()?)],
            token_dir: None,
        }),
        TokenStore::File => {
            let dir = paths::token_dir()?;
            let mut stores = Vec::new();
            match key::load(key_env, key_file, &dir)? {
                Some(key) => stores.push(file(open_file(&dir, key)?)),
                // `--all` deletes the directory, which needs no key.
                None if all => {}
                None => {
                    return Err(StoreError(format!(
                        "the file store needs a token key: set {KEY_ENV} or give --token-key-file"
                    )));
                }
            }
            Ok(Stores::Opened {
                stores,
                token_dir: all.then_some(dir),
            })
        }
        TokenStore::Auto => {
            let mut stores = Vec::new();
            match open_keychain() {
                Ok(store) => stores.push(keychain(store)),
                Err(error) => skip("keychain", &error),
            }
            let dir = paths::token_dir();
            let key_given = key_env.as_ref().is_some_and(|v| !v.is_empty()) || key_file.is_some();
            match &dir {
                Ok(dir) => {
                    if let Some(key) = key::load(key_env, key_file, dir)? {
                        match open_file(dir, key) {
                            Ok(store) => stores.push(file(store)),
                            Err(error) => skip("file", &error),
                        }
                    }
                }
                Err(error) if key_given => skip("file", error),
                Err(_) => {}
            }
            Ok(Stores::Opened {
                stores,
                token_dir: dir.ok().filter(|_| all),
            })
        }
    }
}

fn keychain(store: Arc<dyn crate::auth::store::TokenStore>) -> Named {
    Named {
        what: "keychain",
        store,
    }
}

fn file(store: Arc<dyn crate::auth::store::TokenStore>) -> Named {
    Named {
        what: "file",
        store,
    }
}

fn skip(what: &str, error: &StoreError) {
    log::vscode(
        Level::Warn,
        &format!("logout skips the {what} store: {error}"),
    );
}

/// Reads the protected resource metadata of the server at `url` (never the authorization
/// server): is its `resource` the identifier of its well-known URI (RFC 9728 §3.3)?
fn resource_metadata(url: &Url, extra_roots: Vec<reqwest::Certificate>) -> Metadata {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return Metadata::Unreadable(error.to_string()),
    };
    runtime.block_on(async {
        // logout reads only the metadata of the resource: no sign-in.
        let options = ClientOptions { extra_roots };
        let client = match build_client(&options) {
            Ok(client) => client,
            Err(error) => return Metadata::Unreadable(error.to_string()),
        };
        match crate::auth::metadata::resource(&client, url, &Challenge::default()).await {
            Ok(Some(_)) => Metadata::Covers,
            // L4: a server of 2025-03-26 has no such metadata; its tokens are for its URL.
            Ok(None) => Metadata::Covers,
            // A document of another resource (RFC 9728 §3.3) is an answer (keep the sign-in),
            // not a failure.
            Err(Failure::ResourceMismatch) => Metadata::OtherResource,
            Err(failure) => Metadata::Unreadable(failure.to_string()),
        }
    })
}
