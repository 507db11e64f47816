//! The executable `mcp-bridge-vscode` (its `main` only calls [`run_cli`]): the command line,
//! then the stdio form or the URL form until the end of stdin, or `logout`.
//!
//! Exit codes (docs: "Exit codes"): 0 when stdin ended (also after the watchdog), and for
//! `--help` and `--version`; 1 when the upstream command stopped, or at an internal error;
//! 2 when the arguments are not valid, a variable of `--header-env` is not set, the CA
//! certificates of `--ca-file` cannot be used, or the token store does not open. `logout`
//! has its own codes. [`Failure`] is the one mapping from what stops the start to its line
//! and its code.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use crate::auth::TokenSource;
use crate::auth::start::session_for;
use crate::cli::{self, Command, USAGE, UrlTarget};
use crate::front::{self, Hooks, Outcome};
use crate::log::{self, Level};
use crate::translate::initialize::{ServerInfoFallback, fallback_name};
use crate::upstream::child::SHUTDOWN_GRACE;
use crate::upstream::connect::Target;
use crate::upstream::http::HttpOptions;
use crate::webclient::load_ca_file;
use crate::wire::stdio_pipes;
use crate::{VERSION, watchdog};

#[path = "run_secrets.rs"]
mod start_secrets;

/// What stops the executable before it serves: each has its line on stderr and its code.
#[derive(Debug)]
enum Failure {
    /// The arguments are not valid: the cause, then the usage; exit 2.
    Arguments(String),
    /// An option that parsed cannot be used (`--header-env`, `--ca-file`, the token store):
    /// the cause; exit 2.
    Options(String),
    /// The runtime did not start; exit 1.
    Internal(String),
}

impl Failure {
    fn code(&self) -> u8 {
        match self {
            Failure::Arguments(_) | Failure::Options(_) => 2,
            Failure::Internal(_) => 1,
        }
    }

    /// Writes the line (and the usage for arguments that are not valid); the exit code.
    fn report(self) -> ExitCode {
        let code = self.code();
        match self {
            Failure::Arguments(cause) => {
                log::vscode(Level::Err, &cause);
                print(&mut std::io::stderr(), USAGE);
            }
            Failure::Options(cause) => log::vscode(Level::Err, &cause),
            Failure::Internal(error) => log::vscode(
                Level::Err,
                &format!("the bridge stopped because of an internal error: {error}"),
            ),
        }
        ExitCode::from(code)
    }
}

/// Runs the executable `mcp-bridge-vscode` with the arguments of this process and returns
/// its exit code. It installs the global tracing subscriber that writes the log lines on
/// stderr and the panic hook of the watchdog: it is for the executable, not for a server
/// that embeds the bridge (see [`crate::embed`]).
pub fn run_cli() -> ExitCode {
    // Every line is a tracing event; this layer writes the line format of R7 to stderr.
    log::install();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match run(&args) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => failure.report(),
    }
}

/// The executable with `args`: the exit code of a run that served (or printed), or why it
/// could not start.
fn run(args: &[OsString]) -> Result<u8, Failure> {
    if args.first().is_some_and(|a| a == "logout") {
        let code = crate::logout::main(&args[1..]);
        return Ok(u8::try_from(code).unwrap_or(1));
    }
    if args.first().is_some_and(|a| a == "secret") {
        let code = crate::secrets::command::main(&args[1..]);
        return Ok(u8::try_from(code).unwrap_or(1));
    }
    let options = match cli::parse(args).map_err(|e| Failure::Arguments(e.to_string()))? {
        Command::Serve(options) => options,
        Command::Help => {
            print(&mut std::io::stdout(), USAGE);
            return Ok(0);
        }
        Command::Version => {
            print(
                &mut std::io::stdout(),
                &format!("mcp-bridge-vscode {VERSION}\n"),
            );
            return Ok(0);
        }
    };
    log::set_threshold(options.log_level);
    // The bridge's own secrets resolve before anything answers `initialize`; a refusal is
    // the answer of `initialize`, and nothing starts (docs/secrets.md).
    let secrets = start_secrets::resolve(&options.target);
    let refusal = secrets.as_ref().err().map(|refusal| {
        log::vscode(Level::Err, &refusal.line());
        refusal.error()
    });
    let values = secrets.unwrap_or_default();
    let (upstream, name, sign_in) = match options.target {
        cli::Target::Command {
            command,
            args,
            secret_env,
        } => {
            let name = fallback_name(options.name.as_deref(), &command.to_string_lossy());
            let env = start_secrets::child_env(&secret_env, &values);
            (Target::Command { command, args, env }, name, None)
        }
        // The parser gives the host of the URL as the default name.
        cli::Target::Url(target) if refusal.is_none() => {
            let (upstream, sign_in) = url_target(target, &values)?;
            let name = options.name.unwrap_or_else(|| "mcp-server".to_owned());
            (upstream, name, sign_in)
        }
        // A refusal: no header is resolved, no store of the sign-in opens, nothing connects.
        cli::Target::Url(target) => {
            let name = options.name.unwrap_or_else(|| "mcp-server".to_owned());
            let http = HttpOptions {
                url: target.url,
                headers: Vec::new(),
                max_response_bytes: target.max_response_bytes,
                extra_roots: Vec::new(),
            };
            (Target::Url(Arc::new(http), None), name, None)
        }
    };
    let upstream_pid = Arc::new(AtomicU32::new(0));
    watchdog::exit_1_on_panic(Arc::clone(&upstream_pid));

    let front_options = front::Options {
        upstream,
        fallback: ServerInfoFallback {
            name,
            version: VERSION.to_owned(),
        },
        discover_timeout: options.discover_timeout,
        answer_initialize_after: options.answer_initialize_after,
        upstream_revision: options.upstream_revision,
        max_line_bytes: options.max_line_bytes,
        max_in_flight: front::inflight::MAX_IN_FLIGHT,
        shutdown_grace: SHUTDOWN_GRACE,
        sign_in,
        refusal,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Internal(e.to_string()))?;
    let watchdog_pid = Arc::clone(&upstream_pid);
    let hooks = Hooks {
        on_eof: Some(Box::new(move || {
            watchdog::arm(watchdog_pid, watchdog::WATCHDOG_AFTER)
        })),
        upstream_pid,
    };
    let outcome = runtime.block_on(async move {
        // The pipes register with the reactor, so they are made inside the runtime.
        front::serve(
            front_options,
            stdio_pipes::stdin(),
            stdio_pipes::stdout(),
            hooks,
        )
        .await
    });
    let code: u8 = match outcome {
        Outcome::Eof => 0,
        Outcome::UpstreamExited(_) => 1,
        // Like a variable of --header-env that is not set: the configuration names a value
        // that the bridge cannot use (docs/exit-codes.md).
        Outcome::Refused => 2,
    };
    // Windows (R7; docs/windows.md, "The end of the process"): the process ends here with
    // the runtime's threads as they are, blocked or parked. A shutdown of the runtime first
    // would make its blocking threads end while the process ends, and wine 8.0 loses that
    // race now and then (the process killed by SIGKILL or SIGSEGV instead of exit 0; the
    // C program ci/windows/exit-race.c shows it without the bridge).
    #[cfg(windows)]
    {
        // The runtime is never dropped: a drop would wait for its blocking threads. No flush
        // of stdout either: the writer's thread may hold its lock, blocked in a write that a
        // client which no longer reads never ends (the exit's own flush only tries the lock).
        std::process::exit(i32::from(code))
    }
    // Without waiting for the runtime's threads: its stdin thread may still block in a read,
    // and the process exits when `main` returns.
    #[cfg(not(windows))]
    {
        runtime.shutdown_background();
        Ok(code)
    }
}

/// The URL form: the warnings of the command line, then the headers of `--header-env`, the
/// certificates of `--ca-file` and the sign-in with its token store, which the transport and
/// the front share.
fn url_target(
    target: UrlTarget,
    secrets: &BTreeMap<String, String>,
) -> Result<(Target, Option<TokenSource>), Failure> {
    for warning in target.warnings() {
        log::vscode(Level::Warn, &warning);
    }
    let headers = cli::resolve_headers(
        &target.headers,
        |var| std::env::var_os(var),
        |name| secrets.get(name).cloned(),
    )
    .map_err(|e| Failure::Options(e.to_string()))?;
    let extra_roots = target
        .ca_file
        .as_deref()
        .map(load_ca_file)
        .transpose()
        .map_err(|e| Failure::Options(format!("cannot use the CA certificates of --ca-file: {e}")))?
        .unwrap_or_default();
    let http = HttpOptions {
        url: target.url.clone(),
        headers,
        max_response_bytes: target.max_response_bytes,
        extra_roots,
    };
    let client = http.client_options();
    let sign_in = session_for(&target.url, &target.headers, &target.sign_in, &client)
        .map_err(|e| Failure::Options(e.to_string()))?;
    Ok((Target::Url(Arc::new(http), sign_in.clone()), sign_in))
}

fn print(out: &mut dyn Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
