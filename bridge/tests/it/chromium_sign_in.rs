//! M6 with a real browser: Debian's `chromium`, headless, as the `$BROWSER` of the bridge. It
//! opens the one-time start URL, follows the 303 to the fixture's authorization server over
//! HTTPS (the test CA is trusted through an NSS database in the browser's own home, the way
//! Chromium on Linux trusts a CA), and the redirect to the loopback receiver completes the
//! sign-in of VS Code's `initialize`. `ci/setup.sh` installs `chromium` and `libnss3-tools`.
#![cfg(unix)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use harness::skip::skip;
use serde_json::json;
use support::https_fixture::ca_file;
use support::oauth::{bridge, free_port, oauth_fixture, sign_in_urls};
use support::{call, vscode_initialize};

/// The first `name` on `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// A home for the browser whose NSS database trusts the test CA.
fn browser_home(dir: &Path, certutil: &Path) -> PathBuf {
    let home = dir.join("home");
    let db = home.join(".pki").join("nssdb");
    std::fs::create_dir_all(&db).expect("nssdb dir");
    let db_arg = format!("sql:{}", db.display());
    let status = Command::new(certutil)
        .args(["-d", &db_arg, "-N", "--empty-password"])
        .status()
        .expect("certutil runs");
    assert!(status.success(), "certutil -N");
    let status = Command::new(certutil)
        .args([
            "-d",
            &db_arg,
            "-A",
            "-t",
            "C,,",
            "-n",
            "bridge-test-ca",
            "-i",
        ])
        .arg(ca_file())
        .status()
        .expect("certutil runs");
    assert!(status.success(), "certutil -A");
    home
}

#[test]
fn m6_headless_chromium_as_browser_completes_the_sign_in() {
    let (Some(chromium), Some(certutil)) = (on_path("chromium"), on_path("certutil")) else {
        skip(
            "chromium or certutil is not installed (ci/setup.sh installs chromium and libnss3-tools)",
        );
        return;
    };
    let dir = tempfile::tempdir().expect("dir");
    let home = browser_home(dir.path(), &certutil);
    let script = dir.path().join("browser.sh");
    let argv = dir.path().join("argv");
    let dom = dir.path().join("dom.html");
    // The browser's own noise stays in a file: the bridge's stderr is for its lines.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{argv}'\nHOME='{home}' '{chromium}' --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='{profile}' --dump-dom \"$1\" > '{dom}.part' 2> '{log}'\nmv '{dom}.part' '{dom}'\n",
            argv = argv.display(),
            home = home.display(),
            chromium = chromium.display(),
            profile = dir.path().join("profile").display(),
            dom = dom.display(),
            log = dir.path().join("chromium.log").display(),
        ),
    )
    .expect("script");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("mode");
    }
    let fixture = oauth_fixture(&[]);
    let port = free_port();
    let script = script.to_string_lossy().into_owned();
    let mut b = bridge(
        &fixture.url,
        port,
        &["--sign-in-timeout", "60"],
        &[("BROWSER", script.as_str())],
    );
    let r = b.exchange(&vscode_initialize(1));
    assert!(
        r.get("result").is_some(),
        "{r}\nstderr:\n{}\nchromium:\n{}",
        b.stderr(),
        std::fs::read_to_string(dir.path().join("chromium.log")).unwrap_or_default()
    );
    let opened = std::fs::read_to_string(&argv).expect("the opener ran");
    assert_eq!(opened.lines().count(), 1, "{opened}");
    assert!(
        opened.starts_with(&format!("http://127.0.0.1:{port}/start/")),
        "{opened}"
    );
    assert_eq!(sign_in_urls(&b).len(), 1);
    let r = b.exchange(&call(2, "add", json!({"a": 2, "b": 3})));
    assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
    b.close_and_expect_exit_0();
    // Chromium prints the page it ended on (the receiver's page, after the redirect) when it
    // exits; the script then moves the file into place.
    let since = std::time::Instant::now();
    while !dom.exists() && since.elapsed() < support::EXCHANGE {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let page = std::fs::read_to_string(&dom).unwrap_or_default();
    assert!(
        page.contains("The bridge received the answer of the authorization server"),
        "{page}"
    );
    // The secret sweep (ci/sweep.sh) reads Chromium's log and the opener's argv.
    support::kept::keep_file("chromium", "log", &dir.path().join("chromium.log"));
    support::kept::keep_file("browser", "argv", &argv);
    let stderr = b.stderr();
    for secret in ["bfx_at_", "bfx_rt_", "bfx_code_"] {
        assert!(!stderr.contains(secret));
    }
}
