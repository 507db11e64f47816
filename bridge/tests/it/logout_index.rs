//! `logout` removes the sign-in from the store's index (docs/token-stores.md, "The index"), as
//! real processes: two accounts sign in through the bridge in front of
//! `bridge-fixture-server --oauth`, `logout` of one: its sign-in is gone and the other stays;
//! after the last logout the store holds nothing at all (an index of no sign-in is deleted
//! too: the token directory holds no file but the empty lock file, the keychain no credential
//! of the bridge). The same against the keychain runs inside the D-Bus session of
//! `ci/keychain-tests.sh` (`MCP_KEYCHAIN_SESSION`), and is a recorded skip elsewhere. How the
//! index itself changes is the unit test of `auth::store::indexed`.
#![cfg(unix)]

use crate::support;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::json;
use support::oauth::{bridge, free_port, initialize_signing_in, oauth_fixture, sign_in_urls};
use support::{Bridge, call, files_under};

const KEY: &str = "c0d1e2f30415263748596a7b8c9dae0fc0d1e2f30415263748596a7b8c9dae0f";

/// A state directory, one redirect port and the store of the runs.
struct Setup {
    state: tempfile::TempDir,
    port: u16,
    store: &'static str,
}

impl Setup {
    fn new(store: &'static str) -> Setup {
        Setup {
            state: tempfile::tempdir().expect("tempdir"),
            port: free_port(),
            store,
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

    /// A run of the bridge that signs in as `account` and makes one tool call.
    fn sign_in(&self, url: &str, account: &str) {
        let mut b = self.start(url, account, &[]);
        initialize_signing_in(&mut b);
        add(&mut b);
        b.close_and_expect_exit_0();
    }

    /// A run of the bridge as `account` that finds its sign-in in the store: no sign-in line.
    fn signed_in(&self, url: &str, account: &str) {
        let mut b = self.start(url, account, &["--sign-in-timeout", "5"]);
        b.initialize();
        add(&mut b);
        assert!(sign_in_urls(&b).is_empty(), "{}", b.stderr());
        b.close_and_expect_exit_0();
    }

    /// The bridge as `account` with this state directory and store, not yet initialized.
    fn start(&self, url: &str, account: &str, extra: &[&str]) -> Bridge {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut args = vec![
            "--no-browser",
            "--token-store",
            self.store,
            "--account",
            account,
        ];
        args.extend_from_slice(extra);
        bridge(url, self.port, &args, &env)
    }

    /// `logout --account <account> <url>`: the exit code and stderr.
    fn logout(&self, url: &str, account: &str) -> (i32, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"))
            .args(["logout", "--token-store", self.store, "--redirect-port"])
            .arg(self.port.to_string())
            .args(["--ca-file", &support::https_fixture::ca_file()])
            .args(["--account", account, url])
            .envs(self.env())
            .stdin(Stdio::null())
            .output()
            .expect("logout runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), stderr)
    }
}

fn add(b: &mut Bridge) {
    let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
}

/// Two sign-ins, logout of each in turn: after the first, the other account's sign-in is
/// still found and the logged-out one is not.
fn logout_updates_the_index(setup: &Setup) {
    let fixture = oauth_fixture(&[]);
    setup.sign_in(&fixture.url, "work");
    setup.sign_in(&fixture.url, "home");

    let (code, stderr) = setup.logout(&fixture.url, "home");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"home\""),
        "{stderr}"
    );
    let (code, stderr) = setup.logout(&fixture.url, "home");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout found no stored sign-in of the account \"home\""),
        "{stderr}"
    );
    setup.signed_in(&fixture.url, "work");

    let (code, stderr) = setup.logout(&fixture.url, "work");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"work\""),
        "{stderr}"
    );
}

#[test]
fn logout_removes_the_sign_in_from_the_index_of_the_file_store() {
    let setup = Setup::new("file");
    logout_updates_the_index(&setup);
    // Neither a record nor an index is left (the index of no sign-in is deleted too); only
    // the empty lock file of the index stays.
    let left: Vec<PathBuf> = files_under(&setup.token_dir())
        .into_iter()
        .filter(|p| !p.ends_with(".lock"))
        .collect();
    assert_eq!(left, Vec::<PathBuf>::new());
}

#[cfg(not(target_os = "macos"))]
#[test]
fn logout_removes_the_sign_in_from_the_index_of_the_keychain() {
    if std::env::var_os("MCP_KEYCHAIN_SESSION").is_none() {
        harness::skip::skip(
            "bridge/tests/logout_index.rs: the keychain index runs in ci/keychain-tests.sh (a D-Bus session with gnome-keyring)",
        );
        return;
    }
    let setup = Setup::new("keychain");
    logout_updates_the_index(&setup);
    // Neither a record nor the index is left.
    assert_eq!(support::keychain::users(), Vec::<String>::new());
}
