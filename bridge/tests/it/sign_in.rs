//! M4, M6: the sign-in of the URL form, as real processes: `bridge-fixture-server --listen
//! 127.0.0.1:0 --oauth` (its own authorization server), the bridge at its URL, and the test
//! browser `bridge-fixture-server --browse` (directly on the sign-in line's URL, or as the
//! `$BROWSER` of the bridge). The contract's "Sign-in and accounts" and docs/sign-in.md.
#![cfg(unix)]

use crate::support;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::oauth::{
    SIGN_IN, bridge, browse, browser_script, complete, counters, forget_clients, free_port, get,
    initialize_signing_in, oauth_fixture, sign_in_urls, wait_sign_in,
};
use support::{Bridge, EXCHANGE, call, request, vscode_initialize};

/// The warning of a second request to the start URL after the redirect.
const START_LATE_WARNING: &str = "The start URL of the sign-in received a second request after the redirect. Another program possibly signed in with a different account. To be sure, run logout and sign in again.";

fn initialized() -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/initialized"})
}

/// The prefixes of every token, code and secret that the fixture issues.
const ISSUED: [&str; 4] = ["bfx_at_", "bfx_rt_", "bfx_code_", "bfx_secret_"];

/// No token, code or client secret of the run on stderr.
fn assert_no_secret(b: &Bridge) {
    let stderr = b.stderr();
    for prefix in ISSUED {
        assert!(!stderr.contains(prefix), "{prefix} on stderr:\n{stderr}");
    }
    assert!(!stderr.contains("bridge-fixture-secret-0123456789"));
    assert!(!stderr.contains("code_verifier"));
    // The state is only in the sign-in line (the authorization URL, by the contract).
    for line in stderr.lines().filter(|l| !l.starts_with(SIGN_IN)) {
        assert!(!line.contains("state="), "{line}");
    }
}

/// The next request of the bridge to VS Code (list changes of the listen stream may come
/// first).
fn next_question(b: &mut Bridge) -> Value {
    loop {
        let f = b.next_frame(EXCHANGE);
        if f.get("id").is_some() && f.get("method").is_some() {
            return f;
        }
    }
}

fn cause(r: &Value) -> &str {
    r["error"]["data"]["cause"].as_str().unwrap_or("")
}

/// The sign-in (docs/sign-in.md), with `--no-browser`: the sign-in line after `initialize`, the
/// redirect completes it, `add` gives 5, `guarded` steps up through a URL elicitation that
/// asks for `mcp:write`, and no token reaches stderr.
#[test]
fn m4_done_when_sign_in_through_the_line_then_step_up_through_a_url_elicitation() {
    let fixture = oauth_fixture(&[]);
    let port = free_port();
    let mut b = bridge(&fixture.url, port, &["--no-browser"], &[]);
    b.expect_line(|l| l.contains("the tokens stay in memory"));
    assert!(sign_in_urls(&b).is_empty(), "no sign-in before initialize");
    initialize_signing_in(&mut b);
    let url = &sign_in_urls(&b)[0];
    assert!(url.contains(&format!(
        "redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback"
    )));
    assert!(url.contains("code_challenge_method=S256") && url.contains("resource="));
    b.send(&initialized());
    let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");

    b.send(&call(3, "guarded", json!({})));
    let q = next_question(&mut b);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    assert_eq!(q["params"]["mode"], "url");
    let step_up = q["params"]["url"].as_str().expect("url").to_owned();
    assert!(step_up.contains("mcp%3Awrite"), "{step_up}");
    let eid = q["params"]["elicitationId"].clone();
    assert!(eid.is_string());
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept"}}));
    complete(&step_up);
    let (r, notes) = b.response_with_notifications(&json!(3));
    assert_eq!(
        r["result"]["content"][0]["text"], "guarded: the token has the scope mcp:write",
        "{r}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n["method"] == "notifications/elicitation/complete"
                && n["params"]["elicitationId"] == eid),
        "{notes:?}"
    );
    assert_eq!(sign_in_urls(&b).len(), 2, "one line per sign-in");
    let c = counters(&fixture);
    assert_eq!(
        c["registrations"].as_array().map(Vec::len),
        Some(1),
        "no second registration: {c}"
    );
    b.close_and_expect_exit_0();
    assert_no_secret(&b);
}

/// M6: with `$BROWSER`, the opener's only argument is the one-time start URL, and it gets no
/// secret variable of the bridge.
#[test]
fn m6_the_browser_opener_gets_only_the_start_url_and_no_secret_variable() {
    let fixture = oauth_fixture(&[]);
    let dir = tempfile::tempdir().expect("dir");
    let script = browser_script(dir.path(), None);
    let port = free_port();
    let script = script.to_string_lossy().into_owned();
    let mut b = bridge(
        &fixture.url,
        port,
        &[],
        &[
            ("BROWSER", script.as_str()),
            ("MCP_BRIDGE_TOKEN_KEY", "00".repeat(32).as_str()),
        ],
    );
    b.initialize();
    let argv = std::fs::read_to_string(dir.path().join("argv")).expect("argv");
    let args: Vec<&str> = argv.lines().collect();
    assert_eq!(args.len(), 1, "{argv}");
    let prefix = format!("http://127.0.0.1:{port}/start/");
    let token = args[0].strip_prefix(&prefix).expect("the start URL");
    assert_eq!(token.len(), 43, "32 random bytes, base64url");
    assert!(
        token
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
    );
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap_or_default();
    assert!(
        env.trim().is_empty(),
        "secret variables reached the opener: {env}"
    );
    assert_eq!(
        sign_in_urls(&b).len(),
        1,
        "the line is written also with a browser"
    );
    // M6 "start late": the start URL requested again after the sign-in (within the grace of
    // the receiver, receiver::LATE_GRACE) gets 410 and the warning.
    let (status, _) = get(args[0]);
    assert_eq!(status, 410);
    // The warning's text as the docs give it (not the constant of the code: a change of the
    // text fails here).
    b.expect_line(|l| l == format!("mcp-bridge-vscode: bridge: warning: {START_LATE_WARNING}"));
    b.close_and_expect_exit_0();
    assert_no_secret(&b);
}

/// M6: the start URL with a wrong token gets 404 and the wait goes on; a second request of
/// the right one stops the sign-in (`sign_in_start_reused`).
#[test]
fn m6_a_wrong_start_token_is_404_and_a_second_start_request_stops_the_sign_in() {
    let fixture = oauth_fixture(&[]);
    let dir = tempfile::tempdir().expect("dir");
    let script = browser_script(dir.path(), Some("exit 0"));
    let script = script.to_string_lossy().into_owned();
    let port = free_port();
    let mut b = bridge(&fixture.url, port, &[], &[("BROWSER", script.as_str())]);
    b.send(&vscode_initialize(1));
    wait_sign_in(&b, 1);
    let argv_file = dir.path().join("argv");
    let since = Instant::now();
    let start = loop {
        if let Ok(text) = std::fs::read_to_string(&argv_file)
            && let Some(line) = text.lines().next()
        {
            break line.to_owned();
        }
        assert!(since.elapsed() < EXCHANGE, "the opener did not run");
        std::thread::sleep(Duration::from_millis(10));
    };
    let (status, _) = get(&format!("http://127.0.0.1:{port}/start/{}", "A".repeat(43)));
    assert_eq!(status, 404);
    let (status, location) = get(&start);
    assert_eq!(status, 303);
    assert_eq!(location.as_deref(), Some(sign_in_urls(&b)[0].as_str()));
    let (status, _) = get(&start);
    assert_eq!(status, 410);
    let r = b.response(1);
    assert_eq!(cause(&r), "sign_in_start_reused", "{r}");
    b.expect_line(|l| l.contains("The start URL of the sign-in received a second request"));
    b.close_and_expect_exit_0();
}

/// The contract's exit codes stay: a refusal of the sign-in is an error of the request, and
/// the bridge runs on; the next `initialize` signs in again.
#[test]
fn m4_deny_gives_sign_in_denied_and_the_bridge_runs_on() {
    let fixture = oauth_fixture(&["--deny"]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    b.send(&vscode_initialize(1));
    let (code, line) = browse(&wait_sign_in(&b, 1));
    assert_eq!(code, Some(0), "{line}");
    assert!(line.contains("error=access_denied"), "{line}");
    let r = b.response(1);
    assert_eq!(cause(&r), "sign_in_denied", "{r}");
    b.send(&vscode_initialize(2));
    wait_sign_in(&b, 2);
    b.close_and_expect_exit_0();
}

/// `--sign-in-timeout`: nobody signs in; `initialize` fails with `sign_in_timeout`, whose
/// message names the logout command.
#[test]
fn m4_the_sign_in_timeout_fails_initialize_with_its_cause() {
    let fixture = oauth_fixture(&[]);
    let mut b = bridge(
        &fixture.url,
        free_port(),
        &["--no-browser", "--sign-in-timeout", "1"],
        &[],
    );
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(cause(&r), "sign_in_timeout", "{r}");
    let message = r["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("The sign-in did not complete in 1 s."),
        "{message}"
    );
    assert!(message.contains("mcp-bridge-vscode logout"), "{message}");
    assert!(
        !r.to_string().contains("/mcp"),
        "no upstream URL in an error: {r}"
    );
    b.expect_line(|l| l.contains("The sign-in did not complete in 1 s."));
    b.close_and_expect_exit_0();
}

/// The redirect port in use: the request fails with `redirect_port_unavailable`, and the
/// warning names the port.
#[test]
fn m4_the_redirect_port_in_use_fails_with_its_cause() {
    let fixture = oauth_fixture(&[]);
    let holder = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = holder.local_addr().expect("addr").port();
    let mut b = bridge(&fixture.url, port, &["--no-browser"], &[]);
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(cause(&r), "redirect_port_unavailable", "{r}");
    b.expect_line(|l| l.contains(&format!("Another program uses the redirect port {port}.")));
    assert!(
        sign_in_urls(&b).is_empty(),
        "the receiver listens before the line"
    );
    b.close_and_expect_exit_0();
}

/// `SANDBOX_RUNTIME=1` and no token: `initialize` fails within 2 s naming the sandbox.
#[test]
fn m4_in_the_sandbox_initialize_fails_at_once_naming_the_sandbox() {
    let fixture = oauth_fixture(&[]);
    let mut b = bridge(&fixture.url, free_port(), &[], &[("SANDBOX_RUNTIME", "1")]);
    let since = Instant::now();
    let r = b.exchange(&vscode_initialize(1));
    assert!(
        since.elapsed() < Duration::from_secs(2),
        "{:?}",
        since.elapsed()
    );
    assert_eq!(cause(&r), "sandbox", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("sandbox")
    );
    b.expect_line(|l| l.contains("the bridge runs in the sandbox of VS Code"));
    assert!(sign_in_urls(&b).is_empty());
    b.close_and_expect_exit_0();
}

/// O1: a declined URL elicitation fails the request with `reauthorization_required`
/// (`declined`); for 60 s the next sign-in fails at once (`cooldown`) without a question.
#[test]
fn m4_decline_then_the_cooldown_asks_nothing() {
    let fixture = oauth_fixture(&[]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    b.send(&initialized());
    b.send(&call(2, "guarded", json!({})));
    let q = next_question(&mut b);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"decline"}}));
    let r = b.response(2);
    assert_eq!(cause(&r), "reauthorization_required", "{r}");
    assert_eq!(r["error"]["data"]["detail"], "declined");
    b.expect_line(|l| l.contains("The user declined the sign-in."));
    let r = b.exchange(&call(3, "guarded", json!({})));
    assert_eq!(cause(&r), "reauthorization_required", "{r}");
    assert_eq!(r["error"]["data"]["detail"], "cooldown");
    let questions = b
        .all_frames
        .iter()
        .filter(|f| f["method"] == "elicitation/create")
        .count();
    assert_eq!(questions, 1, "no second question");
    let r = b.exchange(&call(4, "add", json!({"a": 1, "b": 1})));
    assert_eq!(
        r["result"]["content"][0]["text"], "2",
        "the token still works: {r}"
    );
    b.close_and_expect_exit_0();
}

/// C2: a client without URL elicitation: a sign-in after `notifications/initialized` fails
/// at once (`no_consent`) with the info line.
#[test]
fn m4_a_client_without_url_elicitation_fails_a_later_sign_in_at_once() {
    let fixture = oauth_fixture(&[]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    let mut init = vscode_initialize(1);
    init["params"]["capabilities"]["elicitation"] = json!({"form": {}});
    b.send(&init);
    complete(&wait_sign_in(&b, 1));
    assert!(b.response(1).get("result").is_some());
    b.send(&initialized());
    let r = b.exchange(&call(2, "guarded", json!({})));
    assert_eq!(cause(&r), "reauthorization_required", "{r}");
    assert_eq!(r["error"]["data"]["detail"], "no_consent");
    b.expect_line(|l| l.contains("the client did not declare URL elicitation"));
    assert_eq!(
        sign_in_urls(&b).len(),
        1,
        "no line for a sign-in that cannot start"
    );
    b.close_and_expect_exit_0();
}

/// A short `--token-lifetime`: the bridge refreshes before the token expires (margin 60 s),
/// without a new sign-in.
#[test]
fn m4_a_short_token_lifetime_is_refreshed_without_a_sign_in() {
    let fixture = oauth_fixture(&["--token-lifetime", "30"]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    b.send(&initialized());
    for id in 2..5 {
        let r = b.exchange(&call(id, "add", json!({"a": id, "b": 1})));
        assert_eq!(
            r["result"]["content"][0]["text"],
            (id + 1).to_string(),
            "{r}"
        );
    }
    let c = counters(&fixture);
    assert!(
        c["token_requests"]["refresh_token"].as_u64() >= Some(1),
        "{c}"
    );
    assert_eq!(c["token_requests"]["authorization_code"], 1, "{c}");
    assert_eq!(sign_in_urls(&b).len(), 1);
    b.close_and_expect_exit_0();
    assert_no_secret(&b);
}

/// The authorization server forgets the client: the refresh gets `invalid_client`, the old
/// access token serves until it expires, and the next sign-in (a step-up) registers again.
#[test]
fn m4_a_forgotten_client_registers_again_at_the_next_sign_in() {
    let fixture = oauth_fixture(&["--token-lifetime", "30"]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    b.send(&initialized());
    forget_clients(&fixture);
    let r = b.exchange(&call(2, "add", json!({"a": 1, "b": 2})));
    assert_eq!(r["result"]["content"][0]["text"], "3", "{r}");
    b.expect_line(|l| {
        l.contains("the refresh of the token failed") && l.contains("invalid_client")
    });
    b.send(&call(3, "guarded", json!({})));
    let q = next_question(&mut b);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept"}}));
    complete(q["params"]["url"].as_str().expect("url"));
    let r = b.response(3);
    assert!(r.get("result").is_some(), "{r}");
    let c = counters(&fixture);
    assert_eq!(c["registrations"].as_array().map(Vec::len), Some(2), "{c}");
    b.close_and_expect_exit_0();
}

/// Without refresh tokens, a forgotten client meets the error page of the authorization
/// server: no redirect, and the sign-in ends at its time limit with the logout advice.
#[test]
fn m4_a_forgotten_client_without_refresh_ends_at_the_time_limit_naming_logout() {
    let fixture = oauth_fixture(&["--no-refresh-tokens"]);
    let mut b = bridge(
        &fixture.url,
        free_port(),
        &["--no-browser", "--sign-in-timeout", "2"],
        &[],
    );
    initialize_signing_in(&mut b);
    b.send(&initialized());
    forget_clients(&fixture);
    b.send(&call(2, "guarded", json!({})));
    let q = next_question(&mut b);
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept"}}));
    let (code, line) = browse(q["params"]["url"].as_str().expect("url"));
    assert_eq!(code, Some(1), "the error page, no redirect: {line}");
    let r = b.response(2);
    assert_eq!(cause(&r), "sign_in_timeout", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("logout")
    );
    b.close_and_expect_exit_0();
}

/// Arguments, environment, and the `client_id` of the authorization URL.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

/// Registration in the contract's order: each pre-registered client (the confidential one
/// with `MCP_BRIDGE_CLIENT_SECRET` and `--client-issuer`), a client ID metadata document, and
/// dynamic registration; only the last one registers.
#[test]
fn m4_each_pre_registered_client_cimd_and_dcr_sign_in() {
    let fixture = oauth_fixture(&["--cimd"]);
    let issuer = format!("https://127.0.0.1:{}", fixture.port);
    let document = format!("{issuer}/fixture/client.json");
    let cases: [Case; 4] = [
        (
            &[
                "--client-id",
                "bridge-fixture-confidential",
                "--client-issuer",
                &issuer,
            ],
            &[(
                "MCP_BRIDGE_CLIENT_SECRET",
                "bridge-fixture-secret-0123456789",
            )],
            "client_id=bridge-fixture-confidential",
        ),
        (
            &["--client-id", "bridge-fixture-public"],
            &[],
            "client_id=bridge-fixture-public",
        ),
        (
            &["--client-metadata-url", &document],
            &[],
            "client_id=https%3A%2F%2F127.0.0.1",
        ),
        (&[], &[], "client_id=dcr_"),
    ];
    for (args, env, client) in cases {
        let mut extra = vec!["--no-browser"];
        extra.extend_from_slice(args);
        let mut b = bridge(&fixture.url, free_port(), &extra, env);
        initialize_signing_in(&mut b);
        assert!(
            sign_in_urls(&b)[0].contains(client),
            "{args:?}: {}",
            sign_in_urls(&b)[0]
        );
        let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
        assert_eq!(r["result"]["content"][0]["text"], "5", "{args:?}: {r}");
        b.close_and_expect_exit_0();
        assert_no_secret(&b);
    }
    let c = counters(&fixture);
    assert_eq!(
        c["registrations"].as_array().map(Vec::len),
        Some(1),
        "only DCR registers: {c}"
    );
    assert!(c["client_metadata_fetches"].as_u64() >= Some(1), "{c}");
}

/// §2.9: a listen stream refused with 401 opens again after the next sign-in.
#[test]
fn m4_the_listen_stream_refused_with_401_opens_again_after_the_next_sign_in() {
    let fixture = oauth_fixture(&["--listen-status", "401:1", "--no-refresh-tokens"]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    b.send(&initialized());
    b.expect_line(|l| {
        l.contains("the listen stream failed with the HTTP status 401. A new stream follows after the next sign-in.")
    });
    b.send(&call(2, "guarded", json!({})));
    let q = next_question(&mut b);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept"}}));
    complete(q["params"]["url"].as_str().expect("url"));
    assert!(b.response(2).get("result").is_some());
    b.expect_line(|l| l.contains("a sign-in completed. The bridge opens the listen stream again."));
    let r = b.exchange(&request(3, "tools/list", json!({})));
    assert!(r["result"]["tools"].is_array());
    b.close_and_expect_exit_0();
}

/// `server/discover` waits `--discover-timeout` plus `--sign-in-timeout` when a sign-in can
/// start: with 1 s for discover and 2 s for the sign-in, nobody signing in ends with the
/// sign-in's cause, not with the discover time limit.
#[test]
fn m4_discover_waits_for_the_sign_in_time_too() {
    let fixture = oauth_fixture(&[]);
    let mut b = bridge(
        &fixture.url,
        free_port(),
        &[
            "--no-browser",
            "--discover-timeout",
            "1",
            "--sign-in-timeout",
            "2",
        ],
        &[],
    );
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(cause(&r), "sign_in_timeout", "{r}");
    b.close_and_expect_exit_0();
}

/// A request that VS Code cancels during its sign-in: no response, the question of the
/// sign-in is withdrawn (`notifications/cancelled` for the bridge's request), the receiver
/// is closed, and the next sign-in can listen on the same port.
#[test]
fn m4_a_cancelled_request_withdraws_its_sign_in_question() {
    let fixture = oauth_fixture(&[]);
    let port = free_port();
    let mut b = bridge(&fixture.url, port, &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    b.send(&initialized());
    b.send(&call(2, "guarded", json!({})));
    let q = next_question(&mut b);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    loop {
        let f = b.next_frame(EXCHANGE);
        assert_ne!(f["id"], 2, "a cancelled request gets no response: {f}");
        if f["method"] == "notifications/cancelled" {
            assert_eq!(f["params"]["requestId"], q["id"], "{f}");
            break;
        }
    }
    b.send(&call(3, "guarded", json!({})));
    let q = next_question(&mut b);
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept"}}));
    complete(q["params"]["url"].as_str().expect("url"));
    assert!(b.response(3).get("result").is_some());
    b.close_and_expect_exit_0();
}
