//! The fixture server for the unit tests that need a real upstream or authorization server: a
//! unit test binary is `<target>/debug/deps/<name>`, the binaries are in `<target>/debug`. A
//! unit test does not make cargo build another package: `cargo build` does (ci/test.sh builds
//! the workspace first); a missing binary fails the test with that instruction.

use std::path::PathBuf;

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

/// The fixture server: `BRIDGE_FIXTURE_SERVER`, else `<target>/debug/bridge-fixture-server`.
pub fn fixture_bin() -> PathBuf {
    binary(
        "BRIDGE_FIXTURE_SERVER",
        "bridge-fixture-server",
        "bridge-fixture-server",
    )
}
