//! The command line: `bridge-fixture-server [--many-tools N] [--close-stdout]`, the embedded
//! bridge `bridge-fixture-server --embedded[=refuse] [--many-tools N]`, and the HTTP
//! mode `bridge-fixture-server --listen <ip>:<port> [--plain-http] [--untrusted]
//! [--bearer-env VAR] [--listen-status CODE:COUNT] [--always-sse]`.
//!
//! A small hand-written parser, because the texts of the errors are part of what the tests of
//! the bridge read (`<option> needs a number, not '<text>'`), and because the later HTTPS mode
//! (`--https PORT`, `--oauth` and its sub-options, `--browse`) adds options that depend on each
//! other. Arguments that are not valid exit with code 2 and the cause on stderr.

/// The version of the fixture, also its `serverInfo.version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The text of `--help`, also written after an argument error.
pub const USAGE: &str = "\
usage: bridge-fixture-server [--many-tools N] [--close-stdout]
       bridge-fixture-server --embedded[=refuse] [--many-tools N]
       bridge-fixture-server --listen <ip>:<port> [--plain-http] [--untrusted]
                             [--bearer-env VAR] [--listen-status CODE:COUNT] [--always-sse]
                             [--many-tools N]
       bridge-fixture-server --help | --version

An MCP server of revision 2026-07-28 on stdio, or over Streamable HTTP at /mcp with --listen,
for the tests of mcp-bridge-vscode.

options:
  --many-tools N         add the tools tool_0 .. tool_<N-1> (N from 0 to 10000)
  --close-stdout         close stdout at once and keep running for 120 s without reading stdin
                         (a server that misbehaves)
  --embedded             serve stdio through the embedded bridge: VS Code's initialize gets
                         the bridge in this process, other clients the server itself; the
                         server answers server/discover (=refuse: the bridge answers -32601)
  --listen <ip>:<port>   serve HTTPS at https://<ip>:<port>/mcp (loopback only; port 0 picks
                         a free port); the first stdout line is `listening <url>`
  --plain-http           with --listen: serve http instead of https
  --untrusted            with --listen: serve the certificate of the untrusted test CA
  --bearer-env VAR       with --listen: every request needs `Authorization: Bearer <$VAR>`
  --listen-status C:N    with --listen: answer the first N subscriptions/listen requests with
                         the HTTP status C (200 to 599)
  --always-sse           with --listen: answer every request with an SSE stream
  --help                 show this text
  --version              show the version
";

use mcp_bridge_vscode::embed::Discover;

/// The largest value of `--many-tools`: enough for many pages, small enough for one frame.
pub const MAX_MANY_TOOLS: u32 = 10_000;

/// The settings of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The number of generated tools `tool_<i>`.
    pub many_tools: u32,
    /// Close stdout at once and stop reading: a misbehaving server.
    pub close_stdout: bool,
    /// The HTTP mode: the address to listen on.
    pub listen: Option<std::net::SocketAddr>,
    /// The HTTP mode without TLS.
    pub plain_http: bool,
    /// The HTTP mode with the certificate of the untrusted test CA.
    pub untrusted: bool,
    /// The name of the environment variable that holds the bearer token.
    pub bearer_env: Option<String>,
    /// The HTTP status of the first `subscriptions/listen` requests, and how many.
    pub listen_status: Option<(u16, u32)>,
    /// Every response of the HTTP mode as an SSE stream.
    pub always_sse: bool,
    /// M5: stdio through the embedded bridge, with this policy for `server/discover`.
    pub embedded: Option<Discover>,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Serve(Options),
    Help,
    Version,
}

/// Parses the arguments (without the program name). The error is the cause, for stderr.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut options = Options::default();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        match name {
            "--help" | "-h" => return Ok(Command::Help),
            "--embedded" => {
                options.embedded = Some(match inline.as_deref() {
                    None => Discover::Answer,
                    Some("refuse") => Discover::Refuse,
                    Some(other) => {
                        return Err(format!("--embedded takes only =refuse, not '{other}'"));
                    }
                });
            }
            "--version" | "-V" => return Ok(Command::Version),
            "--close-stdout" | "--plain-http" | "--untrusted" | "--always-sse" => {
                if inline.is_some() {
                    return Err(format!("the option {name} takes no value"));
                }
                let flag = match name {
                    "--close-stdout" => &mut options.close_stdout,
                    "--plain-http" => &mut options.plain_http,
                    "--untrusted" => &mut options.untrusted,
                    _ => &mut options.always_sse,
                };
                *flag = true;
            }
            "--many-tools" | "--listen" | "--bearer-env" | "--listen-status" => {
                let value = match inline {
                    Some(value) => value,
                    None => iter
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("the option {name} needs a value"))?,
                };
                match name {
                    "--many-tools" => options.many_tools = number(name, &value, MAX_MANY_TOOLS)?,
                    "--listen" => options.listen = Some(address(&value)?),
                    "--bearer-env" if value.is_empty() => {
                        return Err("--bearer-env needs the name of a variable".into());
                    }
                    "--bearer-env" => options.bearer_env = Some(value),
                    _ => options.listen_status = Some(status(&value)?),
                }
            }
            _ => return Err(format!("the option {arg} is not known")),
        }
    }
    check_modes(&options)?;
    Ok(Command::Serve(options))
}

/// The options of the HTTP mode need `--listen`, and the stdio-only ones exclude it.
fn check_modes(options: &Options) -> Result<(), String> {
    let http_only = [
        ("--plain-http", options.plain_http),
        ("--untrusted", options.untrusted),
        ("--always-sse", options.always_sse),
        ("--bearer-env", options.bearer_env.is_some()),
        ("--listen-status", options.listen_status.is_some()),
    ];
    if options.embedded.is_some() {
        if options.listen.is_some() {
            return Err("the option --embedded works only on stdio, not with --listen".into());
        }
        if options.close_stdout {
            return Err("the options --embedded and --close-stdout exclude each other".into());
        }
    }
    match options.listen {
        None => match http_only.iter().find(|(_, set)| *set) {
            Some((name, _)) => Err(format!("the option {name} needs --listen")),
            None => Ok(()),
        },
        Some(_) if options.close_stdout => {
            Err("the option --close-stdout works only on stdio, not with --listen".into())
        }
        Some(_) if options.plain_http && options.untrusted => {
            Err("the option --untrusted needs TLS, not --plain-http".into())
        }
        Some(_) => Ok(()),
    }
}

/// `<ip>:<port>` of a loopback address (`127.0.0.0/8` or `[::1]`).
fn address(text: &str) -> Result<std::net::SocketAddr, String> {
    let address: std::net::SocketAddr = text
        .parse()
        .map_err(|_| format!("--listen needs <ip>:<port>, not '{text}'"))?;
    if !address.ip().is_loopback() {
        return Err(format!(
            "--listen accepts only a loopback address (127.0.0.0/8 or [::1]), not '{text}'"
        ));
    }
    Ok(address)
}

/// `<code>:<count>` with an HTTP status from 200 to 599 and a count from 1.
fn status(text: &str) -> Result<(u16, u32), String> {
    let fail = || format!("--listen-status needs <status>:<count>, not '{text}'");
    let (code, count) = text.split_once(':').ok_or_else(fail)?;
    let code: u16 = code.parse().map_err(|_| fail())?;
    let count: u32 = count.parse().map_err(|_| fail())?;
    if !(200..=599).contains(&code) || count == 0 {
        return Err(fail());
    }
    Ok((code, count))
}

fn number(option: &str, text: &str, max: u32) -> Result<u32, String> {
    let value: u32 = text
        .parse()
        .map_err(|_| format!("{option} needs a number, not '{text}'"))?;
    if value > max {
        return Err(format!(
            "{option} needs a number from 0 to {max}, not '{text}'"
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_the_options() {
        assert_eq!(parse(&args(&[])), Ok(Command::Serve(Options::default())));
        assert_eq!(
            parse(&args(&["--many-tools", "30", "--close-stdout"])),
            Ok(Command::Serve(Options {
                many_tools: 30,
                close_stdout: true,
                ..Options::default()
            }))
        );
        assert_eq!(
            parse(&args(&["--many-tools=7"])),
            Ok(Command::Serve(Options {
                many_tools: 7,
                ..Options::default()
            }))
        );
        assert_eq!(
            parse(&args(&["--many-tools", "1", "--help"])),
            Ok(Command::Help)
        );
        assert_eq!(parse(&args(&["--version"])), Ok(Command::Version));
    }

    #[test]
    fn reads_the_options_of_the_http_mode() {
        let parsed = parse(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--bearer-env=TOKEN",
            "--listen-status",
            "503:2",
            "--untrusted",
            "--always-sse",
        ]));
        assert_eq!(
            parsed,
            Ok(Command::Serve(Options {
                listen: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
                bearer_env: Some("TOKEN".into()),
                listen_status: Some((503, 2)),
                untrusted: true,
                always_sse: true,
                ..Options::default()
            }))
        );
        assert!(parse(&args(&["--listen", "[::1]:8080", "--plain-http"])).is_ok());
        assert!(parse(&args(&["--listen=127.1.2.3:1"])).is_ok());
    }

    #[test]
    fn refuses_http_options_that_are_not_valid() {
        assert_eq!(
            parse(&args(&["--listen", "0.0.0.0:0"])),
            Err(
                "--listen accepts only a loopback address (127.0.0.0/8 or [::1]), not '0.0.0.0:0'"
                    .into()
            )
        );
        assert_eq!(
            parse(&args(&["--listen", "localhost:1"])),
            Err("--listen needs <ip>:<port>, not 'localhost:1'".into())
        );
        assert_eq!(
            parse(&args(&["--plain-http"])),
            Err("the option --plain-http needs --listen".into())
        );
        assert_eq!(
            parse(&args(&[
                "--listen",
                "127.0.0.1:0",
                "--listen-status",
                "99:1"
            ])),
            Err("--listen-status needs <status>:<count>, not '99:1'".into())
        );
        assert!(parse(&args(&["--listen", "127.0.0.1:0", "--close-stdout"])).is_err());
        assert!(
            parse(&args(&[
                "--listen",
                "127.0.0.1:0",
                "--untrusted",
                "--plain-http"
            ]))
            .is_err()
        );
    }

    #[test]
    fn reads_the_embedded_mode() {
        let embedded = |discover| {
            Ok(Command::Serve(Options {
                embedded: Some(discover),
                ..Options::default()
            }))
        };
        assert_eq!(parse(&args(&["--embedded"])), embedded(Discover::Answer));
        assert_eq!(
            parse(&args(&["--embedded=refuse"])),
            embedded(Discover::Refuse)
        );
        assert_eq!(
            parse(&args(&["--embedded=yes"])),
            Err("--embedded takes only =refuse, not 'yes'".into())
        );
        assert!(parse(&args(&["--embedded", "--listen", "127.0.0.1:0"])).is_err());
        assert!(parse(&args(&["--embedded", "--close-stdout"])).is_err());
    }

    #[test]
    fn refuses_arguments_that_are_not_valid() {
        assert_eq!(
            parse(&args(&["--many-tools", "x1"])),
            Err("--many-tools needs a number, not 'x1'".into())
        );
        assert_eq!(
            parse(&args(&["--many-tools"])),
            Err("the option --many-tools needs a value".into())
        );
        assert_eq!(
            parse(&args(&["--many-tools", "10001"])),
            Err("--many-tools needs a number from 0 to 10000, not '10001'".into())
        );
        assert_eq!(
            parse(&args(&["--bogus"])),
            Err("the option --bogus is not known".into())
        );
        assert_eq!(
            parse(&args(&["--close-stdout=1"])),
            Err("the option --close-stdout takes no value".into())
        );
    }
}
