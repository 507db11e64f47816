//! The secrets of a start (docs/secrets.md): every `--secret-env` and `--secret-header` of the
//! command line is looked up and checked against its binding before anything answers
//! `initialize`. A secret that no store has (or that a store cannot read) is
//! [`Refusal::Missing`]; a secret whose owner bound it to another place (another command,
//! folder or origin, or the other kind) is [`Refusal::Elsewhere`]. Either way nothing starts
//! and nothing is sent: `initialize` gets [`Refusal::error`] (`secret_missing`,
//! `secret_elsewhere`) and the bridge exits with code 2.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::install::set_command;
use super::kept::{Binding, Kept};
use super::store::{FilePaths, SecretStore};
use crate::errors::{Cause, error_object};

/// One use of a secret on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Use {
    /// `--secret-env <var>=<name>`.
    Env { name: String, var: String },
    /// `--secret-header`: the header `<header>` names the secret.
    Header { name: String, header: String },
}

impl Use {
    fn name(&self) -> &str {
        match self {
            Use::Env { name, .. } | Use::Header { name, .. } => name,
        }
    }
}

/// Where this start would send its secrets.
#[derive(Clone, Debug, Default)]
pub struct Place<'a> {
    /// The upstream command of the command form.
    pub command: Option<&'a OsStr>,
    /// The origin of the URL of the URL form (`https://host[:port]`).
    pub origin: Option<String>,
    /// The working directory of the bridge (the workspace folder of VS Code's start).
    pub cwd: Option<PathBuf>,
}

impl Place<'_> {
    /// The place of `used` in words.
    fn describe(&self, used: &Use) -> String {
        match used {
            Use::Env { var, .. } => {
                let command = self
                    .command
                    .map_or_else(String::new, |c| c.to_string_lossy().into_owned());
                let folder = self
                    .cwd
                    .as_ref()
                    .map_or_else(String::new, |c| format!(" in the folder {}", c.display()));
                format!("the variable {var} of the command {command}{folder}")
            }
            Use::Header { header, .. } => format!(
                "the header {header} of {}",
                self.origin.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// Why a start does not send its secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No store has the secret, or a store that may have it cannot be read (`why`).
    Missing {
        name: String,
        why: String,
        /// The options of `secret set` that bind it to the place asked: the command to fix
        /// it works as written.
        flags: String,
    },
    /// The secret's binding is not the place of the configuration.
    Elsewhere {
        name: String,
        asked: String,
        bound: String,
        /// The options of `secret set` that bind it to the place asked.
        flags: String,
    },
}

impl Refusal {
    /// The line on stderr (scope `vscode`, level error); it never holds a value.
    pub fn line(&self) -> String {
        match self {
            Refusal::Missing { name, why, flags } => format!(
                "the secret {name} is missing or cannot be read ({why}): run {} in a terminal, then restart the server",
                set_command(name, flags)
            ),
            Refusal::Elsewhere {
                name,
                asked,
                bound,
                flags,
            } => format!(
                "the secret {name} may not go to {asked}: it is bound to {bound}, and the bridge sent it nowhere. Correct the configuration, or bind it to this place with {}",
                set_command(name, flags)
            ),
        }
    }

    /// The error of `initialize`: the cause's message with the name, the place and the
    /// command filled in.
    pub fn error(&self) -> Value {
        let (cause, detail, fills) = match self {
            Refusal::Missing { name, why, flags } => (
                Cause::SecretMissing,
                why.clone(),
                vec![
                    ("<name>", name.clone()),
                    ("<command>", set_command(name, flags)),
                ],
            ),
            Refusal::Elsewhere {
                name,
                asked,
                bound,
                flags,
            } => (
                Cause::SecretElsewhere,
                format!("bound to {bound}"),
                vec![
                    ("<name>", name.clone()),
                    ("<place>", asked.clone()),
                    ("<command>", set_command(name, flags)),
                ],
            ),
        };
        let mut error = error_object(cause, Some(&detail));
        let message = fills
            .iter()
            .fold(cause.message().to_owned(), |text, (from, to)| {
                text.replace(from, to)
            });
        error["message"] = Value::from(message);
        error
    }
}

/// Finds a secret in the stores.
pub trait Lookup {
    /// The secret `name`; `Err` with the reason when a store that may have it cannot be read.
    fn find(&self, name: &str) -> Result<Option<Kept>, String>;
}

/// The stores of a start: the keychain first, then the encrypted files.
pub struct Stores {
    keychain: Result<SecretStore, String>,
    file: Result<Option<SecretStore>, String>,
}

impl Stores {
    /// The stores of this user (a keychain that does not answer is a reason, not a failure:
    /// the secret may be in the files).
    pub fn open() -> Stores {
        Stores {
            keychain: SecretStore::keychain().map_err(|e| e.0),
            file: FilePaths::of_process()
                .and_then(|paths| SecretStore::file(&paths, false))
                .map_err(|e| e.0),
        }
    }
}

impl Lookup for Stores {
    fn find(&self, name: &str) -> Result<Option<Kept>, String> {
        let mut why = Vec::new();
        match &self.keychain {
            Ok(store) => match store.get(name) {
                Ok(Some(kept)) => return Ok(Some(kept)),
                Ok(None) => {}
                Err(e) => why.push(format!("the keychain failed: {e}")),
            },
            Err(e) => why.push(format!("the keychain is not available: {e}")),
        }
        match &self.file {
            Ok(Some(store)) => match store.get(name) {
                Ok(Some(kept)) => return Ok(Some(kept)),
                Ok(None) => {}
                Err(e) => why.push(format!("the file store failed: {e}")),
            },
            Ok(None) => {}
            Err(e) => why.push(format!("the file store did not open: {e}")),
        }
        if why.is_empty() {
            Ok(None)
        } else {
            Err(why.join("; "))
        }
    }
}

/// The values of `uses` by name, each checked against its binding; the first refusal.
pub fn resolve(
    uses: &[Use],
    place: &Place<'_>,
    lookup: &dyn Lookup,
) -> Result<BTreeMap<String, String>, Refusal> {
    let mut values = BTreeMap::new();
    for used in uses {
        let name = used.name();
        let kept = match lookup.find(name) {
            Ok(Some(kept)) => kept,
            Ok(None) => {
                return Err(Refusal::Missing {
                    name: name.to_owned(),
                    why: "no store of this user keeps it".into(),
                    flags: flags_for(used, place),
                });
            }
            Err(why) => {
                return Err(Refusal::Missing {
                    name: name.to_owned(),
                    why: format!("no store that answers keeps it; {why}"),
                    flags: flags_for(used, place),
                });
            }
        };
        if !allowed(&kept.binding, used, place) {
            return Err(Refusal::Elsewhere {
                name: name.to_owned(),
                asked: place.describe(used),
                bound: kept.binding.describe(),
                flags: flags_for(used, place),
            });
        }
        values.insert(name.to_owned(), kept.value);
    }
    Ok(values)
}

/// The options of `secret set` that bind a secret to the place of `used`.
fn flags_for(used: &Use, place: &Place<'_>) -> String {
    match used {
        Use::Env { .. } => {
            let command = place
                .command
                .map_or_else(String::new, |c| c.to_string_lossy().into_owned());
            // A path with a space is one argument when the user pastes the command.
            if command.contains(' ') {
                format!("--command \"{command}\"")
            } else {
                format!("--command {command}")
            }
        }
        Use::Header { .. } => format!("--origin {}", place.origin.as_deref().unwrap_or_default()),
    }
}

/// True when the binding permits `used` at `place`.
fn allowed(binding: &Binding, used: &Use, place: &Place<'_>) -> bool {
    match (binding, used) {
        (Binding::Origin(origin), Use::Header { .. }) => {
            place.origin.as_deref() == Some(origin.as_str())
        }
        (Binding::Command { program, folder }, Use::Env { .. }) => {
            place
                .command
                .is_some_and(|command| command_matches(program, command, place.cwd.as_deref()))
                && folder.as_deref().is_none_or(|folder| {
                    place
                        .cwd
                        .as_deref()
                        .and_then(|cwd| cwd.canonicalize().ok())
                        .is_some_and(|cwd| cwd.starts_with(folder))
                })
        }
        _ => false,
    }
}

/// True for a program name without a folder (`my-server`, not `./my-server`).
pub fn is_bare(program: &OsStr) -> bool {
    let text = program.to_string_lossy();
    let separators: &[char] = if cfg!(windows) {
        &['/', '\\', ':']
    } else {
        &['/']
    };
    !text.is_empty() && !text.contains(separators)
}

/// A bound program name matches only the same bare name (on Windows without case and
/// without the extension of an executable), so that a repository's `./my-server` never gets
/// the secret of `my-server`; a bound path matches only a command that names the same file.
pub fn command_matches(bound: &str, command: &OsStr, cwd: Option<&Path>) -> bool {
    if is_bare(OsStr::new(bound)) {
        return is_bare(command) && same_program(bound, &command.to_string_lossy());
    }
    if is_bare(command) {
        return false;
    }
    let path = Path::new(command);
    let path = match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    path.canonicalize()
        .is_ok_and(|real| real == Path::new(bound))
}

fn same_program(a: &str, b: &str) -> bool {
    if !cfg!(windows) {
        return a == b;
    }
    let plain = |s: &str| {
        let lower = s.to_ascii_lowercase();
        [".exe", ".cmd", ".bat", ".com"]
            .iter()
            .find_map(|ext| lower.strip_suffix(ext).map(str::to_owned))
            .unwrap_or(lower)
    };
    plain(a) == plain(b)
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
