//! `logout` removes the sign-in from the store's index (docs/token-stores.md, "The index"), as
//! real processes: two accounts sign in through the bridge in front of
//! `bridge-fixture-server --oauth`, `logout` of one, then the index is read back as the bridge
//! opens it: the logged-out key is gone, the other stays; after the last logout the token
//! directory holds no file at all (an empty index is deleted). The same against the keychain
//! runs inside the D-Bus session of `ci/keychain-tests.sh` (`MCP_KEYCHAIN_SESSION`), and is a
//! recorded skip elsewhere.
#![cfg(unix)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_bridge_vscode::testing::{
    TokenStore, open_file, open_keychain, parse_token_key, storage_key,
};
use serde_json::json;
use support::oauth::{bridge, free_port, initialize_signing_in, oauth_fixture};
use support::{Bridge, call};

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
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let args = [
            "--no-browser",
            "--token-store",
            self.store,
            "--account",
            account,
        ];
        let mut b = bridge(url, self.port, &args, &env);
        initialize_signing_in(&mut b);
        add(&mut b);
        b.close_and_expect_exit_0();
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

/// Every file under `dir` (none when it does not exist).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Two sign-ins, logout of each in turn, and the index of `store` read after each step.
fn logout_updates_the_index(setup: &Setup, store: &dyn TokenStore) {
    let fixture = oauth_fixture(&[]);
    let work = storage_key(&fixture.url, "work", setup.port);
    let home = storage_key(&fixture.url, "home", setup.port);
    setup.sign_in(&fixture.url, "work");
    setup.sign_in(&fixture.url, "home");
    let mut listed = store.list().expect("the index");
    listed.sort();
    let mut both = vec![work.clone(), home.clone()];
    both.sort();
    assert_eq!(listed, both);

    let (code, stderr) = setup.logout(&fixture.url, "home");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"home\""),
        "{stderr}"
    );
    assert_eq!(
        store.list().expect("the index"),
        std::slice::from_ref(&work)
    );
    assert_eq!(store.load(&home), Ok(None));
    assert!(store.load(&work).expect("load").is_some());

    let (code, stderr) = setup.logout(&fixture.url, "work");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(store.list().expect("the index"), Vec::<String>::new());
    assert_eq!(store.load(&work), Ok(None));
}

#[test]
fn logout_removes_the_sign_in_from_the_index_of_the_file_store() {
    let setup = Setup::new("file");
    let store = open_file(&setup.token_dir(), parse_token_key(KEY).expect("key")).expect("open");
    logout_updates_the_index(&setup, store.as_ref());
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
    let store = open_keychain().expect("the Secret Service");
    let setup = Setup::new("keychain");
    logout_updates_the_index(&setup, store.as_ref());
}
