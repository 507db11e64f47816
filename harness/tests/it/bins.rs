//! The binaries of this build that the tests run: the harness (built by cargo for its tests),
//! and the bridge and the fixture beside it, built once by the first test that needs them.
use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

/// The harness binary under test.
pub fn harness() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-bridge-harness"))
}

/// A binary of this build, beside the harness.
fn target_bin(name: &str) -> PathBuf {
    harness()
        .parent()
        .expect("the target folder")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// The bridge and the fixture of this build, built once when they are missing (both modules
/// run them); the path of the fixture.
pub fn fixture() -> PathBuf {
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        if target_bin("mcp-bridge-vscode").is_file()
            && target_bin("bridge-fixture-server").is_file()
        {
            return;
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "-p",
                "mcp-bridge-vscode",
                "-p",
                "bridge-fixture-server",
            ])
            .status()
            .expect("cargo build");
        assert!(
            status.success(),
            "cargo build of the bridge and the fixture"
        );
    });
    target_bin("bridge-fixture-server")
}
