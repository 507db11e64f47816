//! Process tests of the token stores (docs/token-stores.md) without a sign-in: the token stores at the start of the URL form
//! (their line, the refused store options with exit 2 and the cause) and `logout` (its forms,
//! lines and exit codes 0 and 2 without a stored sign-in), on the real binary. Each test has a state directory of
//! its own (`XDG_STATE_HOME`), no key unless it gives one, and no keychain: the D-Bus session
//! address points nowhere, so no Secret Service answers (the keychain itself is tested against
//! a real one in `keychain.rs`). `logout` of stored sign-ins, which the tests put in the
//! store themselves, is the unit test `logout::stored_tests`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
const URL: &str = "https://127.0.0.1:9/mcp";
static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct State {
    tmp: tempfile::TempDir,
}

impl State {
    fn new() -> State {
        State {
            tmp: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn dir(&self) -> PathBuf {
        self.tmp
            .path()
            .join("state")
            .join("mcp-bridge-vscode")
            .join("tokens")
    }

    /// The bridge with this state directory, no display, no keychain, stdin at its end.
    fn run(&self, args: &[&str], key: Option<&str>) -> (i32, String, String) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-bridge-vscode"));
        command
            .args(args)
            .env("XDG_STATE_HOME", self.tmp.path().join("state"))
            .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("MCP_BRIDGE_TOKEN_KEY")
            .stdin(Stdio::null());
        if let Some(key) = key {
            command.env("MCP_BRIDGE_TOKEN_KEY", key);
        }
        let Output {
            status,
            stdout,
            stderr,
        } = command.output().expect("the bridge runs");
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        assert!(!stderr.contains(KEY), "the key on stderr: {stderr}");
        // The secret sweep of CI (ci/sweep.sh) also searches these; the key is among its
        // planted secrets.
        if let Some(dir) = std::env::var_os("MCP_STDERR_DIR") {
            let name = format!(
                "stores-{}-{}.stderr",
                std::process::id(),
                RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            );
            let _ = std::fs::write(Path::new(&dir).join(name), &stderr);
        }
        (
            status.code().unwrap_or(-1),
            String::from_utf8_lossy(&stdout).into_owned(),
            stderr,
        )
    }

    /// A private key file outside the token directory.
    fn key_file(&self, text: &str, mode: u32) -> PathBuf {
        let path = self.tmp.path().join("token.key");
        std::fs::write(&path, text).expect("write");
        set_mode(&path, mode);
        path
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

const ERROR: &str = "mcp-bridge-vscode: vscode: error: ";

#[test]
fn each_start_names_its_store() {
    let state = State::new();
    let (code, stdout, stderr) = state.run(&["--token-store", "file", URL], Some(KEY));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    let line = format!(
        "mcp-bridge-vscode: bridge: info: the tokens are in encrypted files in {}",
        state.dir().display()
    );
    assert!(stderr.contains(&line), "{stderr}");
    assert!(state.dir().is_dir());
    let (code, _, stderr) = state.run(&["--token-store", "memory", URL], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("mcp-bridge-vscode: bridge: info: the tokens stay in memory (--token-store memory): each start needs a new sign-in"), "{stderr}");
    // auto without a keychain: the files with a key, memory without one.
    let (_, _, stderr) = state.run(&[URL], Some(KEY));
    assert!(stderr.contains(&line), "{stderr}");
    let (code, _, stderr) = state.run(&[URL], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("mcp-bridge-vscode: bridge: info: the tokens stay in memory: the keychain is not available ("), "{stderr}");
    assert!(stderr.contains("and no token key is set (MCP_BRIDGE_TOKEN_KEY or --token-key-file). Each start needs a new sign-in"), "{stderr}");
}

#[test]
fn a_store_that_does_not_open_exits_2_with_the_cause() {
    let state = State::new();
    let refused = |args: &[&str], key: Option<&str>, cause: &str| {
        let (code, stdout, stderr) = state.run(args, key);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        let expected = format!("{ERROR}the token store did not open: {cause}");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
    };
    refused(
        &["--token-store", "file", URL],
        None,
        "the file store needs a token key: set MCP_BRIDGE_TOKEN_KEY or give --token-key-file",
    );
    #[cfg(target_os = "linux")]
    refused(
        &["--token-store", "keychain", URL],
        None,
        "the Secret Service of the host does not answer",
    );
    refused(
        &["--token-store", "file", URL],
        Some("0123"),
        "the token key of MCP_BRIDGE_TOKEN_KEY is not 64 hexadecimal digits",
    );
    // auto too: a key that is given must be valid.
    refused(
        &[URL],
        Some(&KEY.replace('0', "x")),
        "the token key of MCP_BRIDGE_TOKEN_KEY is not 64 hexadecimal digits",
    );
    let file = state.key_file(KEY, 0o600);
    let file = file.to_str().expect("utf-8");
    refused(
        &["--token-key-file", file, URL],
        Some(KEY),
        "MCP_BRIDGE_TOKEN_KEY and --token-key-file are both given",
    );
    #[cfg(unix)]
    {
        set_mode(Path::new(file), 0o644);
        refused(
            &["--token-store", "file", "--token-key-file", file, URL],
            None,
            "--token-key-file: other users can access the file (mode 644)",
        );
    }
    std::fs::create_dir_all(state.dir()).expect("mkdir");
    let inside = state.dir().join("key");
    std::fs::write(&inside, KEY).expect("write");
    set_mode(&inside, 0o600);
    refused(
        &[
            "--token-store",
            "file",
            "--token-key-file",
            inside.to_str().expect("utf-8"),
            URL,
        ],
        None,
        "--token-key-file: the file is inside the token directory",
    );
    // A private key file outside the directory works, with spaces around the digits.
    let good = state.key_file(&format!("  {KEY}\n"), 0o600);
    let (code, _, stderr) = state.run(
        &[
            "--token-store",
            "file",
            "--token-key-file",
            good.to_str().expect("utf-8"),
            URL,
        ],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_account_that_is_not_valid_exits_2() {
    let state = State::new();
    for account in ["a b", "", "a|b", &"x".repeat(65)] {
        for args in [
            vec!["--account", account, URL],
            vec!["logout", "--account", account, URL],
        ] {
            let (code, stdout, stderr) = state.run(&args, None);
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert!(stdout.is_empty());
            assert!(
                stderr.starts_with(&format!("{ERROR}the value of the option --account is not valid: use 1 to 64 letters, digits, -, ., _, @ or +")),
                "{args:?}: {stderr}"
            );
        }
    }
}

#[test]
fn logout_exit_codes_and_lines() {
    let state = State::new();
    // 2: arguments, --ca-file, an explicit store that does not open.
    for args in [
        vec!["logout"],
        vec!["logout", "--all", "--account", "w"],
        vec!["logout", "--all", URL],
        vec!["logout", "http://example.com/mcp"],
        vec!["logout", "--name", "x", URL],
    ] {
        let (code, stdout, stderr) = state.run(&args, None);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.starts_with(ERROR), "{args:?}: {stderr}");
        assert!(stderr.contains("Usage: mcp-bridge-vscode "), "{args:?}");
    }
    let (code, _, stderr) = state.run(&["logout", "--ca-file", "/nonexistent.pem", URL], None);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cannot use the CA certificates of --ca-file"),
        "{stderr}"
    );
    let (code, _, stderr) = state.run(&["logout", "--token-store", "file", URL], None);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{ERROR}the token store did not open: the file store needs a token key"
        )),
        "{stderr}"
    );
    #[cfg(target_os = "linux")]
    {
        let (code, _, stderr) = state.run(&["logout", "--token-store", "keychain", URL], None);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(
                "the token store did not open: the Secret Service of the host does not answer"
            ),
            "{stderr}"
        );
    }
    // 0: memory has nothing; auto skips the keychain; nothing stored is success.
    let (code, _, stderr) = state.run(&["logout", "--token-store", "memory", URL], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("mcp-bridge-vscode: vscode: info: the memory store keeps no sign-in after the end of the process: logout has nothing to delete"), "{stderr}");
    let (code, _, stderr) = state.run(&["logout", URL], Some(KEY));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("mcp-bridge-vscode: vscode: warning: logout skips the keychain store: "),
        "{stderr}"
    );
    assert!(stderr.contains("mcp-bridge-vscode: vscode: info: logout found no stored sign-in of the account \"default\" for the URL"), "{stderr}");
    // --all without a key: the token directory.
    std::fs::create_dir_all(state.dir()).expect("mkdir");
    let (code, _, stderr) = state.run(&["logout", "--all", "--token-store", "file"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(!state.dir().exists(), "{stderr}");
}
