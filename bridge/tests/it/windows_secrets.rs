//! The bridge's own secrets in the Windows Credential Manager (docs/secrets.md,
//! docs/token-stores.md), with the Windows bridge under wine (support/wine.rs): `secret set`
//! from stdin into the keychain (service `mcp-bridge-vscode-secrets`), `secret list` with the
//! name and never the value, the Windows fixture as the upstream child that receives the value
//! (compared there by its SHA-256, `--env-sha256`), `logout --all`, which leaves the secret,
//! and `secret delete`, after which a start fails `initialize` with `secret_missing`.
//!
//! One test function: the steps share the one Credential Manager of the wine prefix, which
//! `windows_sign_in` also uses (for the sign-ins' service, which this test never writes).

use crate::support;

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use sha2::{Digest, Sha256};
use support::Bridge;
use support::kept;
use support::wine::{Wine, add_then_stop, windows_path, wine};

/// The planted value of the sweep (ci/planted-secrets.txt).
const VALUE: &str = "PLANTED-BRIDGE-SECRET-j8Rt3";
/// The key of the file store, for `logout --all` (which also clears the token directory).
const KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
/// The place of the secrets in the Credential Manager, as the bridge names it.
const PLACE: &str = "the keychain of the host (service \"mcp-bridge-vscode-secrets\")";

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `mcp-bridge-vscode <args>` under wine with `stdin` as its input, to its end; asserts that
/// neither output holds the value.
fn run(w: &Wine, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(&w.bridge)
        .args(args)
        .env("MCP_BRIDGE_TOKEN_KEY", KEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Windows bridge runs under wine");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("stdin");
    }
    let out = child.wait_with_output().expect("the bridge ends");
    kept::keep_output("secret", &out);
    let all = text(&out);
    assert!(!all.contains(VALUE), "the value in an output: {all}");
    out
}

/// Stdout, then stderr.
fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `secret list`'s table.
fn list(w: &Wine) -> String {
    let out = run(w, &["secret", "list"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The bridge under wine in front of the Windows fixture, which exits with code 3 unless
/// `API_KEY` has the digest of the value without its line ending.
fn start(w: &Wine, fixture: &str) -> Bridge {
    let digest = format!("API_KEY={}", sha256(VALUE));
    Bridge::start_program(
        &w.bridge,
        &[
            "--secret-env",
            "API_KEY=api-key",
            "--",
            fixture,
            "--env-sha256",
            &digest,
        ],
        &[],
        &[],
    )
}

/// A start that must get the value: `initialize` succeeds only when the child got exactly it.
fn child_receives_the_value(w: &Wine, fixture: &str) {
    let mut b = start(w, fixture);
    b.initialize();
    add_then_stop(&mut b);
    assert!(!b.stderr().contains(VALUE));
}

#[test]
fn under_wine_a_secret_in_the_credential_manager_reaches_the_child_and_outlives_logout_all() {
    let Some(w) = wine("the secrets in the Windows Credential Manager") else {
        return;
    };
    // The Windows path on both sides: `set` binds the real path of the program, and the start
    // compares the real path of its command with it.
    let fixture = windows_path(&w.tools.join("bridge-fixture-server.exe"));

    let out = run(
        &w,
        &[
            "secret",
            "set",
            "api-key",
            "--command",
            &fixture,
            "--store",
            "keychain",
        ],
        &format!("{VALUE}\r\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("the secret api-key is kept in {PLACE}")),
        "{}",
        text(&out)
    );

    // The name, where it may go and where it is kept; never the value (run asserts that).
    let table = list(&w);
    let row = table
        .lines()
        .find(|l| l.starts_with("api-key\t"))
        .unwrap_or_else(|| panic!("no row of api-key:\n{table}"));
    assert!(
        row.contains("\tthe environment of the command ") && row.ends_with(&format!("\t{PLACE}")),
        "{row}"
    );

    child_receives_the_value(&w, &fixture);

    // logout --all clears the sign-ins' service of the Credential Manager and the token
    // directory: the secret stays, and a start still gets it.
    let out = run(&w, &["logout", "--all"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        list(&w).contains("api-key\t"),
        "logout --all took the secret"
    );
    child_receives_the_value(&w, &fixture);

    // secret delete: gone from the list, and a start fails `initialize` with the cause.
    let out = run(&w, &["secret", "delete", "api-key"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("deleted the secret api-key from {PLACE}")),
        "{}",
        text(&out)
    );
    let table = list(&w);
    assert!(!table.contains("api-key\t"), "{table}");
    let mut b = start(&w, &fixture);
    let since = Instant::now();
    let r = b.exchange(&support::vscode_initialize(1));
    assert_eq!(
        r["error"]["data"]["cause"],
        "secret_missing",
        "{r}\n{}",
        b.stderr()
    );
    let status = b.wait_exit(since, support::EXIT_BOUND);
    assert_eq!(status.code(), Some(2), "{}", b.stderr());
}
