//! `--revision dual`: the first request locks the connection to its era, as the SDKs of
//! revision 2026-07-28 lock a stdio connection (docs/fixture.md).
use serde_json::json;

use crate::support::{Server, text};

fn initialize_params() -> serde_json::Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "fixture-test", "version": "1.0.0"}
    })
}

#[test]
fn a_first_discover_locks_2026_07_28_and_a_later_initialize_gets_32022() {
    let mut server = Server::start(&["--revision", "dual"]);
    let discovered = server.result(0, "server/discover", json!({}));
    assert!(
        discovered["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{discovered}"
    );
    let error = server.error(1, "initialize", initialize_params());
    assert_eq!(error["code"], json!(-32022), "{error}");
    assert_eq!(
        error["data"],
        json!({"requested": "2025-11-25", "supported": ["2026-07-28"]})
    );
    // The connection goes on serving 2026-07-28.
    let result = server.call(2, "echo", json!({"text": "still here"}));
    assert_eq!(text(&result), "still here");
}

#[test]
fn a_first_initialize_locks_2025_11_25_and_a_later_discover_gets_32601() {
    let mut server = Server::start(&["--revision", "dual"]).checked_as("2025-11-25");
    let result = server.result(1, "initialize", initialize_params());
    assert_eq!(result["protocolVersion"], json!("2025-11-25"));
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let error = server.error(2, "server/discover", json!({}));
    assert_eq!(error["code"], json!(-32601), "{error}");
    let result = server.call(3, "add", json!({"a": 2, "b": 3}));
    assert_eq!(text(&result), "5");
}
