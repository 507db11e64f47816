//! Load with faults (bridge/README.md "Reliability"): 8 bridges side by side in
//! front of the fixture server, each with 64 requests in flight and 1000 calls, a list change
//! (`toggle`) every 50 calls, and the upstream of one bridge killed in the middle (the tool
//! `crash`). Every request of every bridge is answered exactly once, with a result or with
//! the cause of its failure (`upstream_exited` on the killed one), and no process is left.
//! The figures (requests, seconds, peak memory per bridge) are printed.
//!
//! `MCP_LOAD_BRIDGES` and `MCP_LOAD_CALLS` scale it (defaults 8 and 1000).
#![cfg(unix)]

use crate::support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Bridge, EXIT_BOUND, call};

const IN_FLIGHT: u64 = 64;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Figures {
    bridge: u64,
    requests: u64,
    failed: u64,
    seconds: f64,
    peak_kib: Option<u64>,
    list_changes: u64,
}

fn run_one(index: u64, calls: u64, killed: bool) -> Figures {
    let fixture = support::fixture_bin().to_string_lossy().into_owned();
    let started = Instant::now();
    let mut b = Bridge::start(&["--", &fixture]);
    b.initialize();
    b.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let mut answers: HashMap<u64, Value> = HashMap::new();
    let mut sent: u64 = 0;
    let mut next_id: u64 = 2;
    let mut list_changes = 0;
    let crash_at = calls / 2;
    let mut crashed = false;
    let mut outstanding = 0u64;
    let mut toggles = 0u64;
    let mut peak_kib: Option<u64> = None;
    loop {
        if answers.len().is_multiple_of(100) {
            peak_kib = peak_kib.max(b.peak_kib());
        }
        while !crashed && sent < calls && outstanding < IN_FLIGHT {
            let id = next_id;
            next_id += 1;
            let frame = if killed && sent == crash_at {
                crashed = true;
                call(id, "crash", json!({}))
            } else if sent % 50 == 49 {
                toggles += 1;
                call(id, "toggle", json!({"enabled": toggles.is_multiple_of(2)}))
            } else {
                call(id, "add", json!({"a": id, "b": index}))
            };
            b.send(&frame);
            sent += 1;
            outstanding += 1;
        }
        if outstanding == 0 {
            break;
        }
        let f = b.next_frame(support::EXCHANGE);
        if f.get("method").is_some() {
            if f["method"]
                .as_str()
                .is_some_and(|m| m.ends_with("list_changed"))
            {
                list_changes += 1;
            }
            continue;
        }
        let id = f["id"].as_u64().expect("a numeric id");
        assert!(
            answers.insert(id, f.clone()).is_none(),
            "bridge {index}: request {id} answered twice"
        );
        outstanding -= 1;
    }
    peak_kib = peak_kib.max(b.peak_kib());
    let mut failed = 0;
    for id in 2..next_id {
        let f = answers
            .get(&id)
            .unwrap_or_else(|| panic!("bridge {index}: request {id} not answered"));
        if let Some(e) = f.get("error") {
            assert!(killed, "bridge {index}: {f}");
            assert_eq!(e["data"]["cause"], "upstream_exited", "{f}");
            failed += 1;
        } else if f["result"]["content"][0]["text"].is_string() {
            // `add` gives the sum as text; `toggle` its state.
        } else {
            panic!("bridge {index}: {f}");
        }
    }
    if killed {
        let status = b.wait_exit(Instant::now(), EXIT_BOUND);
        assert_eq!(status.code(), Some(1), "{}", b.stderr());
        assert!(failed >= 1);
    } else {
        b.close_and_expect_exit_0();
        // The gap replay of the first stream (3), then one change per toggle (each changes the
        // state, except perhaps the first).
        assert!(
            list_changes + 1 >= 3 + toggles,
            "bridge {index}: {list_changes} list changes for {toggles} toggles"
        );
    }
    Figures {
        bridge: index,
        requests: next_id - 2,
        failed,
        seconds: started.elapsed().as_secs_f64(),
        peak_kib,
        list_changes,
    }
}

#[test]
fn load_with_faults_every_request_answered_exactly_once() {
    let bridges = env_or("MCP_LOAD_BRIDGES", 8);
    let calls = env_or("MCP_LOAD_CALLS", 1000);
    let started = Instant::now();
    let handles: Vec<_> = (0..bridges)
        .map(|i| std::thread::spawn(move || run_one(i, calls, i == 3)))
        .collect();
    let mut total = 0;
    for h in handles {
        let f = h.join().expect("a bridge of the load test failed");
        total += f.requests;
        eprintln!(
            "load: bridge {}: {} requests ({} failed with upstream_exited), {} list changes, {:.1} s, peak memory {} KiB",
            f.bridge,
            f.requests,
            f.failed,
            f.list_changes,
            f.seconds,
            f.peak_kib.map_or("?".into(), |k| k.to_string())
        );
    }
    let took = started.elapsed();
    eprintln!(
        "load: {bridges} bridges, {total} requests in {:.1} s ({:.0} requests/s)",
        took.as_secs_f64(),
        total as f64 / took.as_secs_f64()
    );
    assert!(took < Duration::from_secs(120));
}
