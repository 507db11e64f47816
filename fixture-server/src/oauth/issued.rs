//! The secrets of a sign-in reported to the secret sweep of CI (`ci/sweep.sh`,
//! docs/harness.md "The secret sweep"): with `BRIDGE_FIXTURE_ISSUED_SECRETS` naming a file,
//! every token, code and client secret that the authorization server issues, and every PKCE
//! verifier and `state` that it receives, is appended to that file as one line `<kind> <value>`.
//! The sweep then looks for these random values (and their encoded forms) in every output that
//! the tests kept. Without the variable nothing is written; stderr never gets them.
use std::io::Write;

/// The variable that names the file.
pub const VAR: &str = "BRIDGE_FIXTURE_ISSUED_SECRETS";

/// Appends `<kind> <value>` to the file of [`VAR`], if set. One `write_all` of one line on a
/// file opened for appending: the fixtures of parallel tests share the file, and each line
/// lands whole. A failure loses the line and nothing else (the sweep then misses one value,
/// which its self-test does not depend on).
pub fn report(kind: &str, value: &str) {
    let Some(path) = std::env::var_os(VAR) else {
        return;
    };
    let line = format!("{kind} {value}\n");
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = file.write_all(line.as_bytes());
    }
}
