//! The token stores (docs/token-stores.md) with the sign-in, as real processes: the bridge with `--token-store file` in front
//! of `bridge-fixture-server --listen 127.0.0.1:0 --oauth`, the test browser on the sign-in
//! line, and `logout`. A second start reuses the stored token without a sign-in line; a token
//! that is about to expire is refreshed and the new tokens are saved; `logout` makes the next
//! start sign in again; two accounts stay apart; `logout --all`; and no access or refresh
//! token is in clear text in any file under the token directory. (The same with the keychain:
//! tests/keychain.rs, in a D-Bus session.)
#![cfg(unix)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;
use support::oauth::{
    bridge, counters, free_port, initialize_signing_in, oauth_fixture, sign_in_urls,
};
use support::{Bridge, call};

const KEY: &str = "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677";

/// The prefixes of the tokens that the fixture issues.
const ISSUED: [&str; 3] = ["bfx_at_", "bfx_rt_", "bfx_code_"];

struct Setup {
    state: tempfile::TempDir,
    url: String,
    port: u16,
}

impl Setup {
    fn new(url: &str) -> Setup {
        Setup {
            state: tempfile::tempdir().expect("tempdir"),
            url: url.to_owned(),
            port: free_port(),
        }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "XDG_STATE_HOME",
                self.state.path().to_string_lossy().into_owned(),
            ),
            ("MCP_BRIDGE_TOKEN_KEY", KEY.to_owned()),
        ]
    }

    fn token_dir(&self) -> PathBuf {
        self.state.path().join("mcp-bridge-vscode").join("tokens")
    }

    /// The bridge with the file store of this setup and `extra` options.
    fn start(&self, extra: &[&str]) -> Bridge {
        let mut args = vec!["--no-browser", "--token-store", "file"];
        args.extend_from_slice(extra);
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let b = bridge(&self.url, self.port, &args, &env);
        b.expect_line(|l| l.contains("the tokens are in encrypted files in "));
        b
    }

    /// A start that signs in through the sign-in line, then one tool call.
    fn sign_in(&self, extra: &[&str]) {
        let mut b = self.start(extra);
        initialize_signing_in(&mut b);
        add(&mut b);
        assert_eq!(sign_in_urls(&b).len(), 1);
        b.close_and_expect_exit_0();
        assert_no_token(&b.stderr());
    }

    /// A start that must not sign in: `initialize` and a tool call with the stored token.
    fn reuse(&self, extra: &[&str]) {
        let mut args = vec!["--sign-in-timeout", "5"];
        args.extend_from_slice(extra);
        let mut b = self.start(&args);
        b.initialize();
        add(&mut b);
        assert!(
            sign_in_urls(&b).is_empty(),
            "a sign-in line:\n{}",
            b.stderr()
        );
        b.close_and_expect_exit_0();
        assert_no_token(&b.stderr());
    }

    /// `logout` with the setup's environment: the exit code and stderr.
    fn logout(&self, args: &[&str]) -> (i32, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
            .arg("logout")
            .args([
                "--token-store",
                "file",
                "--redirect-port",
                &self.port.to_string(),
            ])
            .args(args)
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .expect("logout runs");
        support::kept::keep_output("logout", &out);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains(KEY));
        (out.status.code().unwrap_or(-1), stderr)
    }
}

fn add(b: &mut Bridge) {
    let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(
        r["result"]["content"][0]["text"],
        "5",
        "{r}\n{}",
        b.stderr()
    );
}

fn assert_no_token(text: &str) {
    for prefix in ISSUED {
        assert!(!text.contains(prefix), "{prefix} in:\n{text}");
    }
}

/// The sweep of the token directory: no issued token in clear text in any file.
fn sweep(dir: &Path) -> usize {
    let mut files = 0;
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files += sweep(&path);
            continue;
        }
        let bytes = std::fs::read(&path).expect("read");
        assert_no_token(&String::from_utf8_lossy(&bytes));
        files += 1;
    }
    files
}

/// The token stores (docs/token-stores.md): the first run signs in, the second initializes without a sign-in
/// line, no file has a token in clear text, logout exits 0 and the next run signs in again,
/// and `logout --all` exits 0.
#[test]
fn the_file_store_keeps_the_sign_in_until_logout() {
    let fixture = oauth_fixture(&[]);
    let setup = Setup::new(&fixture.url);
    setup.sign_in(&[]);
    assert!(sweep(&setup.token_dir()) >= 2, "the record and the index");
    setup.reuse(&[]);
    assert_eq!(
        counters(&fixture)["token_requests"]["authorization_code"],
        1
    );

    let (code, stderr) = setup.logout(&[&fixture.url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"default\""),
        "{stderr}"
    );
    setup.sign_in(&[]);
    assert_eq!(
        counters(&fixture)["token_requests"]["authorization_code"],
        2
    );

    let (code, stderr) = setup.logout(&["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted 1 stored sign-ins"),
        "{stderr}"
    );
    assert!(!setup.token_dir().exists());
    setup.sign_in(&[]);
}

/// A stored access token that expires within the margin is refreshed at the next start, and
/// the new tokens are saved: the refresh token rotates, so a third start works only with the
/// saved one.
#[test]
fn an_expiring_token_is_refreshed_and_saved() {
    let fixture = oauth_fixture(&["--token-lifetime", "30"]);
    let setup = Setup::new(&fixture.url);
    setup.sign_in(&[]);
    setup.reuse(&[]);
    let after_second = counters(&fixture)["token_requests"]["refresh_token"]
        .as_u64()
        .unwrap_or(0);
    assert!(after_second >= 1, "{}", counters(&fixture));
    setup.reuse(&[]);
    let c = counters(&fixture);
    assert!(
        c["token_requests"]["refresh_token"].as_u64() > Some(after_second),
        "{c}"
    );
    assert_eq!(c["token_requests"]["authorization_code"], 1, "{c}");
    sweep(&setup.token_dir());
}

/// Two accounts of one URL are two stored sign-ins; logout of one keeps the other.
#[test]
fn two_accounts_stay_apart() {
    let fixture = oauth_fixture(&[]);
    let setup = Setup::new(&fixture.url);
    setup.sign_in(&["--account", "work"]);
    setup.sign_in(&["--account", "personal@example.com"]);
    setup.reuse(&["--account", "work"]);
    setup.reuse(&["--account", "personal@example.com"]);
    let (code, stderr) = setup.logout(&["--account", "personal@example.com", &fixture.url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr
            .contains("logout deleted the stored sign-in of the account \"personal@example.com\""),
        "{stderr}"
    );
    setup.reuse(&["--account", "work"]);
    let (code, stderr) = setup.logout(&["--account", "personal@example.com", &fixture.url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "logout found no stored sign-in of the account \"personal@example.com\" for the URL"
        ),
        "{stderr}"
    );
    let (code, stderr) = setup.logout(&["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted 1 stored sign-ins"),
        "{stderr}"
    );
    sweep(setup.state.path());
}
