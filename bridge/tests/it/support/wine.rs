//! The Windows bridge under wine, for the `under_wine_…` tests: `ci/windows.sh` sets
//! `MCP_WINE_BRIDGE` (a wrapper that runs the Windows bridge under wine) and `MCP_WINE_TOOLS`
//! (the folder of the Windows fixture and of `stubborn-upstream.exe`). Without them each test
//! records a skip; the Linux run of the suite (ci/test.sh) leaves these tests to that step.
use std::path::{Path, PathBuf};

/// The Windows programs of ci/windows.sh.
pub struct Wine {
    /// The wrapper that runs the Windows bridge under wine.
    pub bridge: PathBuf,
    /// The folder of the Windows fixture and of the stubborn upstream.
    pub tools: PathBuf,
}

/// The Windows programs, or a recorded skip of `what`.
pub fn wine(what: &str) -> Option<Wine> {
    match (
        std::env::var_os("MCP_WINE_BRIDGE"),
        std::env::var_os("MCP_WINE_TOOLS"),
    ) {
        (Some(bridge), Some(tools)) => Some(Wine {
            bridge: bridge.into(),
            tools: tools.into(),
        }),
        _ => {
            harness::skip::skip(&format!(
                "{what}: the Windows bridge under wine (MCP_WINE_BRIDGE and MCP_WINE_TOOLS; ci/windows.sh sets them)"
            ));
            None
        }
    }
}

/// The Windows form of a path of the host under wine (drive Z: is the root).
pub fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.to_string_lossy().replace('/', "\\"))
}

/// The folder of the wine prefix that stands for `%LOCALAPPDATA%` of the user.
pub fn local_app_data() -> Option<PathBuf> {
    let prefix = PathBuf::from(std::env::var_os("WINEPREFIX")?);
    let users = prefix.join("drive_c").join("users");
    let user = std::fs::read_dir(&users)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n != "Public") && p.is_dir())?;
    Some(user.join("AppData").join("Local"))
}

/// After `initialize` was answered: `notifications/initialized`, a call of the fixture's `add`
/// (checked), then the end of stdin and exit 0.
pub fn add_then_stop(b: &mut super::Bridge) {
    b.send(&serde_json::json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let r = b.exchange(&super::call(2, "add", serde_json::json!({"a": 2, "b": 3})));
    assert!(
        r["result"]["content"].to_string().contains('5'),
        "{r}\nstderr:\n{}",
        b.stderr()
    );
    b.close_and_expect_exit_0();
}
