//! `--token-store` (docs/token-stores.md): `auto` uses the keychain of the host, then
//! encrypted files when a token key is given, then memory; `keychain`, `file` and `memory` use
//! only that store, and one that does not open is an error (exit 2, `the token store did not
//! open: <cause>`). A token key that is not valid is an error also with `auto`. Each start
//! writes one line that names the store.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::fallback::{Fallback, Next};
use super::file::FileStore;
use super::indexed::Indexed;
use super::key::{self, KEY_ENV, TokenKey};
use super::keychain::Keychain;
use super::keychain_host::HostCredentials;
use super::parts::PART_SIZE;
use super::{MemoryStore, StoreError, TokenStore, paths};
use crate::auth::identity::KEYCHAIN_SERVICE;
use crate::cli::sign_in::TokenStore as StoreChoice;

/// The store that the options name, and the start-up line that names it.
pub struct Opened {
    pub store: Arc<dyn TokenStore>,
    /// The info line of the start (the store line of docs/stderr.md, scope `bridge`).
    pub line: String,
}

/// What the stores depend on outside the options: the environment and the keychain (a
/// parameter, so that the choice of `auto` is tested without a keychain).
pub struct Environment {
    /// The value of `MCP_BRIDGE_TOKEN_KEY`.
    pub key_env: Option<OsString>,
    pub token_dir: Result<PathBuf, StoreError>,
    /// Opens the keychain and asks it once (an error when it does not answer).
    pub keychain: Box<dyn Fn() -> Result<Arc<dyn TokenStore>, StoreError>>,
}

impl Environment {
    /// The environment of this process and the keychain of the host.
    pub fn of_process() -> Environment {
        Environment {
            key_env: std::env::var_os(KEY_ENV),
            token_dir: paths::token_dir(),
            keychain: Box::new(open_keychain),
        }
    }
}

/// The store of `--token-store` and `--token-key-file`.
pub fn open(choice: StoreChoice, key_file: Option<&Path>) -> Result<Opened, StoreError> {
    open_with(&Environment::of_process(), choice, key_file)
}

/// The keychain of the host, asked once for its index so that a keychain that does not
/// answer (or would need a prompt that nobody can see) is found at the start.
pub fn open_keychain() -> Result<Arc<dyn TokenStore>, StoreError> {
    let store = Arc::new(Indexed::new(Keychain::new(
        HostCredentials::new(),
        PART_SIZE,
    )));
    store.list()?;
    Ok(store)
}

/// The encrypted files in `dir`.
pub fn open_file(dir: &Path, key: TokenKey) -> Result<Arc<dyn TokenStore>, StoreError> {
    Ok(Arc::new(Indexed::new(FileStore::open(dir, key)?)))
}

/// The line of the keychain store.
pub fn keychain_line() -> String {
    format!("the tokens are in the keychain of the host (service \"{KEYCHAIN_SERVICE}\")")
}

fn file_line(dir: &Path) -> String {
    format!("the tokens are in encrypted files in {}", dir.display())
}

fn memory(line: String) -> Opened {
    Opened {
        store: Arc::new(MemoryStore::default()),
        line,
    }
}

/// [`open`] with an explicit environment.
pub fn open_with(
    env: &Environment,
    choice: StoreChoice,
    key_file: Option<&Path>,
) -> Result<Opened, StoreError> {
    match choice {
        StoreChoice::Memory => Ok(memory(
            "the tokens stay in memory (--token-store memory): each start needs a new sign-in"
                .into(),
        )),
        StoreChoice::Keychain => Ok(Opened {
            store: (env.keychain)()?,
            line: keychain_line(),
        }),
        StoreChoice::File => {
            let dir = env.token_dir.clone()?;
            let key = key::load(env.key_env.clone(), key_file, &dir)?.ok_or_else(|| {
                StoreError(format!(
                    "the file store needs a token key: set {KEY_ENV} or give --token-key-file"
                ))
            })?;
            Ok(Opened {
                store: open_file(&dir, key)?,
                line: file_line(&dir),
            })
        }
        StoreChoice::Auto => auto(env, key_file),
    }
}

fn auto(env: &Environment, key_file: Option<&Path>) -> Result<Opened, StoreError> {
    let key_given = env.key_env.as_ref().is_some_and(|v| !v.is_empty()) || key_file.is_some();
    // A key that is given must be valid, whichever store ends up with the tokens.
    let file = match &env.token_dir {
        Ok(dir) => key::load(env.key_env.clone(), key_file, dir)?.map(|k| (dir.clone(), k)),
        Err(error) if key_given => return Err(error.clone()),
        Err(_) => None,
    };
    match (env.keychain)() {
        Ok(keychain) => {
            let next: Next = Box::new(move || match &file {
                Some((dir, key)) => match open_file(dir, key.clone()) {
                    Ok(store) => (store, file_line(dir)),
                    Err(error) => (
                        Arc::new(MemoryStore::default()),
                        format!(
                            "the tokens stay in memory (the file store did not start: {error}), and the next start needs a new sign-in"
                        ),
                    ),
                },
                None => (
                    Arc::new(MemoryStore::default()),
                    "the tokens stay in memory, and the next start needs a new sign-in".into(),
                ),
            });
            Ok(Opened {
                store: Arc::new(Fallback::new(keychain, next)),
                line: keychain_line(),
            })
        }
        Err(keychain) => match file {
            Some((dir, key)) => match open_file(&dir, key) {
                Ok(store) => Ok(Opened {
                    store,
                    line: file_line(&dir),
                }),
                Err(error) => Ok(memory(format!(
                    "the tokens stay in memory: the keychain is not available ({keychain}), and the file store did not start ({error}). Each start needs a new sign-in"
                ))),
            },
            None => Ok(memory(format!(
                "the tokens stay in memory: the keychain is not available ({keychain}), and no token key is set ({KEY_ENV} or --token-key-file). Each start needs a new sign-in"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "4242424242424242424242424242424242424242424242424242424242424242";

    fn env(dir: &Path, key: Option<&str>, keychain: bool) -> Environment {
        Environment {
            key_env: key.map(OsString::from),
            token_dir: Ok(dir.to_path_buf()),
            keychain: Box::new(move || {
                if keychain {
                    Ok(Arc::new(MemoryStore::default()) as Arc<dyn TokenStore>)
                } else {
                    Err(StoreError("no Secret Service".into()))
                }
            }),
        }
    }

    fn line(env: &Environment, choice: StoreChoice) -> Result<String, StoreError> {
        open_with(env, choice, None).map(|o| o.line)
    }

    #[test]
    fn auto_takes_the_keychain_then_the_files_then_memory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tokens");
        assert_eq!(
            line(&env(&dir, Some(HEX), true), StoreChoice::Auto),
            Ok("the tokens are in the keychain of the host (service \"mcp-bridge-vscode\")".into())
        );
        assert!(!dir.exists(), "the file store opens only when it is needed");
        assert_eq!(
            line(&env(&dir, Some(HEX), false), StoreChoice::Auto),
            Ok(format!(
                "the tokens are in encrypted files in {}",
                dir.display()
            ))
        );
        assert_eq!(
            line(&env(&dir, None, false), StoreChoice::Auto),
            Ok("the tokens stay in memory: the keychain is not available (no Secret Service), and no token key is set (MCP_BRIDGE_TOKEN_KEY or --token-key-file). Each start needs a new sign-in".into())
        );
        std::fs::remove_dir(&dir).expect("rmdir");
        std::fs::write(&dir, b"").expect("a file in the way");
        let blocked = line(&env(&dir, Some(HEX), false), StoreChoice::Auto).expect("memory");
        assert!(
            blocked.contains("and the file store did not start ("),
            "{blocked}"
        );
        let bad = line(&env(&dir, Some("12"), true), StoreChoice::Auto).expect_err("bad key");
        assert!(bad.0.contains("not 64 hexadecimal digits"), "{bad}");
    }

    #[test]
    fn an_explicit_store_opens_or_says_why_not() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tokens");
        assert_eq!(
            line(&env(&dir, None, false), StoreChoice::File),
            Err(StoreError("the file store needs a token key: set MCP_BRIDGE_TOKEN_KEY or give --token-key-file".into()))
        );
        assert_eq!(
            line(&env(&dir, None, false), StoreChoice::Keychain),
            Err(StoreError("no Secret Service".into()))
        );
        assert_eq!(
            line(&env(&dir, Some(HEX), true), StoreChoice::Memory),
            Ok(
                "the tokens stay in memory (--token-store memory): each start needs a new sign-in"
                    .into()
            )
        );
        assert!(line(&env(&dir, Some(HEX), false), StoreChoice::File).is_ok());
        let unset = Environment {
            token_dir: Err(StoreError("no HOME".into())),
            ..env(&dir, Some(HEX), false)
        };
        assert_eq!(
            line(&unset, StoreChoice::File),
            Err(StoreError("no HOME".into()))
        );
    }
}
