//! mcp-bridge-vscode: a stdio server of revision 2025-11-25 for VS Code in front of an
//! upstream server of revision 2026-07-28.
//!
//! Layers (DESIGN.md): [`cli`] options, [`log`] stderr lines, [`wire`] line reader and
//! writer, [`translate`] the pure rules, [`input`] the pure rules of the input rounds (M2),
//! [`listen`] the pure rules of the listen stream (M3), [`upstream`] the 2026-07-28 client and
//! its transports, [`front`] the 2025-11-25 face for VS Code, [`watchdog`] the bound of the
//! stop.

pub mod auth;
pub mod cli;
pub mod embed;
pub mod errors;
pub mod front;
pub mod http;
pub mod input;
pub mod listen;
pub mod log;
pub mod logout;
mod sync;
pub mod translate;
pub mod upstream;
pub mod watchdog;
pub mod wire;

/// The stdio pipes moved into [`wire`]; this path stays for the binary and is to be removed.
pub use wire::stdio_pipes;

#[cfg(test)]
mod rules_doc_tests;

/// The version of the bridge (also the fallback `serverInfo.version`, R1).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
