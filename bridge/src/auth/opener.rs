//! The browser opener of a sign-in before `notifications/initialized` (M6): `$BROWSER` when
//! set (VS Code's helper in a remote window), else the desktop's opener, with the one-time
//! start URL as its only argument. Never a shell: the URL is one argument, whatever it holds.
//!
//! Other users of a POSIX host can read the argv of a process, so the opener never gets the
//! authorization URL (its state and code challenge), and its environment has no secret of the
//! bridge.

use std::process::Stdio;
use std::time::Duration;

use crate::log::{self, Level};

/// The variables that never reach the opener: the token key of the file store and the client
/// secret of `--client-id`.
pub const SECRET_VARIABLES: [&str; 2] = ["MCP_BRIDGE_TOKEN_KEY", "MCP_BRIDGE_CLIENT_SECRET"];

/// An opener that still runs after this time is a browser that stays open: a success.
const REAP: Duration = Duration::from_secs(3);

/// The program of the opener and its fixed arguments.
fn program() -> (String, Vec<String>) {
    if let Some(browser) = std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
        return (browser.to_string_lossy().into_owned(), Vec::new());
    }
    if cfg!(target_os = "macos") {
        ("open".into(), Vec::new())
    } else if cfg!(windows) {
        // `start` is a builtin of cmd; rundll32 opens a URL with the default browser without
        // a shell parsing the URL.
        (
            "rundll32".into(),
            vec!["url.dll,FileProtocolHandler".into()],
        )
    } else {
        ("xdg-open".into(), Vec::new())
    }
}

/// Opens `start_url`; false when the opener did not start or stopped with an error (a
/// warning says so; the sign-in line stays the way to sign in). `hidden`: more variables to
/// remove (the names of `--header-env`).
pub async fn open(start_url: &str, hidden: &[String]) -> bool {
    let (program, mut args) = program();
    args.push(start_url.to_owned());
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(false);
    for name in SECRET_VARIABLES
        .iter()
        .copied()
        .chain(hidden.iter().map(String::as_str))
    {
        command.env_remove(name);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            log::bridge(
                Level::Warn,
                &format!("the bridge cannot start the browser opener: {}", e.kind()),
            );
            did_not_open();
            return false;
        }
    };
    match tokio::time::timeout(REAP, child.wait()).await {
        Ok(Ok(status)) if !status.success() => {
            log::bridge(Level::Warn, "the browser opener stopped with an error");
            did_not_open();
            false
        }
        Ok(_) => true,
        Err(_) => {
            // Still running: a browser in the foreground. Reap it later so that it leaves no
            // zombie.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            true
        }
    }
}

fn did_not_open() {
    log::bridge(
        Level::Warn,
        "the browser did not open: open the URL of the sign-in line in a browser",
    );
}
