//! mcp-bridge-vscode: a stdio server of revision 2025-11-25 for VS Code in front of an
//! upstream server of revision 2026-07-28.
//!
//! # The public API
//!
//! - [`embed`]: a server serves VS Code (through the bridge, in its own process) and every
//!   client of revision 2026-07-28 (through its own transport) on one stdin/stdout. Two entry
//!   points: [`embed::serve_stdio_with`] for any server reached through an in-memory
//!   [`embed::Pipe`] and, with the cargo feature `rmcp`, `embed::serve_stdio` for an rmcp
//!   `ServerHandler`; their [`embed::Options`] (with [`embed::Discover`]), what they return
//!   ([`embed::Served`]), and [`embed::stdio`], the input and output of the process.
//! - [`install_log`] and [`LineLayer`]: the bridge's log lines on stderr (R7), as the global
//!   subscriber or as a layer of the server's own subscriber.
//! - [`install_crypto_provider`]: the TLS provider of the URL form, for a process that makes
//!   its own rustls configurations.
//! - [`run_cli`]: the executable `mcp-bridge-vscode` (its `main`), and [`VERSION`].
//!
//! ```
//! use mcp_bridge_vscode::embed::{Discover, Options};
//!
//! // VS Code's answers to `server/discover` come from the bridge, not from the server.
//! let mut options = Options::from(Discover::Refuse);
//! options.max_in_flight = 16;
//! assert_eq!(options.discover, Discover::Refuse);
//! ```
//!
//! # The layout (inside the crate)
//!
//! From the bottom up: `errors` (the one error table), `log` (the stderr lines), `sync`, `cli`
//! (the options), `wire` (the line reader and writer, the stdio pipes), the pure rules
//! `translate`, `input` (the input rounds) and `listen` (the listen stream), `webclient` (the HTTP
//! client under both the sign-in and the transport), `auth` (the sign-in and the token stores),
//! `upstream` (the 2026-07-28 client and its transports: a child process or a URL), `front`
//! (the 2025-11-25 face for VS Code), `watchdog` (the bound of the stop), `logout`, then
//! `embed` and `run` (the executable).
#![deny(missing_docs)]
// Every type that a public signature shows can be named by a user (bridge/README.md,
// "Embedding the bridge"): a public type of a private module there is an error.
#![deny(unnameable_types)]

pub(crate) mod auth;
pub(crate) mod cli;
pub mod embed;
pub(crate) mod errors;
pub(crate) mod front;
pub(crate) mod input;
pub(crate) mod listen;
pub(crate) mod log;
pub(crate) mod logout;
mod run;
mod sync;
#[cfg(test)]
mod test_support;
pub(crate) mod translate;
pub(crate) mod upstream;
pub(crate) mod watchdog;
pub(crate) mod webclient;
pub(crate) mod wire;

pub use log::LineLayer;
pub use run::run_cli;

#[cfg(test)]
mod rules_doc_tests;

/// The version of the bridge (also the fallback `serverInfo.version`, R1).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Installs the global tracing subscriber that writes the bridge's log lines on stderr in
/// the line format of R7 (`mcp-bridge-vscode: <scope>: <level>: <text>`); false when a global
/// subscriber was already set. A server with its own subscriber adds a [`LineLayer`] instead.
pub fn install_log() -> bool {
    log::install()
}

/// Installs rustls' ring provider as the process default (once; later calls do nothing): the
/// URL form's TLS, and any client of the same process that builds a rustls configuration.
pub fn install_crypto_provider() {
    webclient::install_crypto_provider();
}
