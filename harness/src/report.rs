//! Failure reports: the transcript line, the frames around it and a diff of the expected
//! pattern against the actual frame (the `similar` crate).
use serde_json::Value;

/// Why a step failed.
#[derive(Debug, Clone, Default)]
pub struct Failure {
    pub message: String,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
}

impl Failure {
    pub fn msg(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            ..Self::default()
        }
    }

    pub fn mismatch(message: impl Into<String>, expected: &Value, actual: &Value) -> Self {
        Self {
            message: message.into(),
            expected: Some(expected.clone()),
            actual: Some(actual.clone()),
        }
    }
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Self::msg(s)
    }
}

/// The full report of a failed transcript.
pub struct Report<'a> {
    pub path: &'a str,
    pub line: Option<(usize, &'a str)>,
    pub failure: &'a Failure,
    /// The last frames of the exchange, oldest first, each with its direction.
    pub context: Vec<String>,
    pub stderr_tail: Vec<String>,
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// A unified diff of the expected pattern against the actual value.
pub fn diff(expected: &Value, actual: &Value) -> String {
    let (e, a) = (pretty(expected), pretty(actual));
    similar::TextDiff::from_lines(&e, &a)
        .unified_diff()
        .context_radius(4)
        .header("expected (pattern)", "actual")
        .to_string()
}

impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "FAIL {}", self.path)?;
        if let Some((n, text)) = self.line {
            writeln!(f, "  at line {n}: {text}")?;
        }
        writeln!(f, "  {}", self.failure.message)?;
        if !self.context.is_empty() {
            writeln!(f, "  frames before it (oldest first):")?;
            for c in &self.context {
                writeln!(f, "    {c}")?;
            }
        }
        if let (Some(e), Some(a)) = (&self.failure.expected, &self.failure.actual) {
            writeln!(f, "  diff:")?;
            for l in diff(e, a).lines() {
                writeln!(f, "    {l}")?;
            }
        }
        if !self.stderr_tail.is_empty() {
            writeln!(f, "  last stderr lines:")?;
            for l in &self.stderr_tail {
                writeln!(f, "    {l}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_diff_shows_the_changed_member() {
        let d = diff(
            &json!({"id":1,"result":{"x":1}}),
            &json!({"id":1,"result":{"x":2}}),
        );
        assert!(d.contains("-    \"x\": 1"), "{d}");
        assert!(d.contains("+    \"x\": 2"), "{d}");
    }
}
