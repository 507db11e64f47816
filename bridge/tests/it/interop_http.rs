//! M4, the URL form, with real 2026-07-28 servers at a URL that we did not write
//! (tests/it/support/http_peers.rs): the TypeScript SDK v2 server (`createMcpHandler`) and rmcp's
//! `StreamableHttpService`. Through the bridge, VS Code's side lists the tools, calls `add`,
//! gets the progress of a call with its own token (O4, C3), completes one input round of a
//! form (R8, O1), and at the end of stdin the bridge exits 0 within the bound while a call is
//! in flight (R7), which closes that call's response stream (the transport's cancellation).

use crate::support;

use serde_json::{Value, json};
use support::http_peers::HttpPeer;
use support::{Bridge, EXCHANGE, call, request};

/// One peer through the bridge; `form_tool` asks for `city` with a form.
fn through_the_bridge(peer: HttpPeer, form_tool: &str, server_name: &str) {
    let mut bridge = Bridge::start(&[peer.url()]);
    let init = bridge.initialize();
    assert_eq!(init["serverInfo"]["name"], server_name, "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    bridge.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));

    let list = bridge.exchange(&request(2, "tools/list", json!({})));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in ["add", form_tool, "progress", "slow"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }

    let add = bridge.exchange(&call(3, "add", json!({"a":2,"b":3})));
    assert_eq!(add["result"]["content"][0]["text"], "5", "{add}");

    // O4, C3: Copilot's token 0 on the call; the progress reaches VS Code with it.
    let mut progress = call(4, "progress", json!({}));
    progress["params"]["_meta"] = json!({"progressToken": 0});
    bridge.send(&progress);
    let (done, notes) = bridge.response_with_notifications(&json!(4));
    assert!(done.get("result").is_some(), "{done}");
    let tokens: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| &n["params"]["progressToken"])
        .collect();
    assert_eq!(tokens, vec![&json!(0); 3], "{notes:?}");

    // R8: the input round of a form goes to VS Code as elicitation/create; its answer
    // completes the call.
    bridge.send(&call(5, form_tool, json!({})));
    let ask = bridge.next_message(EXCHANGE);
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["id"], "b-1", "{ask}");
    bridge.send(
        &json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"city":"Oslo"}}}),
    );
    let answer = bridge.response(5);
    assert_eq!(
        answer["result"]["content"][0]["text"], "sunny in Oslo",
        "{answer}"
    );

    // R7: a call in flight does not hold the stop.
    bridge.send(&call(6, "slow", json!({})));
    bridge.close_and_expect_exit_0();
    assert!(
        !bridge.all_frames.iter().any(|f| f["id"] == 6),
        "no response for the call cancelled at the end of stdin"
    );
    peer.stop();
}

#[test]
fn m4_the_typescript_sdk_v2_server_at_a_url() {
    if let Some(peer) = HttpPeer::ts_v2() {
        through_the_bridge(peer, "weather", "ts-v2-http-server");
    }
}

#[test]
fn m4_the_rmcp_streamable_http_server_at_a_url() {
    if let Some(peer) = HttpPeer::rmcp() {
        through_the_bridge(peer, "ask_city", "rmcp-http-peer");
    }
}
