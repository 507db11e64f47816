//! `bridge-fixture-server`: an MCP server of revision 2026-07-28 (or, with `--revision
//! 2025-11-25`, of the older stateful revision) for the tests of mcp-bridge-vscode, built on rmcp (the official Rust SDK), so that the bridge is always tested
//! against an upstream server that it did not write.
//!
//! This file maps the command line and the outcome of the run to the exit code only:
//! 0 for a normal end (end of stdin, SIGINT or SIGTERM in the HTTP mode, `--help`,
//! `--version`, the `shutdown` tool),
//! 2 for arguments that are not valid, 1 for an internal error. The `crash` tool exits with 3.
mod call;
mod cli;
mod conformance;
mod crypto;
mod discover_refusal;
mod dual;
mod envelope;
mod http;
mod jitter;
mod json;
mod listen;
mod log;
mod mrtr;
mod oauth;
mod older;
mod paging;
mod prompts;
mod resources;
mod revision;
mod server;
mod start;
mod state;
mod stdio;
mod sync;
mod tools;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match cli::parse(&args) {
        Ok(cli::Command::Serve(options)) => options,
        Ok(cli::Command::Browse(browse)) => return run_browse(&browse),
        Ok(cli::Command::Help) => {
            return print_stdout(cli::USAGE);
        }
        Ok(cli::Command::Version) => {
            return print_stdout(&format!("bridge-fixture-server {}\n", cli::VERSION));
        }
        Err(error) => return usage_error(&error),
    };
    if let Some((var, hex)) = &options.env_sha256 {
        let value = std::env::var_os(var).unwrap_or_default();
        if crypto::sha256_hex(value.as_encoded_bytes()) != *hex {
            log::error(
                "cli",
                &format!("the variable {var} does not have the SHA-256 of --env-sha256"),
            );
            return ExitCode::from(3);
        }
    }
    let bearer = match http::bearer_token(&options) {
        Ok(bearer) => bearer,
        Err(error) => {
            log::error("cli", &error);
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            log::error("main", &format!("cannot start the runtime: {error}"));
            return ExitCode::from(1);
        }
    };
    // A slow start: nothing is read or bound before it ends.
    runtime.block_on(start::wait(options.start_delay));
    let outcome = if let Some(discover) = options.embedded {
        runtime.block_on(embedded(options, discover))
    } else if options.listen.is_some() {
        let revision = options.revision;
        runtime.block_on(http::serve(options, bearer, revision))
    } else {
        let revision = options.revision;
        runtime.block_on(stdio::serve(options, revision))
    };
    // A read of stdin that never ends must not keep the process alive (R7).
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            log::error("main", &error);
            ExitCode::from(1)
        }
    }
}

/// M5, `--embedded`: the fixture through the embedded bridge. The lines of the bridge go to
/// stderr in the bridge's own format (`mcp-bridge-vscode: bridge: ...`).
async fn embedded(
    options: cli::Options,
    discover: mcp_bridge_vscode::embed::Discover,
) -> Result<(), String> {
    mcp_bridge_vscode::install_log();
    let fixture = server::Fixture::new(std::sync::Arc::new(state::State::new(options)));
    let io = mcp_bridge_vscode::embed::stdio();
    mcp_bridge_vscode::embed::serve_stdio(fixture, discover, io)
        .await
        .map(|_| ())
        .map_err(|error| format!("the embedded bridge stopped: {error}"))
}

/// Arguments that are not valid: the cause, then the usage, on stderr; exit code 2.
fn usage_error(error: &str) -> ExitCode {
    log::error("cli", error);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(cli::USAGE.as_bytes());
    ExitCode::from(2)
}

/// `--browse`: the test browser (its own exit codes: 0, 1, 2).
fn run_browse(browse: &cli::Browse) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => ExitCode::from(runtime.block_on(oauth::browse::run(browse, http::CA_PEM))),
        Err(error) => {
            log::error("main", &format!("cannot start the runtime: {error}"));
            ExitCode::from(1)
        }
    }
}

/// `--help` and `--version` write to stdout: no MCP session runs, so no frame can mix with them.
fn print_stdout(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}
