//! The tool `log` honours the log level of each request (O5): nothing without a level, the
//! messages at the level or above otherwise, written before the result.

use crate::support::{Server, meta, text};
use serde_json::json;

fn log_with(server: &mut Server, id: i64, level: Option<&str>) -> Vec<String> {
    let mut envelope = meta();
    if let Some(level) = level {
        envelope["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    server.request(id, "tools/call", json!({"name": "log", "_meta": envelope}));
    let (before, response) = server.response(id);
    assert_eq!(text(&response["result"]), "logged 4 messages");
    before
        .iter()
        .map(|frame| {
            assert_eq!(frame["method"], "notifications/message");
            assert_eq!(frame["params"]["logger"], "fixture");
            let level = frame["params"]["level"].as_str().unwrap().to_string();
            assert_eq!(
                frame["params"]["data"],
                format!("a message at the level {level}")
            );
            level
        })
        .collect()
}

#[test]
fn log_honours_the_level_of_each_request() {
    let mut server = Server::new();
    assert!(log_with(&mut server, 1, None).is_empty());
    assert_eq!(
        log_with(&mut server, 2, Some("debug")),
        ["debug", "info", "warning", "error"]
    );
    assert_eq!(
        log_with(&mut server, 3, Some("info")),
        ["info", "warning", "error"]
    );
    assert_eq!(
        log_with(&mut server, 4, Some("notice")),
        ["warning", "error"]
    );
    assert_eq!(log_with(&mut server, 5, Some("error")), ["error"]);
    assert!(log_with(&mut server, 6, Some("emergency")).is_empty());
    // The level of one request does not stay for the next.
    assert!(log_with(&mut server, 7, None).is_empty());
}
