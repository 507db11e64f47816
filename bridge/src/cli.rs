//! The command line of the command form: `mcp-bridge-vscode [options] -- <command> [args...]`.
//!
//! Written by hand rather than with clap: the contract fixes the error texts, and an error
//! line names the option but never its value (a value can be a secret in a later form).
//! Both `--opt value` and `--opt=value` work; when an option occurs two times, the last
//! value applies. The arguments after `--` are not examined.

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use crate::log::Level;

/// The default of `--discover-timeout` (the first start of `npx -y …` is slow).
pub const DEFAULT_DISCOVER_TIMEOUT: Duration = Duration::from_secs(60);
/// The default of `--max-line-bytes`: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;
/// The largest `--max-line-bytes`: 1 GiB.
pub const MAX_MAX_LINE_BYTES: usize = 1 << 30;
/// The largest `--discover-timeout`: one day.
pub const MAX_DISCOVER_TIMEOUT_S: u64 = 86_400;

/// The usage text (stdout for `--help`, stderr after an error).
pub const USAGE: &str = "\
Usage: mcp-bridge-vscode [options] -- <command> [args...]

A stdio MCP server of revision 2025-11-25 for VS Code. It starts <command> and speaks
revision 2026-07-28 to it over stdio.

Options:
  --name <name>            The server name for VS Code when the upstream server sends no name.
                           Default: the file name of <command> without its extension.
  --log-level <level>      The level of the log lines on stderr: err, warn, info or debug.
                           Default: info.
  --discover-timeout <s>   The time in seconds for the answer to server/discover, 1 to 86400.
                           Default: 60.
  --max-line-bytes <n>     The maximum length of one message in bytes, 1 to 1073741824.
                           Default: 67108864 (64 MiB).
  --help                   Show this text.
  --version                Show the version.

An option takes its value from the next argument or after an equals sign (--name x or
--name=x). When an option occurs two times, the last value applies.
";

/// The options of the command form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub name: Option<String>,
    pub log_level: Level,
    pub discover_timeout: Duration,
    pub max_line_bytes: usize,
    pub command: OsString,
    pub args: Vec<OsString>,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    #[error("the URL form is not available in this version of the bridge: give -- and a command")]
    UrlForm,
    #[error("an option is not valid UTF-8")]
    NotUtf8,
}

const VALUED: [&str; 4] = [
    "--name",
    "--log-level",
    "--discover-timeout",
    "--max-line-bytes",
];

/// Parses the arguments after the program name.
pub fn parse(args: &[OsString]) -> Result<Command, ArgError> {
    let mut name = None;
    let mut log_level = Level::Info;
    let mut discover_timeout = DEFAULT_DISCOVER_TIMEOUT;
    let mut max_line_bytes = DEFAULT_MAX_LINE_BYTES;
    let mut i = 0;
    while i < args.len() {
        let Some(arg) = args[i].to_str() else {
            // A positional that is not UTF-8 is a command without `--`; an option must be UTF-8.
            return Err(if args[i].as_encoded_bytes().starts_with(b"-") {
                ArgError::NotUtf8
            } else {
                ArgError::CommandWithoutSeparator
            });
        };
        i += 1;
        if arg == "--" {
            let command = args
                .get(i)
                .filter(|c| !c.is_empty())
                .ok_or(ArgError::MissingCommand)?;
            return Ok(Command::Serve(Options {
                name,
                log_level,
                discover_timeout,
                max_line_bytes,
                command: command.clone(),
                args: args[i + 1..].to_vec(),
            }));
        }
        if !arg.starts_with('-') {
            return Err(if arg.contains("://") {
                ArgError::UrlForm
            } else {
                ArgError::CommandWithoutSeparator
            });
        }
        let (option, inline) = match arg.split_once('=') {
            Some((o, v)) => (o, Some(v)),
            None => (arg, None),
        };
        match option {
            "--help" | "--version" => {
                if inline.is_some() {
                    return Err(ArgError::NoValueAllowed(if option == "--help" {
                        "--help"
                    } else {
                        "--version"
                    }));
                }
                return Ok(if option == "--help" {
                    Command::Help
                } else {
                    Command::Version
                });
            }
            _ => {}
        }
        let Some(option) = VALUED.iter().copied().find(|o| *o == option) else {
            return Err(ArgError::Unknown(option.to_owned()));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                let next = args
                    .get(i)
                    .filter(|v| v.as_os_str() != OsStr::new("--"))
                    .ok_or(ArgError::MissingValue(option))?;
                i += 1;
                next.to_str()
                    .ok_or(ArgError::InvalidValue(option, "it is not valid UTF-8"))?
            }
        };
        match option {
            "--name" => {
                if value.is_empty() {
                    return Err(ArgError::InvalidValue(
                        option,
                        "use a name that is not empty",
                    ));
                }
                name = Some(value.to_owned());
            }
            "--log-level" => {
                log_level = Level::parse(value).ok_or(ArgError::InvalidValue(
                    option,
                    "use err, warn, info or debug",
                ))?;
            }
            "--discover-timeout" => {
                let s = value
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=MAX_DISCOVER_TIMEOUT_S).contains(s));
                let s = s.ok_or(ArgError::InvalidValue(
                    option,
                    "use whole seconds from 1 to 86400",
                ))?;
                discover_timeout = Duration::from_secs(s);
            }
            _ => {
                let n = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_MAX_LINE_BYTES).contains(n));
                max_line_bytes = n.ok_or(ArgError::InvalidValue(
                    option,
                    "use a number of bytes from 1 to 1073741824",
                ))?;
            }
        }
    }
    Err(ArgError::MissingCommand)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Command, ArgError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse(&args)
    }

    fn serve(args: &[&str]) -> Options {
        match p(args) {
            Ok(Command::Serve(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_and_command() {
        let o = serve(&["--", "/bin/srv", "--its-args", "x"]);
        assert_eq!(o.name, None);
        assert_eq!(o.log_level, Level::Info);
        assert_eq!(o.discover_timeout, Duration::from_secs(60));
        assert_eq!(o.max_line_bytes, 64 << 20);
        assert_eq!(o.command, OsString::from("/bin/srv"));
        assert_eq!(
            o.args,
            vec![OsString::from("--its-args"), OsString::from("x")]
        );
    }

    #[test]
    fn both_value_forms_and_the_last_value_wins() {
        let o = serve(&[
            "--name",
            "a",
            "--name=b",
            "--log-level=debug",
            "--discover-timeout",
            "5",
            "--max-line-bytes=1",
            "--",
            "c",
        ]);
        assert_eq!(o.name.as_deref(), Some("b"));
        assert_eq!(o.log_level, Level::Debug);
        assert_eq!(o.discover_timeout, Duration::from_secs(5));
        assert_eq!(o.max_line_bytes, 1);
        assert_eq!(
            serve(&["--max-line-bytes", "1073741824", "--", "c"]).max_line_bytes,
            1 << 30
        );
        assert_eq!(
            serve(&["--name=x=y", "--", "c"]).name.as_deref(),
            Some("x=y")
        );
    }

    #[test]
    fn help_and_version() {
        assert_eq!(p(&["--help"]), Ok(Command::Help));
        assert_eq!(p(&["--version"]), Ok(Command::Version));
        assert_eq!(
            p(&["--name", "x", "--version", "--bogus"]),
            Ok(Command::Version)
        );
        assert_eq!(
            p(&["--version=1"]),
            Err(ArgError::NoValueAllowed("--version"))
        );
    }

    #[test]
    fn invalid_arguments_of_the_reference_tests() {
        assert_eq!(p(&[]), Err(ArgError::MissingCommand));
        assert_eq!(p(&["--"]), Err(ArgError::MissingCommand));
        assert_eq!(p(&["--", ""]), Err(ArgError::MissingCommand));
        assert_eq!(p(&["fixture"]), Err(ArgError::CommandWithoutSeparator));
        assert_eq!(
            p(&["--unknown"]),
            Err(ArgError::Unknown("--unknown".into()))
        );
        assert_eq!(
            p(&["--header=Authorization: secret"]),
            Err(ArgError::Unknown("--header".into()))
        );
        assert_eq!(p(&["-x"]), Err(ArgError::Unknown("-x".into())));
        assert!(matches!(
            p(&["--log-level", "loud", "--", "c"]),
            Err(ArgError::InvalidValue("--log-level", _))
        ));
        assert_eq!(
            p(&["--name", "--", "c"]),
            Err(ArgError::MissingValue("--name"))
        );
        assert_eq!(p(&["--name"]), Err(ArgError::MissingValue("--name")));
        assert!(matches!(
            p(&["--name=", "--", "c"]),
            Err(ArgError::InvalidValue("--name", _))
        ));
        for bad in ["0", "1073741825", "-1", "x", ""] {
            assert!(
                matches!(
                    p(&["--max-line-bytes", bad, "--", "c"]),
                    Err(ArgError::InvalidValue("--max-line-bytes", _))
                ),
                "{bad}"
            );
        }
        for bad in ["0", "86401", "1.5", "x"] {
            assert!(
                matches!(
                    p(&["--discover-timeout", bad, "--", "c"]),
                    Err(ArgError::InvalidValue("--discover-timeout", _))
                ),
                "{bad}"
            );
        }
        assert_eq!(p(&["http://mcp.example.com/mcp"]), Err(ArgError::UrlForm));
        assert_eq!(p(&["--name", "x"]), Err(ArgError::MissingCommand));
    }

    #[test]
    fn error_texts_never_carry_a_value() {
        let secret = "s3cr3t-value";
        for args in [
            vec!["--header", secret],
            vec![&*format!("--token={secret}")],
            vec!["--log-level", secret, "--", "c"],
            vec!["--max-line-bytes", secret, "--", "c"],
            vec![&*format!("https://{secret}.example/mcp")],
            vec![secret],
        ] {
            let e = p(&args).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(!e.is_empty() && !e.contains(secret), "{e}");
        }
    }

    #[test]
    fn usage_starts_with_the_form() {
        assert!(USAGE.starts_with("Usage: mcp-bridge-vscode "));
        for option in VALUED.iter().chain(&["--help", "--version"]) {
            assert!(USAGE.contains(option));
        }
    }
}
