//! mcp-bridge-vscode: a stdio server of revision 2025-11-25 for VS Code in front of an
//! upstream server of revision 2026-07-28.
