//! `logout` of sign-ins in the file store, as the executable does it (docs/token-stores.md,
//! "logout"): the records are put in place with the store itself (in the index, or outside it
//! as an older bridge could leave them), then `logout` runs as the executable runs it, in a
//! process of its own (`test_support::child`: the child test [`child_logout`] of this test
//! binary), with its own state directory (`XDG_STATE_HOME`), the key, no display and no
//! keychain (the D-Bus session address points nowhere). The forms, lines and exit codes that
//! need no stored sign-in are the integration test `stores::logout_exit_codes_and_lines`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::auth::identity::storage_key;
use crate::auth::store::file::FileStore;
use crate::auth::store::indexed::Entries;
use crate::auth::store::key::parse as parse_token_key;
use crate::auth::store::{Record, TokenStore, open_file};
use crate::test_support::bins::fixture_bin;
use crate::test_support::child::{Ran, is_child, run_child};

const KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
const URL: &str = "https://127.0.0.1:9/mcp";
/// The access token of the records that the tests store (a planted secret of ci/sweep.sh).
const TOKEN: &str = "PLANTED-STORED-TOKEN-r2Kd5";
static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The arguments of [`child_logout`], one a line.
const ARGS_ENV: &str = "MCP_TEST_LOGOUT_ARGS";

/// The child: the executable's `logout` with the arguments of `MCP_TEST_LOGOUT_ARGS`; its exit
/// code is the process's.
#[test]
fn child_logout() {
    if !is_child("child_logout") {
        return;
    }
    crate::log::install();
    let args: Vec<OsString> = std::env::var(ARGS_ENV)
        .unwrap_or_default()
        .lines()
        .map(OsString::from)
        .collect();
    std::process::exit(super::main(&args));
}

/// How a `logout` ended.
struct Logout {
    code: i32,
    stderr: String,
}

/// A state directory of its own.
struct State(tempfile::TempDir);

impl State {
    fn new() -> State {
        State(tempfile::tempdir().expect("tempdir"))
    }

    fn dir(&self) -> PathBuf {
        self.0
            .path()
            .join("state")
            .join("mcp-bridge-vscode")
            .join("tokens")
    }

    /// `mcp-bridge-vscode logout …` (`words` start with `logout`) with this state directory
    /// and the key, without a keychain.
    fn run(&self, words: &[&str]) -> Logout {
        assert_eq!(words.first(), Some(&"logout"));
        let args = words[1..].join("\n");
        let state = self.0.path().join("state");
        let Ran { code, stderr, .. } = run_child(
            module_path!(),
            "child_logout",
            &[
                (ARGS_ENV, Some(OsStr::new(&args))),
                ("XDG_STATE_HOME", Some(state.as_os_str())),
                (
                    "DBUS_SESSION_BUS_ADDRESS",
                    Some(OsStr::new("unix:path=/nonexistent/bus")),
                ),
                ("MCP_BRIDGE_TOKEN_KEY", Some(OsStr::new(KEY))),
                ("DISPLAY", None),
                ("WAYLAND_DISPLAY", None),
            ],
        );
        assert!(!stderr.contains(KEY), "the key on stderr: {stderr}");
        assert!(
            !stderr.contains(TOKEN),
            "a stored token on stderr: {stderr}"
        );
        // The secret sweep of CI (ci/sweep.sh) also searches these; the key and the stored
        // token are among its planted secrets.
        if let Some(dir) = std::env::var_os("MCP_STDERR_DIR") {
            let name = format!(
                "logout-stored-{}-{}.stderr",
                std::process::id(),
                RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            );
            let _ = std::fs::write(Path::new(&dir).join(name), &stderr);
        }
        Logout {
            code: code.unwrap_or(-1),
            stderr,
        }
    }

    /// The file store of this state directory, as the bridge opens it.
    fn store(&self) -> Arc<dyn TokenStore> {
        open_file(&self.dir(), parse_token_key(KEY).expect("key")).expect("open")
    }

    /// A record put beside the index, as if no index had been kept.
    fn put_outside_the_index(&self, key: &str, record: &Record) {
        let raw = FileStore::open(&self.dir(), parse_token_key(KEY).expect("key")).expect("open");
        raw.put(key, &serde_json::to_vec(record).expect("json"))
            .expect("put");
    }
}

fn record(token: &str) -> Record {
    Record {
        issuer: "https://127.0.0.1:9".into(),
        resource: URL.into(),
        client_id: "client".into(),
        registered_secret: None,
        registered_method: None,
        access_token: format!("{TOKEN}-{token}"),
        refresh_token: Some(format!("{TOKEN}-refresh")),
        expires_at: None,
        scopes: vec![],
    }
}

#[test]
fn logout_of_stored_sign_ins_exit_codes_and_lines() {
    let state = State::new();
    // 0: an indexed sign-in of the account is deleted, the other account stays.
    let store = state.store();
    let default_key = storage_key(URL, "default", 41894);
    let work_key = storage_key(URL, "work", 41894);
    store.save(&default_key, &record("d")).expect("save");
    store.save(&work_key, &record("w")).expect("save");
    let ran = state.run(&["logout", "--token-store", "file", URL]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(ran.stderr.contains("mcp-bridge-vscode: vscode: info: logout deleted the stored sign-in of the account \"default\". "), "{}", ran.stderr);
    assert_eq!(store.load(&default_key), Ok(None));
    assert_eq!(store.load(&work_key), Ok(Some(record("w"))));
    // Another redirect port is another sign-in.
    let ran = state.run(&[
        "logout",
        "--account",
        "work",
        "--redirect-port",
        "41895",
        URL,
    ]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("logout found no stored sign-in of the account \"work\""),
        "{}",
        ran.stderr
    );
    // 1: a sign-in outside the index, and the metadata of the server cannot be read.
    state.put_outside_the_index(&default_key, &record("d"));
    let ran = state.run(&["logout", "--token-store", "file", URL]);
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(ran.stderr.contains("logout kept a stored sign-in in the file store: the protected resource metadata of the server cannot be read"), "{}", ran.stderr);
    assert!(store.load(&default_key).expect("load").is_some());
    // --all: every store and the token directory.
    let ran = state.run(&["logout", "--all"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("mcp-bridge-vscode: vscode: info: logout deleted 1 stored sign-ins"),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains(&format!(
            "mcp-bridge-vscode: vscode: info: deleted the token directory {}",
            state.dir().display()
        )),
        "{}",
        ran.stderr
    );
    assert!(!state.dir().exists());
}

#[test]
fn logout_deletes_a_sign_in_outside_the_index_when_the_metadata_covers_the_url() {
    let fixture = harness::https::HttpsFixture::start(&fixture_bin(), &["--oauth".into()])
        .expect("the HTTPS fixture starts");
    let state = State::new();
    let key = storage_key(&fixture.url, "default", 41894);
    state.put_outside_the_index(&key, &record("d"));
    let ca = harness::https::certs_dir().join("ca.crt");
    let ca = ca.to_str().expect("utf-8");
    let ran = state.run(&[
        "logout",
        "--token-store",
        "file",
        "--ca-file",
        ca,
        &fixture.url,
    ]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("logout deleted the stored sign-in of the account \"default\""),
        "{}",
        ran.stderr
    );
    assert_eq!(state.store().load(&key), Ok(None));
    // The authorization server (the same process) was never asked: no authorization or token
    // request in its counters (the fixture has no revocation endpoint).
    let c = counters(&fixture.url, ca);
    assert_eq!(c["authorization_requests"], 0, "{c}");
    assert_eq!(
        c["token_requests"],
        serde_json::json!({"authorization_code": 0, "refresh_token": 0, "other": 0}),
        "{c}"
    );
}

/// The counters of the fixture at `url` (`GET /fixture/counters`), over HTTPS with the CA file.
fn counters(url: &str, ca: &str) -> Value {
    crate::webclient::install_crypto_provider();
    let pem = std::fs::read(ca).expect("ca");
    let ca = reqwest::Certificate::from_pem(&pem).expect("ca pem");
    let mut url = url::Url::parse(url).expect("the fixture's URL");
    url.set_path("/fixture/counters");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .add_root_certificate(ca)
            .no_proxy()
            .build()
            .expect("client");
        let response = client.get(url).send().await.expect("request");
        let body = response.bytes().await.expect("body");
        serde_json::from_slice(&body).expect("json")
    })
}
