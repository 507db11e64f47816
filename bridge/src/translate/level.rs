//! R2, O5: the logging levels of `logging/setLevel` (RFC 5424 severities).

use serde_json::Value;

/// The levels in order of severity, lowest first.
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The severity rank of a level name (0 = debug), or `None` for a name that is not a level.
pub fn rank(level: &str) -> Option<u8> {
    LEVELS
        .iter()
        .position(|l| *l == level)
        .and_then(|p| u8::try_from(p).ok())
}

/// R2: the level of `logging/setLevel` params, or `None` (→ -32602).
pub fn parse_set_level(params: Option<&Value>) -> Option<u8> {
    rank(params?.get("level")?.as_str()?)
}

/// The name of a rank.
pub fn name(rank: u8) -> &'static str {
    LEVELS.get(usize::from(rank)).copied().unwrap_or("debug")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn r2_set_level_accepts_the_eight_levels() {
        for (i, l) in LEVELS.iter().enumerate() {
            assert_eq!(parse_set_level(Some(&json!({"level": l}))), Some(i as u8));
            assert_eq!(name(i as u8), *l);
        }
    }

    #[test]
    fn r2_set_level_refuses_other_values() {
        for p in [
            json!({"level":"loud"}),
            json!({"level":"Info"}),
            json!({"level":1}),
            json!({}),
            json!(null),
        ] {
            assert_eq!(parse_set_level(Some(&p)), None, "{p}");
        }
        assert_eq!(parse_set_level(None), None);
    }
}
