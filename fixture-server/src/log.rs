//! Lines on stderr: `bridge-fixture-server: <level>(<scope>): <text>`. The prefix lets a test
//! tell the lines of the fixture from those of the bridge that runs it. Stdout carries JSON-RPC
//! frames only (R7), thus every line of the fixture goes to stderr.
use std::io::Write;

fn line(level: &str, scope: &str, text: &str) {
    // One write per line: stderr is unbuffered, and `writeln!` would write the pieces one by
    // one, so that they interleave with the lines of the bridge that shares the stderr.
    let line = format!("bridge-fixture-server: {level}({scope}): {text}\n");
    // A closed stderr must not stop the server: the line is lost, nothing else.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// An error line.
pub fn error(scope: &str, text: &str) {
    line("error", scope, text);
}

/// A warning line.
pub fn warning(scope: &str, text: &str) {
    line("warning", scope, text);
}

/// An information line.
pub fn info(scope: &str, text: &str) {
    line("info", scope, text);
}
