//! S1 with M4 (docs/rules.md): a sign-in that begins while VS Code's `initialize` waits does
//! not run into the client's budget, and it reaches the user through VS Code as a URL
//! elicitation once VS Code is initialized, not only through a browser that may not exist.
//! Real processes: the fixture with its authorization server at an HTTPS URL, the bridge, and
//! the test browser that follows the URL VS Code was asked to open.
#![cfg(unix)]

use crate::support;

use serde_json::{Value, json};
use support::oauth::{bridge, complete, free_port, oauth_fixture};
use support::{Bridge, EXCHANGE, call, request, vscode_initialize};

fn initialized() -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/initialized"})
}

/// The bridge's early answer to `initialize` 1: the lists with their changes, no server yet.
fn expect_early_answer(b: &mut Bridge) {
    b.send(&vscode_initialize(1));
    let r = b.response(1);
    assert_eq!(
        r["result"]["capabilities"]["tools"]["listChanged"],
        true,
        "{r}\nstderr:\n{}",
        b.stderr()
    );
    let empty = b.exchange(&request(2, "tools/list", json!({})));
    assert_eq!(empty["result"], json!({"tools": []}), "{empty}");
}

/// After `notifications/initialized`: VS Code is asked to open the sign-in (URL mode), the
/// user accepts and signs in at the URL it got, VS Code hears that the step is complete, and
/// the server's tools follow the list change.
fn sign_in_through_vscode(b: &mut Bridge) {
    b.send(&initialized());
    let question = loop {
        let frame = b.next_frame(EXCHANGE);
        if frame["method"] == "elicitation/create" {
            break frame;
        }
    };
    assert_eq!(question["params"]["mode"], "url", "{question}");
    let url = question["params"]["url"]
        .as_str()
        .expect("a URL")
        .to_owned();
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    let eid = question["params"]["elicitationId"].clone();
    b.send(&json!({"jsonrpc":"2.0","id":question["id"],"result":{"action":"accept"}}));
    complete(&url);
    b.send(&call(3, "add", json!({"a": 2, "b": 3})));
    let (r, notes) = b.response_with_notifications(&json!(3));
    assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
    let complete_note = |n: &&Value| {
        n["method"] == "notifications/elicitation/complete" && n["params"]["elicitationId"] == eid
    };
    let mut notes = notes;
    while !notes.iter().any(|n| complete_note(&n)) {
        notes.push(b.next_frame(EXCHANGE));
    }
    let tools = b.exchange(&request(4, "tools/list", json!({})));
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "add")),
        "{tools}"
    );
}

/// A browser opener that fails (none on the machine): `initialize` is answered at once, not
/// after `--answer-initialize-after` (here longer than the test's wait), and the sign-in goes
/// through VS Code.
#[test]
fn s1_a_sign_in_at_the_start_without_a_browser_is_answered_at_once_and_asked_through_vscode() {
    let fixture = oauth_fixture(&[]);
    let mut b = bridge(
        &fixture.url,
        free_port(),
        &["--answer-initialize-after", "300"],
        &[("BROWSER", "false")],
    );
    expect_early_answer(&mut b);
    b.expect_text("the upstream server needs a sign-in and the browser did not open");
    sign_in_through_vscode(&mut b);
    b.expect_text("the upstream server is ready after the bridge's early answer to initialize");
    b.close_and_expect_exit_0();
}

/// `--no-browser`: the early answer comes after `--answer-initialize-after`, and then the
/// sign-in that runs behind it reaches the user through VS Code too.
#[test]
fn s1_a_sign_in_still_running_at_the_early_answer_is_asked_through_vscode() {
    let fixture = oauth_fixture(&[]);
    let mut b = bridge(
        &fixture.url,
        free_port(),
        &["--no-browser", "--answer-initialize-after", "1"],
        &[],
    );
    expect_early_answer(&mut b);
    b.expect_text("the upstream server is still starting after 1 s");
    sign_in_through_vscode(&mut b);
    b.close_and_expect_exit_0();
}
