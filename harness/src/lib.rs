//! The harness of mcp-bridge-vscode: JSONL transcripts, a scripted upstream and the VS Code /
//! Copilot client simulator. The library part is shared with the integration tests of the other
//! crates (the schema checks of every frame).
pub mod schema;
