//! The command line of `logout` (docs/options.md, docs/token-stores.md):
//! `mcp-bridge-vscode logout [--account <label>] <url>` and `mcp-bridge-vscode logout --all`,
//! with `--redirect-port`, `--token-store`, `--token-key-file`, `--ca-file` and `--log-level`.
//! The values are checked by the parsers of the URL form, so the rules and the error texts are
//! the same; an error names the option, never its value.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::OsStringValueParser;
use clap::error::ErrorKind;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};
use url::Url;

use crate::cli::args::{log_level, path, utf8};
use crate::cli::sign_in::{self, DEFAULT_ACCOUNT, DEFAULT_REDIRECT_PORT, TokenStore};
use crate::cli::url_rule::check_url;
use crate::log::Level;

/// Why the arguments of `logout` are not valid (exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LogoutArgError {
    #[error(transparent)]
    Arg(#[from] crate::cli::ArgError),
    #[error("logout needs the URL of the server, or --all")]
    NoTarget,
    #[error("logout --all takes no URL")]
    AllAndUrl,
    #[error("logout takes one URL")]
    MoreThanOneUrl,
}

/// What to sign out of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `<url>`: the stored sign-in of `--account` and `--redirect-port` for this URL.
    Url(Url),
    /// `--all`: every stored sign-in, and the token directory.
    All,
}

/// The options of `logout`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logout {
    pub target: Target,
    pub account: String,
    pub redirect_port: u16,
    pub token_store: TokenStore,
    pub token_key_file: Option<PathBuf>,
    pub ca_file: Option<PathBuf>,
    pub log_level: Level,
}

/// What the command line of `logout` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    Run(Logout),
    Help,
}

#[derive(Parser, Debug)]
#[command(
    name = "mcp-bridge-vscode logout",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true
)]
struct Raw {
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
    #[arg(long)]
    all: bool,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--account", sign_in::account))]
    account: Option<String>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--redirect-port", sign_in::port))]
    redirect_port: Option<u16>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--token-store", sign_in::token_store))]
    token_store: Option<TokenStore>,
    #[arg(long, allow_hyphen_values = true, value_parser = path("--token-key-file"))]
    token_key_file: Option<PathBuf>,
    #[arg(long, allow_hyphen_values = true, value_parser = path("--ca-file"))]
    ca_file: Option<PathBuf>,
    #[arg(long, allow_hyphen_values = true, value_parser = utf8("--log-level", log_level))]
    log_level: Option<Level>,
    #[arg(value_parser = OsStringValueParser::new())]
    positional: Vec<OsString>,
}

/// The options of `logout`, for the error texts.
const OPTIONS: [&str; 8] = [
    "--help",
    "--all",
    "--account",
    "--redirect-port",
    "--token-store",
    "--token-key-file",
    "--ca-file",
    "--log-level",
];

/// Parses the arguments after `logout`.
pub fn parse(arguments: &[OsString]) -> Result<Parsed, LogoutArgError> {
    let matches = match Raw::command().try_get_matches_from(arguments) {
        Ok(matches) => matches,
        Err(error) if error.kind() == ErrorKind::DisplayHelp => return Ok(Parsed::Help),
        Err(error) => return Err(map_error(&error)),
    };
    let raw = Raw::from_arg_matches(&matches).map_err(|e| map_error(&e))?;
    let target = match (raw.all, raw.positional.as_slice()) {
        (true, []) => Target::All,
        (true, _) => return Err(LogoutArgError::AllAndUrl),
        (false, []) => return Err(LogoutArgError::NoTarget),
        (false, [url]) => {
            let text = url.to_str().ok_or(crate::cli::ArgError::NotUtf8)?;
            Target::Url(check_url(text).map_err(crate::cli::ArgError::InvalidUrl)?)
        }
        (false, _) => return Err(LogoutArgError::MoreThanOneUrl),
    };
    if raw.all && raw.account.is_some() {
        return Err(crate::cli::ArgError::Excluded("--all", "--account").into());
    }
    let token_store = raw.token_store.unwrap_or_default();
    if raw.token_key_file.is_some()
        && matches!(token_store, TokenStore::Keychain | TokenStore::Memory)
    {
        return Err(
            crate::cli::ArgError::Needs("--token-key-file", "--token-store file or auto").into(),
        );
    }
    Ok(Parsed::Run(Logout {
        target,
        account: raw.account.unwrap_or_else(|| DEFAULT_ACCOUNT.to_owned()),
        redirect_port: raw.redirect_port.unwrap_or(DEFAULT_REDIRECT_PORT),
        token_store,
        token_key_file: raw.token_key_file,
        ca_file: raw.ca_file,
        log_level: raw.log_level.unwrap_or(Level::Info),
    }))
}

/// clap's error as ours: the option's name, never a value.
fn map_error(error: &clap::Error) -> LogoutArgError {
    crate::cli::subcommand_error(error, &OPTIONS).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::ArgError;

    fn parse_words(words: &[&str]) -> Result<Parsed, LogoutArgError> {
        parse(&words.iter().map(OsString::from).collect::<Vec<_>>())
    }

    fn run(words: &[&str]) -> Logout {
        match parse_words(words) {
            Ok(Parsed::Run(logout)) => logout,
            other => panic!("{words:?}: {other:?}"),
        }
    }

    #[test]
    fn logout_takes_a_url_or_all_and_the_options_of_the_stored_sign_in() {
        let one = run(&["https://mcp.example.com/mcp"]);
        assert_eq!(
            one.target,
            Target::Url(Url::parse("https://mcp.example.com/mcp").expect("url"))
        );
        assert_eq!(
            (one.account.as_str(), one.redirect_port),
            ("default", 41894)
        );
        assert_eq!(one.token_store, TokenStore::Auto);
        let full = run(&[
            "--account=work@example.com",
            "--redirect-port",
            "41895",
            "--token-store",
            "file",
            "--token-key-file",
            "/k",
            "--ca-file=/ca.pem",
            "--log-level",
            "debug",
            "http://127.0.0.1:9/mcp",
        ]);
        assert_eq!(full.account, "work@example.com");
        assert_eq!(full.redirect_port, 41895);
        assert_eq!(full.token_store, TokenStore::File);
        assert_eq!(full.log_level, Level::Debug);
        assert_eq!(run(&["--all"]).target, Target::All);
        assert_eq!(parse_words(&["--help"]), Ok(Parsed::Help));
    }

    #[test]
    fn logout_refuses_what_the_contract_refuses() {
        let err = |words: &[&str]| parse_words(words).expect_err("refused");
        assert_eq!(err(&[]), LogoutArgError::NoTarget);
        assert_eq!(
            err(&["--all", "https://x.example/"]),
            LogoutArgError::AllAndUrl
        );
        assert_eq!(
            err(&["--all", "--account", "work"]),
            ArgError::Excluded("--all", "--account").into()
        );
        assert_eq!(
            err(&["--account", "a b", "https://x.example/"]),
            ArgError::InvalidValue("--account", "use 1 to 64 letters, digits, -, ., _, @ or +")
                .into()
        );
        assert_eq!(
            err(&["--account", &"a".repeat(65), "https://x.example/"]),
            ArgError::InvalidValue("--account", "use 1 to 64 letters, digits, -, ., _, @ or +")
                .into()
        );
        assert_eq!(
            err(&["http://example.com/mcp"]),
            LogoutArgError::Arg(ArgError::InvalidUrl(
                crate::cli::url_rule::check_url("http://example.com/mcp").expect_err("http")
            ))
        );
        assert_eq!(
            err(&["https://a.example/", "https://b.example/"]),
            LogoutArgError::MoreThanOneUrl
        );
        assert_eq!(
            err(&[
                "--token-store",
                "keychain",
                "--token-key-file",
                "/k",
                "--all"
            ]),
            ArgError::Needs("--token-key-file", "--token-store file or auto").into()
        );
        assert_eq!(
            err(&["--name", "x", "--all"]),
            ArgError::Unknown("--name".into()).into()
        );
        assert_eq!(
            err(&["--redirect-port", "0", "--all"]),
            ArgError::InvalidValue("--redirect-port", "use a port from 1 to 65535").into()
        );
        assert_eq!(err(&["--all=1"]), ArgError::NoValueAllowed("--all").into());
    }
}
