//! Checks that cannot run on this machine (no specification folder, no interop peer). Under CI (the
//! variable `CI` set to anything but empty, `0` or `false`) such a check is a failure; elsewhere
//! it is skipped and said: one line `SKIPPED: <why>` on the real stderr (`cargo test` does not
//! capture it) and in the file that `MCP_SKIP_LOG` names, which `ci/test.sh` prints in its
//! summary. The tests of the other crates take these helpers through their dev-dependency on the
//! harness: one rule, one copy.
use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Mutex;

/// True on a CI machine.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| ci_value(&v))
}

/// Whether a value of `CI` means a CI machine: anything but empty, `0` or `false`.
fn ci_value(v: &str) -> bool {
    !matches!(v.trim(), "" | "0" | "false")
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
    fail_in_ci(why);
    record(why);
}

/// Under CI, a check that cannot run fails the test.
fn fail_in_ci(why: &str) {
    assert!(
        !in_ci(),
        "{why}: under CI a check that cannot run is a failure, not a skip"
    );
}

/// In a test: `skip`, with the line said once per process however often the check is reached
/// (a schema check of every frame, in every test of one test binary).
pub fn skip_once(why: &str) {
    static SAID: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    fail_in_ci(why);
    let first = SAID
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(why.to_string());
    if first {
        record(why);
    }
}

#[cfg(test)]
mod tests {
    use super::ci_value;

    #[test]
    fn ci_values() {
        // Only the parsing: the environment of the test run is left alone.
        assert!(ci_value("true") && ci_value("1") && ci_value("yes"));
        assert!(!ci_value("false") && !ci_value("") && !ci_value(" 0 "));
    }
}
