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
pub mod front;
pub mod input;
pub mod listen;
pub mod log;
pub mod logout;
pub mod stdio_pipes;
mod sync;
#[cfg(test)]
mod test_support;
pub mod translate;
pub mod upstream;
pub mod watchdog;
pub mod wire;

mod run;
pub use run::run_cli;

/// The version of the bridge (also the fallback `serverInfo.version`, R1).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
