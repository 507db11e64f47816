//! The command line: `bridge-fixture-server [--revision R] [--many-tools N] [--close-stdout]
//! [--conformance]`,
//! the embedded bridge `bridge-fixture-server --embedded[=refuse] [--many-tools N]` (M5), the
//! HTTP mode `bridge-fixture-server --listen <ip>:<port> [--plain-http] [--untrusted]
//! [--bearer-env VAR] [--listen-status CODE:COUNT] [--always-sse] [--conformance] [--oauth …]`,
//! and the test browser `bridge-fixture-server --browse <url> [--ca-file <pem>]`.
//!
//! clap (derive) reads the options: the names, values, defaults and the pairs that exclude each
//! other are attributes of [`Options`]. Two things stay here because the tests of the bridge
//! read their texts: the value checks (`<option> needs a number, not '<text>'`) and the options
//! that need another one (`the option --deny needs --oauth`), whose clap error would not name
//! the option that needs. Arguments that are not valid exit with code 2 and the cause, one
//! line, on stderr ([`cause`]); `--help` writes [`USAGE`], kept by hand: one text groups the
//! options by mode, which clap's generated help would not.

/// The version of the fixture, also its `serverInfo.version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The text of `--help`, also written after an argument error.
pub const USAGE: &str = "\
usage: bridge-fixture-server [--revision R] [--start-delay S] [--many-tools N] [--close-stdout]
                             [--conformance] [--discover-error E] [--env-sha256 VAR=HEX]
       bridge-fixture-server --embedded[=refuse] [--many-tools N]
       bridge-fixture-server --listen <ip>:<port> [--plain-http] [--untrusted]
                             [--bearer-env VAR] [--header-sha256 N=HEX]
                             [--listen-status CODE:COUNT] [--always-sse]
                             [--many-tools N] [--conformance] [--discover-error E]
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
  --header-sha256 N=HEX  with --listen: every request needs the header N whose value has the
                         SHA-256 HEX (401 otherwise)
  --env-sha256 VAR=HEX   at the start, the variable VAR must have the SHA-256 HEX, else exit 3
  --listen-status C:N    with --listen: answer the first N subscriptions/listen requests with
                         the HTTP status C (200 to 599)
  --always-sse           with --listen: answer every request with an SSE stream
  --discover-error E     refuse server/discover with E: -32020, -32021,
                         -32022:<revision>[,<revision>...] (its data.supported) or, with
                         --listen, html (a page); with --listen as the HTTP status 400
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
  --revision R           the revision to serve: 2026-07-28 (default) or 2025-11-25, a
                         stateful server with initialize and server-initiated requests, on
                         stdio or with --listen (Streamable HTTP with sessions at /mcp,
                         the 2024-11-05 HTTP+SSE transport at /sse); dual (stdio only): both,
                         the connection locked to the era of its first request (a later
                         initialize gets -32022, a later server/discover -32601)
  --start-delay S        wait S seconds (fractions allowed, at most 600) before reading stdin
                         or binding the --listen address: a server that starts slowly
";

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, Args, Parser};
use mcp_bridge_vscode::embed::Discover;

use crate::revision::{self, Revision};

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
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The revision of the server (`revision.rs`); the older one excludes some options.
    #[arg(long, value_name = "R", default_value = "2026-07-28", value_parser = revision::parse)]
    pub revision: Revision,
    /// The number of generated tools `tool_<i>`.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = many_tools)]
    pub many_tools: u32,
    /// Close stdout at once and stop reading: a misbehaving server.
    #[arg(long, conflicts_with = "listen")]
    pub close_stdout: bool,
    /// The HTTP mode: the address to listen on.
    #[arg(long, value_name = "ip:port", value_parser = address)]
    pub listen: Option<std::net::SocketAddr>,
    /// The HTTP mode without TLS.
    #[arg(long)]
    pub plain_http: bool,
    /// The HTTP mode with the certificate of the untrusted test CA.
    #[arg(long, conflicts_with = "plain_http")]
    pub untrusted: bool,
    /// The name of the environment variable that holds the bearer token.
    #[arg(long, value_name = "VAR", value_parser = variable)]
    pub bearer_env: Option<String>,
    /// `--header-sha256 NAME=HEX`: every request needs the header NAME whose value has this
    /// SHA-256 (a secret compared by its digest, never printed).
    #[arg(long, value_name = "NAME=HEX", value_parser = digest_pair)]
    pub header_sha256: Option<(String, String)>,
    /// `--env-sha256 VAR=HEX`: at the start, the variable VAR must have this SHA-256, else
    /// the fixture exits with code 3 (a secret compared by its digest, never printed).
    #[arg(long, value_name = "VAR=HEX", value_parser = digest_pair)]
    pub env_sha256: Option<(String, String)>,
    /// The HTTP status of the first `subscriptions/listen` requests, and how many.
    #[arg(long, value_name = "CODE:COUNT", value_parser = status)]
    pub listen_status: Option<(u16, u32)>,
    /// Every response of the HTTP mode as an SSE stream.
    #[arg(long)]
    pub always_sse: bool,
    /// The refusal of every `server/discover` (L1, L4 of the bridge).
    #[arg(long, value_name = "E", value_parser = crate::discover_refusal::parse, conflicts_with = "embedded")]
    pub discover_error: Option<crate::discover_refusal::DiscoverError>,
    /// The fake authorization server: `/mcp` needs an access token.
    #[arg(long, conflicts_with = "bearer_env")]
    pub oauth: bool,
    /// With `oauth`: every authorization request gets `access_denied`.
    #[arg(long)]
    pub deny: bool,
    /// With `oauth`: no dynamic client registration.
    #[arg(long)]
    pub no_registration: bool,
    /// With `oauth`: serve the fixture's own client ID metadata document.
    #[arg(long, conflicts_with = "no_cimd")]
    pub cimd: bool,
    /// With `oauth`: client ID metadata documents are not accepted.
    #[arg(long)]
    pub no_cimd: bool,
    /// With `oauth`: the lifetime of an access token in seconds (None: the default).
    #[arg(long, value_name = "S", value_parser = token_lifetime)]
    pub token_lifetime: Option<u32>,
    /// With `oauth`: no refresh tokens.
    #[arg(long)]
    pub no_refresh_tokens: bool,
    /// With `oauth`: the length of an access token (None: the prefix and the random part).
    #[arg(long, value_name = "N", value_parser = access_token_bytes)]
    pub access_token_bytes: Option<u32>,
    /// With `oauth`: the step-up challenge names only the missing scope.
    #[arg(long)]
    pub step_up_scope_only: bool,
    /// With `oauth`: the `token_endpoint_auth_method` of every registration answer.
    #[arg(long, value_name = "M", value_parser = auth_method)]
    pub register_auth_method: Option<String>,
    /// The tools, resources and prompts of the official conformance suite.
    #[arg(long)]
    pub conformance: bool,
    /// How long the fixture waits before it reads stdin or binds its address (`start.rs`).
    #[arg(long, value_name = "S", value_parser = crate::start::delay)]
    pub start_delay: Option<std::time::Duration>,
    /// M5: stdio through the embedded bridge, with this policy for `server/discover`
    /// (`--embedded` answers it, `--embedded=refuse` leaves it to the bridge).
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        value_parser = discover,
        conflicts_with_all = ["listen", "close_stdout"]
    )]
    pub embedded: Option<Discover>,
}

impl Options {
    /// The lifetime of an access token of `--oauth`, in seconds.
    pub fn token_lifetime(&self) -> u32 {
        self.token_lifetime.unwrap_or(DEFAULT_TOKEN_LIFETIME)
    }
}

/// The whole command line: the options of a server, or the test browser.
#[derive(Parser, Debug)]
#[command(
    name = "bridge-fixture-server",
    version = VERSION,
    disable_help_flag = true,
    disable_version_flag = true
)]
struct Line {
    #[command(flatten)]
    options: Options,
    /// The test browser: the URL to open.
    #[arg(long, value_name = "url")]
    browse: Option<String>,
    /// With `--browse`: the PEM file of the trusted CA certificates.
    #[arg(long, value_name = "pem")]
    ca_file: Option<std::path::PathBuf>,
    /// Ends the parse at once, as `--version` does: clap reports it as an "error" of its own
    /// kind, which [`parse`] turns into [`Command::Help`].
    #[arg(short = 'h', long, action = ArgAction::Help)]
    help: Option<bool>,
    #[arg(short = 'V', long, action = ArgAction::Version)]
    version: Option<bool>,
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
// Made once per run and moved once: the size of `Serve` costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Serve(Options),
    Browse(Browse),
    Help,
    Version,
}

/// Parses the arguments (without the program name). The error is the cause, for stderr.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let program = std::iter::once("bridge-fixture-server");
    let line = match Line::try_parse_from(program.chain(args.iter().map(String::as_str))) {
        Ok(line) => line,
        Err(error) if error.kind() == ErrorKind::DisplayHelp => return Ok(Command::Help),
        Err(error) if error.kind() == ErrorKind::DisplayVersion => return Ok(Command::Version),
        Err(error) => return Err(cause(&error)),
    };
    let options = line.options;
    if let Some(url) = line.browse {
        if options != Options::default() {
            return Err("the option --browse takes no other option than --ca-file".into());
        }
        return Ok(Command::Browse(Browse {
            url,
            ca_file: line.ca_file,
        }));
    }
    if line.ca_file.is_some() {
        return Err("the option --ca-file needs --browse".into());
    }
    needs(&options)?;
    revision::check(
        options.revision,
        options.embedded.is_some(),
        options.listen.is_some(),
    )?;
    Ok(Command::Serve(options))
}

/// The one line of a clap error: the text of the value check that failed, or clap's own first
/// line, with the project's wording where the tests read it.
fn cause(error: &clap::Error) -> String {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(text)) => text.clone(),
        _ => String::new(),
    };
    // The option as given, without the value name clap adds (`--many-tools <N>`).
    let option = || {
        let arg = context(ContextKind::InvalidArg);
        arg.split(' ').next().unwrap_or_default().to_string()
    };
    match error.kind() {
        ErrorKind::UnknownArgument => format!("the option {} is not known", option()),
        ErrorKind::InvalidValue if context(ContextKind::InvalidValue).is_empty() => {
            format!("the option {} needs a value", option())
        }
        ErrorKind::TooManyValues | ErrorKind::NoEquals => {
            format!("the option {} takes no value", option())
        }
        ErrorKind::ArgumentConflict => match context(ContextKind::PriorArg).split(' ').next() {
            Some(prior) if !prior.is_empty() && prior != option() => {
                format!("the options {} and {prior} exclude each other", option())
            }
            _ => format!("the option {} is given twice", option()),
        },
        _ => match std::error::Error::source(error) {
            // A value parser of this file: its text is the whole cause.
            Some(source) => source.to_string(),
            None => {
                let text = error.render().to_string();
                let first = text.lines().next().unwrap_or_default();
                first.strip_prefix("error: ").unwrap_or(first).to_string()
            }
        },
    }
}

/// The options that work only with another one: the HTTP options need `--listen`, the
/// sub-options of `--oauth` need it, and `--oauth` needs `--listen`.
fn needs(options: &Options) -> Result<(), String> {
    let needs_listen = [
        ("--plain-http", options.plain_http),
        ("--untrusted", options.untrusted),
        ("--always-sse", options.always_sse),
        ("--bearer-env", options.bearer_env.is_some()),
        ("--listen-status", options.listen_status.is_some()),
        ("--oauth", options.oauth),
    ];
    let needs_oauth = [
        ("--deny", options.deny),
        ("--no-registration", options.no_registration),
        ("--cimd", options.cimd),
        ("--no-cimd", options.no_cimd),
        ("--token-lifetime", options.token_lifetime.is_some()),
        ("--no-refresh-tokens", options.no_refresh_tokens),
        ("--access-token-bytes", options.access_token_bytes.is_some()),
        ("--step-up-scope-only", options.step_up_scope_only),
        (
            "--register-auth-method",
            options.register_auth_method.is_some(),
        ),
    ];
    let first = |list: &[(&str, bool)], set: bool, needed: &str| match list.iter().find(|o| o.1) {
        Some((name, _)) if !set => Err(format!("the option {name} needs {needed}")),
        _ => Ok(()),
    };
    first(&needs_listen, options.listen.is_some(), "--listen")?;
    first(&needs_oauth, options.oauth, "--oauth")?;
    // A page is an answer of HTTP alone: stdio carries JSON-RPC frames only.
    if options.discover_error == Some(crate::discover_refusal::DiscoverError::Html)
        && options.listen.is_none()
    {
        return Err("the option --discover-error html needs --listen".into());
    }
    Ok(())
}

/// `--embedded` (an empty value) or `--embedded=refuse`.
fn discover(text: &str) -> Result<Discover, String> {
    match text {
        "" => Ok(Discover::Answer),
        "refuse" => Ok(Discover::Refuse),
        other => Err(format!("--embedded takes only =refuse, not '{other}'")),
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

fn variable(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("--bearer-env needs the name of a variable".into());
    }
    Ok(text.to_string())
}

/// `NAME=HEX`: a name and 64 lowercase hexadecimal digits of a SHA-256.
fn digest_pair(text: &str) -> Result<(String, String), String> {
    let (name, hex) = text
        .split_once('=')
        .filter(|(name, hex)| {
            !name.is_empty()
                && hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
        .ok_or("--header-sha256 and --env-sha256 need NAME=<64 lowercase hex digits>")?;
    Ok((name.to_owned(), hex.to_owned()))
}

fn auth_method(text: &str) -> Result<String, String> {
    if !matches!(text, "client_secret_basic" | "client_secret_post") {
        return Err(format!(
            "--register-auth-method needs client_secret_basic or client_secret_post, not '{text}'"
        ));
    }
    Ok(text.to_string())
}

fn many_tools(text: &str) -> Result<u32, String> {
    number("--many-tools", text, (0, MAX_MANY_TOOLS))
}

fn token_lifetime(text: &str) -> Result<u32, String> {
    number("--token-lifetime", text, (1, MAX_TOKEN_LIFETIME))
}

fn access_token_bytes(text: &str) -> Result<u32, String> {
    number("--access-token-bytes", text, ACCESS_TOKEN_BYTES)
}

/// A number in `min..=max`; the texts are the ones the tests of the bridge read.
fn number(option: &str, text: &str, (min, max): (u32, u32)) -> Result<u32, String> {
    let value: u32 = text
        .parse()
        .map_err(|_| format!("{option} needs a number, not '{text}'"))?;
    if !(min..=max).contains(&value) {
        return Err(format!(
            "{option} needs a number from {min} to {max}, not '{text}'"
        ));
    }
    Ok(value)
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "revision_tests.rs"]
mod revision_tests;
