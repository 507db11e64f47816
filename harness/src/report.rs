//! Failure reports: the transcript line, the frames around it and a diff of the expected
//! pattern against the actual frame (the `similar` crate).
use serde_json::Value;

/// Why a step failed.
#[derive(Debug, Clone, Default)]
pub struct Failure {
    pub message: String,
    /// Boxed: a failure travels in every `Result` of the runner, so it stays small.
    pub expected: Option<Box<Value>>,
    pub actual: Option<Box<Value>>,
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
            expected: Some(Box::new(expected.clone())),
            actual: Some(Box::new(actual.clone())),
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
    /// How the bridge ended when its stdout ended during the transcript (`code 1`,
    /// `signal 9`, with `, with nothing on stderr` when it wrote no line).
    pub ended: Option<String>,
    pub stderr_tail: Vec<String>,
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// The actual value cut to the members that the pattern names (all of them under `<exact>`),
/// so that the diff shows what the pattern is about, not every other member of the frame.
pub fn project(pattern: &Value, actual: &Value) -> Value {
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            let exact = p.get("<exact>") == Some(&Value::Bool(true));
            let mut out = serde_json::Map::new();
            if exact {
                out.insert("<exact>".into(), Value::Bool(true));
            }
            for (k, v) in a {
                match p.get(k) {
                    Some(pv) => {
                        out.insert(k.clone(), project(pv, v));
                    }
                    None if exact => {
                        out.insert(k.clone(), v.clone());
                    }
                    None => {}
                }
            }
            Value::Object(out)
        }
        (Value::Array(p), Value::Array(a)) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, v)| p.get(i).map_or_else(|| v.clone(), |pv| project(pv, v)))
                .collect(),
        ),
        _ => actual.clone(),
    }
}

/// A unified diff of the expected pattern against the actual value (cut to the pattern).
pub fn diff(expected: &Value, actual: &Value) -> String {
    let actual = &project(expected, actual);
    // A final newline on both sides keeps "No newline at end of file" out of the diff.
    let (e, a) = (pretty(expected) + "\n", pretty(actual) + "\n");
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
        match (&self.failure.expected, &self.failure.actual) {
            (Some(e), Some(a)) => {
                writeln!(f, "  diff:")?;
                for l in diff(e, a).lines() {
                    writeln!(f, "    {l}")?;
                }
            }
            (None, Some(a)) => {
                writeln!(f, "  the frame:")?;
                for l in pretty(a).lines() {
                    writeln!(f, "    {l}")?;
                }
            }
            _ => {}
        }
        if let Some(ended) = &self.ended {
            writeln!(f, "  the bridge ended with {ended}")?;
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
    fn the_diff_leaves_out_members_the_pattern_does_not_name() {
        let d = diff(
            &json!({"id":1,"result":{"x":1}}),
            &json!({"jsonrpc":"2.0","id":1,"result":{"x":2,"y":3}}),
        );
        assert!(!d.contains("jsonrpc") && !d.contains("\"y\""), "{d}");
        let d = diff(&json!({"<exact>":true,"a":1}), &json!({"a":1,"b":2}));
        assert!(d.contains("+  \"b\": 2"), "{d}");
    }

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
