//! The harness of mcp-bridge-vscode: JSONL transcripts, a scripted upstream and the VS Code /
//! Copilot client simulator. The library part is shared with the integration tests of the other
//! crates (the schema checks of every frame).
pub mod cli;
pub mod client;
pub mod crowd;
pub mod format;
pub mod invariants;
pub mod pattern;
pub mod process;
pub mod relay;
pub mod report;
pub mod runner;
pub mod schema;
pub mod session;
pub mod suite;
pub mod upstream;
pub mod vscode;
