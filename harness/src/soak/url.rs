//! The URL form of the soak: the fixture as its own OAuth authorization server over HTTPS
//! (`--listen 127.0.0.1:0 --oauth`) with short tokens, so that the bridge refreshes them while
//! the soak runs, and the sign-in through the sign-in line and the fixture's test browser.
use std::time::{Duration, Instant};

use super::conn::{Conn, EXCHANGE, Programs};
use crate::process::Bridge;
use crate::sign_in::Held;

/// The lifetime of an access token: usable for 15 s (the bridge refreshes one minute before
/// the end), so that a 2-minute soak sees several refreshes.
const TOKEN_LIFETIME: &str = "75";
/// The prefix of the sign-in line.
const SIGN_IN: &str = "mcp-bridge-vscode: sign in at ";

/// The running HTTPS fixture.
pub struct UrlFixture {
    pub process: Bridge,
    pub url: String,
}

impl UrlFixture {
    /// The refresh grants that the authorization server answered (its own log lines).
    pub fn refreshes(&self) -> u64 {
        self.process
            .stderr
            .snapshot()
            .iter()
            .filter(|l| l.contains("issued tokens") && l.contains("(refresh_token)"))
            .count() as u64
    }
}

/// Variables of the machine that would send the requests elsewhere or open a browser.
pub fn clean_env() -> Vec<(String, String)> {
    [
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "HTTP_PROXY",
        "http_proxy",
    ]
    .iter()
    .map(|v| ((*v).to_owned(), String::new()))
    .chain([("NO_PROXY".to_owned(), "127.0.0.1".to_owned())])
    .collect()
}

pub async fn start_fixture(programs: &Programs, tag: &str) -> Result<UrlFixture, String> {
    let args: Vec<String> = [
        "--listen",
        "127.0.0.1:0",
        "--oauth",
        "--token-lifetime",
        TOKEN_LIFETIME,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut process = Bridge::spawn(&programs.fixture, &args, &[], &format!("{tag}-as"))?;
    let line = tokio::time::timeout(EXCHANGE, process.stdout.recv())
        .await
        .map_err(|_| "the HTTPS fixture wrote no listening line".to_owned())?
        .ok_or("the HTTPS fixture ended before its listening line")?;
    let text = String::from_utf8_lossy(&line.bytes).into_owned();
    let url = text
        .strip_prefix("listening ")
        .ok_or_else(|| format!("the HTTPS fixture wrote {text}"))?
        .to_owned();
    Ok(UrlFixture { process, url })
}

/// The bridge's arguments at `url`, and the hold on its redirect port for the bridge's life:
/// a port chosen by a bind to port 0 and released could go to another program's bind to port 0
/// before the sign-in (`crate::sign_in::bridge_options`, as a transcript's sign-in).
pub fn bridge_args(programs: &Programs, url: &str) -> Result<(Vec<String>, Held), String> {
    let (options, held) = crate::sign_in::bridge_options()?;
    let mut args = vec![
        "--ca-file".into(),
        programs.ca.to_string_lossy().into_owned(),
    ];
    args.extend(options);
    args.push(url.to_owned());
    Ok((args, held))
}

/// Waits for the sign-in line of the bridge and follows it with the fixture's test browser.
pub async fn sign_in(conn: &mut Conn, programs: &Programs) -> Result<(), String> {
    let deadline = Instant::now() + EXCHANGE;
    let url = loop {
        if let Some(url) = conn
            .bridge
            .stderr
            .snapshot()
            .iter()
            .find_map(|l| l.strip_prefix(SIGN_IN))
        {
            break url.to_owned();
        }
        if Instant::now() >= deadline {
            return Err("no sign-in line".into());
        }
        let mut changed = conn.bridge.stderr.changed.clone();
        let _ = tokio::time::timeout(Duration::from_millis(200), changed.changed()).await;
    };
    let out = tokio::process::Command::new(&programs.fixture)
        .arg("--browse")
        .arg(&url)
        .arg("--ca-file")
        .arg(&programs.ca)
        .output()
        .await
        .map_err(|e| format!("the test browser: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the test browser: {}",
            String::from_utf8_lossy(&out.stdout).trim()
        ));
    }
    Ok(())
}
