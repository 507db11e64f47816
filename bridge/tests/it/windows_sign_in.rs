//! The sign-in (M4, M6) and the token stores on Windows, with the Windows bridge under wine
//! (support/wine.rs): the fixture's authorization server over plain loopback HTTP (HTTPS
//! under wine is not testable: docs/windows.md), the browser opener replaced by `$BROWSER`
//! (a `.cmd` that runs the Windows fixture's test browser on the start URL), the Windows
//! Credential Manager store (keyring's Windows backend) across a restart, `logout` and
//! `logout --all`, `--token-store auto` choosing it, and the file store in `%LOCALAPPDATA%`.
//! One test function: the steps share the one Credential Manager of the wine prefix.

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};

use support::Bridge;
use support::https_fixture::HttpsFixture;
use support::oauth::{REMOVED, SIGN_IN, complete, free_port, wait_sign_in};
use support::wine::{Wine, add_then_stop, local_app_data, windows_path, wine};

const KEY: &str = "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677";

/// The prefixes of the tokens that the fixture issues.
const ISSUED: [&str; 3] = ["bfx_at_", "bfx_rt_", "bfx_code_"];

/// The bridge under wine at `url` with `args` before the URL and `env`.
fn start(w: &Wine, url: &str, port: u16, args: &[&str], env: &[(&str, &str)]) -> Bridge {
    let port = port.to_string();
    let mut all = vec!["--redirect-port", port.as_str(), "--log-level", "debug"];
    all.extend_from_slice(args);
    all.push(url);
    Bridge::start_program(&w.bridge, &all, env, &REMOVED)
}

/// Initializes (signing in where the store has nothing), calls `add`, and stops.
fn session(b: &mut Bridge) {
    b.initialize();
    add_then_stop(b);
}

/// `mcp-bridge-vscode logout <args>` under wine: the exit code and stderr.
fn logout(w: &Wine, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(&w.bridge)
        .arg("logout")
        .args(args)
        .env("MCP_BRIDGE_TOKEN_KEY", KEY)
        .stdin(Stdio::null())
        .output()
        .expect("logout runs under wine");
    support::kept::keep_output("logout", &out);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The browser of the test: a `.cmd` that runs the Windows fixture's test browser on its one
/// argument, the start URL (what `rundll32 url.dll,FileProtocolHandler` gets on Windows).
fn browser(w: &Wine, dir: &Path) -> String {
    let script = dir.join("browser.cmd");
    let fixture = windows_path(&w.tools.join("bridge-fixture-server.exe"));
    std::fs::write(&script, format!("@\"{fixture}\" --browse %1\r\n")).expect("browser.cmd");
    windows_path(&script)
}

fn assert_no_token(text: &str) {
    for prefix in ISSUED {
        assert!(!text.contains(prefix), "{prefix} in:\n{text}");
    }
}

#[test]
fn under_wine_the_sign_in_and_the_windows_token_stores() {
    let Some(w) = wine("the sign-in and the token stores on Windows") else {
        return;
    };
    let fixture = HttpsFixture::start(&["--plain-http", "--oauth"], &[]);
    let url = fixture.url.clone();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let port = free_port();
    let dir = tempfile::tempdir().expect("tempdir");
    let browser = browser(&w, dir.path());
    let keychain = ["--token-store", "keychain"];

    // The sign-in through the opener: $BROWSER follows the start URL to the receiver.
    let mut first = start(&w, &url, port, &keychain, &[("BROWSER", &browser)]);
    session(&mut first);
    let stderr = first.stderr();
    assert!(
        stderr
            .contains("the tokens are in the keychain of the host (service \"mcp-bridge-vscode\")"),
        "{stderr}"
    );
    // The test never followed the sign-in line: the opener ($BROWSER) did.
    assert!(!stderr.contains("browser opener"), "{stderr}");
    assert_no_token(&stderr);

    // A restart reads the tokens back from the Credential Manager: no sign-in at all.
    let mut second = start(&w, &url, port, &["--no-browser"], &[]);
    session(&mut second);
    let stderr = second.stderr();
    assert!(!stderr.contains(SIGN_IN), "a second sign-in:\n{stderr}");
    // `auto` (the default) picks the Credential Manager on Windows.
    assert!(
        stderr.contains("the tokens are in the keychain of the host"),
        "{stderr}"
    );

    // logout: the next start signs in again (here through the sign-in line).
    let port_text = port.to_string();
    let (code, stderr) = logout(
        &w,
        &[
            "--redirect-port",
            &port_text,
            "--token-store",
            "keychain",
            &url,
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("logout deleted the stored sign-in of the account \"default\""),
        "{stderr}"
    );
    let mut third = start(
        &w,
        &url,
        port,
        &["--no-browser", "--token-store", "keychain"],
        &[],
    );
    third.send(&support::vscode_initialize(1));
    complete(&wait_sign_in(&third, 1));
    let r = third.response(1);
    assert!(
        r.get("result").is_some(),
        "{r}\nstderr:\n{}",
        third.stderr()
    );
    third.close_and_expect_exit_0();

    // The file store in %LOCALAPPDATA%\mcp-bridge-vscode\tokens, no token in clear text.
    let mut file = start(
        &w,
        &url,
        port,
        &["--token-store", "file"],
        &[("BROWSER", &browser), ("MCP_BRIDGE_TOKEN_KEY", KEY)],
    );
    session(&mut file);
    let tokens = local_app_data()
        .expect("the wine prefix's LOCALAPPDATA")
        .join("mcp-bridge-vscode")
        .join("tokens");
    let mut files = 0;
    for entry in std::fs::read_dir(&tokens).expect("the token directory in LOCALAPPDATA") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            assert_no_token(&String::from_utf8_lossy(
                &std::fs::read(&path).expect("read"),
            ));
            files += 1;
        }
    }
    assert!(
        files >= 2,
        "the record and the index in {}",
        tokens.display()
    );

    // logout --all: every stored sign-in of the Credential Manager and the token directory.
    let (code, stderr) = logout(&w, &["--all"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("logout deleted 2 stored sign-ins"),
        "{stderr}"
    );
    assert!(!tokens.exists(), "the token directory stays");
    let mut last = start(
        &w,
        &url,
        port,
        &["--no-browser", "--token-store", "keychain"],
        &[],
    );
    last.send(&support::vscode_initialize(1));
    wait_sign_in(&last, 1);
    drop(last);
}
