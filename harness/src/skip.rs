//! Checks that cannot run on this machine (no `../shared/spec`, no interop peer). Under CI (the
//! variable `CI` set to anything but empty, `0` or `false`) such a check is a failure; elsewhere
//! it is skipped and said: one line `SKIPPED: <why>` on the real stderr (`cargo test` does not
//! capture it) and in the file that `MCP_SKIP_LOG` names, which `ci/test.sh` prints in its
//! summary. `bridge/tests/support/skip.rs` and `fixture-server/tests/support/mod.rs` follow the
//! same rule.
use std::io::Write;

/// True on a CI machine.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Says that a check was skipped (never fails).
pub fn record(why: &str) {
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

/// In a test: fails under CI, else records the skip.
pub fn skip(why: &str) {
    assert!(
        !in_ci(),
        "{why}: under CI a check that cannot run is a failure, not a skip"
    );
    record(why);
}

#[cfg(test)]
mod tests {
    #[test]
    fn ci_values() {
        // Only the parsing: the environment of the test run is left alone.
        let ci = |v: &str| !matches!(v.trim(), "" | "0" | "false");
        assert!(ci("true") && ci("1") && !ci("false") && !ci("") && !ci("0"));
    }
}
