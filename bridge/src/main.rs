//! Entry point of `mcp-bridge-vscode`: exit codes only. 0: stdin ended (also after the
//! watchdog); 1: the upstream command stopped, or an internal error; 2: the arguments are
//! not valid, a variable of `--header-env` is not set, or the token store does not open.
//! `logout` as the first argument runs [`mcp_bridge_vscode::logout`] (its own exit codes).

use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use mcp_bridge_vscode::auth::TokenSource;
use mcp_bridge_vscode::auth::start::session_for;
use mcp_bridge_vscode::cli::{self, Command, USAGE, UrlTarget};
use mcp_bridge_vscode::front::{self, Hooks, Outcome};
use mcp_bridge_vscode::log::{self, Level};
use mcp_bridge_vscode::translate::initialize::{ServerInfoFallback, fallback_name};
use mcp_bridge_vscode::upstream::child::SHUTDOWN_GRACE;
use mcp_bridge_vscode::upstream::connect::Target;
use mcp_bridge_vscode::upstream::http::{HttpOptions, load_ca_file};
use mcp_bridge_vscode::{VERSION, stdio_pipes, watchdog};

fn main() {
    // Every line is a tracing event; this layer writes the contract's line format to stderr.
    log::install();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "logout") {
        std::process::exit(mcp_bridge_vscode::logout::main(&args[1..]));
    }
    let options = match cli::parse(&args) {
        Ok(Command::Serve(options)) => options,
        Ok(Command::Help) => exit_printing(&mut std::io::stdout(), USAGE, 0),
        Ok(Command::Version) => exit_printing(
            &mut std::io::stdout(),
            &format!("mcp-bridge-vscode {VERSION}\n"),
            0,
        ),
        Err(error) => {
            log::vscode(Level::Err, &error.to_string());
            exit_printing(&mut std::io::stderr(), USAGE, 2)
        }
    };
    log::set_threshold(options.log_level);
    let (upstream, name, sign_in) = match options.target {
        cli::Target::Command { command, args } => {
            let name = fallback_name(options.name.as_deref(), &command.to_string_lossy());
            (Target::Command { command, args }, name, None)
        }
        // The parser gives the host of the URL as the default name.
        cli::Target::Url(target) => {
            let (upstream, sign_in) = url_target(target);
            let name = options.name.unwrap_or_else(|| "mcp-server".to_owned());
            (upstream, name, sign_in)
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
        max_line_bytes: options.max_line_bytes,
        max_in_flight: front::inflight::MAX_IN_FLIGHT,
        shutdown_grace: SHUTDOWN_GRACE,
        sign_in,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            log::vscode(
                Level::Err,
                &format!("the bridge stopped because of an internal error: {error}"),
            );
            std::process::exit(1);
        }
    };
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
    // Exit without dropping the runtime: its stdin thread may still block in a read.
    std::process::exit(match outcome {
        Outcome::Eof => 0,
        Outcome::UpstreamExited(_) => 1,
    });
}

/// The URL form: the warnings of the command line, then the headers of `--header-env` and the
/// certificates of `--ca-file`, each of which exits 2 with its cause when it cannot be used;
/// with the sign-in, which the transport and the front share.
fn url_target(target: UrlTarget) -> (Target, Option<TokenSource>) {
    for warning in target.warnings() {
        log::vscode(Level::Warn, &warning);
    }
    let headers = match cli::resolve_headers(&target.headers, |var| std::env::var_os(var)) {
        Ok(headers) => headers,
        Err(error) => {
            log::vscode(Level::Err, &error.to_string());
            std::process::exit(2);
        }
    };
    let extra_roots = match target.ca_file.as_deref().map(load_ca_file).transpose() {
        Ok(roots) => roots.unwrap_or_default(),
        Err(error) => {
            log::vscode(
                Level::Err,
                &format!("cannot use the CA certificates of --ca-file: {error}"),
            );
            std::process::exit(2);
        }
    };
    let http = HttpOptions {
        url: target.url.clone(),
        headers,
        max_response_bytes: target.max_response_bytes,
        extra_roots,
    };
    let client = http.client_options();
    let sign_in = match session_for(&target.url, &target.headers, &target.sign_in, &client) {
        Ok(sign_in) => sign_in,
        Err(error) => {
            log::vscode(Level::Err, &error.to_string());
            std::process::exit(2);
        }
    };
    (Target::Url(Arc::new(http), sign_in.clone()), sign_in)
}

fn exit_printing(out: &mut dyn Write, text: &str, code: i32) -> ! {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    std::process::exit(code);
}
