//! A remote MCP server or issuer names no plain-`http` endpoint on this machine (docs/sign-in.md,
//! "Bound to the issuer"), as real processes: the MCP URL is `https://fixture.test:<port>/mcp`,
//! a name that only the test proxy resolves (so the bridge sees a remote server), and its
//! metadata or its authorization server's names `http://127.0.0.1:<port>` of a listener of the
//! test, where any local program could take the code and the verifier. The sign-in fails with
//! the cause `sign_in_failed`, and the listener never gets a connection.
#![cfg(unix)]

use crate::support;

use std::net::TcpListener;

use serde_json::{Value, json};
use support::https_fixture::HttpsFixture;
use support::oauth::{bridge, free_port, oauth_fixture, set_overrides, sign_in_urls};
use support::proxy::{FIXTURE_HOST, Proxy};

/// A local plain-http port that counts nothing but whether someone connected.
struct Local(TcpListener);

impl Local {
    fn start() -> Local {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        Local(listener)
    }

    fn url(&self) -> String {
        format!("http://{}", self.0.local_addr().expect("address"))
    }

    /// Whether a connection is waiting (the bridge connected before its answer came).
    fn connected(&self) -> bool {
        self.0.accept().is_ok()
    }
}

/// The answer to `initialize` of a bridge at the remote name of `fixture`, through a proxy.
fn initialize_remote(fixture: &HttpsFixture) -> (Value, String) {
    let proxy = Proxy::start();
    let env = [("HTTPS_PROXY", proxy.url())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = fixture.url_with_host(FIXTURE_HOST);
    let mut b = bridge(&url, free_port(), &["--no-browser"], &env);
    b.send(&support::vscode_initialize(1));
    let r = b.response(1);
    assert!(sign_in_urls(&b).is_empty(), "{}", b.stderr());
    b.close_and_expect_exit_0();
    (r, b.stderr())
}

#[test]
fn a_remote_mcp_server_names_no_plain_http_authorization_server_on_this_machine() {
    let fixture = oauth_fixture(&[]);
    let local = Local::start();
    set_overrides(
        &fixture,
        &json!({
            "resource": fixture.url_with_host(FIXTURE_HOST),
            "authorization_servers": [local.url()],
        }),
    );
    let (r, stderr) = initialize_remote(&fixture);
    assert_eq!(
        r["error"]["data"]["cause"], "sign_in_failed",
        "{r}\n{stderr}"
    );
    let detail = r["error"]["data"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("names no authorization server"), "{r}");
    assert!(
        !local.connected(),
        "the bridge connected to {}",
        local.url()
    );
}

#[test]
fn a_remote_issuer_names_no_plain_http_endpoint_on_this_machine() {
    let fixture = oauth_fixture(&[]);
    let local = Local::start();
    let remote = format!("https://{FIXTURE_HOST}:{}", fixture.port);
    set_overrides(
        &fixture,
        &json!({
            "resource": fixture.url_with_host(FIXTURE_HOST),
            "authorization_servers": [remote],
            "issuer": remote,
            "authorization_endpoint": format!("{}/authorize", local.url()),
        }),
    );
    let (r, stderr) = initialize_remote(&fixture);
    assert_eq!(
        r["error"]["data"]["cause"], "sign_in_failed",
        "{r}\n{stderr}"
    );
    let detail = r["error"]["data"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("no authorization or token endpoint"), "{r}");
    assert!(
        !local.connected(),
        "the bridge connected to {}",
        local.url()
    );
}
