//! R2, O5: the log level of the client (`logging/setLevel`) and the log messages of the
//! upstream server. Levels follow RFC 5424 severities, as the MCP
//! spec says: debug < info < notice < warning < error < critical < alert < emergency. The one
//! place of the level rules: the front stores the level, the upstream envelope sends it, the
//! router forwards messages through [`log_message_for_client`].

use serde_json::{Map, Value};

/// The `_meta` key of the log level of a 2026-07-28 request (replaces `logging/setLevel`).
pub const LOG_LEVEL_META_KEY: &str = "io.modelcontextprotocol/logLevel";

/// A log level, ordered by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level of its wire name (exact, lowercase); `None` for any other value.
    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The level of a rank (0 = debug), as the front stores it in an atomic.
    pub fn from_rank(rank: u8) -> Option<LogLevel> {
        LogLevel::ALL.get(usize::from(rank)).copied()
    }

    /// The rank of the level (0 = debug).
    pub fn rank(self) -> u8 {
        self as u8
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// R2 / O5: the level of `logging/setLevel` params `{level}`; `None` → −32602 (for example
/// `"loud"`).
pub fn set_level_params(params: Option<&Value>) -> Option<LogLevel> {
    LogLevel::parse(params?.get("level")?.as_str()?)
}

/// O5: the `_meta` value of the level for every later upstream request and every stream.
pub fn log_level_meta(level: LogLevel) -> (&'static str, Value) {
    (LOG_LEVEL_META_KEY, Value::String(level.as_str().to_owned()))
}

/// O5: an upstream `notifications/message` (its params) for VS Code at the client's level:
/// `None` without a level (no `logging/setLevel`), for a message below it, or for params that
/// are not a log message (no valid `level`, no `data`). The frame keeps `level`, `logger`,
/// `data` and other members, without the upstream `_meta`.
pub fn log_message_for_client(params: &Value, client_level: Option<LogLevel>) -> Option<Value> {
    let client_level = client_level?;
    let p = params.as_object()?;
    let level = LogLevel::parse(p.get("level")?.as_str()?)?;
    if level < client_level || !p.contains_key("data") {
        return None;
    }
    if p.get("logger").is_some_and(|l| !l.is_string()) {
        return None;
    }
    let mut out = p.clone();
    out.shift_remove("_meta");
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), Value::String("2.0".into()));
    frame.insert(
        "method".into(),
        Value::String("notifications/message".into()),
    );
    frame.insert("params".into(), Value::Object(out));
    Some(Value::Object(frame))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn o5_levels_are_ordered_by_severity() {
        for w in LogLevel::ALL.windows(2) {
            assert!(w[0] < w[1]);
        }
        for l in LogLevel::ALL {
            assert_eq!(LogLevel::parse(l.as_str()), Some(l));
        }
        for bad in ["loud", "Info", "WARNING", "warn", "err", ""] {
            assert_eq!(LogLevel::parse(bad), None);
        }
    }

    #[test]
    fn o5_the_level_list_matches_the_schema() {
        let names: Vec<_> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [
                "alert",
                "critical",
                "debug",
                "emergency",
                "error",
                "info",
                "notice",
                "warning"
            ]
        );
    }

    #[test]
    fn r2_ranks_round_trip() {
        for (i, l) in LogLevel::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(l.rank()), i);
            assert_eq!(LogLevel::from_rank(l.rank()), Some(l));
        }
        assert_eq!(LogLevel::from_rank(8), None);
    }

    #[test]
    fn o5_set_level_params() {
        assert_eq!(
            set_level_params(Some(&json!({"level": "info"}))),
            Some(LogLevel::Info)
        );
        assert_eq!(set_level_params(Some(&json!({"level": "loud"}))), None);
        assert_eq!(set_level_params(Some(&json!({"level": 1}))), None);
        assert_eq!(set_level_params(Some(&json!({}))), None);
        assert_eq!(set_level_params(None), None);
    }

    #[test]
    fn o5_level_travels_in_meta() {
        assert_eq!(
            log_level_meta(LogLevel::Warning),
            ("io.modelcontextprotocol/logLevel", json!("warning"))
        );
    }

    #[test]
    fn o5_messages_at_or_above_the_level_reach_vscode_without_meta() {
        let debug = json!({"level": "debug", "data": "d", "_meta": {"x": 1}});
        let warning =
            json!({"level": "warning", "logger": "fx", "data": {"a": 1}, "_meta": {"x": 1}});
        assert_eq!(log_message_for_client(&debug, Some(LogLevel::Info)), None);
        assert_eq!(
            log_message_for_client(&warning, Some(LogLevel::Info)),
            Some(
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "fx", "data": {"a": 1}}})
            )
        );
        assert!(
            log_message_for_client(&json!({"level": "info", "data": 1}), Some(LogLevel::Info))
                .is_some()
        );
        assert!(
            log_message_for_client(
                &json!({"level": "emergency", "data": 1}),
                Some(LogLevel::Emergency)
            )
            .is_some()
        );
        assert!(
            log_message_for_client(
                &json!({"level": "alert", "data": 1}),
                Some(LogLevel::Emergency)
            )
            .is_none()
        );
    }

    #[test]
    fn o5_nothing_without_a_level_or_with_a_broken_message() {
        assert_eq!(
            log_message_for_client(&json!({"level": "emergency", "data": 1}), None),
            None
        );
        for bad in [
            json!({"data": 1}),
            json!({"level": "loud", "data": 1}),
            json!({"level": "error"}),
            json!({"level": "error", "data": 1, "logger": 5}),
            json!([]),
        ] {
            assert_eq!(
                log_message_for_client(&bad, Some(LogLevel::Debug)),
                None,
                "{bad}"
            );
        }
    }
}
