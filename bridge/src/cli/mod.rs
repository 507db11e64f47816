//! The command line: `mcp-bridge-vscode [options] -- <command> [args...]` (the command form)
//! and `mcp-bridge-vscode [options] <url>` (the URL form).
//!
//! Parsed with clap (derive, in [`args`]); clap's errors are mapped to the texts of docs/stderr.md
//! ([`ArgError`]): an error line names the option but never its value (a value can be a
//! secret). Both `--opt value` and `--opt=value` work; when an option occurs two times, the
//! last value applies; each `--header` and `--header-env` adds one header. The options come
//! before the URL. The arguments after `--` are not examined.
//!
//! The files: this one holds [`Options`], [`Target`], [`UrlTarget`], [`ArgError`] and
//! [`parse`]; [`args`] the clap struct, its value parsers and the map of clap's errors;
//! [`url_rule`] the URL rule; [`headers`] `--header` and `--header-env`
//! ([`headers::resolve_headers`]); [`secret_refs`] `--secret-env` and `--secret-header`, the
//! references to the bridge's own secrets, with [`template`] the text of a secret header;
//! [`sign_in`] the sign-in options; `usage.rs` the
//! usage text.

pub(crate) mod args;
pub mod headers;
pub mod secret_refs;
pub mod sign_in;
pub mod template;
pub mod url_rule;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};

pub(crate) use args::subcommand_error;
pub use headers::{HeaderSpec, resolve_headers};
pub use secret_refs::SecretEnv;
pub use sign_in::{SignInOptions, TokenStore};

use crate::log::Level;

/// The default of `--discover-timeout` (the first start of `npx -y …` is slow).
pub const DEFAULT_DISCOVER_TIMEOUT: Duration = Duration::from_secs(60);
/// The default of `--max-line-bytes`: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;
/// The largest `--max-line-bytes` (and `--max-response-bytes`): 1 GiB.
pub const MAX_MAX_LINE_BYTES: usize = 1 << 30;
/// The default of `--max-response-bytes`: 64 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;
/// The default of `--answer-initialize-after`: well inside the 60 s that the Copilot harness
/// gives `initialize` (and the bridge's own default `--discover-timeout`).
pub const DEFAULT_ANSWER_AFTER: Duration = Duration::from_secs(40);
/// S1: the default of `--discover-timeout` when the bridge answers `initialize` itself: the
/// start behind the early answer is no longer held to the client's 60 s.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(300);

/// `--discover-timeout`, else its default: 60 s (the client's own wait for `initialize`) with
/// `--answer-initialize-after off`, else [`DEFAULT_START_TIMEOUT`].
fn start_timeout(given: Option<Duration>, answer_after: Option<Duration>) -> Duration {
    given.unwrap_or(match answer_after {
        Some(_) => DEFAULT_START_TIMEOUT,
        None => DEFAULT_DISCOVER_TIMEOUT,
    })
}

/// The largest `--discover-timeout`: one day.
pub const MAX_DISCOVER_TIMEOUT_S: u64 = 86_400;

/// The sign-in options; a static `Authorization` header excludes them.
pub const SIGN_IN_OPTIONS: [&str; 9] = [
    "--client-id",
    "--client-issuer",
    "--client-metadata-url",
    "--redirect-port",
    "--account",
    "--token-store",
    "--token-key-file",
    "--no-browser",
    "--sign-in-timeout",
];

/// The options of the URL form only; with `--` and a command they are an error.
pub const URL_OPTIONS: [&str; 14] = join(
    [
        "--header",
        "--header-env",
        "--secret-header",
        "--max-response-bytes",
        "--ca-file",
    ],
    SIGN_IN_OPTIONS,
);

/// The options of the command form only; with a URL they are an error.
pub const COMMAND_OPTIONS: [&str; 1] = ["--secret-env"];

/// Every option of the forms that serve VS Code.
pub const OPTIONS: [&str; 23] = join(
    [
        "--secret-env",
        "--name",
        "--log-level",
        "--discover-timeout",
        "--answer-initialize-after",
        "--upstream-revision",
        "--max-line-bytes",
        "--help",
        "--version",
    ],
    URL_OPTIONS,
);

/// `a` then `b`: each list above names an option once, and the wider lists hold the narrower
/// ones. A length that does not add up stops the build.
const fn join<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    assert!(A + B == N, "the length of a joined option list");
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}

mod usage;
pub use usage::USAGE;

/// The options of the forms that serve VS Code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// `--name`; for the URL form without `--name`, the host of the URL.
    pub name: Option<String>,
    pub log_level: Level,
    pub discover_timeout: Duration,
    /// `--answer-initialize-after`: when the bridge answers `initialize` itself while the
    /// upstream server still starts; `None` with `off` (docs/rules.md, S1).
    pub answer_initialize_after: Option<Duration>,
    /// `--upstream-revision`: which revision the upstream server speaks (docs/options.md).
    pub upstream_revision: UpstreamRevision,
    pub max_line_bytes: usize,
    pub target: Target,
}

/// The value of `--answer-initialize-after`: a time, or `None` for `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnswerAfter(pub Option<Duration>);

/// `--upstream-revision`: `auto` asks `server/discover` first and serves an older server
/// when it answers with a definite error (docs/older-servers.md); the other two force one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UpstreamRevision {
    #[default]
    Auto,
    /// 2026-07-28 only: a failed discover fails `initialize` (`discover_failed`).
    Modern,
    /// 2025-11-25 or older: no discover; VS Code's `initialize` goes upstream.
    Older,
}

impl UpstreamRevision {
    /// The value of `--upstream-revision`.
    pub fn parse(text: &str) -> Option<UpstreamRevision> {
        match text {
            "auto" => Some(UpstreamRevision::Auto),
            "2026-07-28" => Some(UpstreamRevision::Modern),
            "2025-11-25" => Some(UpstreamRevision::Older),
            _ => None,
        }
    }
}

/// The upstream server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "made once at the start; the URL form is the large variant"
)]
pub enum Target {
    /// `-- <command> [args...]`: the bridge starts the command.
    Command {
        command: OsString,
        args: Vec<OsString>,
        /// `--secret-env`: the variables of the command that get the bridge's own secrets.
        secret_env: Vec<SecretEnv>,
    },
    /// `<url>`: Streamable HTTP at the URL.
    Url(UrlTarget),
}

/// The URL form: the URL (checked by [`url_rule::check_url`]) and its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlTarget {
    pub url: url::Url,
    /// `--header` and `--header-env` in the order of the command line; resolve them with
    /// [`resolve_headers`] at the start.
    pub headers: Vec<HeaderSpec>,
    /// `--max-response-bytes`: the limit of one JSON response and of one SSE event.
    pub max_response_bytes: usize,
    /// `--ca-file`: a PEM file of CA certificates that the bridge trusts besides the system's.
    pub ca_file: Option<PathBuf>,
    pub sign_in: SignInOptions,
}

impl UrlTarget {
    /// The warning lines (scope `vscode`) of the command line: a `--header` with a name that
    /// usually carries a secret. Never a value.
    pub fn warnings(&self) -> Vec<String> {
        headers::warnings(&self.headers)
    }
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "made once at the start; Serve is the variant of every run"
)]
pub enum Command {
    Serve(Options),
    Help,
    Version,
}

/// An argument error: exit 2. The text names the option, never a value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("the option {0} is not known")]
    Unknown(String),
    #[error("the option {0} needs a value")]
    MissingValue(&'static str),
    #[error("the option {0} takes no value")]
    NoValueAllowed(&'static str),
    #[error("the value of the option {0} is not valid: {1}")]
    InvalidValue(&'static str, &'static str),
    #[error("the command after -- is missing")]
    MissingCommand,
    #[error("the command needs -- before it")]
    CommandWithoutSeparator,
    #[error("an option is not valid UTF-8")]
    NotUtf8,
    #[error("the URL is not valid: {0}")]
    InvalidUrl(&'static str),
    #[error("the option {0} applies only to the URL form, not to -- and a command")]
    UrlOptionWithCommand(&'static str),
    #[error("the option {0} applies only to -- and a command, not to the URL form")]
    CommandOptionWithUrl(&'static str),
    #[error("give a URL or -- and a command, not both")]
    UrlAndCommand,
    #[error("the option {0} follows the URL: give the options before the URL")]
    OptionAfterUrl(&'static str),
    #[error("an argument follows the URL: the URL is the last argument")]
    ArgumentAfterUrl,
    #[error("the header {name} of {option} is refused: {hint}")]
    HeaderRefused {
        option: &'static str,
        name: String,
        hint: &'static str,
    },
    #[error("the header {0} occurs more than one time in --header and --header-env")]
    DuplicateHeader(String),
    #[error("a static authorization header and the sign-in options exclude each other")]
    AuthorizationAndSignIn,
    #[error("the options {0} and {1} exclude each other")]
    Excluded(&'static str, &'static str),
    #[error("the option {0} needs {1}")]
    Needs(&'static str, &'static str),
    #[error("the environment variable {0} of --header-env is not set, or it is empty")]
    HeaderEnvUnset(String),
    #[error(
        "the environment variable {0} of --header-env is not valid: the value is not a valid HTTP header value"
    )]
    HeaderEnvInvalid(String),
    #[error(
        "the header {0} of --secret-header is not valid with the values of its secrets: a value is not a valid HTTP header value"
    )]
    SecretHeaderInvalid(String),
    #[error("the arguments are not valid")]
    Unparsed,
}

/// Parses the arguments after the program name.
pub fn parse(arguments: &[OsString]) -> Result<Command, ArgError> {
    let matches = match args::Raw::command().try_get_matches_from(arguments) {
        Ok(matches) => matches,
        Err(error) => return args::map_error(&error),
    };
    let raw = args::Raw::from_arg_matches(&matches).map_err(|e| match args::map_error(&e) {
        Err(error) => error,
        Ok(_) => ArgError::Unparsed,
    })?;
    let answer_after = raw
        .answer_initialize_after
        .map_or(Some(DEFAULT_ANSWER_AFTER), |a| a.0);
    // `--` is never the value of an option (the value parsers refuse it), so here it is the
    // separator of the command form.
    if arguments.iter().any(|a| a == "--") {
        if !raw.positional.is_empty() {
            return Err(ArgError::UrlAndCommand);
        }
        if let Some(option) = args::url_option_given(&matches) {
            return Err(ArgError::UrlOptionWithCommand(option));
        }
        let mut command = raw.command.into_iter();
        let program = command
            .next()
            .filter(|c| !c.is_empty())
            .ok_or(ArgError::MissingCommand)?;
        return Ok(Command::Serve(Options {
            name: raw.name,
            log_level: raw.log_level.unwrap_or(Level::Info),
            discover_timeout: start_timeout(raw.discover_timeout, answer_after),
            answer_initialize_after: answer_after,
            upstream_revision: raw.upstream_revision.unwrap_or_default(),
            max_line_bytes: raw.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
            target: Target::Command {
                command: program,
                args: command.collect(),
                secret_env: raw.secret_env,
            },
        }));
    }
    let url_text = match raw.positional.first() {
        None => return Err(ArgError::MissingCommand),
        Some(first) => first
            .to_str()
            .filter(|text| text.contains("://"))
            .ok_or(ArgError::CommandWithoutSeparator)?,
    };
    let url_index = matches.index_of("positional").unwrap_or_default();
    let after = args::given(&matches, &OPTIONS)
        .into_iter()
        .filter(|(_, index)| *index > url_index)
        .min_by_key(|(_, index)| *index);
    if let Some((option, _)) = after {
        return Err(ArgError::OptionAfterUrl(option));
    }
    if let Some((option, _)) = args::given(&matches, &COMMAND_OPTIONS).first() {
        return Err(ArgError::CommandOptionWithUrl(option));
    }
    if raw.positional.len() > 1 {
        return Err(ArgError::ArgumentAfterUrl);
    }
    let url = url_rule::check_url(url_text).map_err(ArgError::InvalidUrl)?;
    let headers = in_command_line_order(&matches, raw.header, raw.header_env, raw.secret_header);
    headers::check_duplicates(&headers)?;
    if headers::has_authorization(&headers) && args::sign_in_given(&matches) {
        return Err(ArgError::AuthorizationAndSignIn);
    }
    let sign_in = SignInOptions {
        client_id: raw.client_id,
        client_issuer: raw.client_issuer,
        client_metadata_url: raw.client_metadata_url,
        redirect_port: raw.redirect_port.unwrap_or(sign_in::DEFAULT_REDIRECT_PORT),
        account: raw
            .account
            .unwrap_or_else(|| sign_in::DEFAULT_ACCOUNT.to_owned()),
        token_store: raw.token_store.unwrap_or_default(),
        token_key_file: raw.token_key_file,
        no_browser: raw.no_browser,
        sign_in_timeout: raw
            .sign_in_timeout
            .unwrap_or(sign_in::DEFAULT_SIGN_IN_TIMEOUT),
    };
    sign_in.check()?;
    Ok(Command::Serve(Options {
        name: raw.name.or_else(|| Some(url_rule::host_name(&url))),
        log_level: raw.log_level.unwrap_or(Level::Info),
        discover_timeout: start_timeout(raw.discover_timeout, answer_after),
        answer_initialize_after: answer_after,
        upstream_revision: raw.upstream_revision.unwrap_or_default(),
        max_line_bytes: raw.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
        target: Target::Url(UrlTarget {
            url,
            headers,
            max_response_bytes: raw.max_response_bytes.unwrap_or(DEFAULT_MAX_RESPONSE_BYTES),
            ca_file: raw.ca_file,
            sign_in,
        }),
    }))
}

/// Merges `--header`, `--header-env` and `--secret-header` in the order of the command line.
fn in_command_line_order(
    matches: &clap::ArgMatches,
    header: Vec<HeaderSpec>,
    header_env: Vec<HeaderSpec>,
    secret_header: Vec<HeaderSpec>,
) -> Vec<HeaderSpec> {
    let indices = |id: &str| -> Vec<usize> {
        matches
            .indices_of(id)
            .map(|i| i.collect())
            .unwrap_or_default()
    };
    let mut all: Vec<(usize, HeaderSpec)> = indices("header")
        .into_iter()
        .zip(header)
        .chain(indices("header_env").into_iter().zip(header_env))
        .chain(indices("secret_header").into_iter().zip(secret_header))
        .collect();
    all.sort_by_key(|(index, _)| *index);
    all.into_iter().map(|(_, spec)| spec).collect()
}

#[cfg(test)]
mod options_doc_tests;
#[cfg(test)]
mod tests;
