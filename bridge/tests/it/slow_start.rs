//! S1 (docs/rules.md) on the real binary: a server that starts more slowly than
//! `--answer-initialize-after` (here 1 s, the fixture behind a shell that waits 3 s first, as
//! `npx` or Docker do before the server reads its input). VS Code's `initialize` gets the
//! bridge's early answer; the lists are empty until the server is ready; other requests wait
//! for it; then a list change per list. With `off` the answer waits for the server; a start
//! that fails after the early answer fails every request with its cause.

use crate::support;

use serde_json::{Value, json};
use support::{Bridge, EXCHANGE, call, request};

/// The server behind a shell that waits `seconds` before it becomes `exec` of the fixture
/// with `args` (or exits with `exit`).
fn slow(seconds: u32, then: &str) -> Vec<String> {
    vec![
        "--name".into(),
        "slow".into(),
        "--answer-initialize-after".into(),
        "1".into(),
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!("sleep {seconds}; {then}"),
    ]
}

fn fixture() -> String {
    support::fixture_bin().to_string_lossy().into_owned()
}

fn start(args: &[String]) -> Bridge {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Bridge::start(&args)
}

/// Frames until the response to `id` and a notification `method` both came, in any order:
/// the contract gives the list change no order against a response.
fn response_and_notification(b: &mut Bridge, id: u64, method: &str) -> Value {
    let (mut response, mut noted) = (None, false);
    while response.is_none() || !noted {
        let frame = b.next_frame(EXCHANGE);
        if frame["id"] == id && frame.get("method").is_none() {
            response = Some(frame);
        } else if frame["method"] == method {
            noted = true;
        }
    }
    response.unwrap_or_default()
}

#[test]
fn s1_a_slow_start_gets_the_early_answer_empty_lists_then_a_list_change_and_its_tools() {
    let mut b = start(&slow(3, &format!("exec {}", fixture())));
    let result = b.initialize();
    assert_eq!(result["serverInfo"]["name"], "slow", "{result}");
    assert_eq!(
        result["capabilities"]["tools"]["listChanged"], true,
        "{result}"
    );
    b.expect_text("the upstream server is still starting after 1 s");
    let empty = b.exchange(&request(2, "tools/list", json!({})));
    assert_eq!(empty["result"], json!({"tools": []}), "{empty}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    // Waits for the start, then goes upstream.
    b.send(&call(3, "echo", json!({"text": "late"})));
    let answer = response_and_notification(&mut b, 3, "notifications/tools/list_changed");
    assert_eq!(answer["result"]["content"][0]["text"], "late", "{answer}");
    let tools = b.exchange(&request(4, "tools/list", json!({})));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(names.contains(&"echo"), "{tools}");
    b.expect_text("the upstream server is ready after the bridge's early answer to initialize");
    b.close_and_expect_exit_0();
}

#[test]
fn s1_an_older_server_that_starts_slowly_gets_vscodes_initialized_notification_then_works() {
    let then = format!("exec {} --revision 2025-11-25", fixture());
    let mut b = start(&slow(3, &then));
    b.initialize();
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    b.send(&call(2, "echo", json!({"text": "older"})));
    let answer = response_and_notification(&mut b, 2, "notifications/tools/list_changed");
    assert_eq!(answer["result"]["content"][0]["text"], "older", "{answer}");
    b.expect_text("it is a server of an older revision");
    b.close_and_expect_exit_0();
}

#[test]
fn s1_off_waits_for_the_server_and_answers_with_its_own_result() {
    let mut args = slow(3, &format!("exec {}", fixture()));
    args[3] = "off".into();
    let mut b = start(&args);
    let result = b.initialize();
    assert_eq!(
        result["serverInfo"]["name"], "bridge-fixture-server",
        "{result}"
    );
    assert!(
        !b.stderr().contains("still starting"),
        "no early answer:\n{}",
        b.stderr()
    );
    b.close_and_expect_exit_0();
}

#[test]
fn s1_a_start_that_fails_after_the_early_answer_fails_each_request_with_its_cause() {
    let mut b = start(&slow(3, "exit 3"));
    b.initialize();
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let failed = b.exchange(&call(2, "echo", json!({"text": "x"})));
    let detail = failed["error"]["data"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(
        detail.contains("closed its output") || detail.contains("exit"),
        "{failed}"
    );
    let again = b.exchange(&request(3, "tools/list", json!({})));
    assert_eq!(again["error"], failed["error"], "{again}");
    let reinit = b.exchange(&support::vscode_initialize(4));
    assert_eq!(
        reinit["error"]["data"]["cause"], "already_initialized",
        "{reinit}"
    );
    b.close_and_expect_exit_0();
}

#[test]
fn s1_a_request_cancelled_while_it_waits_for_the_start_gets_no_response() {
    let mut b = start(&slow(3, &format!("exec {}", fixture())));
    b.initialize();
    b.send(&call(2, "echo", json!({"text": "never"})));
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}));
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    b.send(&call(3, "echo", json!({"text": "after"})));
    let answer = response_and_notification(&mut b, 3, "notifications/tools/list_changed");
    assert_eq!(answer["result"]["content"][0]["text"], "after", "{answer}");
    // A ping behind: a late response of the cancelled request would have come by its answer.
    b.exchange(&request(4, "ping", json!({})));
    assert!(
        !b.all_frames.iter().any(|f| f["id"] == 2),
        "the cancelled request got a response"
    );
    b.close_and_expect_exit_0();
}
