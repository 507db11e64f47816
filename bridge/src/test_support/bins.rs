//! The binaries of this build for the unit tests that run them as processes: a unit test
//! binary is `<target>/debug/deps/<name>`, the binaries are in `<target>/debug`. The unit tests
//! do not make cargo build the binaries: `cargo build` (or a `cargo test` of the package with
//! its integration tests) does; a missing binary fails the test with that instruction.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The folder of the binaries of this build (`<target>/debug`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/debug")
        .to_path_buf()
}

fn binary(var: &str, name: &str, package: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let path = profile_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{name} is missing at {}: run cargo build -p {package}",
        path.display()
    );
    path
}

/// The bridge executable: `MCP_BRIDGE_BIN`, else `<target>/debug/mcp-bridge-vscode`.
pub fn bridge_bin() -> PathBuf {
    binary("MCP_BRIDGE_BIN", "mcp-bridge-vscode", "mcp-bridge-vscode")
}

/// The fixture server: `BRIDGE_FIXTURE_SERVER`, else `<target>/debug/bridge-fixture-server`.
pub fn fixture_bin() -> PathBuf {
    binary(
        "BRIDGE_FIXTURE_SERVER",
        "bridge-fixture-server",
        "bridge-fixture-server",
    )
}

/// What a run of the bridge gave: its exit code (-1 for a signal), stdout and stderr.
pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the bridge with `args`, stdin at its end, no display and no token key unless `env`
/// gives one (`env` is applied after the removals).
pub fn run_bridge(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Ran {
    let mut command = Command::new(bridge_bin());
    command
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("MCP_BRIDGE_TOKEN_KEY")
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().expect("the bridge runs");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
