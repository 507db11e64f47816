//! The bridge's own secrets on the real binaries (docs/secrets.md): `secret set` from stdin
//! into the encrypted files, `secret list`, the upstream command and the HTTPS fixture that
//! receive the value (compared there by its SHA-256, never printed), a secret bound elsewhere
//! and a missing secret (the error of `initialize`, exit 2, nothing started), and `logout
//! --all`, which leaves every secret. Each test has a state directory of its own and no
//! keychain (the D-Bus address points nowhere); the keychain is `secrets::keychain_tests` in
//! `ci/keychain-tests.sh`.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::support::url_upstreams::{HttpsFixture, certs_dir};
use crate::support::{self, Bridge, kept};

/// The planted value of the sweep (ci/planted-secrets.txt).
const VALUE: &str = "PLANTED-BRIDGE-SECRET-j8Rt3";

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

struct Home {
    tmp: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            tmp: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn state(&self) -> String {
        self.tmp.path().join("state").to_string_lossy().into_owned()
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("XDG_STATE_HOME", self.state()),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/bus".into(),
            ),
        ]
    }

    /// `mcp-bridge-vscode <args>` with `stdin` as its input, to its end.
    fn run(&self, args: &[&str], stdin: &str) -> Output {
        let mut command = Command::new(support::bridge_bin());
        command
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("MCP_BRIDGE_TOKEN_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in self.env() {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("the bridge runs");
        if let Some(mut input) = child.stdin.take() {
            input.write_all(stdin.as_bytes()).expect("stdin");
        }
        let out = child.wait_with_output().expect("the bridge ends");
        kept::keep_output("secret", &out);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains(VALUE), "the value in an output: {all}");
        out
    }

    /// `secret set` of the value with a line ending, from stdin; asserts exit 0.
    fn set(&self, name: &str, bind: &[&str]) {
        let mut args = vec!["secret", "set", name];
        args.extend_from_slice(bind);
        let out = self.run(&args, &format!("{VALUE}\n"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn bridge(&self, args: &[&str]) -> Bridge {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Bridge::start_with_env_removed(args, &env, &["DISPLAY", "WAYLAND_DISPLAY"])
    }
}

fn fixture() -> String {
    support::fixture_bin().to_string_lossy().into_owned()
}

/// Initialize must fail with `cause`, and the bridge exits with code 2 without a close of
/// stdin; the error's message.
fn refused(b: &mut Bridge, cause: &str) -> String {
    let discover = b.exchange(&support::request(7, "server/discover", json!({})));
    assert_eq!(discover["error"]["code"], -32601, "{discover}");
    let since = Instant::now();
    let r = b.exchange(&support::vscode_initialize(1));
    assert_eq!(r["error"]["data"]["cause"], cause, "{r}\n{}", b.stderr());
    let status = b.wait_exit(since, Duration::from_secs(5));
    assert_eq!(status.code(), Some(2), "{}", b.stderr());
    assert!(!b.stderr().contains(VALUE));
    r["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_secret_set_from_stdin_reaches_the_upstream_command_and_list_shows_no_value() {
    let home = Home::new();
    home.set("api-key", &["--command", &fixture(), "--store", "file"]);
    let list = home.run(&["secret", "list"], "");
    let table = String::from_utf8_lossy(&list.stdout);
    assert!(
        table.contains("api-key\tthe environment of the command"),
        "{table}"
    );
    assert!(table.contains("encrypted files in"), "{table}");

    // The fixture exits with code 3 unless API_KEY has the digest of the value without its
    // line ending: initialize succeeds only when the child got exactly the value.
    let digest = format!("API_KEY={}", sha256(VALUE));
    let mut b = home.bridge(&[
        "--secret-env",
        "API_KEY=api-key",
        "--",
        &fixture(),
        "--env-sha256",
        &digest,
    ]);
    b.initialize();
    b.close_and_expect_exit_0();
    assert!(!b.stderr().contains(VALUE));
}

#[test]
fn a_secret_bound_to_another_command_is_refused_and_nothing_starts() {
    let home = Home::new();
    home.set("api-key", &["--command", "other-server", "--store", "file"]);
    let mut b = home.bridge(&["--secret-env", "API_KEY=api-key", "--", &fixture()]);
    let message = refused(&mut b, "secret_elsewhere");
    assert!(message.contains("the secret api-key"), "{message}");
    assert!(
        message.contains("secret set api-key --command"),
        "{message}"
    );
    b.expect_line(|l| l.contains("it is bound to the environment of the command other-server"));
    // The task of `initialize` that connects (and writes this line first) never ran.
    assert!(!b.stderr().contains("initialize from"), "{}", b.stderr());
}

#[test]
fn a_missing_secret_fails_initialize_with_the_command_that_sets_it() {
    let home = Home::new();
    let mut b = home.bridge(&["--secret-env", "API_KEY=nowhere", "--", &fixture()]);
    let message = refused(&mut b, "secret_missing");
    let bin = support::bridge_bin().to_string_lossy().into_owned();
    assert!(
        message.contains(&format!(
            "Run {bin} secret set nowhere --command {} in a terminal",
            fixture()
        )),
        "{message}"
    );
}

#[test]
fn logout_all_leaves_every_secret() {
    let home = Home::new();
    home.set("api-key", &["--command", &fixture(), "--store", "file"]);
    let key = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
    let mut logout = Command::new(support::bridge_bin());
    logout
        .args(["logout", "--all", "--token-store", "file"])
        .env("MCP_BRIDGE_TOKEN_KEY", key)
        .stdin(Stdio::null());
    for (k, v) in home.env() {
        logout.env(k, v);
    }
    let out = logout.output().expect("logout runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = home.run(&["secret", "list"], "");
    assert!(String::from_utf8_lossy(&list.stdout).contains("api-key\t"));
    let digest = format!("API_KEY={}", sha256(VALUE));
    let mut b = home.bridge(&[
        "--secret-env",
        "API_KEY=api-key",
        "--",
        &fixture(),
        "--env-sha256",
        &digest,
    ]);
    b.initialize();
    b.close_and_expect_exit_0();
}

#[test]
fn a_header_secret_reaches_its_origin_only() {
    let home = Home::new();
    let digest = format!("Authorization={}", sha256(&format!("Bearer {VALUE}")));
    let server = HttpsFixture::start(&["--header-sha256", &digest], &[]);
    let other = HttpsFixture::start(&[], &[]);
    let origin = server.url.trim_end_matches("/mcp").to_owned();
    home.set("api", &["--origin", &origin, "--store", "file"]);
    let ca = certs_dir().join("ca.crt").to_string_lossy().into_owned();
    let header = "Authorization=Bearer {api}";
    let mut b = home.bridge(&["--ca-file", &ca, "--secret-header", header, &server.url]);
    b.initialize();
    b.close_and_expect_exit_0();

    // The other fixture has another port, thus another origin: refused, nothing sent.
    let mut b = home.bridge(&["--ca-file", &ca, "--secret-header", header, &other.url]);
    let message = refused(&mut b, "secret_elsewhere");
    assert!(message.contains(&format!("--origin {}", other.url.trim_end_matches("/mcp"))));
}
