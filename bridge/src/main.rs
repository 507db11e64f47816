//! Entry point of `mcp-bridge-vscode`.
fn main() {}
