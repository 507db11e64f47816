//! L1, M4 for an older server at a URL: a sign-in that begins at its `initialize` adds its own
//! time limit to the one of `initialize`, as it does for `server/discover` (the older server's
//! handshake is an exchange of the one upstream client), and the "still waiting" lines come
//! meanwhile.

use crate::support;

use std::time::{Duration, Instant};

use support::oauth::{bridge as oauth_bridge, complete, free_port, oauth_fixture, wait_sign_in};
use support::stored::add;
use support::{Bridge, vscode_initialize};

/// Waits (bounded by `limit`) for the stderr line `line` of the bridge.
fn wait_line(b: &Bridge, line: &str, limit: Duration) {
    let since = Instant::now();
    while since.elapsed() < limit {
        if b.bridge_lines().iter().any(|l| l == line) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no line {line:?} in {limit:?}\nstderr:\n{}", b.stderr());
}

/// The person signs in only after the "still waiting" line of second `seconds`: 10 s with
/// `--discover-timeout 1` here, so that the sign-in ends long after the plain time limit of
/// `initialize`; with `MCP_OLDER_SIGN_IN_S=70` (the manual check of a sign-in of 70 s) the
/// default limit of 60 s stays and the sign-in ends after the line of second 70.
#[test]
fn l1_m4_a_sign_in_at_the_initialize_of_an_older_server_extends_its_time_limit() {
    let long = std::env::var("MCP_OLDER_SIGN_IN_S")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    let fixture = oauth_fixture(&["--revision", "2025-11-25"]);
    let mut options = vec![
        "--no-browser",
        "--upstream-revision",
        "2025-11-25",
        "--sign-in-timeout",
        "300",
    ];
    if long.is_none() {
        options.extend(["--discover-timeout", "1"]);
    }
    let mut b = oauth_bridge(&fixture.url, free_port(), &options, &[]);
    b.send(&vscode_initialize(1));
    let url = wait_sign_in(&b, 1);
    let seconds = long.unwrap_or(10);
    let line = format!(
        "mcp-bridge-vscode: bridge: info: still waiting for the upstream server: initialize (request 1, {seconds} s)"
    );
    wait_line(&b, &line, Duration::from_secs(seconds + 20));
    complete(&url);
    let r = b.response(1);
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    add(&mut b);
    b.close_and_expect_exit_0();
}
