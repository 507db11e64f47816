//! What the bridge takes from an authorization server is checked before it acts on it
//! (docs/sign-in.md, "Bound to the issuer"), as real processes with the fixture's overrides
//! (`POST /fixture/overrides`): an authorization endpoint whose own query presets a
//! parameter that the bridge sets is never opened, and a token response with an `expires_in`
//! beyond what the clock holds is a token without an expiry, not a panic.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::oauth::{
    bridge, counters, free_port, initialize_signing_in, issuer_of, oauth_fixture, set_overrides,
    sign_in_urls,
};
use support::stored::add;

#[test]
fn an_authorization_endpoint_that_presets_the_redirect_uri_is_not_opened() {
    let fixture = oauth_fixture(&[]);
    let endpoint = format!(
        "{}/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback",
        issuer_of(&fixture)
    );
    set_overrides(&fixture, &json!({"authorization_endpoint": endpoint}));
    // The time limit bounds the run of a bridge that would open the URL.
    let args = ["--no-browser", "--sign-in-timeout", "2"];
    let mut b = bridge(&fixture.url, free_port(), &args, &[]);
    let r = b.exchange(&support::vscode_initialize(1));
    assert!(r.get("error").is_some(), "{r}");
    assert!(
        sign_in_urls(&b).is_empty(),
        "an authorization URL with two redirect_uri parameters was opened:\n{}",
        b.stderr()
    );
    b.expect_line(|l| l.contains("the authorization URL is not valid"));
    assert_eq!(counters(&fixture)["authorization_requests"], 0);
}

#[test]
fn a_huge_expires_in_is_a_token_without_expiry() {
    let fixture = oauth_fixture(&[]);
    set_overrides(&fixture, &json!({"expires_in": u64::MAX}));
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    add(&mut b);
    add(&mut b);
    assert!(!b.stderr().contains("panicked"), "{}", b.stderr());
    assert_eq!(
        counters(&fixture)["token_requests"]["refresh_token"],
        0,
        "a token without expiry is not refreshed"
    );
    b.close_and_expect_exit_0();
}
