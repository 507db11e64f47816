//! `--start-delay S`: the fixture reads nothing before S seconds (docs/fixture.md).
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::Server;

#[test]
fn a_request_written_at_once_is_answered_only_after_the_delay() {
    let started = Instant::now();
    let mut server = Server::start(&["--start-delay", "0.8"]);
    server.result(0, "server/discover", json!({}));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(800),
        "answered after {took:?}"
    );
    server.wait_stderr_line("starting in 800 ms");
}

#[test]
fn a_delay_that_is_not_seconds_is_refused_with_exit_2() {
    let mut server = Server::start(&["--start-delay", "later"]);
    assert_eq!(server.wait_exit(Duration::from_secs(5)).code(), Some(2));
    assert!(
        server
            .stderr()
            .contains("--start-delay needs seconds from 0 to 600, not 'later'"),
        "{}",
        server.stderr()
    );
}
