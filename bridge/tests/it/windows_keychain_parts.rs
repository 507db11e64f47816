//! A stored sign-in larger than one Windows credential, with the Windows bridge under wine
//! (support/wine.rs): the fixture issues access tokens of 4000 characters
//! (`--access-token-bytes`), so the keychain store splits the sign-in into the credential
//! `<name>` and its parts `<name>/1`, `<name>/2`, … (docs/windows.md, "Where the tokens
//! are"). A restart reads it back from the parts without a new sign-in, and `logout --all`
//! deletes every part. wine keeps its Credential Manager in the registry of the prefix, which
//! `wine reg query` lists.

use crate::support;

use std::process::{Command, Stdio};

use support::Bridge;
use support::https_fixture::HttpsFixture;
use support::oauth::{REMOVED, SIGN_IN, complete, free_port, wait_sign_in};
use support::wine::{Wine, add_then_stop, wine};

/// The length of the fixture's access tokens: twice the 2048 bytes of one credential.
const TOKEN_BYTES: &str = "4000";

/// Where wine keeps the credentials of the prefix's user.
const CREDENTIALS_KEY: &str = r"HKCU\Software\Wine\Credential Manager";

/// The bridge under wine at `url`, the keychain store, the sign-in line (no browser).
fn start(w: &Wine, url: &str, port: u16) -> Bridge {
    let port = port.to_string();
    let args = [
        "--redirect-port",
        port.as_str(),
        "--log-level",
        "debug",
        "--no-browser",
        "--token-store",
        "keychain",
        url,
    ];
    Bridge::start_program(&w.bridge, &args, &[], &REMOVED)
}

/// Calls `add` after the initialize (and the sign-in, when `sign_in`), then stops.
fn session(b: &mut Bridge, sign_in: bool) {
    b.send(&support::vscode_initialize(1));
    if sign_in {
        complete(&wait_sign_in(b, 1));
    }
    let r = b.response(1);
    assert!(r.get("result").is_some(), "{r}\nstderr:\n{}", b.stderr());
    add_then_stop(b);
}

/// The names of the bridge's credentials in the prefix's Credential Manager (the subkeys of
/// wine's registry key of the service `mcp-bridge-vscode`).
fn credentials() -> Vec<String> {
    // The prefix of ci/windows.sh (WINEPREFIX), the bridge's own.
    let out = Command::new("wine")
        .args(["reg", "query", CREDENTIALS_KEY, "/s"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("wine reg runs");
    // A subkey per credential: `…\Generic: <target>`, the target `<name>.<service>`.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().rsplit_once("\\Generic: "))
        .filter_map(|(_, target)| target.strip_suffix(".mcp-bridge-vscode"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn under_wine_a_sign_in_larger_than_one_credential_is_kept_in_parts() {
    let Some(w) = wine("a stored sign-in split in Credential Manager parts") else {
        return;
    };
    let fixture = HttpsFixture::start(
        &[
            "--plain-http",
            "--oauth",
            "--access-token-bytes",
            TOKEN_BYTES,
        ],
        &[],
    );
    let url = fixture.url.clone();
    let port = free_port();
    assert!(credentials().is_empty(), "{:?}", credentials());

    let mut first = start(&w, &url, port);
    session(&mut first, true);
    let stored = credentials();
    // The first credential and at least two parts: 4000 bytes of access token alone need two
    // credentials of 2048 bytes.
    let split = stored.iter().find(|name| {
        !name.contains('/')
            && stored.contains(&format!("{name}/1"))
            && stored.contains(&format!("{name}/2"))
    });
    assert!(
        split.is_some(),
        "no sign-in in parts <name>, <name>/1, <name>/2: {stored:?}"
    );

    // A restart joins the parts: the call works without a new sign-in.
    let mut second = start(&w, &url, port);
    session(&mut second, false);
    let stderr = second.stderr();
    assert!(!stderr.contains(SIGN_IN), "a second sign-in:\n{stderr}");

    let out = Command::new(&w.bridge)
        .args(["logout", "--all"])
        .stdin(Stdio::null())
        .output()
        .expect("logout runs under wine");
    support::kept::keep_output("logout", &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("logout deleted 1 stored sign-in"),
        "{stderr}"
    );
    assert_eq!(credentials(), Vec::<String>::new(), "parts left");
    // And the bridge's own read finds nothing: the next start signs in again.
    let mut third = start(&w, &url, port);
    third.send(&support::vscode_initialize(1));
    wait_sign_in(&third, 1);
    drop(third);
}
