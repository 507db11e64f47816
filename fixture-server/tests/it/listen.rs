//! `subscriptions/listen` (O6, O7): the acknowledgment, the list change of `toggle` written
//! before the result of `toggle` (200 times), the updates of `touch`, the cancellation of a
//! stream, and the end of the streams at the end of stdin.

use std::time::{Duration, Instant};

use crate::support::{Server, text};
use serde_json::{Value, json};

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Opens a listen stream and returns its acknowledgment.
fn listen(server: &mut Server, id: i64, notifications: Value) -> Value {
    server.request(
        id,
        "subscriptions/listen",
        json!({"notifications": notifications}),
    );
    let ack = server.next_frame().unwrap();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], id);
    ack
}

#[test]
fn the_acknowledgment_names_the_accepted_filter() {
    let mut server = Server::new();
    let filter = json!({
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
        "resourceSubscriptions": ["file:///fixture/notes.txt"]
    });
    let ack = listen(&mut server, 1, filter.clone());
    assert_eq!(ack["params"]["notifications"], filter);
}

#[test]
fn the_list_change_of_toggle_comes_before_its_result_200_times() {
    let mut server = Server::new();
    listen(
        &mut server,
        1,
        json!({"toolsListChanged": true, "promptsListChanged": true}),
    );
    for round in 0..200 {
        let id = 100 + round;
        let enabled = round % 2 == 1;
        server.request(
            id,
            "tools/call",
            json!({"name": "toggle", "arguments": {"enabled": enabled}}),
        );
        let (before, response) = server.response(id);
        let word = if enabled { "enabled" } else { "disabled" };
        assert_eq!(text(&response["result"]), format!("tool toggled: {word}"));
        assert_eq!(before.len(), 1, "round {round}: {before:?}");
        assert_eq!(before[0]["method"], "notifications/tools/list_changed");
        assert_eq!(before[0]["params"]["_meta"][SUBSCRIPTION_ID], 1);
    }
    // The tool list follows the toggle.
    let list = server.result(2, "tools/list", json!({}));
    assert!(
        list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "toggled")
    );
    server.call(3, "toggle", json!({"enabled": false}));
    let list = server.result(4, "tools/list", json!({}));
    assert!(
        !list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "toggled")
    );
    let error = server.error(5, "tools/call", json!({"name": "toggled"}));
    assert_eq!(error["code"], -32602);
    server.backlog.clear();

    // The prompt: its own list change, and no tool list change.
    server.request(
        6,
        "tools/call",
        json!({"name": "toggle", "arguments": {"enabled": false, "target": "prompt"}}),
    );
    let (before, response) = server.response(6);
    assert_eq!(text(&response["result"]), "prompt toggled: disabled");
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["method"], "notifications/prompts/list_changed");
    let prompts = server.result(7, "prompts/list", json!({}));
    assert_eq!(prompts["prompts"].as_array().unwrap().len(), 2);
    // No change: no list change.
    server.request(
        8,
        "tools/call",
        json!({"name": "toggle", "arguments": {"enabled": false, "target": "prompt"}}),
    );
    let (before, _) = server.response(8);
    assert!(before.is_empty(), "{before:?}");
}

#[test]
fn a_stream_gets_only_what_it_asked_for() {
    let mut server = Server::new();
    listen(
        &mut server,
        1,
        json!({"resourceSubscriptions": ["file:///fixture/notes.txt"]}),
    );
    listen(&mut server, 2, json!({"toolsListChanged": true}));
    server.request(
        3,
        "tools/call",
        json!({"name": "touch", "arguments": {"uri": "file:///fixture/notes.txt"}}),
    );
    let (before, response) = server.response(3);
    assert_eq!(
        text(&response["result"]),
        "touched file:///fixture/notes.txt"
    );
    assert_eq!(
        before,
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"_meta": {SUBSCRIPTION_ID: 1}, "uri": "file:///fixture/notes.txt"}})
        ]
    );
    server.request(
        4,
        "tools/call",
        json!({"name": "touch", "arguments": {"uri": "file:///other"}}),
    );
    let (before, _) = server.response(4);
    assert!(before.is_empty(), "{before:?}");
    server.request(
        5,
        "tools/call",
        json!({"name": "toggle", "arguments": {"enabled": false}}),
    );
    let (before, _) = server.response(5);
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["params"]["_meta"][SUBSCRIPTION_ID], 2);
}

#[test]
fn a_cancelled_stream_ends_without_a_result() {
    let mut server = Server::new();
    listen(&mut server, 1, json!({"toolsListChanged": true}));
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    // Once the stream is gone, toggle writes no list change.
    let mut gone = false;
    for id in 10..60 {
        server.request(
            id,
            "tools/call",
            json!({"name": "toggle", "arguments": {"enabled": id % 2 == 1}}),
        );
        let (before, _) = server.response(id);
        if before.is_empty() {
            gone = true;
            break;
        }
    }
    assert!(gone, "the cancelled stream still gets list changes");
    server.close_stdin();
    let frames = server.frames_until_end();
    assert!(
        frames.is_empty(),
        "a result for a cancelled stream: {frames:?}"
    );
    assert!(server.wait_exit(Duration::from_secs(3)).success());
}

#[test]
fn at_the_end_of_stdin_the_streams_end_and_the_server_exits_0_quickly() {
    let mut server = Server::new();
    listen(&mut server, 1, json!({"toolsListChanged": true}));
    listen(&mut server, 2, json!({"promptsListChanged": true}));
    let start = Instant::now();
    server.close_stdin();
    let mut frames = server.frames_until_end();
    frames.sort_by_key(|f| f["id"].as_i64());
    assert_eq!(frames.len(), 2, "{frames:?}");
    for (frame, id) in frames.iter().zip([1, 2]) {
        assert_eq!(frame["id"], id);
        assert_eq!(frame["result"]["resultType"], "complete");
        assert_eq!(frame["result"]["_meta"][SUBSCRIPTION_ID], id);
    }
    let status = server.wait_exit(Duration::from_secs(3));
    assert!(status.success(), "{status:?}");
    // rmcp alone would wait 5 s for the open streams.
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_listen_request_just_before_the_end_of_stdin_gets_its_acknowledgment_and_its_result() {
    let mut server = Server::new();
    server.result(1, "server/discover", json!({}));
    let start = Instant::now();
    server.request(
        2,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    server.close_stdin();
    let frames = server.frames_until_end();
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(
        frames[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(frames[1]["id"], 2);
    assert_eq!(frames[1]["result"]["resultType"], "complete");
    assert!(server.wait_exit(Duration::from_secs(3)).success());
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

/// R7: a client that replaces its stream and cancels both before the end of stdin (what the
/// bridge does at a subscription change and then at its stop) still sees the fixture exit 0
/// quickly. rmcp alone waited 5 s in about a quarter of such runs (a handler whose stream was
/// cancelled while its acknowledgment was written); 20 runs make that race show.
#[test]
fn r7_two_cancelled_streams_then_the_end_of_stdin_exits_0_quickly_every_time() {
    for _ in 0..20 {
        let mut server = Server::new();
        server.result(1, "server/discover", json!({}));
        listen(&mut server, 2, json!({"toolsListChanged": true}));
        listen(
            &mut server,
            3,
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///fixture/notes.txt"]}),
        );
        for id in [2, 3] {
            server.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}));
        }
        let start = Instant::now();
        server.close_stdin();
        let status = server.wait_exit(Duration::from_secs(3));
        assert!(status.success(), "{status:?}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }
}
