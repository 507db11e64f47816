//! Checks that cannot run on this machine (no `../shared/spec`, no interop peer): under CI (`CI`
//! set to anything but empty, `0` or `false`) a failure; elsewhere one line `SKIPPED: <why>` on
//! the real stderr (`cargo test` does not capture it) and in the file of `MCP_SKIP_LOG`, which
//! `ci/test.sh` prints in its summary. The same rule as `harness/src/skip.rs`.
#![allow(dead_code)]

use std::io::Write;

/// True on a CI machine.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Fails under CI, else says that the check was skipped.
pub fn skip(why: &str) {
    assert!(
        !in_ci(),
        "{why}: under CI a check that cannot run is a failure, not a skip"
    );
    let line = format!("SKIPPED: {why}\n");
    // A line of its own, also after the "test name ... " of cargo test.
    let _ = std::io::stderr().write_all(format!("\n{line}").as_bytes());
    if let Some(path) = std::env::var_os("MCP_SKIP_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}
