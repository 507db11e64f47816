//! The text of `--secret-header` (docs/secrets.md): text and `{name}` references to the
//! bridge's own secrets (pure; parsed in [`super::secret_refs`]).

/// One piece of the text of `--secret-header`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text as written.
    Text(String),
    /// `{name}`: the value of the secret.
    Secret(String),
}

/// The text of a `--secret-header`: text and references, at least one reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template(pub Vec<Piece>);

impl Template {
    /// The secrets that the text names, in order, each once.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for piece in &self.0 {
            if let Piece::Secret(name) = piece
                && !names.contains(&name.as_str())
            {
                names.push(name);
            }
        }
        names
    }

    /// The text with each reference replaced by `value(name)`; `None` when a value is missing.
    pub fn render(&self, value: impl Fn(&str) -> Option<String>) -> Option<String> {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Secret(name) => out.push_str(&value(name)?),
            }
        }
        Some(out)
    }
}
