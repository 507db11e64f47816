//! `cargo run -p harness`: the harness of `mcp-bridge-harness` (docs/harness.md), under the
//! package name that a clone's commands use.
fn main() -> std::process::ExitCode {
    harness::cli::main()
}
