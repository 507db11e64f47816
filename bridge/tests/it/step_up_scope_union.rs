//! The step-up asks for the union of the granted and the challenged scopes (M4;
//! docs/sign-in.md), as real processes: the bridge in front of
//! `bridge-fixture-server --oauth --step-up-scope-only`, whose 403 for the tool `guarded` names
//! `mcp:write` alone. A bridge that asked for the challenge only would get a token without
//! `mcp:read`; the union is seen in the authorization request of the step-up (its URL and the
//! fixture's record of it) and in the scope of the token that the fixture issues.
#![cfg(unix)]

use crate::support;

use serde_json::{Value, json};
use support::oauth::{
    bridge, complete, counters, free_port, initialize_signing_in, oauth_fixture, sign_in_urls,
};
use support::{Bridge, EXCHANGE, call};

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

/// The `scope` parameter of an authorization URL, as a list.
fn scope_of(url: &str) -> Vec<String> {
    let url = url::Url::parse(url).expect("an authorization URL");
    let scope = url
        .query_pairs()
        .find(|(k, _)| k == "scope")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    scope.split_whitespace().map(str::to_owned).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn a_step_up_challenged_with_the_new_scope_only_asks_for_and_gets_the_union() {
    let fixture = oauth_fixture(&["--step-up-scope-only"]);
    let mut b = bridge(&fixture.url, free_port(), &["--no-browser"], &[]);
    initialize_signing_in(&mut b);
    assert_eq!(scope_of(&sign_in_urls(&b)[0]), ["mcp:read"]);
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");

    b.send(&call(3, "guarded", json!({})));
    let q = next_question(&mut b);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    let step_up = q["params"]["url"].as_str().expect("url").to_owned();
    // The challenge named mcp:write alone; the request adds the granted mcp:read.
    assert_eq!(
        sorted(scope_of(&step_up)),
        ["mcp:read", "mcp:write"],
        "{step_up}"
    );
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept"}}));
    complete(&step_up);
    let (r, _) = b.response_with_notifications(&json!(3));
    assert_eq!(
        r["result"]["content"][0]["text"], "guarded: the token has the scope mcp:write",
        "{r}"
    );
    // The token of the step-up still serves what needs mcp:read, without another sign-in.
    let r = b.exchange(&call(4, "add", json!({"a": 1, "b": 1})));
    assert_eq!(r["result"]["content"][0]["text"], "2", "{r}");
    assert_eq!(sign_in_urls(&b).len(), 2, "one sign-in and one step-up");

    let c = counters(&fixture);
    assert_eq!(
        c["authorization_scopes"],
        json!(["mcp:read", "mcp:read mcp:write"]),
        "{c}"
    );
    assert_eq!(
        c["issued_scopes"],
        json!(["mcp:read", "mcp:read mcp:write"]),
        "{c}"
    );
    b.close_and_expect_exit_0();
}
