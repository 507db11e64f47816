//! `harness scripted-server <table.json>`: a server on stdio that answers from a table, for the
//! tests of `harness check` (harness/tests/it/check.rs). It uses the automatic replies of the
//! scripted upstream (upstream.rs): the table's `replies` maps a method to `{"result":…}`,
//! `{"error":…}`, `"hang"` or an array of them used in turn. A request without a reply gets
//! -32601. `after_initialized` holds frames written after `notifications/initialized` (requests
//! of the server, such as `roots/list`); `noise` holds stdout lines written at the start that
//! are not JSON-RPC messages. The answers of the client are read and ignored.
use std::io::{BufRead, Write};

use serde_json::{Value, json};

use crate::upstream::{Auto, auto_reply};

/// Runs the server until the end of stdin; gives the exit code.
pub fn run(table_path: &str) -> i32 {
    let table: Value = match std::fs::read_to_string(table_path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("harness scripted-server: {table_path}: {e}");
            return 2;
        }
    };
    let replies = table
        .get("replies")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut auto = Auto::new(replies);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut write = |line: &str| {
        let ok = writeln!(out, "{line}").and_then(|()| out.flush());
        ok.is_ok()
    };
    for noise in table
        .get("noise")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !write(noise.as_str().unwrap_or("noise")) {
            return 1;
        }
    }
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return 1 };
        let Ok(frame) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = frame.get("method").and_then(Value::as_str).unwrap_or("");
        if method == "notifications/initialized" {
            let after = table.get("after_initialized").and_then(Value::as_array);
            for f in after.into_iter().flatten() {
                if !write(&f.to_string()) {
                    return 1;
                }
            }
            continue;
        }
        let Some(id) = frame.get("id").filter(|_| !method.is_empty()) else {
            continue;
        };
        let reply = match auto_reply(&mut auto, &frame) {
            Some(Some(line)) => line,
            Some(None) => continue,
            None => json!({"jsonrpc":"2.0","id":id,
                "error":{"code":-32601,"message":format!("Method not found: {method}")}})
            .to_string(),
        };
        if !write(&reply) {
            return 1;
        }
    }
    0
}
