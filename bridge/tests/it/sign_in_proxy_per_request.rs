//! The proxy is chosen for each request by its own URL (docs/options.md, the proxies), as real
//! processes: the MCP URL `https://fixture.test:<port>/mcp` is reached only through the test
//! proxy (which alone resolves that name), and the fixture's authorization server at the
//! loopback address `https://127.0.0.1:<port>` gets the sign-in's requests (metadata,
//! registration, token) directly: the proxy never sees a loopback target, so it never sees
//! the code, the verifier or the tokens of the sign-in. And the other way: a loopback MCP URL
//! is reached directly while its authorization server, under a name that only the proxy
//! resolves, is reached through the proxy.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::oauth::{
    bridge, counters, free_port, initialize_signing_in, oauth_fixture, set_overrides,
};
use support::proxy::{FIXTURE_HOST, Proxy};
use support::stored::add;

#[test]
fn a_loopback_authorization_server_is_reached_without_the_proxy_of_a_remote_mcp_url() {
    let fixture = oauth_fixture(&[]);
    let url = fixture.url_with_host(FIXTURE_HOST);
    // The resource of the metadata is the name behind the proxy, so that it covers the URL.
    set_overrides(&fixture, &json!({"resource": url}));
    let proxy = Proxy::start();
    let env = [("HTTPS_PROXY", proxy.url())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut b = bridge(&url, free_port(), &["--no-browser"], &env);
    initialize_signing_in(&mut b);
    add(&mut b);
    b.close_and_expect_exit_0();
    let targets = proxy.targets();
    let mcp_target = format!("{FIXTURE_HOST}:{}", fixture.port);
    assert!(targets.contains(&mcp_target), "{targets:?}");
    assert!(
        targets.iter().all(|t| *t == mcp_target),
        "the sign-in at a loopback host went through the proxy: {targets:?}"
    );
}

#[test]
fn a_remote_authorization_server_is_reached_through_the_proxy_and_a_loopback_mcp_url_without_it() {
    let fixture = oauth_fixture(&[]);
    let remote = format!("https://{FIXTURE_HOST}:{}", fixture.port);
    // The authorization server is the fixture under the name behind the proxy; the browser
    // (the test browser resolves no such name) signs in at its loopback address, which the
    // metadata may name because the redirect carries `iss` (RFC 9207).
    set_overrides(
        &fixture,
        &json!({
            "authorization_servers": [remote],
            "issuer": remote,
            "authorization_endpoint": format!("https://127.0.0.1:{}/authorize", fixture.port),
        }),
    );
    let proxy = Proxy::start();
    let env = [("HTTPS_PROXY", proxy.url())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &env);
    initialize_signing_in(&mut b);
    add(&mut b);
    b.close_and_expect_exit_0();
    let targets = proxy.targets();
    let as_target = format!("{FIXTURE_HOST}:{}", fixture.port);
    assert!(
        targets.contains(&as_target),
        "the sign-in did not go through the proxy: {targets:?}"
    );
    assert!(
        targets.iter().all(|t| *t == as_target),
        "the loopback MCP URL went through the proxy: {targets:?}"
    );
    // The sign-in completed: its token request went to the remote name, which only the
    // proxy resolves.
    let counted = counters(&fixture);
    assert_eq!(
        counted["token_requests"]["authorization_code"], 1,
        "{counted}"
    );
}
