//! R7: stderr lines of the form `mcp-bridge-vscode: <scope>: <level>: <text>`.
//!
//! Stdout carries JSON-RPC frames only, so every human-readable line goes to stderr. The texts
//! are the ones of docs/stderr.md, and [`lines`] lists them all. Callers never pass frame content,
//! header values, tokens or form answers (docs/architecture.md principle 8).
//!
//! Every line is a `tracing` event: the target is the scope (`bridge`, `vscode`, `mcp_stdio`,
//! `mcp_router`) and the level is mapped (err → ERROR, warn → WARN, info → INFO, debug →
//! DEBUG). The executable installs [`LineLayer`] (see [`install`]), which writes the line
//! format above to stderr; an embedding server installs its own subscriber and receives the
//! same events. `--log-level` is the threshold of [`set_threshold`]: a line below it is never
//! formatted, and the check is one atomic load.
//!
//! The files: this one holds the levels, the scopes, the threshold and [`write()`]; `layer.rs`
//! the formatter ([`LineLayer`], [`request_span`], which adds ` [request <id>]` to a debug
//! line); [`lines`] the one table of every line with its scope, level and text, from which
//! docs/stderr.md's tables are made; `capture.rs` the capture of lines in unit tests.

#[cfg(test)]
pub mod capture;
mod layer;
// The table is read by its tests (docs/stderr.md and the call sites) and by `cargo doc`.
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "the table is read by its tests and the docs")
)]
pub mod lines;

use std::sync::atomic::{AtomicU8, Ordering};

pub use layer::{LineLayer, install, request_span};

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

    /// The word of the level in a line (R7).
    pub fn word(self) -> &'static str {
        match self {
            Level::Err => "error",
            Level::Warn => "warning",
            Level::Info => "info",
            Level::Debug => "debug",
        }
    }

    /// The level of a tracing event; TRACE has no line.
    pub fn from_tracing(level: tracing::Level) -> Option<Level> {
        match level {
            tracing::Level::ERROR => Some(Level::Err),
            tracing::Level::WARN => Some(Level::Warn),
            tracing::Level::INFO => Some(Level::Info),
            tracing::Level::DEBUG => Some(Level::Debug),
            _ => None,
        }
    }

    /// The tracing level of the events of this level.
    pub fn to_tracing(self) -> tracing::Level {
        match self {
            Level::Err => tracing::Level::ERROR,
            Level::Warn => tracing::Level::WARN,
            Level::Info => tracing::Level::INFO,
            Level::Debug => tracing::Level::DEBUG,
        }
    }
}

/// The scope of a line: `bridge` is the core, `vscode` is the executable, `mcp_stdio` and
/// `mcp_router` are the upstream client (the SDK layer of docs/stderr.md: the stdio
/// process and the router of its frames). The scope is the target of the tracing event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Bridge,
    Vscode,
    McpStdio,
    McpRouter,
}

impl Scope {
    /// The word of the scope in a line, and the target of its tracing events.
    pub fn target(self) -> &'static str {
        match self {
            Scope::Bridge => "bridge",
            Scope::Vscode => "vscode",
            Scope::McpStdio => "mcp_stdio",
            Scope::McpRouter => "mcp_router",
        }
    }

    /// The scope of a tracing target; the events of other targets (other crates) get no line.
    pub fn from_target(target: &str) -> Option<Scope> {
        match target {
            "bridge" => Some(Scope::Bridge),
            "vscode" => Some(Scope::Vscode),
            "mcp_stdio" => Some(Scope::McpStdio),
            "mcp_router" => Some(Scope::McpRouter),
            _ => None,
        }
    }
}

static THRESHOLD: AtomicU8 = AtomicU8::new(Level::Info as u8);

/// Sets the threshold of `--log-level` for the whole process.
pub fn set_threshold(level: Level) {
    THRESHOLD.store(level as u8, Ordering::Relaxed);
    // The layer gives tracing a maximum level; a new threshold makes tracing ask again.
    tracing::callsite::rebuild_interest_cache();
}

/// The threshold of `--log-level`.
pub fn threshold() -> Level {
    match THRESHOLD.load(Ordering::Relaxed) {
        0 => Level::Err,
        1 => Level::Warn,
        2 => Level::Info,
        _ => Level::Debug,
    }
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
    format!("{TAG}: {}: {}: {text}", scope.target(), level.word())
}

/// Emits one event with a literal target (tracing needs a constant target and level).
macro_rules! emit {
    ($target:literal, $level:expr, $text:expr) => {
        match $level {
            Level::Err => tracing::error!(target: $target, "{}", $text),
            Level::Warn => tracing::warn!(target: $target, "{}", $text),
            Level::Info => tracing::info!(target: $target, "{}", $text),
            Level::Debug => tracing::debug!(target: $target, "{}", $text),
        }
    };
}

/// Emits one line as a tracing event when the level is enabled. [`LineLayer`] writes it to
/// stderr; a failed write is ignored: stderr is the last place to report anything.
pub fn write(scope: Scope, level: Level, text: &str) {
    if !enabled(level) {
        return;
    }
    match scope {
        Scope::Bridge => emit!("bridge", level, text),
        Scope::Vscode => emit!("vscode", level, text),
        Scope::McpStdio => emit!("mcp_stdio", level, text),
        Scope::McpRouter => emit!("mcp_router", level, text),
    }
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

    #[test]
    fn scopes_and_levels_map_to_tracing_and_back() {
        for scope in [
            Scope::Bridge,
            Scope::Vscode,
            Scope::McpStdio,
            Scope::McpRouter,
        ] {
            assert_eq!(Scope::from_target(scope.target()), Some(scope));
        }
        assert_eq!(Scope::from_target("hyper::client"), None);
        for level in [Level::Err, Level::Warn, Level::Info, Level::Debug] {
            assert_eq!(Level::from_tracing(level.to_tracing()), Some(level));
        }
        assert_eq!(Level::from_tracing(tracing::Level::TRACE), None);
    }
}
