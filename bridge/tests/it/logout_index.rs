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

use support::files_under;
use support::https_fixture::ca_file;
use support::oauth::oauth_fixture;
use support::stored::Stored;

const KEY: &str = "c0d1e2f30415263748596a7b8c9dae0fc0d1e2f30415263748596a7b8c9dae0f";

/// `logout --account <account> <url>`, deleted or found nothing.
fn logout(setup: &Stored, url: &str, account: &str, what: &str) {
    let ca = ca_file();
    let (code, stderr) = setup.logout(&["--ca-file", &ca, "--account", account, url]);
    assert_eq!(code, 0, "{stderr}");
    let line = match what {
        "deleted" => format!("logout deleted the stored sign-in of the account \"{account}\""),
        _ => format!("logout found no stored sign-in of the account \"{account}\""),
    };
    assert!(stderr.contains(&line), "{stderr}");
}

/// Two sign-ins, logout of each in turn: after the first, the other account's sign-in is
/// still found and the logged-out one is not. Returns the setup, after the last logout.
fn logout_updates_the_index(store: &'static str) -> Stored {
    let fixture = oauth_fixture(&[]);
    let setup = Stored::new(&fixture.url, store, KEY);
    setup.sign_in(&["--account", "work"]);
    setup.sign_in(&["--account", "home"]);
    logout(&setup, &fixture.url, "home", "deleted");
    logout(&setup, &fixture.url, "home", "nothing");
    setup.reuse(&["--account", "work"]);
    logout(&setup, &fixture.url, "work", "deleted");
    setup
}

#[test]
fn logout_removes_the_sign_in_from_the_index_of_the_file_store() {
    let setup = logout_updates_the_index("file");
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
    logout_updates_the_index("keychain");
    // Neither a record nor the index is left.
    assert_eq!(support::keychain::users(), Vec::<String>::new());
}
