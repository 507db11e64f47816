//! The sign-in tests (M4, M6) against `bridge-fixture-server --listen 127.0.0.1:0 --oauth`:
//! the fixture's authorization server, the bridge at its URL, the test browser
//! (`bridge-fixture-server --browse`) that follows a URL to the loopback receiver, and the
//! fixture's counters.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::https_fixture::{HttpsFixture, ca_file};
use super::{Bridge, EXCHANGE, fixture_bin};

/// The prefix of the sign-in line.
pub const SIGN_IN: &str = "mcp-bridge-vscode: sign in at ";

/// The variables of the machine that would send the requests elsewhere or change a sign-in.
pub use super::MACHINE_VARS as REMOVED;

/// The fixture as its own authorization server, with more options.
pub fn oauth_fixture(extra: &[&str]) -> HttpsFixture {
    let mut args = vec!["--oauth"];
    args.extend_from_slice(extra);
    HttpsFixture::start(&args, &[])
}

/// A redirect port of 127.0.0.1 that no other program's bind to port 0 takes before the
/// bridge binds it ([`super::ports`]).
pub fn free_port() -> u16 {
    super::ports::redirect_port()
}

/// The bridge at `url` with the memory store, the test CA, `port` and `extra`, not yet
/// initialized.
pub fn bridge(url: &str, port: u16, extra: &[&str], env: &[(&str, &str)]) -> Bridge {
    let ca = ca_file();
    let port = port.to_string();
    let mut args = vec![
        "--ca-file",
        ca.as_str(),
        "--token-store",
        "memory",
        "--redirect-port",
        port.as_str(),
        "--log-level",
        "debug",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    Bridge::start_with_env_removed(&args, env, &REMOVED)
}

/// The URLs of the sign-in lines so far.
pub fn sign_in_urls(b: &Bridge) -> Vec<String> {
    b.stderr()
        .lines()
        .filter_map(|l| l.strip_prefix(SIGN_IN))
        .map(str::to_owned)
        .collect()
}

/// Waits (bounded) for the `n`th sign-in line (1-based) and returns its URL.
pub fn wait_sign_in(b: &Bridge, n: usize) -> String {
    let since = Instant::now();
    while since.elapsed() < EXCHANGE {
        if let Some(url) = sign_in_urls(b).get(n - 1) {
            return url.clone();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no sign-in line {n}\nstderr:\n{}", b.stderr());
}

/// The test browser on `url`: its exit code and its line (`<status> <url>`, code and state
/// hidden).
pub fn browse(url: &str) -> (Option<i32>, String) {
    let out = Command::new(fixture_bin())
        .args(["--browse", url, "--ca-file", &ca_file()])
        .output()
        .expect("the test browser runs");
    super::kept::keep_output("browse", &out);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    )
}

/// Follows `url` to the receiver and asserts that the receiver answered 200.
pub fn complete(url: &str) {
    let (code, line) = browse(url);
    assert_eq!(code, Some(0), "{line}");
    assert!(line.starts_with("200 http://127.0.0.1:"), "{line}");
}

/// VS Code's `initialize` with a sign-in through the sign-in line (`--no-browser`).
pub fn initialize_signing_in(b: &mut Bridge) -> Value {
    b.send(&super::vscode_initialize(1));
    complete(&wait_sign_in(b, 1));
    let r = b.response(1);
    assert!(r.get("result").is_some(), "{r}\nstderr:\n{}", b.stderr());
    r
}

/// A plain GET of a loopback URL (the start URL, the callback) without following redirects:
/// the status and the `Location`.
pub fn get(url: &str) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream
        .set_read_timeout(Some(EXCHANGE))
        .expect("read timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let location = answer
        .lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        })
        .map(str::to_owned);
    (status, location)
}

/// A request to the fixture's own endpoints over HTTPS with the test CA: the status and the
/// body.
pub fn fixture_request(fixture_port: u16, method: &str, path: &str) -> (u16, Vec<u8>) {
    fixture_request_with(fixture_port, method, path, None)
}

/// [`fixture_request`] with a JSON body.
fn fixture_request_with(
    fixture_port: u16,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Vec<u8>) {
    mcp_bridge_vscode::install_crypto_provider();
    let pem = std::fs::read(ca_file()).expect("ca");
    let ca = reqwest::Certificate::from_pem(&pem).expect("ca pem");
    let url = format!("https://127.0.0.1:{fixture_port}{path}");
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .add_root_certificate(ca)
            .no_proxy()
            .build()
            .expect("client");
        let mut request = client.request(method, url);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        (status, response.bytes().await.expect("body").to_vec())
    })
}

/// The counters of the fixture (`GET /fixture/counters`).
pub fn counters(fixture: &HttpsFixture) -> Value {
    let (_, body) = fixture_request(fixture.port, "GET", "/fixture/counters");
    serde_json::from_slice(&body).expect("json")
}

/// `POST /fixture/forget-clients`: the authorization server forgets the registered clients.
pub fn forget_clients(fixture: &HttpsFixture) {
    let (status, _) = fixture_request(fixture.port, "POST", "/fixture/forget-clients");
    assert_eq!(status, 204);
}

/// `POST /fixture/overrides`: the fixture's metadata and redirects change from now on
/// (fixture-server/README.md).
pub fn set_overrides(fixture: &HttpsFixture, overrides: &Value) {
    let (status, body) =
        fixture_request_with(fixture.port, "POST", "/fixture/overrides", Some(overrides));
    assert_eq!(status, 204, "{}", String::from_utf8_lossy(&body));
}

/// The issuer of the fixture's authorization server: its origin.
pub fn issuer_of(fixture: &HttpsFixture) -> String {
    format!("https://127.0.0.1:{}", fixture.port)
}

/// A `$BROWSER` script in `dir` that records its arguments (one per line) and the names of
/// the bridge's secret variables that it sees in `dir/argv` and `dir/env`, then runs
/// `program` on the URL (the test browser when `None`).
pub fn browser_script(dir: &Path, then: Option<&str>) -> PathBuf {
    let script = dir.join("browser.sh");
    let argv = dir.join("argv");
    let env = dir.join("env");
    let run = match then {
        Some(line) => line.to_owned(),
        None => format!(
            "exec '{}' --browse \"$1\" --ca-file '{}' >/dev/null",
            fixture_bin().display(),
            ca_file()
        ),
    };
    // The secret sweep (ci/sweep.sh) reads the opener's whole argv and environment.
    let keep = match (
        super::kept::path("browser", "argv"),
        super::kept::path("browser", "env"),
    ) {
        (Some(a), Some(e)) => format!(
            "printf '%s\\n' \"$@\" >> '{}'\nenv >> '{}'\n",
            a.display(),
            e.display()
        ),
        _ => String::new(),
    };
    let text = format!(
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{argv}'; done\nenv | grep -E '^(MCP_BRIDGE_|PLANTED_)' | cut -d= -f1 >> '{env}'\n{keep}{run}\n",
        argv = argv.display(),
        env = env.display(),
    );
    std::fs::write(&script, text).expect("script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("mode");
    }
    script
}
