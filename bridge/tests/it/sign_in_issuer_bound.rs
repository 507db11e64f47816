//! The sign-in is bound to its authorization server (docs/sign-in.md, "Bound to the issuer"),
//! as real processes: two fixtures, each its own authorization server, and the fixture's
//! overrides (`POST /fixture/overrides`) that change its metadata while it runs.
//!
//! - A stored refresh token goes only to the issuer that issued it: when the protected
//!   resource metadata names another authorization server at the next start, that server
//!   gets no refresh request: the still valid access token serves, and once it is refused
//!   the bridge signs in anew at the new server.
//! - Mix-up (RFC 9207): an authorization server whose metadata sends the browser to another
//!   server's authorization endpoint, without `iss`, never receives that server's code or the
//!   PKCE verifier at its token endpoint.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::oauth::{
    SIGN_IN, bridge, browse, counters, free_port, issuer_of, oauth_fixture, set_overrides,
    sign_in_urls, wait_sign_in,
};
use support::stored::{Stored, add};
use support::{EXCHANGE, vscode_initialize};

const KEY: &str = "5a6b7c8d9e0f11223344556677889900aabbccddeeff00112233445566778899";

/// The pre-registered public client of every fixture (fixture-server/README.md).
const PUBLIC: &str = "bridge-fixture-public";

#[test]
fn a_stored_refresh_token_never_goes_to_another_authorization_server() {
    // 30 s: inside the refresh margin (60 s), so every request of the next start asks for a
    // refresh first, while the stored access token stays valid at the MCP server.
    let first = oauth_fixture(&["--token-lifetime", "30"]);
    let second = oauth_fixture(&[]);
    let setup = Stored::new(&first.url, "file", KEY);
    setup.sign_in(&[]);

    set_overrides(
        &first,
        &json!({"authorization_servers": [issuer_of(&second)]}),
    );
    let mut b = setup.start(&[]);
    b.initialize();
    add(&mut b);
    b.close_and_expect_exit_0();
    let c = counters(&second);
    assert_eq!(
        c["token_requests"]["refresh_token"],
        0,
        "the refresh token of the first server went to the second: {c}\n{}",
        b.stderr()
    );
    b.expect_line(|l| {
        l.contains("names another authorization server than the one of the stored sign-in")
    });
    assert_eq!(
        counters(&first)["token_requests"]["authorization_code"],
        1,
        "one sign-in, at the first server"
    );

    // Once the stored access token is refused too, the bridge signs in anew at the server
    // that the metadata names now, still without the refresh token.
    set_overrides(
        &first,
        &json!({"authorization_servers": [issuer_of(&second)], "refuse_access_tokens": true}),
    );
    let mut b = setup.start(&[]);
    b.send(&vscode_initialize(1));
    let url = wait_sign_in(&b, 1);
    assert!(
        url.starts_with(&format!("{}/authorize?", issuer_of(&second))),
        "the new sign-in is at the second server: {url}"
    );
    let since = b.close_stdin();
    b.wait_exit(since, EXCHANGE);
    let c = counters(&second);
    assert_eq!(
        c["token_requests"]["refresh_token"],
        0,
        "{c}\n{}",
        b.stderr()
    );
}

#[test]
fn a_code_of_another_authorization_server_never_reaches_the_token_endpoint() {
    let attacker = oauth_fixture(&[]);
    let honest = oauth_fixture(&[]);
    // The attacker's metadata sends the browser to the honest server, whose redirect names no
    // issuer; the honest server takes the attacker's resource (as a real one would take the
    // resource of a server that it protects).
    set_overrides(
        &attacker,
        &json!({
            "authorization_endpoint": format!("{}/authorize", issuer_of(&honest)),
            "no_iss": true,
        }),
    );
    set_overrides(&honest, &json!({"no_iss": true, "resource": attacker.url}));
    let issuer = issuer_of(&attacker);
    let args = [
        "--no-browser",
        "--client-id",
        PUBLIC,
        "--client-issuer",
        &issuer,
    ];
    let mut b = bridge(&attacker.url, free_port(), &args, &[]);
    b.send(&vscode_initialize(1));
    b.expect_line(|l| l.starts_with(SIGN_IN) || l.contains("server/discover failed"));
    if let Some(url) = sign_in_urls(&b).first() {
        // The browser signs in at the honest server, which redirects with its code.
        let _ = browse(url);
    }
    let r = b.response(1);
    assert!(r.get("error").is_some(), "{r}");
    let c = counters(&attacker);
    assert_eq!(
        c["token_requests"]["authorization_code"],
        0,
        "the attacker's token endpoint received the honest server's code: {c}\n{}",
        b.stderr()
    );
    assert_eq!(
        counters(&honest)["authorization_requests"],
        0,
        "the browser went to an authorization endpoint on another origin"
    );
    let since = b.close_stdin();
    b.wait_exit(since, EXCHANGE);
}
