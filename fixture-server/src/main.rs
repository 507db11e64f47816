//! `bridge-fixture-server`: an MCP server of revision 2026-07-28.
fn main() {}
