//! R7: stderr lines of the form `mcp-bridge-vscode: <scope>: <level>: <text>`.
//!
//! Stdout carries JSON-RPC frames only, so every human-readable line goes here. The texts are
//! the ones of the contract's troubleshooting table. Callers never pass frame content, header
//! values, tokens or form answers (DESIGN principle 8).

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// The tag that starts every line of the bridge.
pub const TAG: &str = "mcp-bridge-vscode";

/// The level of a log line, and the threshold of `--log-level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Err = 0,
    Warn = 1,
    Info = 2,
    Debug = 3,
}

impl Level {
    /// Parses the value of `--log-level` (`err`, `warn`, `info`, `debug`).
    pub fn parse(text: &str) -> Option<Level> {
        match text {
            "err" => Some(Level::Err),
            "warn" => Some(Level::Warn),
            "info" => Some(Level::Info),
            "debug" => Some(Level::Debug),
            _ => None,
        }
    }

    /// The word of the level in a line, as the contract writes it.
    pub fn word(self) -> &'static str {
        match self {
            Level::Err => "error",
            Level::Warn => "warning",
            Level::Info => "info",
            Level::Debug => "debug",
        }
    }
}

/// The scope of a line: `bridge` is the core, `vscode` is the executable, `mcp_stdio` and
/// `mcp_router` are the upstream client (the SDK layer of the contract's table: the stdio
/// process and the router of its frames).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Bridge,
    Vscode,
    McpStdio,
    McpRouter,
}

impl Scope {
    fn word(self) -> &'static str {
        match self {
            Scope::Bridge => "bridge",
            Scope::Vscode => "vscode",
            Scope::McpStdio => "mcp_stdio",
            Scope::McpRouter => "mcp_router",
        }
    }
}

static THRESHOLD: AtomicU8 = AtomicU8::new(Level::Info as u8);

/// Sets the threshold of `--log-level` for the whole process.
pub fn set_threshold(level: Level) {
    THRESHOLD.store(level as u8, Ordering::Relaxed);
}

/// True when a line of this level is written.
pub fn enabled(level: Level) -> bool {
    (level as u8) <= THRESHOLD.load(Ordering::Relaxed)
}

/// Formats one line without its newline (pure, for tests).
pub fn format_line(scope: Scope, level: Level, text: &str) -> String {
    // A line break inside the text would start a line without the tag; VS Code would then
    // take the rest for a line of the upstream server.
    let text = text.replace(['\r', '\n'], " ");
    format!("{TAG}: {}: {}: {text}", scope.word(), level.word())
}

/// Writes one line to stderr when the level is enabled. A failed write is ignored: stderr is
/// the last place to report anything.
pub fn write(scope: Scope, level: Level, text: &str) {
    if !enabled(level) {
        return;
    }
    let mut line = format_line(scope, level, text);
    line.push('\n');
    let stderr = std::io::stderr();
    let mut lock = stderr.lock();
    let _ = lock.write_all(line.as_bytes());
    let _ = lock.flush();
}

/// A line of the core (`bridge` scope).
pub fn bridge(level: Level, text: &str) {
    write(Scope::Bridge, level, text);
}

/// A line of the executable (`vscode` scope).
pub fn vscode(level: Level, text: &str) {
    write(Scope::Vscode, level, text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r7_line_has_the_tag_scope_and_level() {
        assert_eq!(
            format_line(
                Scope::Bridge,
                Level::Err,
                "the upstream server exited with code 3"
            ),
            "mcp-bridge-vscode: bridge: error: the upstream server exited with code 3"
        );
        assert_eq!(
            format_line(Scope::Vscode, Level::Warn, "x"),
            "mcp-bridge-vscode: vscode: warning: x"
        );
        assert_eq!(
            format_line(Scope::Bridge, Level::Info, "i"),
            "mcp-bridge-vscode: bridge: info: i"
        );
        assert_eq!(
            format_line(Scope::Bridge, Level::Debug, "d"),
            "mcp-bridge-vscode: bridge: debug: d"
        );
    }

    #[test]
    fn r7_line_breaks_never_split_a_line() {
        assert_eq!(
            format_line(Scope::Bridge, Level::Info, "a\nb\r\nc"),
            "mcp-bridge-vscode: bridge: info: a b  c"
        );
    }

    #[test]
    fn r7_levels_parse_and_order() {
        assert_eq!(Level::parse("err"), Some(Level::Err));
        assert_eq!(Level::parse("warn"), Some(Level::Warn));
        assert_eq!(Level::parse("info"), Some(Level::Info));
        assert_eq!(Level::parse("debug"), Some(Level::Debug));
        assert_eq!(Level::parse("loud"), None);
        assert_eq!(Level::parse("warning"), None);
        assert!(Level::Err < Level::Debug);
    }
}
