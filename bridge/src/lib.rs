//! mcp-bridge-vscode: a stdio server of revision 2025-11-25 for VS Code in front of an
//! upstream server of revision 2026-07-28, or of an older revision (2024-11-05 to 2025-11-25).
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
//! The layers, lowest first, are the table of docs/architecture.md ("The layers of the
//! bridge"); each folder's module documentation lists its files (`cargo doc
//! --document-private-items -p mcp-bridge-vscode --open`). From the bottom up:
//!
//! - `errors.rs`: the one error table (one macro row per cause: `data.cause`, code, text); the
//!   bottom floor. `test_support/`: the helpers of the unit tests.
//! - `log/`: the stderr lines as tracing events, and the table of every line
//!   (docs/stderr.md); `sync.rs`: the one way to take a lock (a poisoned lock is taken as it
//!   is); `cli/`: the command line on clap; `watchdog.rs`: the 8 s watchdog (a plain thread)
//!   and the panic hook (internal error → exit 1, the group of the upstream command killed).
//! - `wire/`: the line reader, the parse with id recovery, the pass-through parse, the one
//!   writer type and its lanes, the stdio pipes.
//! - The pure rules: `translate/` (initialize, forward, shape, schema, icons, level, and the
//!   rules of an older server); `input/` (M2), the input rounds: parse, shape, check, forms,
//!   url, route, answers, complete, state, texts (their errors are rows of `errors.rs`), asked
//!   (L3: the older server's requests that wait for VS Code, and the URL elicitations it opened);
//!   `listen/` (M3), the listen stream: event filter, declared lists and gap replay,
//!   subscriptions, stream generations, backoff and stream-end decisions.
//! - `webclient/`: the HTTP client under both the sign-in and the transport (its CAs and
//!   proxies, the crypto provider, the bounded body read).
//! - `auth/` (M4, M6): the sign-in and the token stores; it imports `webclient/`, never
//!   `upstream/`. `token_source.rs` (the bearer of each request, the answer to a 401/403, the
//!   gate and counters that the front reads), `session.rs` (the tokens of one URL, refresh,
//!   step-up), `error_object.rs` (the error VS Code gets for a failed sign-in), `flow.rs` (one
//!   interactive sign-in), `consent.rs` (the gate: the browser before
//!   `notifications/initialized`, a URL elicitation after it, the cooldown; the port that
//!   `front/consent.rs` implements), `opener.rs` (the browser opener), `receiver/` (the
//!   loopback receiver, its late grace, and in `answer.rs` its answer to each request: the
//!   one-time start URL, the redirect, the pages), `challenge.rs` (`WWW-Authenticate`),
//!   `discovery.rs` and `metadata.rs` (RFC 9728 and RFC 8414 with their checks),
//!   `registration.rs` (`--client-id`, a metadata document, RFC 7591), `tokens.rs` (PKCE S256,
//!   the code and refresh grants with `resource`), `store/` (the token stores), `start.rs`
//!   (made from the command line), `identity.rs` (the names that stored sign-ins depend on).
//! - `upstream/`: the one upstream client, of every revision (its dialect is negotiated), and
//!   its transports: a child process, a URL, or an in-memory pipe.
//! - `front/`: the 2025-11-25 face for VS Code, in front of a server of any revision; its
//!   `older/` holds what faces VS Code for an older server (L1-L3).
//! - `logout/`: `mcp-bridge-vscode logout`; `secrets/`: `mcp-bridge-vscode secret` and the
//!   bridge's own secrets of a start; `embed/` (M5): the embedded bridge.
//! - `run.rs`: `run_cli`, the options, then serve, and one map of failures to their stderr
//!   line and exit code (docs/exit-codes.md); `rules_doc_tests.rs`: the unit test that reads
//!   the crate for rule ids. `main.rs`: the executable's `main`, which calls `run_cli` and
//!   returns its exit code.
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
pub(crate) mod secrets;
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
