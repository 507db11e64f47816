//! Process tests of M5 (the embedded bridge, bridge/README.md): `bridge-fixture-server --embedded`, the fixture (an rmcp
//! server) serving stdio through `embed::serve_stdio`, with real pipes. The first message
//! selects the path: VS Code's `initialize` gets the bridge in the process; a client of
//! revision 2026-07-28 gets the server's own answers. Each test ends with the end of stdin and
//! proves exit 0 within its bound and that no process is left (support::Bridge::wait_exit:
//! stderr ends only when every holder is gone).

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{
    Bridge, EXIT_BOUND, call, copilot_initialize, fixture_bin, request, vscode_initialize,
};

/// The contract's bound for the Local path too (R7, the stop sequence): the server in the
/// process gets shutdown_grace after the end of its input, as a child does, so a tighter
/// number is a bound of the machine's load, not of the bridge.
const LOCAL_EXIT: Duration = EXIT_BOUND;
/// The bound of one frame.
const FRAME: Duration = Duration::from_secs(20);

fn start(args: &[&str]) -> Bridge {
    Bridge::start_program(&fixture_bin(), args, &[], &[])
}

/// The `_meta` envelope of a request of revision 2026-07-28.
fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
    })
}

fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = envelope();
    request(id, method, params)
}

fn text_of(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn tool_names(r: &Value) -> Vec<String> {
    r["result"]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Answers the bridge's `elicitation/create` for `ask_form` and returns the call's response.
/// Notifications before the question are skipped (`Bridge::next_message`).
fn answer_form(b: &mut Bridge, call_id: u64) -> Value {
    let q = b.next_message(FRAME);
    assert_eq!(q["method"], "elicitation/create", "{q}");
    assert!(
        q["id"].as_str().unwrap_or_default().starts_with("b-"),
        "{q}"
    );
    b.send(&json!({"jsonrpc":"2.0","id":q["id"],"result":{"action":"accept","content":{"name":"Ada"}}}));
    b.response(call_id)
}

fn exit_0_within(b: &mut Bridge, bound: Duration) {
    let since = b.close_stdin();
    let status = b.wait_exit(since, bound);
    assert_eq!(status.code(), Some(0), "stderr:\n{}", b.stderr());
}

#[test]
fn m5_local_path_initialize_lists_adds_asks_a_form_and_exits_within_the_bound() {
    let mut b = start(&["--embedded"]);
    let result = b.initialize();
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "bridge-fixture-server");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let tools = tool_names(&b.exchange(&request(2, "tools/list", json!({}))));
    assert!(tools.iter().any(|t| t == "add"), "{tools:?}");
    assert!(tools.iter().any(|t| t == "ask_form"), "{tools:?}");
    assert_eq!(
        text_of(&b.exchange(&call(3, "add", json!({"a":2,"b":3})))),
        "5"
    );
    b.send(&call(4, "ask_form", json!({})));
    let r = answer_form(&mut b, 4);
    let text = text_of(&r);
    assert!(
        text.starts_with("form: accept") && text.contains("Ada"),
        "{r}"
    );
    exit_0_within(&mut b, LOCAL_EXIT);
    // The bridge served the connection: its line is on stderr.
    b.expect_text("mcp-bridge-vscode: bridge: info: the upstream server is ready");
}

#[test]
fn m5_copilot_with_refuse_gets_32601_for_discover_then_the_bridge_and_an_input_round() {
    let mut b = start(&["--embedded=refuse"]);
    let r = b.exchange(&request(0, "server/discover", json!({})));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(r["error"]["data"]["cause"], "method_not_found", "{r}");
    let copilot = copilot_initialize(1);
    let r = b.exchange(&copilot);
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    assert!(
        tool_names(&b.exchange(&request(2, "tools/list", json!({})))).contains(&"add".to_owned())
    );
    b.send(&call(3, "ask_form", json!({})));
    let r = answer_form(&mut b, 3);
    assert!(text_of(&r).contains("Ada"), "{r}");
    exit_0_within(&mut b, EXIT_BOUND);
}

#[test]
fn m5_default_policy_the_server_answers_discover_and_a_modern_client_lists_and_calls() {
    let mut b = start(&["--embedded"]);
    let r = b.exchange(&modern(1, "server/discover", json!({})));
    let versions = r["result"]["supportedVersions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(versions.contains(&json!("2026-07-28")), "{r}");
    let r = b.exchange(&modern(2, "tools/list", json!({})));
    assert!(tool_names(&r).contains(&"add".to_owned()), "{r}");
    let r = b.exchange(&modern(
        3,
        "tools/call",
        json!({"name":"add","arguments":{"a":2,"b":3}}),
    ));
    assert_eq!(text_of(&r), "5", "{r}");
    exit_0_within(&mut b, EXIT_BOUND);
    // No bridge in between: not one line of the bridge.
    assert!(b.bridge_lines().is_empty(), "{}", b.stderr());
}

#[test]
fn m5_a_modern_tools_list_as_the_first_line_gets_the_servers_own_answer() {
    let mut b = start(&["--embedded=refuse"]);
    let r = b.exchange(&modern(7, "tools/list", json!({})));
    assert!(tool_names(&r).contains(&"add".to_owned()), "{r}");
    // The server's own 2026-07-28 answer: an MRTR tool asks with an InputRequiredResult, not
    // with the bridge's elicitation/create.
    let r = b.exchange(&modern(
        8,
        "tools/call",
        json!({"name":"ask_form","arguments":{}}),
    ));
    assert!(r.get("result").is_some(), "{r}");
    assert!(
        b.all_frames
            .iter()
            .all(|f| f["method"] != "elicitation/create"),
        "{:?}",
        b.all_frames
    );
    exit_0_within(&mut b, EXIT_BOUND);
    assert!(b.bridge_lines().is_empty(), "{}", b.stderr());
}

#[test]
fn m5_two_messages_in_one_write_both_reach_the_bridge() {
    let mut b = start(&["--embedded"]);
    let mut bytes = serde_json::to_vec(&vscode_initialize(1)).expect("json");
    bytes.push(b'\n');
    bytes.extend_from_slice(
        &serde_json::to_vec(&call(2, "add", json!({"a":2,"b":3}))).expect("json"),
    );
    bytes.push(b'\n');
    b.send_raw(&bytes);
    // The second request has no `_meta` envelope, so the server's own path would refuse it;
    // the bridge answers it: `5`, or not_initialized (the core's rule) when it came while
    // the initialize was still running.
    let mut by_id = std::collections::BTreeMap::new();
    while by_id.len() < 2 {
        let f = b.next_frame(FRAME);
        if let Some(id) = f["id"].as_u64() {
            by_id.insert(id, f);
        }
    }
    assert_eq!(by_id[&1]["result"]["protocolVersion"], "2025-11-25");
    let second = &by_id[&2];
    assert!(
        text_of(second) == "5" || second["error"]["data"]["cause"] == "not_initialized",
        "{second}"
    );
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    assert_eq!(
        text_of(&b.exchange(&call(3, "add", json!({"a":2,"b":3})))),
        "5"
    );
    exit_0_within(&mut b, LOCAL_EXIT);
}

#[test]
fn m5_end_of_input_before_any_request_exits_0_at_once() {
    let mut b = start(&["--embedded"]);
    b.send_raw(b"\n  \n");
    exit_0_within(&mut b, LOCAL_EXIT);
    assert!(b.all_frames.is_empty(), "{:?}", b.all_frames);
}

#[test]
fn m5_end_of_input_with_requests_in_flight_on_the_bridge_path_exits_0_within_the_bound() {
    let mut b = start(&["--embedded"]);
    b.initialize();
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    b.send(&call(2, "slow", json!({"ms": 60_000})));
    b.send(&call(3, "ask_form", json!({})));
    // The form question proves that both calls reached the server (list changes of the
    // listen stream can come first).
    loop {
        let q = b.next_frame(FRAME);
        if q["method"] == "elicitation/create" {
            break;
        }
    }
    let since = Instant::now();
    exit_0_within(&mut b, EXIT_BOUND);
    assert!(since.elapsed() < EXIT_BOUND);
}

#[test]
fn m5_end_of_input_with_requests_in_flight_on_the_servers_path_exits_0_within_the_bound() {
    let mut b = start(&["--embedded"]);
    let r = b.exchange(&modern(1, "tools/list", json!({})));
    assert!(r.get("result").is_some(), "{r}");
    b.send(&modern(
        2,
        "tools/call",
        json!({"name":"slow","arguments":{"ms":60_000}}),
    ));
    b.send(&modern(
        3,
        "subscriptions/listen",
        json!({"notifications":{"toolsListChanged":true}}),
    ));
    // The acknowledgment of the listen stream proves that the server took both requests.
    let ack = b.next_frame(FRAME);
    assert!(ack.get("method").is_some(), "{ack}");
    exit_0_within(&mut b, EXIT_BOUND);
}

#[test]
fn m5_default_policy_discover_answered_by_the_server_then_initialize_gets_the_bridge() {
    let mut b = start(&["--embedded"]);
    let r = b.exchange(&request(0, "server/discover", json!({})));
    // The server's own answer (rmcp wants the envelope; without it, its error), never the
    // bridge's -32601.
    assert_ne!(r["error"]["data"]["cause"], "method_not_found", "{r}");
    let r = b.exchange(&vscode_initialize(1));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    assert_eq!(
        text_of(&b.exchange(&call(2, "add", json!({"a":2,"b":3})))),
        "5"
    );
    exit_0_within(&mut b, LOCAL_EXIT);
}

/// A server of lines over its end of the pipe: each request gets a result with its own
/// line in `echo`; the end of its input closes its output.
async fn answer_each_line(pipe: tokio::io::DuplexStream) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (read, mut write) = tokio::io::split(pipe);
    let mut lines = tokio::io::BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let id = serde_json::from_str::<Value>(&line)
            .map(|v| v["id"].clone())
            .unwrap_or(Value::Null);
        let answer = json!({"jsonrpc":"2.0","id":id,"result":{"echo":line}});
        if write
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

/// M5, the generic entry point as a user's crate calls it (this test crate names only the
/// public API): `Options` made and changed from outside, the end of input before any request
/// is `Served::Nothing`, and a request of revision 2026-07-28 goes to the server over its pipe
/// unchanged, its answer to the output, `Served::Server`.
#[test]
fn m5_the_generic_entry_point_serves_a_server_over_its_pipe_and_says_which_path() {
    use mcp_bridge_vscode::embed::{self, Options, Pipe, Served};
    use tokio::io::AsyncReadExt;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let connect = || -> std::io::Result<Pipe> {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        tokio::spawn(answer_each_line(theirs));
        let (read, write) = tokio::io::split(ours);
        Ok(Pipe::new(read, write))
    };
    let mut options = Options::default();
    options.shutdown_grace = Duration::from_secs(1);
    let request = modern(7, "tools/list", json!({})).to_string();
    let (served, output) = runtime.block_on(async {
        let (out, mut seen) = tokio::io::duplex(1 << 16);
        let nothing = embed::serve_stdio_with(connect, options.clone(), (&b"\n"[..], out));
        let nothing = tokio::time::timeout(FRAME, nothing).await;
        assert_eq!(nothing.expect("in time").ok(), Some(Served::Nothing));
        let input = std::io::Cursor::new(format!("{request}\n").into_bytes());
        let (out, mut server_seen) = tokio::io::duplex(1 << 16);
        let served = embed::serve_stdio_with(connect, options, (input, out));
        let served = tokio::time::timeout(FRAME, served).await.expect("in time");
        let mut output = String::new();
        let read = server_seen.read_to_string(&mut output);
        tokio::time::timeout(FRAME, read)
            .await
            .expect("the output ends")
            .expect("read");
        let mut rest = Vec::new();
        let _ = seen.read_to_end(&mut rest).await;
        assert!(rest.is_empty(), "nothing written without a request");
        (served.ok(), output)
    });
    assert_eq!(served, Some(Served::Server));
    let answer: Value = serde_json::from_str(output.trim_end()).unwrap_or_default();
    assert_eq!(answer["id"], 7, "{output}");
    assert_eq!(answer["result"]["echo"], request.as_str(), "{output}");
}
