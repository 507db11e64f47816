//! The client authentication method of the token and refresh requests is the one that the
//! registration answer names (RFC 7591 §3.2.1), not one picked from the authorization
//! server's `token_endpoint_auth_methods_supported`: real processes, the fixture's
//! authorization server registering `client_secret_post` while it advertises
//! `client_secret_basic` first, and refusing any other method than the registered one.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::call;
use support::oauth::{
    bridge, counters, free_port, initialize_signing_in, oauth_fixture, sign_in_urls,
};

/// A 30 s token is refreshed before the first call (margin 60 s): the code exchange and the
/// refresh both go with the registered `client_secret_post`, so the call succeeds without a
/// second sign-in, and the registration's secret never reaches stderr.
#[test]
fn the_token_and_refresh_requests_use_the_registered_auth_method() {
    let fixture = oauth_fixture(&[
        "--register-auth-method",
        "client_secret_post",
        "--token-lifetime",
        "30",
    ]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    for id in 2..4 {
        let r = b.exchange(&call(id, "add", json!({"a": id, "b": 1})));
        assert_eq!(
            r["result"]["content"][0]["text"],
            (id + 1).to_string(),
            "{r}\nstderr:\n{}",
            b.stderr()
        );
    }
    let c = counters(&fixture);
    assert_eq!(c["token_requests"]["authorization_code"], 1, "{c}");
    assert!(
        c["token_requests"]["refresh_token"].as_u64() >= Some(1),
        "the refresh ran: {c}"
    );
    assert_eq!(c["registrations"].as_array().map(Vec::len), Some(1), "{c}");
    assert_eq!(sign_in_urls(&b).len(), 1, "no second sign-in");
    let stderr = b.stderr();
    assert!(
        !stderr.contains("invalid_client"),
        "no refused token request:\n{stderr}"
    );
    assert!(!stderr.contains("bfx_secret_"), "no secret on stderr");
    b.close_and_expect_exit_0();
}
