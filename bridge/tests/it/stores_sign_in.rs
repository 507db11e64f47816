//! The token stores (docs/token-stores.md) with the sign-in, as real processes: the bridge with `--token-store file` in front
//! of `bridge-fixture-server --listen 127.0.0.1:0 --oauth`, the test browser on the sign-in
//! line, and `logout`. A second start reuses the stored token without a sign-in line; a token
//! that is about to expire is refreshed and the new tokens are saved; `logout` makes the next
//! start sign in again; two accounts stay apart; `logout --all`; and no access or refresh
//! token is in clear text in any file under the token directory. (The same with the keychain:
//! tests/keychain.rs, in a D-Bus session.)
#![cfg(unix)]

use crate::support;

use std::path::Path;

use support::oauth::{counters, oauth_fixture};
use support::stored::{Stored, assert_no_token};

const KEY: &str = "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677";

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
    let setup = Stored::new(&fixture.url, "file", KEY);
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
    let setup = Stored::new(&fixture.url, "file", KEY);
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
    let setup = Stored::new(&fixture.url, "file", KEY);
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
    sweep(setup.state_dir());
}

/// The contents of each file of `dir`, by name.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|entry| {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(&path).expect("read"))
        })
        .collect()
}

/// `logout --all` deletes a sign-in of the file store that its index does not name (an index
/// update lost to another bridge): here the index of before the second sign-in is put back,
/// so the second account's record is outside it, and still serves its account until then.
#[test]
fn logout_all_deletes_a_file_store_sign_in_outside_the_index() {
    let fixture = oauth_fixture(&[]);
    let setup = Stored::new(&fixture.url, "file", KEY);
    setup.sign_in(&["--account", "work"]);
    let before = files(&setup.token_dir());
    setup.sign_in(&["--account", "home"]);
    let after = files(&setup.token_dir());
    let changed: Vec<&String> = before
        .iter()
        .filter(|(name, bytes)| after.get(*name) != Some(*bytes))
        .map(|(name, _)| name)
        .collect();
    let [index] = changed[..] else {
        panic!("not one file changed by the second sign-in (the index): {changed:?}");
    };
    std::fs::write(setup.token_dir().join(index), &before[index]).expect("the old index");
    setup.reuse(&["--account", "home"]);

    let (code, stderr) = setup.logout(&["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("logout deleted 1 stored sign-ins"),
        "only the indexed one: {stderr}"
    );
    assert!(!setup.token_dir().exists(), "{stderr}");
    setup.sign_in(&["--account", "home"]);
}
