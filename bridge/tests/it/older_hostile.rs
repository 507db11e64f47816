//! L3, O1 against a hostile older server on stdio (tests/older/hostile_server.py, Python's
//! standard library only): the server's requests to VS Code are bounded as the input requests
//! of a round, and it completes only an elicitation that it opened and that is still open.

use crate::support;

use serde_json::{Value, json};
use support::Bridge;

fn hostile_server() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/older/hostile_server.py")
        .display()
        .to_string()
}

/// VS Code gets the server's URL elicitation, its one valid completion, and 15 `roots/list`
/// (16 requests wait at once), then the end mark that the server sends once it got the
/// error of each of its 5 requests over the limit; the completion of an elicitation that the
/// server never opened, and the second completion of `srv-1`, never reach VS Code.
#[test]
fn l3_o1_a_flood_of_server_requests_and_forged_completions_stop_at_the_bridge() {
    let server = hostile_server();
    let mut b = Bridge::start(&["--", "python3", &server]);
    b.initialize();
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut frames: Vec<Value> = Vec::new();
    loop {
        let frame = b.next_frame(support::EXCHANGE);
        let end = frame["method"] == "notifications/tools/list_changed";
        frames.push(frame);
        if end {
            break;
        }
    }
    let methods: Vec<&str> = frames
        .iter()
        .map(|f| f["method"].as_str().unwrap_or(""))
        .collect();
    let mut expected = vec!["elicitation/create", "notifications/elicitation/complete"];
    expected.extend(["roots/list"; 15]);
    expected.push("notifications/tools/list_changed");
    assert_eq!(methods, expected, "{frames:?}\nstderr:\n{}", b.stderr());
    assert_eq!(
        frames[1]["params"]["elicitationId"], "srv-1",
        "{}",
        frames[1]
    );
    b.expect_line(|l| {
        l == "mcp-bridge-vscode: bridge: warning: refused the request roots/list of the upstream server: too_many_input_requests: 16 requests of the upstream server wait for the client, limit: 16"
    });
    b.close_and_expect_exit_0();
}
