//! Two tenants on one origin (docs/sign-in.md, "Bound to the issuer"; RFC 9728 §3.3, RFC
//! 8707), as real processes: the fixture's `/a/mcp` and `/b/mcp` are each their own protected
//! resource with their own metadata, and accept only the tokens of their own resource (the
//! fixture counts each other token that reaches them). A bridge for one tenant never sends the
//! other's token, even with one token store for both, and it refuses a tenant's metadata
//! that names the whole host before any token is asked for.
#![cfg(unix)]

use crate::support;

use serde_json::json;
use support::oauth::{bridge, counters, free_port, oauth_fixture, set_overrides, sign_in_urls};
use support::stored::Stored;

const KEY: &str = "2233445566778899aabbccddeeff00112233445566778899aabbccddeeff0011";

/// `https://127.0.0.1:<port>/<tenant>/mcp` of the fixture.
fn tenant(fixture: &support::https_fixture::HttpsFixture, name: &str) -> String {
    fixture.url.replace("/mcp", &format!("/{name}/mcp"))
}

#[test]
fn a_token_of_one_tenant_never_reaches_the_other() {
    let fixture = oauth_fixture(&[]);
    let (a, b) = (tenant(&fixture, "a"), tenant(&fixture, "b"));
    let mut setup = Stored::new(&a, "file", KEY);
    setup.sign_in(&[]);
    // The same store, the same account and redirect port: /b signs in on its own.
    setup.set_url(&b);
    setup.sign_in(&[]);
    // And /a still has its own sign-in, not /b's.
    setup.set_url(&a);
    setup.reuse(&[]);
    let seen = counters(&fixture);
    assert_eq!(seen["foreign_tokens"], json!([]), "{seen}");
    assert_eq!(seen["token_requests"]["authorization_code"], 2, "{seen}");
}

#[test]
fn a_tenants_metadata_that_names_the_host_is_refused() {
    let fixture = oauth_fixture(&[]);
    let b = tenant(&fixture, "b");
    let origin = fixture.url.trim_end_matches("/mcp").to_owned();
    set_overrides(
        &fixture,
        &json!({"tenant_resources": {"/b/mcp": format!("{origin}/")}}),
    );
    let mut bridge = bridge(&b, free_port(), &["--no-browser"], &[]);
    bridge.send(&support::vscode_initialize(1));
    let r = bridge.response(1);
    assert_eq!(r["error"]["data"]["cause"], "sign_in_failed", "{r}");
    let detail = r["error"]["data"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("is not the upstream server"), "{r}");
    assert!(!detail.contains("127.0.0.1"), "an error names no URL: {r}");
    let line = format!(
        "the protected resource metadata at {origin}/.well-known/oauth-protected-resource/b/mcp names the resource \"{origin}/\", but the upstream server is {b}: the bridge does not use it (RFC 9728 §3.3)"
    );
    bridge.expect_line(|l| l.ends_with(&line));
    assert!(sign_in_urls(&bridge).is_empty(), "{}", bridge.stderr());
    let seen = counters(&fixture);
    assert_eq!(seen["authorization_requests"], 0, "{seen}");
    assert_eq!(seen["registrations"], json!([]), "{seen}");
    bridge.close_and_expect_exit_0();
}
