//! Forged redirects to the bridge's loopback receiver (M4, M6; docs/sign-in.md), as real
//! processes: the bridge with the file store in front of `bridge-fixture-server --oauth`. The
//! test plays the attacker who holds a real authorization code of the fixture: a redirect with
//! a wrong `state`, one without `state`, and the real redirect replayed after the sign-in. The
//! receiver refuses each (400; after a sign-in without a start URL the port is closed, with
//! one it stays for the late grace and answers 400), the sign-in stays pending until the real
//! redirect, the forged code is never exchanged and nothing is stored before the real
//! redirect.
#![cfg(unix)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::https_fixture::ca_file;
use support::oauth::{
    bridge, browser_script, counters, free_port, get, oauth_fixture, wait_sign_in,
};
use support::{call, files_under, vscode_initialize};

const KEY: &str = "5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819203";

/// How long a refused redirect is given to (wrongly) end the sign-in: the receiver answers
/// before the bridge exchanges a code, so a wrongly accepted code answers `initialize` within
/// this bound.
const SETTLE: Duration = Duration::from_secs(3);

/// The `Location` of the fixture's authorization endpoint for `url` (not followed): the
/// redirect to the receiver with a real code, the real `state` and `iss`.
fn authorization_redirect(url: &str) -> String {
    mcp_bridge_vscode::install_crypto_provider();
    let pem = std::fs::read(ca_file()).expect("ca");
    let ca = reqwest::Certificate::from_pem(&pem).expect("ca pem");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .add_root_certificate(ca)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .expect("client");
        let response = client.get(url).send().await.expect("authorize");
        assert_eq!(response.status().as_u16(), 302, "{url}");
        response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .expect("a location")
            .to_owned()
    })
}

/// `redirect` with its `state` replaced by `state` (dropped when `None`).
fn with_state(redirect: &str, state: Option<&str>) -> String {
    let mut url = url::Url::parse(redirect).expect("redirect URL");
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "state")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    {
        let mut query = url.query_pairs_mut();
        query.clear();
        for (k, v) in &pairs {
            query.append_pair(k, v);
        }
        if let Some(state) = state {
            query.append_pair("state", state);
        }
    }
    url.to_string()
}

/// The status of a GET of the receiver, 0 when nothing listens any more.
fn receiver_status(url: &str) -> u16 {
    let rest = url.strip_prefix("http://").expect("http");
    let authority = &rest[..rest.find('/').expect("a path")];
    match std::net::TcpStream::connect(authority) {
        Ok(_) => get(url).0,
        Err(_) => 0,
    }
}

#[test]
fn forged_redirects_with_a_wrong_or_no_state_are_refused_and_a_replay_after_success_too() {
    let fixture = oauth_fixture(&[]);
    let state_home = tempfile::tempdir().expect("tempdir");
    let token_dir = state_home.path().join("mcp-bridge-vscode").join("tokens");
    let home = state_home.path().to_string_lossy().into_owned();
    let env = [
        ("XDG_STATE_HOME", home.as_str()),
        ("MCP_BRIDGE_TOKEN_KEY", KEY),
    ];
    let port = free_port();
    let mut b = bridge(
        &fixture.url,
        port,
        &["--no-browser", "--token-store", "file"],
        &env,
    );
    b.send(&vscode_initialize(1));
    // With --no-browser the sign-in line is the authorization URL itself.
    let authorization = wait_sign_in(&b, 1);
    let real = authorization_redirect(&authorization);
    assert!(real.starts_with(&format!("http://127.0.0.1:{port}/callback?")));
    assert!(real.contains("code=bfx_code_") && real.contains("state="));

    // The attacker's redirects carry the real code but not the sign-in's state.
    let wrong = with_state(&real, Some("forged-state-0123456789"));
    assert_eq!(get(&wrong).0, 400, "a wrong state");
    let none = with_state(&real, None);
    assert_eq!(get(&none).0, 400, "no state");
    // The sign-in is still pending: no answer to `initialize`, no code exchanged, nothing
    // stored.
    b.no_frame(SETTLE);
    let c = counters(&fixture);
    assert_eq!(c["token_requests"]["authorization_code"], 0, "{c}");
    assert_eq!(files_under(&token_dir), Vec::<std::path::PathBuf>::new());

    // The real redirect ends the sign-in.
    assert_eq!(get(&real).0, 200);
    let r = b.response(1);
    assert!(r.get("result").is_some(), "{r}\nstderr:\n{}", b.stderr());
    let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
    let stored = files_under(&token_dir);
    assert!(!stored.is_empty(), "the sign-in is stored");

    // The replay after the success: refused (400) or nothing listens any more; the code is
    // not exchanged again and the store is unchanged.
    let replay = receiver_status(&real);
    assert!(matches!(replay, 400 | 0), "the replay got {replay}");
    b.no_frame(SETTLE);
    let c = counters(&fixture);
    assert_eq!(c["token_requests"]["authorization_code"], 1, "{c}");
    assert_eq!(files_under(&token_dir).len(), stored.len());
    let stderr = b.stderr();
    assert!(!stderr.contains("bfx_code_"), "{stderr}");
    assert!(!stderr.contains("forged-state"), "{stderr}");
    b.close_and_expect_exit_0();
}

/// With a browser opener the receiver stays on its port for the late grace after the code
/// (M6): the real redirect replayed there is refused (400) and exchanges nothing.
#[test]
fn the_redirect_replayed_in_the_late_grace_of_the_receiver_is_refused() {
    let fixture = oauth_fixture(&[]);
    let dir = tempfile::tempdir().expect("dir");
    // The opener only records the start URL; the test plays the browser.
    let script = browser_script(dir.path(), Some(":"));
    let script = script.to_string_lossy().into_owned();
    let port = free_port();
    let mut b = bridge(&fixture.url, port, &[], &[("BROWSER", script.as_str())]);
    b.send(&vscode_initialize(1));
    let argv = dir.path().join("argv");
    let since = Instant::now();
    let start = loop {
        if let Some(line) = std::fs::read_to_string(&argv)
            .ok()
            .and_then(|t| t.lines().next().map(str::to_owned))
        {
            break line;
        }
        assert!(since.elapsed() < support::EXCHANGE, "the opener never ran");
        std::thread::sleep(Duration::from_millis(10));
    };
    let (status, authorization) = get(&start);
    assert_eq!(status, 303, "{start}");
    let real = authorization_redirect(&authorization.expect("the authorization URL"));
    assert_eq!(get(&real).0, 200);
    let r = b.response(1);
    assert!(r.get("result").is_some(), "{r}\nstderr:\n{}", b.stderr());
    assert_eq!(get(&real).0, 400, "the replay in the late grace");
    b.no_frame(SETTLE);
    let c = counters(&fixture);
    assert_eq!(c["token_requests"]["authorization_code"], 1, "{c}");
    b.close_and_expect_exit_0();
}
