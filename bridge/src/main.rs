//! The executable `mcp-bridge-vscode`: the library's [`mcp_bridge_vscode::run_cli`] gives the
//! exit code (its module `run` maps each failure to its line and code).

fn main() -> std::process::ExitCode {
    mcp_bridge_vscode::run_cli()
}
