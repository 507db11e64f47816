//! The bridge's own secrets (docs/secrets.md): API keys that `mcp-bridge-vscode secret set`
//! keeps in the keychain of the host or in encrypted files, each bound at `set` to where it
//! may go: a header secret to one origin, an environment secret to one command (and
//! optionally one workspace folder). A configuration names a secret with `--secret-env` or
//! `--secret-header` (the parse is [`crate::cli::secret_refs`]); the value never stands in a
//! configuration file, on a command line or in the bridge's own environment.
//!
//! The files: [`kept`] what one stored secret holds; [`store`] the stores (a keychain service
//! and a folder of their own, which `logout` never touches) with their index of names;
//! [`value`] the value of `set` (hidden prompt, stdin or `--from-file`); [`args`] and
//! [`command`] the subcommand `secret set|list|delete`; [`resolve`] the values of a start,
//! checked against their bindings before anything answers `initialize`; [`install`] the
//! command that fixes a missing secret, in the form the user installed the bridge.

pub mod args;
pub mod command;
pub mod install;
pub mod kept;
pub mod resolve;
pub mod store;
pub mod value;

#[cfg(all(test, unix, not(target_os = "macos")))]
mod keychain_tests;
#[cfg(test)]
mod store_tests;
