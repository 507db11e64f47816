//! The process: the command line (exit code 2 and the cause on stderr), the end of stdin
//! (exit code 0 in a bounded time, R7), the stderr prefix, and `--close-stdout`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{BIN, Server};
use serde_json::json;

#[test]
fn the_end_of_stdin_before_any_request_exits_0() {
    let mut server = Server::new();
    let start = Instant::now();
    server.close_stdin();
    assert!(server.frames_until_end().is_empty());
    assert!(server.wait_exit(Duration::from_secs(3)).success());
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(server.stderr(), "");
}

#[test]
fn the_end_of_stdin_during_a_slow_call_exits_0_quickly() {
    let mut server = Server::new();
    server.result(1, "server/discover", json!({}));
    server.request(
        2,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 60000}}),
    );
    // The call runs once a later request was answered.
    server.result(3, "tools/list", json!({}));
    let start = Instant::now();
    server.close_stdin();
    let frames = server.frames_until_end();
    assert!(frames.len() <= 1, "{frames:?}");
    assert!(server.wait_exit(Duration::from_secs(3)).success());
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn help_and_version_write_to_stdout_and_exit_0() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.starts_with("usage: bridge-fixture-server"), "{help}");
    assert!(help.contains("--many-tools N") && help.contains("--close-stdout"));
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("bridge-fixture-server {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn arguments_that_are_not_valid_exit_2_with_the_cause() {
    let cases = [
        (vec!["--bogus"], "the option --bogus is not known"),
        (
            vec!["--many-tools", "lots"],
            "--many-tools needs a number, not 'lots'",
        ),
        (
            vec!["--many-tools"],
            "the option --many-tools needs a value",
        ),
    ];
    for (args, cause) in cases {
        let out = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let first = stderr.lines().next().unwrap();
        assert_eq!(first, format!("bridge-fixture-server: error(cli): {cause}"));
        assert!(stderr.contains("usage: bridge-fixture-server"));
    }
}

#[cfg(unix)]
#[test]
fn close_stdout_closes_stdout_and_keeps_running_without_reading() {
    let mut server = Server::start(&["--close-stdout"]);
    let start = Instant::now();
    // The end of stdout comes at once, without a frame.
    assert_eq!(server.next_frame_within(Duration::from_secs(5)), Some(None));
    assert!(start.elapsed() < Duration::from_secs(3));
    // It does not read stdin: its end does not stop the process.
    server.close_stdin();
    server.wait_stderr_line("closed stdout");
    assert!(server.running());
    assert!(
        server
            .stderr()
            .starts_with("bridge-fixture-server: warning(stdio): closed stdout")
    );
    // Drop kills the process.
}

#[test]
fn a_notification_before_the_first_request_does_not_stop_the_server() {
    let mut server = Server::new();
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    );
    server.result(1, "server/discover", json!({}));
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let result = server.call(2, "add", json!({"a": 2, "b": 3}));
    assert_eq!(crate::support::text(&result), "5");
    server.close_stdin();
    assert!(server.wait_exit(Duration::from_secs(3)).success());
    server.wait_stderr_line("ignored a message before the first request");
}
