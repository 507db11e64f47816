//! Refresh token rotation (M4; docs/sign-in.md, docs/token-stores.md), as real processes: the
//! fixture's authorization server rotates the refresh token at each refresh and refuses (and
//! counts) a second use of a rotated one. With a token lifetime inside the bridge's refresh
//! margin, every request refreshes: each refresh must send the newest refresh token, within
//! one process and after a restart from the file store, so the fixture never sees a reuse and
//! no second sign-in happens.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::oauth::{
    bridge, counters, free_port, initialize_signing_in, oauth_fixture, sign_in_urls,
};
use support::{Bridge, call};

const KEY: &str = "31a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80";

fn add(b: &mut Bridge, id: u64) {
    let r = b.exchange(&call(id, "add", json!({"a": id, "b": 1})));
    assert_eq!(
        r["result"]["content"][0]["text"],
        (id + 1).to_string(),
        "{r}\n{}",
        b.stderr()
    );
}

#[test]
fn each_refresh_sends_the_newest_refresh_token_also_after_a_restart() {
    // 30 s: inside the refresh margin (60 s), so each request refreshes first.
    let fixture = oauth_fixture(&["--token-lifetime", "30"]);
    let state = tempfile::tempdir().expect("tempdir");
    let home = state.path().to_string_lossy().into_owned();
    let env = [
        ("XDG_STATE_HOME", home.as_str()),
        ("MCP_BRIDGE_TOKEN_KEY", KEY),
    ];
    let port = free_port();
    let args = ["--no-browser", "--token-store", "file"];

    let mut b = bridge(&fixture.url, port, &args, &env);
    initialize_signing_in(&mut b);
    for id in 2..6 {
        add(&mut b, id);
    }
    let c = counters(&fixture);
    let first = c["token_requests"]["refresh_token"].as_u64().unwrap_or(0);
    assert!(first >= 3, "a refresh per request: {c}");
    assert_eq!(
        c["refresh_reused"], 0,
        "a rotated refresh token sent again: {c}"
    );
    b.close_and_expect_exit_0();

    // A restart refreshes with the refresh token that the file store kept: the newest.
    let mut b = bridge(&fixture.url, port, &args, &env);
    b.initialize();
    add(&mut b, 6);
    add(&mut b, 7);
    assert!(sign_in_urls(&b).is_empty(), "a sign-in:\n{}", b.stderr());
    b.close_and_expect_exit_0();
    let c = counters(&fixture);
    assert!(
        c["token_requests"]["refresh_token"].as_u64() > Some(first),
        "{c}"
    );
    assert_eq!(
        c["refresh_reused"], 0,
        "a rotated refresh token sent again: {c}"
    );
    assert_eq!(c["token_requests"]["authorization_code"], 1, "{c}");
}
