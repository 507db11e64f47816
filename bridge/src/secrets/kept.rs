//! One stored secret: its value and where it may go, in one entry, so that nobody changes the
//! binding without the value (docs/secrets.md, "Bound to where it may go"). `Debug` never
//! shows the value.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The version of the entry.
const VERSION: u32 = 1;

/// Where a secret may go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Binding {
    /// A header of the requests to this origin (`https://host[:port]`), from `--secret-header`.
    Origin(String),
    /// An environment variable of this upstream command, from `--secret-env`: a program name
    /// (the command is that bare name) or an absolute path (the command is that file), and
    /// optionally the workspace folder that the bridge must run in.
    Command {
        program: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        folder: Option<PathBuf>,
    },
}

impl Binding {
    /// The place in the words of the docs and the errors.
    pub fn describe(&self) -> String {
        match self {
            Binding::Origin(origin) => format!("the headers of {origin}"),
            Binding::Command {
                program,
                folder: None,
            } => format!("the environment of the command {program}"),
            Binding::Command {
                program,
                folder: Some(folder),
            } => format!(
                "the environment of the command {program} in the folder {}",
                folder.display()
            ),
        }
    }
}

/// The entry of one secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    version: u32,
    pub binding: Binding,
    pub value: String,
}

impl Kept {
    pub fn new(binding: Binding, value: String) -> Kept {
        Kept {
            version: VERSION,
            binding,
            value,
        }
    }

    /// The bytes of the store.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The entry of the bytes of a store; `None` when they are not an entry of this version.
    pub fn parse(bytes: &[u8]) -> Option<Kept> {
        serde_json::from_slice::<Kept>(bytes)
            .ok()
            .filter(|kept| kept.version == VERSION)
    }
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("binding", &self.binding)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_round_trips_and_its_debug_shows_no_value() {
        let kept = Kept::new(
            Binding::Command {
                program: "my-server".into(),
                folder: None,
            },
            "line 1\nline 2".into(),
        );
        assert_eq!(Kept::parse(&kept.to_bytes()), Some(kept.clone()));
        assert!(!format!("{kept:?}").contains("line 1"));
        assert_eq!(Kept::parse(b"{\"version\":2}"), None);
        assert_eq!(
            Binding::Origin("https://api.example.com".into()).describe(),
            "the headers of https://api.example.com"
        );
    }
}
