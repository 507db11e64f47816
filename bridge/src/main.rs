//! Entry point of `mcp-bridge-vscode`: exit codes only. 0: stdin ended (also after the
//! watchdog); 1: the upstream command stopped, or an internal error; 2: the arguments are
//! not valid, or a variable of `--header-env` is not set.

use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use mcp_bridge_vscode::cli::{self, ArgError, Command, Target, USAGE};
use mcp_bridge_vscode::front::{self, Hooks, Outcome, UpstreamCommand};
use mcp_bridge_vscode::log::{self, Level};
use mcp_bridge_vscode::translate::initialize::{ServerInfoFallback, fallback_name};
use mcp_bridge_vscode::upstream::stdio::SHUTDOWN_GRACE;
use mcp_bridge_vscode::{VERSION, stdio_pipes, watchdog};

fn main() {
    // Every line is a tracing event; this layer writes the contract's line format to stderr.
    log::install();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
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
    let (command, command_args) = match options.target {
        Target::Command { command, args } => (command, args),
        Target::Url(target) => {
            for warning in target.warnings() {
                log::vscode(Level::Warn, &warning);
            }
            if let Err(error) = cli::resolve_headers(&target.headers, |var| std::env::var_os(var)) {
                log::vscode(Level::Err, &error.to_string());
                std::process::exit(2);
            }
            // The HTTP transport comes with the rest of issue 9.
            log::vscode(Level::Err, &ArgError::UrlForm.to_string());
            exit_printing(&mut std::io::stderr(), USAGE, 2)
        }
    };
    let upstream_pid = Arc::new(AtomicU32::new(0));
    internal_errors_exit_1(Arc::clone(&upstream_pid));

    let name = fallback_name(options.name.as_deref(), &command.to_string_lossy());
    let front_options = front::Options {
        upstream: UpstreamCommand {
            command,
            args: command_args,
        },
        fallback: ServerInfoFallback {
            name,
            version: VERSION.to_owned(),
        },
        discover_timeout: options.discover_timeout,
        max_line_bytes: options.max_line_bytes,
        max_in_flight: front::inflight::MAX_IN_FLIGHT,
        shutdown_grace: SHUTDOWN_GRACE,
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

fn exit_printing(out: &mut dyn Write, text: &str, code: i32) -> ! {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    std::process::exit(code);
}

/// A bug must not leave VS Code waiting: the contract's line, the upstream group killed,
/// exit 1.
fn internal_errors_exit_1(upstream_pid: Arc<AtomicU32>) {
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        log::vscode(
            Level::Err,
            &format!("the bridge stopped because of an internal error: {what}{at}"),
        );
        watchdog::kill_upstream(&upstream_pid);
        std::process::exit(1);
    }));
}
