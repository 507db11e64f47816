//! The command line on clap (derive), with clap's errors mapped to the texts of docs/stderr.md.
//!
//! clap parses; our value parsers give [`ArgError`]s with the option's name, and
//! [`map_error`] turns clap's error kinds into [`ArgError`]s that name the option, never its
//! value: clap's own texts quote values, so they never reach stderr. `args_override_self`
//! gives last-value-wins; `allow_hyphen_values` keeps `--name -x` (but `--` is never a value).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, Parser};
use url::Url;

use super::headers::{self, HeaderSpec};
use super::secret_refs::{self, SecretEnv};
use super::sign_in::{self, TokenStore};
use super::{
    AnswerAfter, ArgError, Command, MAX_DISCOVER_TIMEOUT_S, MAX_MAX_LINE_BYTES, OPTIONS,
    SIGN_IN_OPTIONS, URL_OPTIONS, UpstreamRevision,
};
use crate::log::Level;

/// A value parser that refuses `--` (a missing value) and text that is not UTF-8, then calls
/// `check` with the option's name.
pub(crate) fn utf8<T: Clone + Send + Sync + 'static>(
    option: &'static str,
    check: fn(&'static str, &str) -> Result<T, ArgError>,
) -> impl TypedValueParser<Value = T> {
    OsStringValueParser::new().try_map(move |raw: OsString| {
        if raw == "--" {
            return Err(ArgError::MissingValue(option));
        }
        let text = raw
            .to_str()
            .ok_or(ArgError::InvalidValue(option, "it is not valid UTF-8"))?;
        check(option, text)
    })
}

/// A value parser of a path: not empty, not `--`; any bytes of the platform.
pub(crate) fn path(option: &'static str) -> impl TypedValueParser<Value = PathBuf> {
    OsStringValueParser::new().try_map(move |raw: OsString| {
        if raw == "--" {
            return Err(ArgError::MissingValue(option));
        }
        if raw.is_empty() {
            return Err(ArgError::InvalidValue(
                option,
                "use a path that is not empty",
            ));
        }
        Ok(PathBuf::from(raw))
    })
}

fn name(option: &'static str, text: &str) -> Result<String, ArgError> {
    if text.is_empty() {
        return Err(ArgError::InvalidValue(
            option,
            "use a name that is not empty",
        ));
    }
    Ok(text.to_owned())
}

pub(crate) fn log_level(option: &'static str, text: &str) -> Result<Level, ArgError> {
    Level::parse(text).ok_or(ArgError::InvalidValue(
        option,
        "use err, warn, info or debug",
    ))
}

fn discover_timeout(option: &'static str, text: &str) -> Result<Duration, ArgError> {
    text.parse::<u64>()
        .ok()
        .filter(|s| (1..=MAX_DISCOVER_TIMEOUT_S).contains(s))
        .map(Duration::from_secs)
        .ok_or(ArgError::InvalidValue(
            option,
            "use whole seconds from 1 to 86400",
        ))
}

/// `--answer-initialize-after`: whole seconds, or `off`.
fn answer_after(option: &'static str, text: &str) -> Result<AnswerAfter, ArgError> {
    if text == "off" {
        return Ok(AnswerAfter(None));
    }
    text.parse::<u64>()
        .ok()
        .filter(|s| (1..=MAX_DISCOVER_TIMEOUT_S).contains(s))
        .map(|s| AnswerAfter(Some(Duration::from_secs(s))))
        .ok_or(ArgError::InvalidValue(
            option,
            "use whole seconds from 1 to 86400, or off",
        ))
}

fn upstream_revision(option: &'static str, text: &str) -> Result<UpstreamRevision, ArgError> {
    UpstreamRevision::parse(text).ok_or(ArgError::InvalidValue(
        option,
        "use auto, 2026-07-28 or 2025-11-25",
    ))
}

fn bytes(option: &'static str, text: &str) -> Result<usize, ArgError> {
    text.parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_MAX_LINE_BYTES).contains(n))
        .ok_or(ArgError::InvalidValue(
            option,
            "use a number of bytes from 1 to 1073741824",
        ))
}

fn header(_: &'static str, text: &str) -> Result<HeaderSpec, ArgError> {
    headers::parse_header(text)
}

fn header_env(_: &'static str, text: &str) -> Result<HeaderSpec, ArgError> {
    headers::parse_header_env(text)
}

fn secret_header(_: &'static str, text: &str) -> Result<HeaderSpec, ArgError> {
    secret_refs::parse_secret_header(text)
}

fn secret_env(_: &'static str, text: &str) -> Result<SecretEnv, ArgError> {
    secret_refs::parse_secret_env(text)
}

/// The arguments as clap sees them. Field ids are the long names with `_` for `-`.
#[derive(Parser, Debug)]
#[command(
    name = "mcp-bridge-vscode",
    version,
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true
)]
pub(super) struct Raw {
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
    #[arg(long, action = ArgAction::Version)]
    version: Option<bool>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--name", name))]
    pub name: Option<String>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--log-level", log_level))]
    pub log_level: Option<Level>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--discover-timeout", discover_timeout))]
    pub discover_timeout: Option<Duration>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--answer-initialize-after", answer_after))]
    pub answer_initialize_after: Option<AnswerAfter>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--upstream-revision", upstream_revision))]
    pub upstream_revision: Option<UpstreamRevision>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--max-line-bytes", bytes))]
    pub max_line_bytes: Option<usize>,
    #[arg(long, allow_hyphen_values = true, action = ArgAction::Append, value_parser = utf8("--header", header))]
    pub header: Vec<HeaderSpec>,
    #[arg(long, allow_hyphen_values = true, action = ArgAction::Append, value_parser = utf8("--header-env", header_env))]
    pub header_env: Vec<HeaderSpec>,
    #[arg(long, allow_hyphen_values = true, action = ArgAction::Append, value_parser = utf8("--secret-header", secret_header))]
    pub secret_header: Vec<HeaderSpec>,
    #[arg(long, allow_hyphen_values = true, action = ArgAction::Append, value_parser = utf8("--secret-env", secret_env))]
    pub secret_env: Vec<SecretEnv>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--max-response-bytes", bytes))]
    pub max_response_bytes: Option<usize>,
    #[arg(long, allow_hyphen_values = true, value_parser = path("--ca-file"))]
    pub ca_file: Option<PathBuf>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--client-id", sign_in::client_id))]
    pub client_id: Option<String>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--client-issuer", sign_in::issuer))]
    pub client_issuer: Option<Url>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--client-metadata-url", sign_in::metadata_url))]
    pub client_metadata_url: Option<Url>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--redirect-port", sign_in::port))]
    pub redirect_port: Option<u16>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--account", sign_in::account))]
    pub account: Option<String>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--token-store", sign_in::token_store))]
    pub token_store: Option<TokenStore>,
    #[arg(long, allow_hyphen_values = true, value_parser = path("--token-key-file"))]
    pub token_key_file: Option<PathBuf>,
    #[arg(long)]
    pub no_browser: bool,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--sign-in-timeout", sign_in::seconds))]
    pub sign_in_timeout: Option<Duration>,
    /// The URL (or a command without `--`, an error).
    #[arg(value_parser = OsStringValueParser::new())]
    pub positional: Vec<OsString>,
    /// `-- <command> [args...]`: not examined.
    #[arg(last = true, value_parser = OsStringValueParser::new())]
    pub command: Vec<OsString>,
}

/// The clap id of a long option (`--max-line-bytes` → `max_line_bytes`).
pub(super) fn id_of(option: &str) -> String {
    option.trim_start_matches('-').replace('-', "_")
}

/// The options of `list` that the command line gives, with the index of their last
/// occurrence.
pub(super) fn given(
    matches: &clap::ArgMatches,
    list: &[&'static str],
) -> Vec<(&'static str, usize)> {
    list.iter()
        .filter_map(|option| {
            let id = id_of(option);
            let explicit =
                matches.value_source(&id) == Some(clap::parser::ValueSource::CommandLine);
            let last = matches.indices_of(&id).and_then(|mut i| i.next_back());
            explicit.then_some(last).flatten().map(|i| (*option, i))
        })
        .collect()
}

/// True when a sign-in option is on the command line.
pub(super) fn sign_in_given(matches: &clap::ArgMatches) -> bool {
    !given(matches, &SIGN_IN_OPTIONS).is_empty()
}

/// The first URL option on the command line.
pub(super) fn url_option_given(matches: &clap::ArgMatches) -> Option<&'static str> {
    given(matches, &URL_OPTIONS).first().map(|(o, _)| *o)
}

/// The option named by a context of clap (`--log-level <LEVEL>`), as one of ours.
fn option_of(error: &clap::Error) -> Option<&'static str> {
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    let word = arg.split([' ', '=']).next().unwrap_or_default();
    OPTIONS.iter().copied().find(|o| *o == word)
}

/// clap's error of a subcommand (`logout`, `secret`) as the bridge's: a value parser's own
/// error, else the option's name (one of `options`), never a value.
pub(crate) fn subcommand_error(error: &clap::Error, options: &[&'static str]) -> ArgError {
    let ours = std::error::Error::source(error).and_then(|s| s.downcast_ref::<ArgError>());
    if let Some(ours) = ours {
        return ours.clone();
    }
    let word = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.split([' ', '=']).next().map(str::to_owned),
        _ => None,
    };
    let known = word
        .as_deref()
        .and_then(|w| options.iter().copied().find(|o| *o == w));
    match (error.kind(), known, word) {
        (ErrorKind::InvalidUtf8, _, _) => ArgError::NotUtf8,
        (ErrorKind::UnknownArgument, _, Some(word)) if word.starts_with('-') => {
            ArgError::Unknown(word)
        }
        (ErrorKind::InvalidValue, Some(option), _) => ArgError::MissingValue(option),
        (ErrorKind::TooManyValues | ErrorKind::NoEquals, Some(option), _) => {
            ArgError::NoValueAllowed(option)
        }
        _ => ArgError::Unparsed,
    }
}

/// Maps an error of clap to the command (help, version) or to an [`ArgError`]. Only names
/// of options leave this function: clap's contexts with values are never shown.
pub(super) fn map_error(error: &clap::Error) -> Result<Command, ArgError> {
    match error.kind() {
        ErrorKind::DisplayHelp => return Ok(Command::Help),
        ErrorKind::DisplayVersion => return Ok(Command::Version),
        _ => {}
    }
    let ours = std::error::Error::source(error).and_then(|s| s.downcast_ref::<ArgError>());
    if let Some(ours) = ours {
        return Err(ours.clone());
    }
    Err(match error.kind() {
        ErrorKind::UnknownArgument => match error.get(ContextKind::InvalidArg) {
            // clap shows an option that is not UTF-8 with U+FFFD.
            Some(ContextValue::String(arg)) if arg.contains('\u{FFFD}') => ArgError::NotUtf8,
            Some(ContextValue::String(arg)) if arg.starts_with('-') => {
                let option = arg.split('=').next().unwrap_or_default();
                ArgError::Unknown(option.to_owned())
            }
            _ => ArgError::CommandWithoutSeparator,
        },
        ErrorKind::InvalidValue => match option_of(error) {
            Some(option) => ArgError::MissingValue(option),
            None => ArgError::Unparsed,
        },
        ErrorKind::TooManyValues | ErrorKind::NoEquals => match option_of(error) {
            Some(option) => ArgError::NoValueAllowed(option),
            None => ArgError::Unparsed,
        },
        ErrorKind::InvalidUtf8 => ArgError::NotUtf8,
        _ => match option_of(error) {
            Some(option) => ArgError::InvalidValue(option, "it is not valid here"),
            None => ArgError::Unparsed,
        },
    })
}
