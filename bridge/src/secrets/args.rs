//! The command line of `secret` (docs/options.md, docs/secrets.md):
//!
//! ```text
//! mcp-bridge-vscode secret set <name> --origin <url> [--from-file <path>] [--store <store>]
//! mcp-bridge-vscode secret set <name> --command <program> [--folder <dir>] [--from-file <path>] [--store <store>]
//! mcp-bridge-vscode secret list [--store <store>]
//! mcp-bridge-vscode secret delete <name> [--store <store>]
//! ```
//!
//! The value is never an argument. Names follow the rule of `--account`. An error names the
//! option, never its value.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use url::Url;

use crate::cli::ArgError;
use crate::cli::args::{path, utf8};
use crate::cli::secret_refs::secret_name;
use crate::cli::url_rule::check_url;

/// Why the arguments of `secret` are not valid (exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecretArgError {
    #[error(transparent)]
    Arg(#[from] ArgError),
    #[error("secret needs set, list or delete")]
    NoAction,
    #[error("secret set needs where the secret may go: --origin <url> or --command <program>")]
    NoBinding,
}

/// `--store`: where `set` keeps a secret, or which store `list` and `delete` use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StoreChoice {
    /// `set`: the keychain, else the encrypted files; `list` and `delete`: both.
    #[default]
    Auto,
    Keychain,
    File,
}

/// Where a secret may go, as `set` gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindTo {
    /// `--origin <url>`: a header secret of this URL's origin.
    Origin(Url),
    /// `--command <program>` and `--folder <dir>`: an environment secret.
    Command {
        program: OsString,
        folder: Option<PathBuf>,
    },
}

/// What the command line of `secret` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Set {
        name: String,
        bind: BindTo,
        from_file: Option<PathBuf>,
        store: StoreChoice,
    },
    List {
        store: StoreChoice,
    },
    Delete {
        name: String,
        store: StoreChoice,
    },
    Help,
}

fn store(option: &'static str, text: &str) -> Result<StoreChoice, ArgError> {
    match text {
        "auto" => Ok(StoreChoice::Auto),
        "keychain" => Ok(StoreChoice::Keychain),
        "file" => Ok(StoreChoice::File),
        _ => Err(ArgError::InvalidValue(option, "use auto, keychain or file")),
    }
}

fn origin(option: &'static str, text: &str) -> Result<Url, ArgError> {
    check_url(text).map_err(|hint| ArgError::InvalidValue(option, hint))
}

fn name(_: &'static str, text: &str) -> Result<String, ArgError> {
    secret_name("<name>", text)
}

#[derive(Parser, Debug)]
#[command(
    name = "mcp-bridge-vscode secret",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true
)]
struct Raw {
    #[arg(long, action = ArgAction::Help, global = true)]
    help: Option<bool>,
    #[command(subcommand)]
    action: Option<RawAction>,
}

#[derive(Args, Debug)]
struct StoreArg {
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--store", store))]
    store: Option<StoreChoice>,
}

#[derive(Subcommand, Debug)]
enum RawAction {
    Set {
        #[arg(value_parser = utf8("<name>", name))]
        name: String,
        #[arg(long, allow_hyphen_values = true, conflicts_with = "command", value_parser = utf8("--origin", origin))]
        origin: Option<Url>,
        #[arg(long, allow_hyphen_values = true, value_parser = path("--command"))]
        command: Option<PathBuf>,
        #[arg(long, allow_hyphen_values = true, value_parser = path("--folder"))]
        folder: Option<PathBuf>,
        #[arg(long, allow_hyphen_values = true, value_parser = path("--from-file"))]
        from_file: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArg,
    },
    List {
        #[command(flatten)]
        store: StoreArg,
    },
    Delete {
        #[arg(value_parser = utf8("<name>", name))]
        name: String,
        #[command(flatten)]
        store: StoreArg,
    },
}

/// The options of `secret`, for the error texts.
const OPTIONS: [&str; 7] = [
    "--help",
    "--origin",
    "--command",
    "--folder",
    "--from-file",
    "--store",
    "<name>",
];

/// Parses the arguments after `secret`.
pub fn parse(arguments: &[OsString]) -> Result<Action, SecretArgError> {
    let matches = match Raw::command().try_get_matches_from(arguments) {
        Ok(matches) => matches,
        Err(error) if error.kind() == ErrorKind::DisplayHelp => return Ok(Action::Help),
        Err(error) => return Err(map_error(&error)),
    };
    let raw = Raw::from_arg_matches(&matches).map_err(|e| map_error(&e))?;
    Ok(match raw.action.ok_or(SecretArgError::NoAction)? {
        RawAction::Set {
            name,
            origin,
            command,
            folder,
            from_file,
            store,
        } => {
            let bind = match (origin, command) {
                (Some(_), None) if folder.is_some() => {
                    return Err(ArgError::Needs("--folder", "--command").into());
                }
                (Some(url), None) => BindTo::Origin(url),
                (None, Some(program)) => BindTo::Command {
                    program: program.into_os_string(),
                    folder,
                },
                (Some(_), Some(_)) => {
                    return Err(ArgError::Excluded("--origin", "--command").into());
                }
                (None, None) => return Err(SecretArgError::NoBinding),
            };
            Action::Set {
                name,
                bind,
                from_file,
                store: store.store.unwrap_or_default(),
            }
        }
        RawAction::List { store } => Action::List {
            store: store.store.unwrap_or_default(),
        },
        RawAction::Delete { name, store } => Action::Delete {
            name,
            store: store.store.unwrap_or_default(),
        },
    })
}

/// clap's error as ours: the option's name, never a value.
fn map_error(error: &clap::Error) -> SecretArgError {
    match error.kind() {
        ErrorKind::ArgumentConflict => ArgError::Excluded("--origin", "--command").into(),
        ErrorKind::MissingRequiredArgument => ArgError::MissingValue("<name>").into(),
        ErrorKind::InvalidSubcommand => SecretArgError::NoAction,
        _ => crate::cli::subcommand_error(error, &OPTIONS).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &[&str]) -> Result<Action, SecretArgError> {
        parse(&words.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn secret_set_takes_a_name_and_one_place() {
        assert_eq!(
            parse_words(&["set", "api", "--origin", "https://api.example.com/v1"]),
            Ok(Action::Set {
                name: "api".into(),
                bind: BindTo::Origin(Url::parse("https://api.example.com/v1").expect("url")),
                from_file: None,
                store: StoreChoice::Auto,
            })
        );
        assert_eq!(
            parse_words(&[
                "set",
                "k",
                "--command=my-server",
                "--folder",
                "/w",
                "--from-file",
                "/f",
                "--store",
                "file"
            ]),
            Ok(Action::Set {
                name: "k".into(),
                bind: BindTo::Command {
                    program: "my-server".into(),
                    folder: Some("/w".into()),
                },
                from_file: Some("/f".into()),
                store: StoreChoice::File,
            })
        );
        assert_eq!(
            parse_words(&["list"]),
            Ok(Action::List {
                store: StoreChoice::Auto
            })
        );
        assert_eq!(
            parse_words(&["delete", "k", "--store", "keychain"]),
            Ok(Action::Delete {
                name: "k".into(),
                store: StoreChoice::Keychain
            })
        );
        assert_eq!(parse_words(&["--help"]), Ok(Action::Help));
    }

    #[test]
    fn secret_refuses_a_value_on_the_command_line_and_other_mistakes() {
        let err = |words: &[&str]| parse_words(words).expect_err("refused");
        assert_eq!(err(&[]), SecretArgError::NoAction);
        assert_eq!(err(&["set", "k"]), SecretArgError::NoBinding);
        // A value after the name is an argument too many, and the error does not show it.
        let extra = err(&["set", "k", "s3cr3t-marker", "--command", "x"]);
        assert!(!extra.to_string().contains("s3cr3t-marker"), "{extra}");
        assert_eq!(
            err(&["set", "a b", "--command", "x"]),
            ArgError::InvalidValue("<name>", crate::cli::secret_refs::NAME_HINT).into()
        );
        assert!(matches!(
            err(&["set", "k", "--origin", "http://api.example.com"]),
            SecretArgError::Arg(ArgError::InvalidValue("--origin", _))
        ));
        assert_eq!(
            err(&[
                "set",
                "k",
                "--origin",
                "https://a.example",
                "--command",
                "x"
            ]),
            ArgError::Excluded("--origin", "--command").into()
        );
        assert_eq!(
            err(&[
                "set",
                "k",
                "--origin",
                "https://a.example",
                "--folder",
                "/w"
            ]),
            ArgError::Needs("--folder", "--command").into()
        );
        assert_eq!(
            err(&["list", "--store", "memory"]),
            ArgError::InvalidValue("--store", "use auto, keychain or file").into()
        );
    }
}
