//! The proxy is chosen for each request by its own URL (docs/options.md, the proxies), as real
//! processes: the MCP URL `https://fixture.test:<port>/mcp` is reached only through the test
//! proxy (which alone resolves that name), and the fixture's authorization server at the
//! loopback address `https://127.0.0.1:<port>` gets the sign-in's requests (metadata,
//! registration, token) directly: the proxy never sees a loopback target, so it never sees
//! the code, the verifier or the tokens of the sign-in.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::oauth::{bridge, free_port, initialize_signing_in, oauth_fixture, set_overrides};
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
