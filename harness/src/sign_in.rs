//! The sign-in of a transcript on `{"upstream":{"https":{"args":["--oauth"],"sign_in":true}}}`:
//! the bridge gets `--token-store memory --no-browser --redirect-port <free port>`, and a user
//! who always signs in follows each sign-in line of the bridge with the fixture's test browser
//! (`bridge-fixture-server --browse <url>`). A step-up after `notifications/initialized` also
//! writes a sign-in line; its URL elicitation reaches the transcript as a frame.
use std::net::TcpListener;
use std::path::PathBuf;

use crate::https::Reservation;
use crate::process::Stderr;

/// The prefix of the bridge's sign-in line.
pub const SIGN_IN: &str = "mcp-bridge-vscode: sign in at ";

/// The bridge options of a transcript with a sign-in (before the URL), and the hold on the
/// redirect port: the port stays the harness's until the transcript ends (the bridge's receiver
/// listens on it beside the hold, `https::Reservation`), so no other program gets it between
/// its choice and the sign-in.
pub fn bridge_options() -> Result<(Vec<String>, Held), String> {
    let hold = Reservation::new()?;
    let port = hold
        .address()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok())
        .filter(|p| *p != 0)
        .ok_or("no free redirect port")?;
    let taken = crate::https::take_port_for_test(hold.address());
    let options = vec![
        "--token-store".into(),
        "memory".into(),
        "--no-browser".into(),
        "--redirect-port".into(),
        port.to_string(),
    ];
    Ok((
        options,
        Held {
            _port: hold,
            _taken: taken,
        },
    ))
}

/// The redirect port held for a transcript (and, in the forced reproduction of
/// `HARNESS_TEST_TAKE_PORT`, the listener that took it).
pub struct Held {
    _port: Reservation,
    _taken: Option<TcpListener>,
}

/// Follows every sign-in line of `stderr` with the test browser until stderr ends.
pub fn follow(stderr: &Stderr, fixture: PathBuf, ca_file: PathBuf) {
    let lines = stderr.lines.clone();
    let mut changed = stderr.changed.clone();
    tokio::spawn(async move {
        let mut seen = 0usize;
        loop {
            let urls: Vec<String> = {
                let Ok(lines) = lines.lock() else { return };
                let new = lines
                    .iter()
                    .skip(seen)
                    .filter_map(|l| l.strip_prefix(SIGN_IN).map(str::to_owned))
                    .collect();
                seen = lines.len();
                new
            };
            for url in urls {
                // The browser's line hides the code and the state; a failure shows in the
                // transcript as the bridge's sign-in error.
                let _ = tokio::process::Command::new(&fixture)
                    .arg("--browse")
                    .arg(&url)
                    .arg("--ca-file")
                    .arg(&ca_file)
                    .stdout(crate::kept::stdio("browse", "stdout"))
                    .stderr(crate::kept::stdio("browse", "stderr"))
                    .status()
                    .await;
            }
            if changed.changed().await.is_err() {
                return;
            }
        }
    });
}
