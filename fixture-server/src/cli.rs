//! The command line: `bridge-fixture-server [--many-tools N] [--close-stdout] [--conformance]`,
//! the embedded bridge `bridge-fixture-server --embedded[=refuse] [--many-tools N]` (M5), the
//! HTTP mode `bridge-fixture-server --listen <ip>:<port> [--plain-http] [--untrusted]
//! [--bearer-env VAR] [--listen-status CODE:COUNT] [--always-sse] [--conformance] [--oauth …]`,
//! and the test browser `bridge-fixture-server --browse <url> [--ca-file <pem>]`.
//!
//! A small hand-written parser, because the texts of the errors are part of what the tests of
//! the bridge read (`<option> needs a number, not '<text>'`), and because the later HTTPS mode
//! (`--https PORT`, `--oauth` and its sub-options, `--browse`) adds options that depend on each
//! other. Arguments that are not valid exit with code 2 and the cause on stderr.

/// The version of the fixture, also its `serverInfo.version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The text of `--help`, also written after an argument error.
pub const USAGE: &str = "\
usage: bridge-fixture-server [--many-tools N] [--close-stdout] [--conformance]
       bridge-fixture-server --embedded[=refuse] [--many-tools N]
       bridge-fixture-server --listen <ip>:<port> [--plain-http] [--untrusted]
                             [--bearer-env VAR] [--listen-status CODE:COUNT] [--always-sse]
                             [--many-tools N] [--conformance]
                             [--oauth [--deny] [--no-registration] [--cimd] [--no-cimd]
                                      [--token-lifetime S] [--no-refresh-tokens]
                                      [--step-up-scope-only] [--register-auth-method M]
                                      [--access-token-bytes N]]
       bridge-fixture-server --browse <url> [--ca-file <pem>]
       bridge-fixture-server --help | --version

An MCP server of revision 2026-07-28 on stdio, or over Streamable HTTP at /mcp with --listen,
for the tests of mcp-bridge-vscode.

options:
  --many-tools N         add the tools tool_0 .. tool_<N-1> (N from 0 to 10000)
  --conformance          add the tools, resources and prompts that the server scenarios of the
                         official MCP conformance suite call (test_*, test://...)
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
  --oauth                with --listen: /mcp needs an OAuth access token, and the fixture is
                         its own authorization server (see fixture-server/README.md)
  --deny                 with --oauth: the test user denies every authorization request
  --no-registration      with --oauth: no dynamic client registration (/register is 404)
  --cimd                 with --oauth: also serve the fixture's own client ID metadata
                         document at /fixture/client.json
  --no-cimd              with --oauth: do not accept client ID metadata documents
  --token-lifetime S     with --oauth: the lifetime of an access token in seconds (1 to
                         86400; default 900)
  --no-refresh-tokens    with --oauth: issue no refresh tokens
  --access-token-bytes N with --oauth: access tokens of N characters (45 to 65536; default
                         45), longer than one Windows credential with N = 4000
  --step-up-scope-only   with --oauth: the 403 of the tool guarded asks for mcp:write alone
                         (not mcp:read mcp:write), so a client must add the granted scopes
  --register-auth-method M  with --oauth: /register answers with this
                         token_endpoint_auth_method (client_secret_basic or client_secret_post)
                         and a client_secret, whatever the request asked
  --browse <url>         a test browser: GET the URL and follow up to 5 redirects until a
                         loopback redirect URI with a code or an error; print the last
                         status and URL; exit 0 when that redirect URI answered 2xx or 3xx
  --ca-file <pem>        with --browse: trust the CA certificates of this file for https
                         (default: the embedded test CA certs/ca.crt)
  --help                 show this text
  --version              show the version
";

use mcp_bridge_vscode::embed::Discover;

/// The largest value of `--many-tools`: enough for many pages, small enough for one frame.
pub const MAX_MANY_TOOLS: u32 = 10_000;
/// The default lifetime of an access token of `--oauth`, in seconds.
pub const DEFAULT_TOKEN_LIFETIME: u32 = 900;
/// The largest value of `--token-lifetime`.
pub const MAX_TOKEN_LIFETIME: u32 = 86_400;

/// The shortest and the longest access token of `--access-token-bytes`: the prefix and the
/// random part, and a size that a header still carries.
pub const ACCESS_TOKEN_BYTES: (u32, u32) = (45, 65_536);

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
    /// The fake authorization server: `/mcp` needs an access token.
    pub oauth: bool,
    /// With `oauth`: every authorization request gets `access_denied`.
    pub deny: bool,
    /// With `oauth`: no dynamic client registration.
    pub no_registration: bool,
    /// With `oauth`: serve the fixture's own client ID metadata document.
    pub cimd: bool,
    /// With `oauth`: client ID metadata documents are not accepted.
    pub no_cimd: bool,
    /// With `oauth`: the lifetime of an access token in seconds (None: the default).
    pub token_lifetime: Option<u32>,
    /// With `oauth`: no refresh tokens.
    pub no_refresh_tokens: bool,
    /// With `oauth`: the length of an access token (None: the prefix and the random part).
    pub access_token_bytes: Option<u32>,
    /// With `oauth`: the step-up challenge names only the missing scope.
    pub step_up_scope_only: bool,
    /// With `oauth`: the `token_endpoint_auth_method` of every registration answer.
    pub register_auth_method: Option<String>,
    /// The tools, resources and prompts of the official conformance suite.
    pub conformance: bool,
    /// M5: stdio through the embedded bridge, with this policy for `server/discover`.
    pub embedded: Option<Discover>,
}

impl Options {
    /// The lifetime of an access token of `--oauth`, in seconds.
    pub fn token_lifetime(&self) -> u32 {
        self.token_lifetime.unwrap_or(DEFAULT_TOKEN_LIFETIME)
    }
}

/// The test browser of `--browse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Browse {
    /// The URL to open.
    pub url: String,
    /// The PEM file of the trusted CA certificates (None: the embedded test CA).
    pub ca_file: Option<std::path::PathBuf>,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Serve(Options),
    Browse(Browse),
    Help,
    Version,
}

/// Parses the arguments (without the program name). The error is the cause, for stderr.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut options = Options::default();
    let mut browse: Option<String> = None;
    let mut ca_file: Option<String> = None;
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
            "--close-stdout"
            | "--plain-http"
            | "--untrusted"
            | "--always-sse"
            | "--oauth"
            | "--deny"
            | "--no-registration"
            | "--cimd"
            | "--no-cimd"
            | "--no-refresh-tokens"
            | "--step-up-scope-only"
            | "--conformance" => {
                if inline.is_some() {
                    return Err(format!("the option {name} takes no value"));
                }
                let flag = match name {
                    "--close-stdout" => &mut options.close_stdout,
                    "--plain-http" => &mut options.plain_http,
                    "--untrusted" => &mut options.untrusted,
                    "--oauth" => &mut options.oauth,
                    "--deny" => &mut options.deny,
                    "--no-registration" => &mut options.no_registration,
                    "--cimd" => &mut options.cimd,
                    "--no-cimd" => &mut options.no_cimd,
                    "--no-refresh-tokens" => &mut options.no_refresh_tokens,
                    "--step-up-scope-only" => &mut options.step_up_scope_only,
                    "--conformance" => &mut options.conformance,
                    _ => &mut options.always_sse,
                };
                *flag = true;
            }
            "--many-tools"
            | "--listen"
            | "--bearer-env"
            | "--listen-status"
            | "--token-lifetime"
            | "--access-token-bytes"
            | "--browse"
            | "--ca-file"
            | "--register-auth-method" => {
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
                    "--token-lifetime" => {
                        let lifetime = number(name, &value, MAX_TOKEN_LIFETIME)?;
                        if lifetime == 0 {
                            return Err(format!(
                                "--token-lifetime needs a number from 1 to {MAX_TOKEN_LIFETIME}, not '0'"
                            ));
                        }
                        options.token_lifetime = Some(lifetime);
                    }
                    "--access-token-bytes" => {
                        let (min, max) = ACCESS_TOKEN_BYTES;
                        let bytes = number(name, &value, max)?;
                        if bytes < min {
                            return Err(format!(
                                "--access-token-bytes needs a number from {min} to {max}, not '{value}'"
                            ));
                        }
                        options.access_token_bytes = Some(bytes);
                    }
                    "--register-auth-method" => {
                        if !matches!(value.as_str(), "client_secret_basic" | "client_secret_post") {
                            return Err(format!(
                                "--register-auth-method needs client_secret_basic or client_secret_post, not '{value}'"
                            ));
                        }
                        options.register_auth_method = Some(value);
                    }
                    "--browse" => browse = Some(value),
                    "--ca-file" => ca_file = Some(value),
                    _ => options.listen_status = Some(status(&value)?),
                }
            }
            _ => return Err(format!("the option {arg} is not known")),
        }
    }
    if let Some(url) = browse {
        if options != Options::default() {
            return Err("the option --browse takes no other option than --ca-file".into());
        }
        return Ok(Command::Browse(Browse {
            url,
            ca_file: ca_file.map(std::path::PathBuf::from),
        }));
    }
    if ca_file.is_some() {
        return Err("the option --ca-file needs --browse".into());
    }
    check_modes(&options)?;
    check_oauth(&options)?;
    Ok(Command::Serve(options))
}

/// The sub-options of `--oauth` need it; `--oauth` needs `--listen` and excludes
/// `--bearer-env`.
fn check_oauth(options: &Options) -> Result<(), String> {
    let oauth_only = [
        ("--deny", options.deny),
        ("--no-registration", options.no_registration),
        ("--cimd", options.cimd),
        ("--no-cimd", options.no_cimd),
        ("--token-lifetime", options.token_lifetime.is_some()),
        ("--no-refresh-tokens", options.no_refresh_tokens),
        ("--access-token-bytes", options.access_token_bytes.is_some()),
        (
            "--register-auth-method",
            options.register_auth_method.is_some(),
        ),
    ];
    if !options.oauth {
        return match oauth_only.iter().find(|(_, set)| *set) {
            Some((name, _)) => Err(format!("the option {name} needs --oauth")),
            None => Ok(()),
        };
    }
    if options.listen.is_none() {
        return Err("the option --oauth needs --listen".into());
    }
    if options.bearer_env.is_some() {
        return Err("the options --oauth and --bearer-env exclude each other".into());
    }
    if options.cimd && options.no_cimd {
        return Err("the options --cimd and --no-cimd exclude each other".into());
    }
    Ok(())
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
#[path = "cli_tests.rs"]
mod tests;
